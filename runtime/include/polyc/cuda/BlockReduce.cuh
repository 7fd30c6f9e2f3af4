// Device-side pattern-parallel reductions (seed 001): a group of G threads computes one output; each
// thread accumulates a strided share of the reduction's terms, then the group combines the partial
// values with warp shuffles (G <= 32) or warp shuffles plus shared memory (a whole block).
#pragma once

#include <cuda/std/limits>

#include <cstdint>

namespace polyc::rt::cuda {

// The reduction operators of the language. `identity` is the value of an empty reduction: 0 for
// sum, the lowest finite value for max, the highest for min (docs/language.md).
template <typename T> struct SumOp {
  static __device__ __forceinline__ T identity() { return T(0); }
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
template <typename T> struct MaxOp {
  static __device__ __forceinline__ T identity() { return ::cuda::std::numeric_limits<T>::lowest(); }
  __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
};
template <typename T> struct MinOp {
  static __device__ __forceinline__ T identity() { return ::cuda::std::numeric_limits<T>::max(); }
  __device__ __forceinline__ T operator()(T a, T b) const { return b < a ? b : a; }
};

constexpr unsigned WarpSize = 32;

// The lanes of the calling thread's group of G consecutive lanes, as a shuffle mask.
template <unsigned G> __device__ __forceinline__ unsigned groupMask() {
  static_assert(G >= 1 && G <= WarpSize && (G & (G - 1)) == 0, "group size: a power of two <= 32");
  if constexpr (G == WarpSize)
    return 0xffffffffu;
  else
    return ((1u << G) - 1) << ((threadIdx.x % WarpSize) & ~(G - 1));
}

// Combines `value` over the G consecutive lanes of the caller's group (aligned to G inside a warp).
// Every lane of the group must call it; every lane gets the result (butterfly). Groups of one warp
// may call it independently of each other.
template <unsigned G, typename Op, typename T> __device__ __forceinline__ T groupReduce(T value, Op op) {
  const unsigned mask = groupMask<G>();
#pragma unroll
  for (unsigned offset = G / 2; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(mask, value, offset, G));
  return value;
}

// As groupReduce, for groups that all lanes of the warp call together (converged), as the flexible
// wavefront's strips do: the full-warp mask spares the compiler the convergence checks (MATCH.ANY,
// REDUX) it emits around a partial-mask shuffle.
template <unsigned G, typename Op, typename T> __device__ __forceinline__ T warpGroupReduce(T value, Op op) {
  static_assert(G >= 1 && G <= WarpSize && (G & (G - 1)) == 0, "group size: a power of two <= 32");
#pragma unroll
  for (unsigned offset = G / 2; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset, G));
  return value;
}

// Combines `value` over all Threads threads of the block (a multiple of 32, at most 1024); every
// thread must call it and gets the result. `scratch` is shared memory of Threads / 32 elements; the
// call begins with a barrier, so consecutive calls may reuse it.
template <unsigned Threads, typename Op, typename T>
__device__ __forceinline__ T blockReduce(T value, Op op, T *scratch) {
  static_assert(Threads % WarpSize == 0 && Threads <= 1024, "block size: a multiple of 32, <= 1024");
  constexpr unsigned Warps = Threads / WarpSize;
  value = groupReduce<WarpSize>(value, op);
  if constexpr (Warps == 1)
    return value;
  const unsigned warp = threadIdx.x / WarpSize, lane = threadIdx.x % WarpSize;
  __syncthreads(); // the previous call's readers of scratch are done
  if (lane == 0)
    scratch[warp] = value;
  __syncthreads();
  value = lane < Warps ? scratch[lane] : Op::identity();
  value = groupReduce<WarpSize>(value, op);
  return value;
}

// Combines `value` over the caller's group of G threads: inside a warp for G <= 32, over the whole
// block (G threads, one group per block) above. Every thread of the group must call it; every thread
// gets the result.
template <unsigned G, typename Op, typename T> __device__ __forceinline__ T reduceInGroup(T value, Op op) {
  if constexpr (G <= WarpSize) {
    return groupReduce<G>(value, op);
  } else {
    __shared__ T scratch[G / WarpSize];
    return blockReduce<G>(value, op, scratch);
  }
}

// Makes lane 0's stores visible to the other lanes of its group before they read them: where a group
// computes several statement instances of its point in turn (statements of one band, or a sequential
// member inside it), the next instance may read what the last one stored. A warp-level barrier over the
// group's lanes for G <= 32 (each group takes its own branches), the block's for G > 32 (a block a point).
template <unsigned G> __device__ __forceinline__ void syncGroup() {
  if constexpr (G <= WarpSize)
    __syncwarp(groupMask<G>());
  else
    __syncthreads();
}

// How kernels with groups of G threads per point lay out their blocks: 256 threads (256 / G points)
// per block for G <= 32, one point per block of G threads above. Point p of the grid's x dimension is
// computed by group `point()`, and the grid-stride is `points()`.
template <unsigned G> struct GroupLayout {
  static_assert(G >= 1 && G <= 1024 && (G & (G - 1)) == 0, "group size: a power of two <= 1024");
  static constexpr unsigned Threads = G <= WarpSize ? 256 : G;
  static constexpr unsigned PointsPerBlock = Threads / G;
  static __device__ __forceinline__ unsigned lane() { return threadIdx.x % G; }
  static __device__ __forceinline__ int64_t point() {
    return int64_t(blockIdx.x) * PointsPerBlock + threadIdx.x / G;
  }
  static __device__ __forceinline__ int64_t points() { return int64_t(gridDim.x) * PointsPerBlock; }
};

} // namespace polyc::rt::cuda
