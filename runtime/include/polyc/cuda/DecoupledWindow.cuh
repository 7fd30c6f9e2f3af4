// The decoupled step of the flexible wavefront: a 2D recurrence over a full box window,
//
//   Y[i, j] = E(i, j) + sum((k1, k2) in [0, M)^2 minus (0, 0)) C[k1, k2] * Y[i - k1, j - k2]   (Y = 0
//   outside),
//
// with point-invariant coefficients C, computed in strips of S columns (docs/scheduling.md, "The decoupled
// step"; docs/prototypes/diagonal-chain at commit 44e1289 has the design's measurements).
//
// The strip. Column g of a strip computes row u - g at step u, so cell (r, c0 + g) is made at step r + g:
// its anti-diagonal. The shared ring holds the cells by step, two slots deep. The (k1, k2) term of the
// point of column g at step u is the cell of slot u - k1 - k2 in column g - k2 (columns left of the strip,
// the halo, come from the left strip's Y in global memory).
//
// The block: two groups of warps that meet at named barriers.
//  - The chain: one thread a column (S, rounded up to whole warps) and a halo warp. At step u a column
//    thread adds its two nearest terms, (1, 0) and (0, 1), both in slot u - 1, to E (loaded Ahead steps
//    ahead) and to the window sum the window group left in `far`, and stores the cell into slot u and
//    Y. The halo warp's lanes 0 .. M - 2 load the halo cells from Y (Ahead steps ahead) and store them
//    into the slot.
//  - The window: G lanes a column; lane j owns the column offsets k2 in [jB, jB + B). At iteration v it
//    loads its B cells of slot v once and adds them, times its B x M coefficients (registers), into
//    M + B - 1 accumulators: one for each later point those cells feed. The lanes pass a point's partial
//    sum down to lane 0 one lane a step (a shuffle), and lane 0 leaves in `far` the sum of every term but
//    the two nearest for the points at step v + 2, whose other terms all lie in slots <= v.
// So the window's iteration v runs beside the chain's step v + 1, off the chain's path: the chain waits
// for it only when the window's work is longer than a chain step. That is what makes a step's time
// nearly independent of M.
//
// Barriers (bar.arrive does not wait; both order the shared-memory accesses before them for the threads
// that wait). The chain arrives at slotWritten(u) and waits at stepDone(u); the window waits at
// slotWritten(v) and arrives at stepDone(v + 1). Each alternates between two ids by the step's parity,
// so a group that arrives early for the next step cannot count toward this one.
//
// Strips in turn. A block takes strips in order from a ticket (the board's frontier, atomicAdd) and
// keeps each to its end. A block then waits only on a strip a running block took earlier, whose own wait
// is on a strip taken earlier still; the lowest unfinished strip waits on nothing. So the kernel cannot
// deadlock, whatever the grid and whatever order the hardware starts blocks in, and no strip is ever
// entered mid-way (so the accumulators never need rebuilding).
//
// The hand-over between strips has no progress counters and no fences: the halo cells carry their own
// "not yet". Before the kernel, decoupledMarkEdges fills the cells the right strips read (each strip's
// last M - 1 columns) with PendingCell, a signalling NaN that arithmetic never returns. The left strip
// stores those cells with relaxed atomic stores, and a halo lane reads its cell with relaxed atomic loads
// (in L2) until it is no longer pending: a cell is its own flag, read and written whole (single-copy
// atomicity), and nothing else of the left strip is read. Progress published by a release store from
// the chain group, and polled by the halo lanes (session 16), put a fence and L2 round trips on the
// step's path: 20-50% of a lone strip's time (docs/performance.md at 2c04002, CUDA, "The hand-over without
// fences").
#pragma once

#include "polyc/cuda/Device.h"
#include "polyc/cuda/PipelineLinks.h"
#include "polyc/cuda/Wavefront.cuh"

#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <utility>

