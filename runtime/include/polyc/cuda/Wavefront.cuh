// Device-side machinery of the flexible wavefront (seed 004) for generated CUDA programs: per-column
// progress counters and column locks in global memory, the persistent kernel's column scheduler
// (runFlexibleWavefront), and the shared-memory staging a strip of columns computes from
// (StripWindow: rings of recent rows; StagedArray: small point-invariant arrays).
//
// Terms. The recurrence's points (row, col) are split into "columns" of the processor grid: strips of
// S consecutive image columns. A block that owns a strip walks it in "steps": at step s the group of
// lanes l (0 <= l < S) computes the point (s - l, c0 + l), a skew inside the strip, so the S points of
// a step are independent and computed in parallel; each point's window sum is a group reduction over
// G lanes. A strip has rows + S - 1 steps. Everything a step reads is in shared memory: the rings hold
// the rows around the step, filled when the block takes the strip and then one row per step, loaded
// two steps ahead so that the loads' latency hides behind the computation.
//
// The block. Its compute threads (S x G, whole warps) compute the steps and synchronize among
// themselves with a named barrier; one more warp, the coordinator, does all of the block's talking
// to other blocks: it chooses and locks columns, polls the left neighbour's progress and posts the step
// limit it allows, and publishes the steps the compute threads report done. The compute threads thus
// never wait on a global-memory fence, and on a poll's round trip only when a step must wait anyway;
// the hand-over between strips costs the lag and a poll, not a fence in the critical warp
// (docs/performance.md at 2c04002, CUDA, "A coordinator warp").
//
// Ordering. progress[c] is written with release semantics (cuda::atomic_ref, memory_order_release:
// a fence, then the store) by the coordinator after it has read, with block-scope acquire, the step
// that compute thread 0 reported with block-scope release after the compute threads' barrier; release
// is cumulative, so the stores of every compute thread are published. progress[c - 1] is read with
// acquire semantics (ld.acquire) by the coordinator, which posts the limit with block-scope release;
// compute thread 0 reads it with block-scope acquire before the barrier after which the compute
// threads read the data. (When a step must wait, thread 0 also reads progress[c - 1] itself with
// acquire semantics, before the same barrier.) Data of other strips is read with ld.global.cg (L2,
// the point of coherence), never from a possibly stale L1 line. Column locks are taken with atomicCAS
// followed by an acquire fence and released with a release fence followed by atomicExch.
//
// Reservation. A block looking for work takes the leftmost column it can compute now, or else the
// leftmost one whose left neighbour is being computed (Computing): it reserves that column and waits
// for the neighbour to allow its first step, so that a strip's successor is in place, with the
// column chosen and locked, when the strip's progress first allows it (choosing a column when it is
// already ready cost 8-12 us a strip on the H100: docs/performance.md at 2c04002, CUDA).
//
// Deadlock freedom, whatever order the hardware starts blocks in and for any grid size >= 1:
//  1. A block holds at most one lock, and only while it runs (a block that has not started holds
//     nothing, so non-resident blocks cannot block resident ones).
//  2. A block never waits unboundedly while holding a lock: when its column's next step is not
//     allowed, its compute threads wait until the coordinator posts a limit that allows it or reports
//     that the left neighbour's progress has not moved for WaitBudgetNs (progress only grows, up to
//     the column's steps, so the wait is finite); then they leave the column, and the coordinator
//     publishes their last step and releases the lock before the block chooses again.
//  3. Columns finish in order (the last step of column c needs column c - 1 finished), so the
//     unfinished columns are [frontier, columns). The frontier column's left neighbour is finished,
//     so the frontier column is always ready: a block holding it never waits, and a block choosing a
//     column scans from the frontier and takes it if it is unlocked.
// Hence some block always makes progress on the frontier column within a bounded time, and every
// column finishes. A block without a column holds no lock while it backs off and retries.
#pragma once

#include "polyc/cuda/BlockReduce.cuh"
#include "polyc/cuda/Device.h"

#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>

