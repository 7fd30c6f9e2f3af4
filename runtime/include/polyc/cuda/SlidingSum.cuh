// A thread's sums for R consecutive points of a data-parallel statement along one dimension p (points
// p0 .. p0 + R - 1), when each sum's terms read an array at p - s for a variable s of the sum:
//
//     out[p] = sum(s in 0..count, ...) coefficient(s, ...) * X[p - s, ...]
//
// Along s, the cell that term s reads for point o is the one that term s - 1 read for point o - 1. So a
// step of s reads one new cell (the one for point 0) and R coefficients' worth of multiply-adds share
// it, from a ring of the R most recent cells held in registers: a load per R FMAs where a thread per
// point needs a load per FMA (docs/performance.md at 2c04002, CUDA, "The FIR sum"). The code generator prints
// the loops over the sum's other variables around a run of s (start, then slide), and the point's store once
// per row (polyc::codegen, CudaStatementMode::Rows).
//
// The run's length is a template parameter of the kernel where it has at most SlidingRunMax steps
// (Device.h, withSlidingRun): then every step of a run is unrolled and none is tested.
#pragma once

namespace polyc::rt::cuda {

template <typename T, int R> struct SlidingSum {
  static_assert(R >= 1, "a sliding sum covers at least one point");
  T sum[R];
  T ring[R]; // ring[(o - step) mod R]: the cell point o reads at the current step of the run

  __device__ SlidingSum() {
#pragma unroll
    for (int o = 0; o < R; ++o)
      sum[o] = T(0);
  }

  // Before a run of s: cell(q) for q = 1 .. R - 1, the cells its first step reads for points 1 .. R - 1
  // (cell must return the boundary value, not read, for a point past the last one).
  template <typename Cell> __device__ void start(Cell cell) {
#pragma unroll
    for (int q = 1; q < R; ++q)
      ring[q] = cell(q);
  }

  // A run of `count` steps: term(step, coefficient, cell) sets the step's coefficient and the cell it
  // reads for point 0. With Run > 0 the run has Run steps (count is Run), all unrolled. Else steps go R
  // at a time, unrolled, so that a slot of the ring is a register; the last R - 1 or fewer are guarded.
  template <int Run, typename Term> __device__ void slide(int count, Term term) {
    if constexpr (Run > 0) {
#pragma unroll
      for (int s = 0; s < Run; ++s)
        step(s % R, s, term);
      return;
    }
    int base = 0;
    for (; base + R <= count; base += R) {
#pragma unroll
      for (int u = 0; u < R; ++u)
        step(u, base + u, term);
    }
#pragma unroll
    for (int u = 0; u < R - 1; ++u)
      if (base + u < count)
        step(u, base + u, term);
  }

private:
  template <typename Term> __device__ __forceinline__ void step(int slot, int s, Term &term) {
    T coefficient, cell;
    term(s, coefficient, cell);
    ring[(R - slot) % R] = cell;
#pragma unroll
    for (int o = 0; o < R; ++o)
      sum[o] += coefficient * ring[(o - slot + R) % R];
  }
};

} // namespace polyc::rt::cuda