namespace polyc::rt::cuda {

// The value of a halo cell that its strip has not stored yet: a signalling NaN with a payload of its own.
// Arithmetic returns quiet NaNs, and every cell the decoupled step stores is a sum, so no stored value
// is pending. Only floating-point recurrences take the decoupled step.
template <typename Elem>
struct PendingCell;
template <>
struct PendingCell<float> {
  using Bits = uint32_t;
  static constexpr Bits Pattern = 0x7fa0d1ceu;
};
template <>
struct PendingCell<double> {
  using Bits = uint64_t;
  static constexpr Bits Pattern = 0x7ff4d1ce0d1ce0d1ull;
};
template <typename Elem>
__device__ __forceinline__ bool isPending(Elem value) {
  return __builtin_bit_cast(typename PendingCell<Elem>::Bits, value) == PendingCell<Elem>::Pattern;
}
template <typename Elem>
__device__ __forceinline__ Elem loadCellRelaxed(const Elem *cell) {
  return ::cuda::atomic_ref<Elem, ::cuda::thread_scope_device>(*const_cast<Elem *>(cell))
      .load(::cuda::memory_order_relaxed);
}
template <typename Elem>
__device__ __forceinline__ void storeCellRelaxed(Elem *cell, Elem value) {
  ::cuda::atomic_ref<Elem, ::cuda::thread_scope_device>(*cell).store(value, ::cuda::memory_order_relaxed);
}

// G lanes a column, S columns a strip, for window extent M. Measured on the H100 (docs/performance.md at
// 2c04002, CUDA, sessions 16 and 18): one lane and strips of 128 up to M = 5, four lanes and strips of 96 up
// to 17, sixteen lanes and strips of 32 above. Wider strips mean fewer hand-overs between strips; at M = 17,
// strips of 128 (672 threads) ran out of registers and took twice as long.
inline constexpr int DecoupledWidestStrip = 128;
template <int M_>
struct DecoupledShape {
  static constexpr int M = M_;
  static constexpr int G = M <= 5 ? 1 : M <= 17 ? 4 : 16;
  static constexpr int S = M <= 5 ? DecoupledWidestStrip : M <= 17 ? 96 : 32;
  static constexpr int B = (M + G - 1) / G;                // column offsets a window lane
  static constexpr int K = M + B - 1;                      // accumulators a window lane
  static constexpr int Halo = M - 1;                       // columns left of the strip
  static constexpr int RingCols = Halo + S;                // a ring slot
  static constexpr int ChainThreads = (S + 31) / 32 * 32 + 32; // the columns, then the halo warp
  static constexpr int WindowThreads = G * S;
  static constexpr int BlockThreads = ChainThreads + WindowThreads;
  static constexpr int Ahead = 4; // steps from loading a point's E or a halo cell to its use (measured)
  static_assert(M >= DecoupledMinExtent && M <= DecoupledMaxExtent && Halo <= S, "the halo is one warp, in the left strip");
  static_assert(G * S % 32 == 0 && 32 % G == 0, "whole warps; a column's lanes in one warp");
  static_assert(G == 1 || B >= 2, "a lane's partial sum reaches lane 0 in time");
  static_assert(BlockThreads <= 1024, "block size");
};

__device__ __forceinline__ void namedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void namedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Slot u is in the ring (the chain arrives, the window waits). Ids 1-4; 0 is __syncthreads.
__device__ __forceinline__ int slotWritten(int u) { return 1 + (u & 1); }
// The chain's step u is done and the window sums of step u + 1 are in `far` (the window arrives, the
// chain waits).
__device__ __forceinline__ int stepDone(int u) { return 3 + (u & 1); }

// The shared memory of one block.
template <class Shape, typename Elem>
struct DecoupledShared {
  Elem ring[2][Shape::RingCols];
  Elem far[2][Shape::S]; // far[u & 1][g]: the window sum of column g's point at step u, nearest terms left out
  int taken;             // the strip the block took
};

// The window group's part of one strip (threads ChainThreads and up).
template <class Shape, typename Elem>
__device__ void decoupledWindowStrip(const Elem (&coef)[Shape::B][Shape::M], DecoupledShared<Shape, Elem> &shared,
                                     int first, int last) {
  constexpr int M = Shape::M, G = Shape::G, B = Shape::B, K = Shape::K, All = Shape::BlockThreads;
  const int t = int(threadIdx.x) - Shape::ChainThreads;
  const int g = t / G, j = t % G;
  Elem acc[K]; // acc[p]: this lane's part of the point of column g at step v + jB + p
#pragma unroll
  for (int p = 0; p < K; ++p)
    acc[p] = Elem(0);
  Elem received = Elem(0); // lane j + 1's finished part, for the point now at acc[B - 1]
  namedBarrierArrive(stepDone(first), All); // far[first + 1] is zero
  for (int v = first; v <= last; ++v) {
    namedBarrierSync(slotWritten(v), All);
    acc[B - 1] += received;
    const Elem *newest = shared.ring[v & 1] + Shape::Halo + g;
    Elem cell[B];
#pragma unroll
    for (int kb = 0; kb < B; ++kb) {
      const int k2 = j * B + kb;
      cell[kb] = k2 < M ? newest[-k2] : Elem(0);
    }
#pragma unroll
    for (int kb = 0; kb < B; ++kb)
#pragma unroll
      for (int k1 = 0; k1 < M; ++k1)
        acc[k1 + kb] += coef[kb][k1] * cell[kb];
    Elem down = Elem(0);
    if constexpr (G > 1)
      down = __shfl_down_sync(0xffffffffu, acc[0], 1, G);
    // Lane 0's acc[2] is the point at step v + 2. With B = 2, lane 1's part of it is complete only now.
    if (j == 0)
      shared.far[v & 1][g] = acc[2] + (B == 2 ? down : Elem(0));
    received = j == G - 1 ? Elem(0) : down;
#pragma unroll
    for (int p = 0; p + 1 < K; ++p)
      acc[p] = acc[p + 1];
    acc[K - 1] = Elem(0);
    if (v < last)
      namedBarrierArrive(stepDone(v + 1), All);
  }
}

// The chain group's part of one strip (threads below ChainThreads). Steps run from `first` = -(M - 1)
// (before it, every cell a step reads is zero; in a pipeline's later block, -2 (M - 1)) to `last`.
//
// In a pipeline's later block (PipelineLinks::rowsBefore > 0) the rows before row 0 are the earlier
// ranks' values rather than zeros: a column thread "computes" them by loading them (in place of E, whose
// load they take), and the halo lanes load them like any halo cell.
template <class Shape, class Statement>
__device__ void decoupledChainStrip(const Statement &st, int strip,
                                    DecoupledShared<Shape, typename Statement::Elem> &shared, int first,
                                    int last, int rowsBefore) {
  using Elem = typename Statement::Elem;
  constexpr int S = Shape::S, Halo = Shape::Halo, All = Shape::BlockThreads;
  const int c0 = strip * S;
  const int g = int(threadIdx.x);
  const bool column = g < S;
  const bool edge = g >= S - Halo; // a column the right strip reads
  const int helper = g - (Shape::ChainThreads - WarpSize); // the halo warp's lane
  const bool haloLane = helper >= 0 && helper < Halo;
  const int h = helper + 1; // a halo lane's column: c0 - h
  const Elem b10 = st.coefficient(1, 0), b01 = st.coefficient(0, 1);

  // The halo cell of slot `slot` (row slot + h), or null outside the image (a zero).
  auto haloCell = [&](int slot) -> const Elem * {
    const int row = slot + h;
    return strip == 0 || row < -rowsBefore || row >= st.rows ? nullptr : st.cell(row, c0 - h);
  };
  auto loadHalo = [&](int slot) -> Elem {
    const Elem *cell = haloCell(slot);
    return cell ? loadCellRelaxed(cell) : Elem(0);
  };
  // E, or a received cell before row 0.
  auto loadPoint = [&](int step) -> Elem {
    const int row = step - g, col = c0 + g;
    if (!column || row < -rowsBefore || row >= st.rows || col >= st.cols)
      return Elem(0);
    return row >= 0 ? st.pointPart(row, col) : loadCellRelaxed(st.cell(row, col));
  };
  // E and the halo cells, loaded Ahead steps before the step that takes them. Entry k serves the steps u
  // with (u - first) % Ahead == k, and the loop is unrolled by Ahead so that each entry stays in its own
  // register: rotating the entries (pipe[0] = pipe[1], ...) made each load's result needed by the next
  // step's move, whatever Ahead was (SASS, session 17).
  constexpr int Ahead = Shape::Ahead;
  Elem pointPipe[Ahead], haloPipe[Ahead];
#pragma unroll
  for (int k = 0; k < Ahead; ++k) {
    pointPipe[k] = loadPoint(first + k);
    haloPipe[k] = haloLane ? loadHalo(first + k) : Elem(0);
  }

  for (int base = first; base <= last; base += Ahead) {
#pragma unroll
    for (int k = 0; k < Ahead; ++k) {
      const int u = base + k;
      if (u > last)
        break;
      Elem *own = shared.ring[u & 1];
      if (column) {
        const Elem *newest = shared.ring[(u - 1) & 1] + Halo + g;
        const int row = u - g, col = c0 + g;
        const bool inside = row >= 0 && row < st.rows && col < st.cols;
        const Elem value =
            inside ? pointPipe[k] + shared.far[u & 1][g] + b10 * newest[0] + b01 * newest[-1] : pointPipe[k];
        own[Halo + g] = value;
        if (inside && edge)
          storeCellRelaxed(st.cell(row, col), value);
        else if (inside)
          *st.cell(row, col) = value;
        pointPipe[k] = loadPoint(u + Ahead);
      }
      if (haloLane) {
        // Read again until the left strip has stored it.
        Elem halo = haloPipe[k];
        while (isPending(halo))
          halo = loadCellRelaxed(haloCell(u));
        own[Halo - h] = halo;
        haloPipe[k] = loadHalo(u + Ahead);
      }
      namedBarrierArrive(slotWritten(u), All);
      namedBarrierSync(stepDone(u), All);
    }
  }
}

// Fills the cells the right strips read, each strip's last Halo columns but the last strip's, with
// PendingCell: one thread a cell, a row's Halo cells of a strip side by side.
template <class Shape, class Statement>
__global__ void decoupledMarkEdges(const Statement st, int strips) {
  using Elem = typename Statement::Elem;
  constexpr int S = Shape::S, Halo = Shape::Halo;
  const int64_t count = int64_t(st.rows) * (strips - 1) * Halo;
  using Bits = typename PendingCell<Elem>::Bits;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < count; k += stride) {
    const int h = int(k % Halo);
    const int64_t rest = k / Halo;
    const int strip = int(rest % (strips - 1)), row = int(rest / (strips - 1));
    const int col = (strip + 1) * S - 1 - h;
    if (col < st.cols) // as bits: a conversion to Elem may quiet the NaN (nvcc's does, at compile time)
      *reinterpret_cast<Bits *>(st.cell(row, col)) = PendingCell<Elem>::Pattern;
  }
}