namespace polyc::rt::cuda {

// ---- Memory-order helpers (device scope)

__device__ __forceinline__ int loadRelaxed(const int *address) {
  return ::cuda::atomic_ref<int, ::cuda::thread_scope_device>(*const_cast<int *>(address))
      .load(::cuda::memory_order_relaxed);
}
__device__ __forceinline__ int loadAcquire(const int *address) {
  return ::cuda::atomic_ref<int, ::cuda::thread_scope_device>(*const_cast<int *>(address))
      .load(::cuda::memory_order_acquire);
}
__device__ __forceinline__ void storeRelaxed(int *address, int value) {
  ::cuda::atomic_ref<int, ::cuda::thread_scope_device>(*address).store(value, ::cuda::memory_order_relaxed);
}
__device__ __forceinline__ void storeRelease(int *address, int value) {
  ::cuda::atomic_ref<int, ::cuda::thread_scope_device>(*address).store(value,
                                                                       ::cuda::memory_order_release);
}
__device__ __forceinline__ void acquireFence() {
  ::cuda::atomic_thread_fence(::cuda::memory_order_acquire, ::cuda::thread_scope_device);
}
__device__ __forceinline__ void releaseFence() {
  ::cuda::atomic_thread_fence(::cuda::memory_order_release, ::cuda::thread_scope_device);
}
__device__ __forceinline__ uint64_t globalNanoseconds() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// ---- The board: what the blocks of one flexible wavefront share

struct FlexibleBoard {
  int *progress = nullptr; // [columns]: the last step finished in each column, -1 before the first
  int *locks = nullptr;    // [columns]: a ColumnLock state
  int *frontier = nullptr; // [1]: the number of finished columns (they finish in order)
  int columns = 0;
  int steps = 0; // steps per column
  int lag = 0;   // step s of column c > 0 needs progress[c - 1] >= min(s + lag, steps - 1)
};

// A column's lock: free, or owned by a block that waits for its first step (Reserved) or computes.
enum ColumnLock : int { Unlocked = 0, Reserved = 1, Computing = 2 };

// The last step of `column` that the left neighbour's progress allows (steps - 1 when it is done).
__device__ __forceinline__ int stepLimit(const FlexibleBoard &board, int leftProgress) {
  return leftProgress >= board.steps - 1 ? board.steps - 1 : leftProgress - board.lag;
}

// Host side: the board's storage, reset before every run (progress -1, locks and frontier 0).
class FlexibleBoardStorage {
public:
  FlexibleBoard reset(int columns, int steps, int lag, cudaStream_t stream) {
    const size_t count = 2 * size_t(columns) + 1;
    buffer_.resize(count * sizeof(int));
    FlexibleBoard board;
    board.progress = buffer_.as<int>();
    board.locks = board.progress + columns;
    board.frontier = board.locks + columns;
    board.columns = columns;
    board.steps = steps;
    board.lag = lag;
    POLYC_CUDA_CHECK(cudaMemsetAsync(board.progress, 0xff, size_t(columns) * sizeof(int), stream));
    POLYC_CUDA_CHECK(cudaMemsetAsync(board.locks, 0, (size_t(columns) + 1) * sizeof(int), stream));
    return board;
  }

private:
  DeviceBuffer buffer_;
};

// The persistent kernel's grid: POLYC_CUDA_GRID if set, else the blocks that fit on the device at
// once (occupancy x multiprocessors), at most one per column (more would only poll). Prints the
// choice to stderr when POLYC_CUDA_VERBOSE=1.
template <typename Kernel>
int flexibleGridSize(Kernel kernel, int threads, size_t sharedBytes, int columns, const char *name) {
  int perMultiprocessor = 0;
  POLYC_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, kernel, threads, sharedBytes));
  if (perMultiprocessor == 0)
    throw CudaError(std::string(name) + ": a block of " + std::to_string(threads) + " threads and " +
                    std::to_string(sharedBytes) + " bytes of shared memory does not fit on the device");
  const int resident = perMultiprocessor * deviceProperties().multiProcessorCount;
  const std::optional<int64_t> forced = gridOverride();
  const int grid = forced ? int(*forced) : std::max(1, std::min(resident, columns));
  if (verbose())
    std::fprintf(stderr, "polyc: %s: flexible wavefront grid %d (resident %d, columns %d)\n", name, grid,
                 resident, columns);
  return grid;
}

// ---- The column scheduler

// Shared-memory state of the scheduler in one block, in three groups of 16 bytes that different
// threads write at different times: the compiler reads a group with one wide load, and a wide load
// that reached into another group would race with its writers (compute-sanitizer's racecheck).
struct FlexibleShared {
  // The coordinator's choice, read by every thread after the barrier that follows it.
  alignas(16) int column; // the owned column, or one of the codes below
  int step;               // the first step to compute in it
  int limit;              // the last step the left neighbour allows when the column was chosen
  // Hand-overs between the coordinator and compute thread 0 (postToBlock, readInBlock).
  alignas(16) int posted; // coordinator -> compute: the last step the left neighbour allows, as last seen
  int stalled;            // coordinator -> compute: 1 while the left neighbour has not moved for WaitBudgetNs
  int done;               // compute -> coordinator: the last step computed (its stores before a barrier)
  int leaving;            // compute -> coordinator: 1 once the compute threads have left the column
  // Compute thread 0 -> compute threads, across their barrier.
  alignas(16) int nextLimit[2]; // the limit for the step after, by the step's parity
  int waitLimit;                // the limit after a wait
};
constexpr int NoColumnReady = -1;
constexpr int AllColumnsDone = -2;

// The fields of FlexibleShared that the coordinator shares with the compute threads are written and
// read with read-modify-write atomics only. For the hand-overs
// (postToBlock, readInBlock) compute-sanitizer's racecheck counts only those as atomic on shared memory
// (it reported atomic loads and stores as hazards). For the coordinator's choice (putInBlock,
// takeInBlock: relaxed, ordered by the barrier that follows the choice) it reported the compute
// threads' plain reads after the barrier as racing with the coordinator's next plain write, two
// barriers later: a false hazard of its barrier tracking once the kernel also has a named barrier
// (computeBarrier), which atomics avoid.
// The fields live in the kernel's __shared__ FlexibleShared: the atomics address shared memory directly
// (atom.shared), where atomic_ref on a reference compiled to generic atomics (ATOM.E) on the H100.
__device__ __forceinline__ unsigned sharedAddress(const int &field) {
  return unsigned(__cvta_generic_to_shared(&field));
}
__device__ __forceinline__ void putInBlock(int &field, int value) {
  asm volatile("{ .reg .b32 old; atom.relaxed.cta.shared::cta.exch.b32 old, [%0], %1; }"
               : : "r"(sharedAddress(field)), "r"(value) : "memory");
}
__device__ __forceinline__ int takeInBlock(int &field) {
  int value;
  asm volatile("atom.relaxed.cta.shared::cta.or.b32 %0, [%1], 0;" : "=r"(value) : "r"(sharedAddress(field)) : "memory");
  return value;
}
__device__ __forceinline__ void postToBlock(int &field, int value) {
  asm volatile("{ .reg .b32 old; atom.release.cta.shared::cta.exch.b32 old, [%0], %1; }"
               : : "r"(sharedAddress(field)), "r"(value) : "memory");
}
__device__ __forceinline__ int readInBlock(int &field) {
  int value;
  asm volatile("atom.acquire.cta.shared::cta.or.b32 %0, [%1], 0;" : "=r"(value) : "r"(sharedAddress(field)) : "memory");
  return value;
}

// How long a block owning a column waits for its left neighbour to move before giving the column
// up, and the back-off of a block that found no column. A bound (any bound) on the first is what makes
// the scheme deadlock-free; its size only trades polling against column switches. A build may define
// POLYC_CUDA_WAIT_BUDGET_NS: scripts/gpu-check.sh builds the IIR with 200 ns, so that followers give their
// columns up whenever the neighbour pauses and other blocks take them over mid-way (prepare and enter
// at a step > 0), a path the default budget seldom takes.
#ifndef POLYC_CUDA_WAIT_BUDGET_NS
#define POLYC_CUDA_WAIT_BUDGET_NS 20000
#endif
constexpr uint32_t WaitBudgetNs = POLYC_CUDA_WAIT_BUDGET_NS;
constexpr unsigned MinBackoffNs = 64, MaxBackoffNs = 4096;

// The coordinator warp: the leftmost ready, unlocked, unfinished column at or after the frontier
// (seed 004's condition 10 with "nearest" meaning nearest to the frontier), else the leftmost unlocked
// one whose left neighbour is Computing, locked. Scans 32 columns per round: each lane checks one (its
// loads independent, so one L2 round trip), and the lanes try the candidates' locks from left to
// right, the ready ones first.
__device__ inline void chooseColumn(const FlexibleBoard &board, FlexibleShared &shared) {
  const unsigned lane = threadIdx.x % WarpSize;
  const int frontier = loadRelaxed(board.frontier);
  if (frontier >= board.columns) {
    if (lane == 0)
      putInBlock(shared.column, AllColumnsDone);
    return;
  }
  for (int base = frontier; base < board.columns; base += WarpSize) {
    const int column = base + int(lane);
    bool ready = false, soon = false;
    if (column < board.columns) {
      const int progress = loadRelaxed(&board.progress[column]);
      const int lock = loadRelaxed(&board.locks[column]);
      const int left = column == 0 ? board.steps - 1 : loadRelaxed(&board.progress[column - 1]);
      const int leftLock = column == 0 ? int(Unlocked) : loadRelaxed(&board.locks[column - 1]);
      if (progress < board.steps - 1 && lock == Unlocked) {
        ready = progress + 1 <= stepLimit(board, left);
        soon = !ready && leftLock == Computing;
      }
    }
    for (unsigned candidates : {__ballot_sync(0xffffffffu, ready), __ballot_sync(0xffffffffu, soon)}) {
      while (candidates) {
        const unsigned winner = __ffs(candidates) - 1;
        int taken = 0;
        if (lane == winner && atomicCAS(&board.locks[column], Unlocked, Reserved) == Unlocked) {
          acquireFence(); // see everything the column's previous owner published before unlocking
          const int progress = loadRelaxed(&board.progress[column]);
          if (progress >= board.steps - 1) {
            releaseFence();
            atomicExch(&board.locks[column], Unlocked); // finished meanwhile
          } else {
            const int left = column == 0 ? board.steps - 1 : loadRelaxed(&board.progress[column - 1]);
            acquireFence(); // the left neighbour's data up to `left`
            putInBlock(shared.column, column);
            putInBlock(shared.step, progress + 1);
            putInBlock(shared.limit, stepLimit(board, left));
            taken = 1;
          }
        }
        if (__shfl_sync(0xffffffffu, taken, winner))
          return;
        candidates &= candidates - 1;
      }
    }
  }
  if (lane == 0)
    putInBlock(shared.column, NoColumnReady);
}

// The coordinator's lane 0 while the compute threads own `column`: polls the left neighbour's
// progress (acquire) and posts the step limit it allows, or that it has stalled; publishes the steps
// the compute threads report done (release: a fence, then the store) at most every
// `publishInterval` steps; when the compute threads leave, publishes their last step, advances the
// frontier if the column is finished and unlocks it. The compute threads never wait on a fence for
// this, nor on a global load unless a step waits (waitForLimit): a step costs them a barrier and two
// block-scope hand-overs.
__device__ inline void coordinateColumn(const FlexibleBoard &board, FlexibleShared &shared, int column,
                                        int publishInterval) {
  int published = takeInBlock(shared.step) - 1;
  int seen = column == 0 ? board.steps - 1 : -2; // -2: nothing seen yet
  uint32_t since = uint32_t(globalNanoseconds());
  for (;;) {
    if (seen < board.steps - 1) { // the left neighbour is not finished: poll it
      const int left = loadAcquire(&board.progress[column - 1]);
      const uint32_t now = uint32_t(globalNanoseconds());
      if (left != seen) {
        seen = left;
        since = now;
        postToBlock(shared.posted, stepLimit(board, left));
        postToBlock(shared.stalled, 0);
      } else if (now - since > WaitBudgetNs) {
        postToBlock(shared.stalled, 1);
      }
    }
    const bool leaving = readInBlock(shared.leaving) != 0;
    const int done = readInBlock(shared.done); // after `leaving`: the last step when leaving
    if (done > published && (leaving || done - published >= publishInterval || done == board.steps - 1)) {
      storeRelease(&board.progress[column], done);
      published = done;
    }
    if (leaving) {
      if (published == board.steps - 1)
        atomicMax(board.frontier, column + 1); // after the release store above, in program order
      releaseFence();
      atomicExch(&board.locks[column], Unlocked);
      return;
    }
  }
}

// Compute thread 0, owning `column` whose step `step` the last posted limit does not allow: waits
// until the limit allows it, or the coordinator reports the left neighbour stalled; returns the
// limit. Thread 0 reads the left neighbour's progress itself (acquire) besides the coordinator's
// posts: a step that waits then starts one poll after the progress moves, not after the coordinator's
// poll and post as well. On the H100 that made M = 5 and 9 5-10% faster and left M = 3, 17 and 31
// within 1% (docs/performance.md at 2c04002, CUDA, "The hand-over, traced").
__device__ inline int waitForLimit(const FlexibleBoard &board, FlexibleShared &shared, int column, int step) {
  for (;;) {
    int limit = readInBlock(shared.posted);
    if (limit < step && column > 0)
      limit = max(limit, stepLimit(board, loadAcquire(&board.progress[column - 1])));
    if (limit >= step || readInBlock(shared.stalled))
      return limit;
  }
}