// A pipeline's strip, before it starts: thread k waits until sender k's rows of the strip and of the strip
// before it (the halo) have arrived. The acquire at system scope pairs with the sender's release
// (sendStripRows); the block's barrier after it orders the other threads' loads.
__device__ inline void awaitStripRows(const PipelineLinks &links, int strip) {
  if (int(threadIdx.x) >= links.receives)
    return;
  const unsigned *flags = links.arrived[threadIdx.x];
  for (int s = strip > 0 ? strip - 1 : strip; s <= strip; ++s) {
    ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_system> flag(*const_cast<unsigned *>(flags + s));
    while (flag.load(::cuda::memory_order_acquire) < links.generation)
      __nanosleep(256);
  }
}

// A pipeline's strip, once its cells are stored: the rows each later rank reads, in the strip's columns,
// copied into that rank's array (peer memory), then, after a system-wide fence, the strip's flag there.
template <class Shape, class Statement>
__device__ void sendStripRows(const Statement &st, const PipelineLinks &links, int strip) {
  using Elem = typename Statement::Elem;
  const int c0 = strip * Shape::S, width = min(Shape::S, st.cols - c0);
  for (int k = 0; k < links.sends; ++k) {
    const int count = (links.sendEnd[k] - links.sendFirst[k]) * width;
    for (int e = int(threadIdx.x); e < count; e += int(blockDim.x)) {
      Elem *cell = st.cell(links.sendFirst[k] + e / width, c0 + e % width);
      *reinterpret_cast<Elem *>(reinterpret_cast<char *>(cell) + links.peerOffset[k]) = loadCellRelaxed(cell);
    }
  }
  __threadfence_system();
  __syncthreads();
  if (int(threadIdx.x) < links.sends)
    ::cuda::atomic_ref<unsigned, ::cuda::thread_scope_system>(links.peerArrived[threadIdx.x][strip])
        .store(links.generation, ::cuda::memory_order_release);
}