// The barrier of the compute threads alone (named barrier 1; the coordinator warp is not in it).
template <int Threads> __device__ __forceinline__ void computeBarrier() {
  asm volatile("bar.sync 1, %0;" : : "n"(Threads) : "memory");
}

// The compute threads owning `column`: wait until the left neighbour allows the first step (the
// column may be reserved), then compute its steps while the limit the coordinator posts allows them,
// reporting each step done. Leave the column when it is finished or the left neighbour stalls.
template <typename Body>
__device__ void computeColumn(const FlexibleBoard &board, Body &body, FlexibleShared &shared, int column) {
  constexpr int Threads = Body::Threads;
  const bool first = threadIdx.x == 0;
  int step = takeInBlock(shared.step);
  int limit = takeInBlock(shared.limit);
  body.prepare(column, step);
  // Whether the left neighbour allows `step` (its rows that the step reads are all there), after
  // waiting for it if the last limit did not; false when it stalled: the block gives the column up
  // rather than wait holding it.
  auto allowed = [&] {
    if (step <= limit)
      return true;
    if (first)
      shared.waitLimit = waitForLimit(board, shared, column, step);
    computeBarrier<Threads>();
    limit = shared.waitLimit;
    return step <= limit;
  };
  if (allowed()) {
    if (first)
      storeRelaxed(&board.locks[column], Computing); // the right neighbour may now be reserved
    body.enter(column, step);
    computeBarrier<Threads>();
    do {
      body.step(column, step);
      if (first)
        shared.nextLimit[(step + 1) & 1] = readInBlock(shared.posted);
      computeBarrier<Threads>(); // the step's stores, before thread 0 reports them
      if (first)
        postToBlock(shared.done, step);
      limit = max(limit, shared.nextLimit[(step + 1) & 1]);
      ++step;
    } while (step < board.steps && allowed());
  }
  if (first)
    postToBlock(shared.leaving, 1);
}

// The persistent loop every block runs. The coordinator warp (the block's last) chooses a column and
// then coordinates it (coordinateColumn) while the compute threads compute it (computeColumn); a
// block-wide barrier ends each tenure. Stops when every column is finished.
//   Body::Threads:            the compute threads (the block has flexibleBlockThreads(Threads)).
//   body.start():             all threads, once; stages what every column reads (only the compute
//                             threads store).
//   body.prepare(column, step): the compute threads, on taking `column` (it may be reserved): stages
//                             what does not come from other strips for computing it from `step`.
//   body.enter(column, step): the compute threads, once the left neighbour allows `step`: the rest.
//   body.step(column, step):  the compute threads; computes one step (the scheduler adds the barrier).
template <typename Body>
__device__ void runFlexibleWavefront(const FlexibleBoard &board, Body &body, FlexibleShared &shared,
                                     int publishInterval) {
  const bool coordinator = int(threadIdx.x) >= Body::Threads;
  body.start();
  unsigned backoff = MinBackoffNs;
  for (;;) {
    if (coordinator) {
      chooseColumn(board, shared);
      __syncwarp(); // the lane that took the column wrote it for lane 0
      if (threadIdx.x % WarpSize == 0) {
        putInBlock(shared.posted, takeInBlock(shared.limit));
        putInBlock(shared.stalled, 0);
        putInBlock(shared.done, takeInBlock(shared.step) - 1);
        putInBlock(shared.leaving, 0);
      }
    }
    __syncthreads();
    const int column = takeInBlock(shared.column);
    if (column == AllColumnsDone)
      return;
    if (column == NoColumnReady) {
      if (coordinator && threadIdx.x % WarpSize == 0)
        __nanosleep(backoff);
      backoff = backoff < MaxBackoffNs ? 2 * backoff : backoff;
      __syncthreads(); // everyone has read shared.column before the coordinator writes it again
      continue;
    }
    backoff = MinBackoffNs;
    if (!coordinator)
      computeColumn(board, body, shared, column);
    else if (threadIdx.x % WarpSize == 0)
      coordinateColumn(board, shared, column, publishInterval);
    __syncthreads(); // everyone has left the column before the coordinator chooses again
  }
}

// ---- Shared-memory staging for the steps of a strip

enum class BoundaryRule { Zero, Clamp, Mirror };

// The index a read at `index` of an extent-`extent` dimension takes under a clamp or mirror rule
// (docs/language.md: mirror reflects without repeating the edge, then clamps).
__device__ __forceinline__ int64_t boundaryIndex(int64_t index, int64_t extent, BoundaryRule rule) {
  if (rule == BoundaryRule::Mirror) {
    if (index < 0)
      index = -index;
    if (index >= extent)
      index = 2 * (extent - 1) - index;
  }
  return index < 0 ? 0 : (index >= extent ? extent - 1 : index);
}

// A 2D window of an array, as the point (row, col) of a strip reads it: rows row - back .. row + ahead
// and columns col - left .. col + right. Filled in by the host (polyc emits it).
template <typename T> struct WindowGeometry {
  const T *array = nullptr;
  int64_t rows = 0, cols = 0;           // the array's extents along the strip's rows and columns
  int64_t rowStride = 0, colStride = 0; // element (row, col) is array[row * rowStride + col * colStride]
  int back = 0, ahead = 0, left = 0, right = 0;
  BoundaryRule boundary = BoundaryRule::Zero;
  int ringRows = 0;          // R: a power of two > S + back + ahead + 2 (see layoutWindow)
  int stagedCols = 0;        // left + S + right: the columns the ring holds
  int ringCols = 0;          // the ring's row pitch, > stagedCols (see layoutWindow)
  unsigned sharedOffset = 0; // where the ring (2R rows, see StripWindow) starts in dynamic shared memory
};