// The persistent kernel. `Statement` (generated) gives: `Elem`; `rows`, `cols` (the domain
// [0, rows) x [0, cols)); `coefficient(k1, k2)` (C); `pointPart(i, j)` (E); `cell(i, j)` (the address of
// Y[i, j]). board.columns is the number of strips; board.frontier[0], zero at the start, is the ticket.
// One block an SM at least: without it ptxas held M = 3 to 32 registers and spilled (as if for 12 blocks
// an SM). In a pipeline's block of rows (`links`, PipelineLinks) a strip first waits for its rows before
// the block and its left neighbour's (the halo's), and after its last step sends the rows later ranks read.
template <class Shape, class Statement>
__global__ void __launch_bounds__(Shape::BlockThreads, 1)
    decoupledWavefront(const Statement st, const FlexibleBoard board, const PipelineLinks links) {
  using Elem = typename Statement::Elem;
  constexpr int M = Shape::M, G = Shape::G, B = Shape::B;
  __shared__ DecoupledShared<Shape, Elem> shared;
  // Received rows before row 0 reach the halo's slots too: cell (r, c0 - h) is in slot r - h, down to
  // -2 (M - 1) for row -(M - 1).
  const int first = -(M - 1) - (links.rowsBefore > 0 ? M - 1 : 0), last = st.rows + Shape::S - 2;
  const bool window = int(threadIdx.x) >= Shape::ChainThreads;
  Elem coef[B][M]; // a window lane's coefficients, without the two nearest terms
  if (window) {
    const int j = (int(threadIdx.x) - Shape::ChainThreads) % G;
#pragma unroll
    for (int kb = 0; kb < B; ++kb)
#pragma unroll
      for (int k1 = 0; k1 < M; ++k1) {
        const int k2 = j * B + kb;
        coef[kb][k1] = k2 < M && k1 + k2 >= 2 ? st.coefficient(k1, k2) : Elem(0);
      }
  }
  for (;;) {
    if (threadIdx.x == 0)
      shared.taken = atomicAdd(board.frontier, 1);
    for (int i = threadIdx.x; i < 2 * Shape::RingCols; i += blockDim.x)
      (&shared.ring[0][0])[i] = Elem(0);
    for (int i = threadIdx.x; i < 2 * Shape::S; i += blockDim.x)
      (&shared.far[0][0])[i] = Elem(0);
    __syncthreads();
    const int strip = shared.taken;
    if (strip >= board.columns)
      return;
    if (links.receives > 0) {
      awaitStripRows(links, strip);
      __syncthreads();
    }
    if (window)
      decoupledWindowStrip<Shape>(coef, shared, first, last);
    else
      decoupledChainStrip<Shape>(st, strip, shared, first, last, links.rowsBefore);
    __syncthreads(); // every thread has read `taken` and is done with the ring, the strip's cells stored
    if (links.sends > 0)
      sendStripRows<Shape>(st, links, strip);
  }
}