// Host: completes a window's ring sizes for strips of S columns and returns its bytes.
template <typename T> size_t layoutWindow(WindowGeometry<T> &window, int stripWidth, size_t &sharedBytes) {
  int rows = 1;
  while (rows <= stripWidth + window.back + window.ahead + 2)
    rows *= 2;
  window.ringRows = rows;
  window.stagedCols = window.left + stripWidth + window.right;
  // A window sum's terms, taken in order (columns fastest), run along a window row of `width` cells and
  // on to the next row: with a pitch equal to the width modulo the 32 banks, the 32 terms one warp reads
  // at once fall in 32 different banks (the H100 showed 2-way conflicts on every window read at M = 17).
  const int width = window.left + window.right + 1;
  window.ringCols = window.stagedCols;
  if (width > 1)
    window.ringCols += ((width - window.stagedCols) % 32 + 32) % 32;
  // Column stagedCols of every ring row is the zero column: nothing stages or stores there
  // (StripWindow::bind clears it), so a lane's unused term slots read it (LaneTerms).
  if (window.ringCols == window.stagedCols)
    ++window.ringCols;
  sharedBytes = (sharedBytes + 15) / 16 * 16;
  window.sharedOffset = unsigned(sharedBytes);
  const size_t bytes = 2 * size_t(window.ringRows) * size_t(window.ringCols) * sizeof(T);
  sharedBytes += bytes;
  return bytes;
}