// Host: calls body(std::integral_constant<int, M>()) for `extent` in [DecoupledMinExtent,
// DecoupledMaxExtent]; returns false without calling it otherwise.
template <typename Body> bool withDecoupledExtent(int64_t extent, Body &&body) {
  return withConstantIn<DecoupledMinExtent, DecoupledMaxExtent>(extent, body);
}

// Host: runs the recurrence `st` over the domain [0, rows) x [0, cols) with window extent `extent` by the
// decoupled step, and returns true; returns false, launching nothing, where the term tables run instead:
// an element type other than float and double (PendingCell), an extent outside [DecoupledMinExtent,
// DecoupledMaxExtent], a domain whose steps do not fit in int, POLYC_CUDA_LANES set (a term-table
// setting), or POLYC_CUDA_DECOUPLED=0. `Statement` as for decoupledWavefront; this sets its rows and cols.
// A pipeline's block of rows passes `connect` (PeerPipeline::connector): called with the number of strips
// on every rank, before anything is launched, it fills the kernel's links, or returns false (on every rank)
// and nothing runs.
template <class Statement, class Connect = NoPipeline>
bool launchDecoupled(Statement st, int64_t rows, int64_t cols, int64_t extent, FlexibleBoardStorage &storage,
                     cudaStream_t stream, const char *name, Connect &&connect = {}) {
  using Elem = typename Statement::Elem;
  if constexpr (!std::is_same_v<Elem, float> && !std::is_same_v<Elem, double>) {
    return false;
  } else {
    // Steps past the rows (twice the widest strip), columns past the last.
    constexpr int64_t Margin = 2 * DecoupledWidestStrip + DecoupledMaxExtent;
    if (lanesOverride() || rows + Margin >= INT32_MAX || cols + Margin >= INT32_MAX)
      return false;
    const std::optional<bool> forced = decoupledOverride();
    if (forced && !*forced)
      return false;
    st.rows = int(rows);
    st.cols = int(cols);
    bool connected = true;
    const bool built = withDecoupledExtent(extent, [&](auto m) {
      using Shape = DecoupledShape<decltype(m)::value>;
      const int strips = int((cols + Shape::S - 1) / Shape::S);
      PipelineLinks links;
      connected = connect(std::max(strips, 0), links);
      if (!connected || strips <= 0 || rows <= 0)
        return;
      const auto kernel = decoupledWavefront<Shape, Statement>;
      const int grid = flexibleGridSize(kernel, Shape::BlockThreads, 0, strips, name);
      if (verbose())
        std::fprintf(stderr,
                     "polyc: %s: decoupled step, window %d, %d lanes x %d columns, %d threads per block, "
                     "%d strips\n",
                     name, Shape::M, Shape::G, Shape::S, Shape::BlockThreads, strips);
      if (strips > 1) {
        decoupledMarkEdges<Shape><<<2 * deviceProperties().multiProcessorCount, 256, 0, stream>>>(st, strips);
        POLYC_CUDA_CHECK_LAUNCH(name);
      }
      const FlexibleBoard board = storage.reset(strips, 0, 0, stream); // the ticket
      kernel<<<grid, Shape::BlockThreads, 0, stream>>>(st, board, links);
      POLYC_CUDA_CHECK_LAUNCH(name);
    });
    return built && connected;
  }
}

} // namespace polyc::rt::cuda