// The staged rows of one array. A read-only input ("Recurrence = false") stages every column of the
// ring; the recurrence (the array the strip computes, "Recurrence = true", back/left only) stages the
// `left` halo columns that other strips compute, while its own columns are written by the steps.
// Rows and columns outside the array hold the boundary rule's value, so reads need no checks.
//
// The ring keeps its R rows twice: row r at slots r mod R and r mod R + R. A point's window, rows
// p - back .. p + ahead, is then one contiguous run of slots, and a read at (row, col) is a constant
// offset from the point's own cell (View): the point code's addresses are pointer arithmetic, with no
// wrap-around mask or multiply per term (Nsight Compute showed those, with 64-bit index math, as most
// of a step's instructions on the H100: docs/performance.md at 2c04002, CUDA).
template <typename T, int S, bool Recurrence> struct StripWindow {
  WindowGeometry<T> geometry;
  T *ring = nullptr;
  int threads = 0;  // threads in the block
  int stager = 0;   // this thread's index among the window's stagers (see bind)
  int firstCol = 0; // the strip's first column
  // The staged column of this thread (stager < perRow()) in the current strip, set by prepare().
  int64_t columnOffset = 0;  // col x colStride
  bool columnInside = false; // 0 <= col < cols
  // This thread's elements of the next row to store (`pending`, loaded one step earlier) and of the
  // row after it (`next`, loaded by this step's prefetch). commit() moves `next` into `pending` at the
  // end of the step, so a load has a whole step's computation to complete before anything waits on
  // it. (A variant that kept both in registers indexed by the step's parity, compiling the step twice
  // to avoid the move, measured slower on the H100: docs/performance.md at 2c04002, CUDA.)
  T pending = T(0), next = T(0);
  // Cursors for the step the block computes next: set when the block takes the strip (aim), advanced
  // by commit(), so that a step's ring and array addresses cost an add each, not a mask, a slot choice
  // and 64-bit multiplies (Nsight Compute found that arithmetic, and the branches around it, to be
  // most of a step's fixed chain on the H100: docs/performance.md at 2c04002, CUDA).
  int pointLane = 0;        // the strip lane of this thread's point: (step - pointLane, firstCol + pointLane)
  int copyCells = 0;        // R x ringCols: from a ring row's first copy to its second
  bool quickRows = false;   // a row is one column a stager, under the zero rule: prefetch's cursor path
  T *pointCell = nullptr;   // the point's cell in the copy where its window's rows are consecutive (view)
  int pointRowsLeft = 0;    // rows until pointCell passes the end of that copy and wraps R rows back
  T *commitCell = nullptr;  // the staged column's cell of row step + ahead + 1, first copy (commit)
  int commitRowsLeft = 0;   // rows until commitCell wraps
  int64_t pointOffset = 0;  // the point's element of the array (store; the recurrence only)
  int64_t loadOffset = 0;   // the staged column's element of row step + ahead + 2 (prefetch)
  int loadEnd = 0;          // loads row step + ahead + 2 while it is < loadEnd: the rows, or 0 if none

  // Binds the ring in the block's shared memory. The threads that stage the rows of the `window`-th of
  // `windows` windows start at the (window + 1)-th of windows + 1 equal parts of the compute threads
  // (whole warps): a step costs the block its slowest warp, and warp 0 already hands the step's limit
  // and progress to the coordinator, so the windows' loads and stores go to different warps (staging from
  // thread 0 cost 5-15% on the H100: docs/performance.md at 2c04002, CUDA, "Strip shapes by window size").
  __device__ void bind(unsigned char *shared, int blockThreads, int window, int windows) {
    ring = reinterpret_cast<T *>(shared + geometry.sharedOffset);
    threads = blockThreads;
    const int first = (window + 1) * blockThreads / (windows + 1) / WarpSize * WarpSize;
    stager = (int(threadIdx.x) - first + blockThreads) % blockThreads;
    pointLane = int(threadIdx.x) / (blockThreads / S); // the block's compute threads are S groups
    copyCells = geometry.ringRows * geometry.ringCols;
    for (int row = int(threadIdx.x); row < 2 * geometry.ringRows; row += int(blockDim.x))
      ring[row * geometry.ringCols + geometry.stagedCols] = T(0); // the zero column, read after start()'s barriers
    quickRows = perRow() <= blockThreads && (Recurrence || geometry.boundary == BoundaryRule::Zero);
  }
  // From this thread's point cell to the zero column of the same ring row, in bytes (LaneTerms::load).
  __device__ int zeroCellBytes() const {
    return (geometry.stagedCols - (pointLane + geometry.left)) * int(sizeof(T));
  }
  __device__ __forceinline__ int perRow() const {
    return Recurrence ? geometry.left : geometry.stagedCols;
  }
  // Both copies of a staged element.
  __device__ __forceinline__ void putCell(int row, int ringCol, T value) const {
    const int slot = (row & (geometry.ringRows - 1)) * geometry.ringCols + ringCol;
    ring[slot] = value;
    ring[slot + geometry.ringRows * geometry.ringCols] = value;
  }
  __device__ __forceinline__ void put(int row, int col, T value) const {
    putCell(row, col - firstCol + geometry.left, value);
  }
  // The element `offset` elements into the array. The recurrence's elements come from other blocks,
  // so they are read at L2 (ld.global.cg), never from a stale L1 line.
  __device__ __forceinline__ T fetch(int64_t offset) const {
    const T *element = geometry.array + offset;
    return Recurrence ? __ldcg(element) : __ldg(element);
  }
  // An element of the array with the boundary rule.
  __device__ __forceinline__ T load(int row, int col) const {
    int64_t r = row, c = col;
    if (Recurrence || geometry.boundary == BoundaryRule::Zero) {
      // The launch checks that the extents fit in an int: 32-bit compares.
      if (row < 0 || col < 0 || row >= int(geometry.rows) || col >= int(geometry.cols))
        return T(0);
    } else {
      r = boundaryIndex(r, geometry.rows, geometry.boundary);
      c = boundaryIndex(c, geometry.cols, geometry.boundary);
    }
    return fetch(r * geometry.rowStride + c * geometry.colStride);
  }
  __device__ __forceinline__ int stagedCol(int index) const { return firstCol - geometry.left + index; }
  // This thread's staged column at `row` (load(row, stagedCol(stager)) with the column's part done).
  __device__ __forceinline__ T loadColumn(int row) const {
    if (!Recurrence && geometry.boundary != BoundaryRule::Zero)
      return load(row, stagedCol(stager));
    if (!columnInside || row < 0 || row >= int(geometry.rows))
      return T(0);
    return fetch(int64_t(row) * geometry.rowStride + columnOffset);
  }

  // When the block takes the strip, before the left neighbour allows step `firstStep`: stages the rows
  // that step reads that do not come from other strips, all of an input's and the recurrence's own
  // columns (of these, the cells no lane has computed yet hold stale values that are overwritten before
  // anyone reads them), and loads an input's row after them for commit(firstStep). The staging is off
  // the hand-over's path while the column waits reserved (it took 5.6 us at M = 3 on the H100).
  __device__ void prepare(int column, int firstStep) {
    firstCol = column * S;
    const int ownColumn = stagedCol(stager);
    columnOffset = int64_t(ownColumn) * geometry.colStride;
    columnInside = ownColumn >= 0 && ownColumn < int(geometry.cols);
    stageRows(firstStep, Recurrence ? geometry.left : 0, geometry.stagedCols);
    if (!Recurrence)
      loadNextRow(firstStep);
    aim(firstStep);
  }
  // The cursors for computing step `step` next.
  __device__ void aim(int step) {
    const int R = geometry.ringRows;
    const int row = step - pointLane, slot = row & (R - 1);
    const int base = slot + geometry.ahead < R ? slot + R : slot;
    pointCell = ring + base * geometry.ringCols + pointLane + geometry.left;
    pointRowsLeft = 2 * R - geometry.ahead - base;
    if constexpr (Recurrence)
      pointOffset = int64_t(row) * geometry.rowStride + int64_t(firstCol + pointLane) * geometry.colStride;
    const int commitSlot = (step + geometry.ahead + 1) & (R - 1);
    commitCell = ring + commitSlot * geometry.ringCols + stager;
    commitRowsLeft = R - commitSlot;
    loadOffset = int64_t(step + geometry.ahead + 2) * geometry.rowStride + columnOffset;
    loadEnd = stager < perRow() && columnInside ? int(geometry.rows) : 0;
  }
  // Once the left neighbour allows step `firstStep`: the recurrence's halo columns, which its strip
  // computed, and their row after them for commit(firstStep).
  __device__ void enter(int firstStep) {
    if (Recurrence) {
      stageRows(firstStep, 0, geometry.left);
      loadNextRow(firstStep);
    }
  }
  // The staged columns [from, to) of the rows step `firstStep` reads.
  __device__ void stageRows(int firstStep, int from, int to) {
    const int width = to - from;
    if (width <= 0)
      return;
    const int lowRow = firstStep - (S - 1) - geometry.back;
    const int count = (firstStep + geometry.ahead - lowRow + 1) * width;
    // Up to StageBatch loads a thread in flight before their stores: the halo's staging in enter() is on
    // the hand-over's critical path, and one global round trip per element a thread cost it microseconds.
    constexpr int StageBatch = 4;
    for (int base = threadIdx.x; base < count; base += StageBatch * threads) {
      T values[StageBatch];
#pragma unroll
      for (int b = 0; b < StageBatch; ++b) {
        const int index = base + b * threads;
        values[b] = index < count ? load(lowRow + index / width, stagedCol(from + index % width)) : T(0);
      }
#pragma unroll
      for (int b = 0; b < StageBatch; ++b) {
        const int index = base + b * threads;
        if (index < count)
          put(lowRow + index / width, stagedCol(from + index % width), values[b]);
      }
    }
  }
  __device__ void loadNextRow(int firstStep) {
    const int nextRow = firstStep + geometry.ahead + 1;
    if (stager < perRow())
      pending = loadColumn(nextRow);
    for (int index = threads + stager; index < perRow(); index += threads)
      put(nextRow, stagedCol(index), load(nextRow, stagedCol(index)));
  }
  // Issues the loads of row step + ahead + 2. Nobody reads that row before step + 2, and its ring
  // slots hold a row older than any step `step` reads (ringRows > S + back + ahead + 2).
  __device__ __forceinline__ void prefetch(int step) {
    if (quickRows) {
      next = step + geometry.ahead + 2 < loadEnd ? fetch(loadOffset) : T(0);
      return;
    }
    const int row = step + geometry.ahead + 2;
    if (stager < perRow())
      next = loadColumn(row);
    for (int index = threads + stager; index < perRow(); index += threads)
      put(row, stagedCol(index), load(row, stagedCol(index)));
  }
  // Stores row step + ahead + 1, loaded one step earlier, after this step's reads; then moves the
  // cursors on to the next step.
  __device__ __forceinline__ void commit() {
    if (stager < perRow()) {
      commitCell[0] = pending;
      commitCell[copyCells] = pending;
      pending = next;
    }
    commitCell += geometry.ringCols;
    if (--commitRowsLeft == 0) {
      commitCell -= copyCells;
      commitRowsLeft = geometry.ringRows;
    }
    pointCell += geometry.ringCols;
    if (--pointRowsLeft == 0) {
      pointCell -= copyCells;
      pointRowsLeft = geometry.ringRows;
    }
    if constexpr (Recurrence)
      pointOffset += geometry.rowStride;
    loadOffset += geometry.rowStride;
  }
  // The recurrence's value of this thread's point (row, col) = (step - pointLane, firstCol + pointLane)
  // of the step being computed, into the ring and the array: the cursors know where it goes. The
  // recurrence's window has no rows ahead, so the point's cell is in the ring's second copy (aim:
  // base = slot + R) and its first copy R rows before.
  __device__ __forceinline__ void store(T value, T *array) const {
    static_assert(Recurrence, "only the recurrence's window stores");
    pointCell[0] = value;
    pointCell[-copyCells] = value;
    array[pointOffset] = value;
  }
  // What the point's code reads through: window(row, col) for the rows and columns of the point's
  // window, as an offset from the point's own cell.
  struct View {
    const T *origin; // the cell of (pointRow, pointCol)
    int ringCols, pointRow, pointCol;
    __device__ __forceinline__ T operator()(int row, int col) const {
      return origin[(row - pointRow) * ringCols + (col - pointCol)];
    }
    // The cell `offset` elements from the point's (a term table's offsets: Term).
    __device__ __forceinline__ T at(int offset) const { return origin[offset]; }
    // The cell `bytes` bytes from the point's (LaneTerms keeps its offsets in bytes: one add and one
    // shared load a term, where an element offset costs a multiply more).
    __device__ __forceinline__ T atBytes(int bytes) const {
      return *reinterpret_cast<const T *>(reinterpret_cast<const unsigned char *>(origin) + bytes);
    }
  };
  // The view of this thread's point (row, col) = (step - pointLane, firstCol + pointLane) of the step
  // being computed: its cell in the copy of the ring where rows row - back .. row + ahead are
  // consecutive slots.
  __device__ __forceinline__ View view(int row, int col) const {
    return View{pointCell, geometry.ringCols, row, col};
  }
};

// A small read-only array whose reads do not depend on the point (filter coefficients), copied to
// shared memory once per block.
template <typename T> struct StagedArray {
  const T *array = nullptr;
  int64_t count = 0;
  unsigned sharedOffset = 0;
};

// Host: places a staged array in the block's dynamic shared memory.
template <typename T> void layoutStaged(StagedArray<T> &staged, size_t &sharedBytes) {
  sharedBytes = (sharedBytes + 15) / 16 * 16;
  staged.sharedOffset = unsigned(sharedBytes);
  sharedBytes += size_t(staged.count) * sizeof(T);
}

// The first `threads` threads of the block copy (the flexible wavefront's coordinator warp does not).
template <typename T> __device__ T *stageArray(const StagedArray<T> &staged, unsigned char *shared, int threads) {
  T *copy = reinterpret_cast<T *>(shared + staged.sharedOffset);
  for (int64_t index = threadIdx.x; index < staged.count && int(threadIdx.x) < threads; index += threads)
    copy[index] = __ldg(staged.array + index);
  return copy;
}

// ---- Term tables: a window sum dealt out term by term
//
// A window sum whose terms are a point-invariant coefficient times one window read,
//   sum(k1, k2 in 0..M where ...) b[k1, k2] * y[i - k1, j - k2],
// is the same list of (coefficient, offset from the point's cell) pairs at every point. Built once per
// block, the list lets a point's G lanes take the terms in turn (t, t + G, ...): every lane busy
// whatever the window's shape (lanes over one variable leave 15 of 32 idle at M = 17), no loop nest,
// no `where` test. A lane's terms are the same at every step, so its first ones live in registers
// (LaneTerms): such a term costs one load of the window and an FMA, and the loads of a step are
// independent of each other.
template <typename T> struct alignas(sizeof(T) < 8 ? 8 : 16) Term { // one load of the pair
  T coefficient;
  int offset; // in the point's View: window cell = origin[offset]
};

// Where a table lives in dynamic shared memory: its term count, then up to `capacity` terms.
struct TermTableLayout {
  int64_t capacity = 0;
  unsigned sharedOffset = 0;
};

// Host: places a term table for up to the product of `extents` terms (the reduction variables'
// extents). A capacity too large for any block makes the layout too large to fit, so the launch falls
// back to the fixed wavefront.
template <typename T>
void layoutTerms(TermTableLayout &table, std::initializer_list<int64_t> extents, size_t &sharedBytes) {
  table.capacity = termCapacity(extents);
  sharedBytes = (sharedBytes + 15) / 16 * 16;
  table.sharedOffset = unsigned(sharedBytes);
  sharedBytes += 16 + size_t(table.capacity) * sizeof(Term<T>);
}

template <typename T> struct TermTable {
  int *count = nullptr;
  Term<T> *terms = nullptr;

  __device__ void bind(const TermTableLayout &layout, unsigned char *shared) {
    count = reinterpret_cast<int *>(shared + layout.sharedOffset);
    terms = reinterpret_cast<Term<T> *>(shared + layout.sharedOffset + 16);
  }
  __device__ __forceinline__ int size() const { return *count; }
};

// One lane's view of a term table: its terms lane, lane + G, ..., lane + (K - 1) G in registers,
// loaded once per block after the table is built; terms from lane + K G on are read from the table.
// K comes with the strip's shape (StripShape, TermTableShapes in Device.h). A slot with no term (the
// table holds fewer than K G) is the term 0 x a cell that is always 0, its window's zero column
// (StripWindow::zeroCellBytes), so every slot is an unpredicated load and FMA. That adds exactly 0: a
// zero coefficient times a window cell could be 0 x inf = NaN. (Predicating the slots instead serialized
// their loads, and a branch between the two forms cost the H100 up to 12% a step at M = 17:
// docs/performance.md at 2c04002, CUDA, "Empty term slots".)
template <typename T, int K> struct LaneTerms {
  static constexpr int Held = K;
  TermTable<T> table;
  T coefficient[K];
  int offsetBytes[K]; // from the point's cell (View::atBytes)
  int count = 0;      // the table's terms (kept here: a step reads no shared memory to know it)

  // `zeroBytes`: from the point's cell to a cell that is always 0, in bytes.
  __device__ void load(const TermTable<T> &source, unsigned lane, unsigned lanes, int zeroBytes) {
    table = source;
    count = table.size();
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int t = int(lane) + k * int(lanes);
      coefficient[k] = T(0);
      offsetBytes[k] = zeroBytes;
      if (t < count) {
        const Term<T> term = table.terms[t];
        coefficient[k] = term.coefficient;
        offsetBytes[k] = term.offset * int(sizeof(T));
      }
    }
  }

  // Calls update(coefficient, cell) for each of the lane's terms of the point seen through `view`:
  // the K slots it holds, then the rest of its terms from the table.
  template <unsigned G, typename View, typename Update>
  __device__ __forceinline__ void forEachTerm(unsigned lane, const View &view, Update update) const {
#pragma unroll
    for (int k = 0; k < K; ++k)
      update(coefficient[k], view.atBytes(offsetBytes[k]));
#pragma unroll 4
    for (int t = int(lane) + K * int(G); t < count; t += int(G)) {
      const Term<T> term = table.terms[t];
      update(term.coefficient, view.at(term.offset));
    }
  }
};

// Appends the terms that one warp (all 32 lanes, converged) finds in one pass over 32 candidate
// terms, in candidate order: a ballot of the kept ones, each lane's slot from the kept lanes before
// it. Called by warp 0 alone while the block builds its tables; `count` starts at 0.
template <typename T> struct TermAppender {
  TermTable<T> table;
  int count = 0;

  __device__ void append(bool keep, T coefficient, int offset) {
    const unsigned kept = __ballot_sync(0xffffffffu, keep);
    if (keep)
      table.terms[count + __popc(kept & ((1u << (threadIdx.x % WarpSize)) - 1))] = Term<T>{coefficient, offset};
    count += __popc(kept);
  }
  __device__ void finish() {
    if (threadIdx.x == 0)
      *table.count = count;
  }
};

// The strip lanes of the calling thread: which of the S points of a step it helps compute, and its
// lane in that point's group of G threads.
template <int G> __device__ __forceinline__ int stripLane() { return int(threadIdx.x) / G; }
template <int G> __device__ __forceinline__ unsigned groupLane() { return threadIdx.x % G; }

// Host: the flexible wavefront's launch. `Kernel` is the generated persistent kernel
// (FlexibleBoard, Args, int) for `computeThreads` compute threads; `columns` strips of `stripWidth`
// columns with `steps` steps each.
template <typename Kernel, typename Args>
void launchFlexible(Kernel kernel, FlexibleBoardStorage &storage, const Args &args, int computeThreads,
                    size_t sharedBytes, int columns, int steps, int lag, int publishInterval,
                    cudaStream_t stream, const char *name) {
  if (columns <= 0 || steps <= 0)
    return;
  const int threads = flexibleBlockThreads(computeThreads);
  POLYC_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
  const int grid = flexibleGridSize(kernel, threads, sharedBytes, columns, name);
  if (const std::optional<int64_t> forced = publishOverride())
    publishInterval = int(*forced);
  if (verbose())
    std::fprintf(stderr, "polyc: %s: %d threads per block, %zu bytes of shared memory, progress every %d steps\n",
                 name, threads, sharedBytes, publishInterval);
  const FlexibleBoard board = storage.reset(columns, steps, lag, stream);
  kernel<<<grid, threads, sharedBytes, stream>>>(board, args, publishInterval);
  POLYC_CUDA_CHECK_LAUNCH(name);
}

// Host: whether `sharedBytes` of dynamic shared memory fit in a block (else a program uses its fixed
// wavefront).
inline bool fitsInSharedMemory(size_t sharedBytes) {
  return sharedBytes + sizeof(FlexibleShared) <= deviceProperties().sharedMemPerBlockOptin;
}


} // namespace polyc::rt::cuda
