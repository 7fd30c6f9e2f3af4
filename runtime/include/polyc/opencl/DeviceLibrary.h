// Device-side OpenCL C building blocks, kept as source text: work-group reductions and the flexible
// wavefront's column locks and progress counters (seed 004). polyc's OpenCL code generator copies the
// parts a program uses into the emitted .cl, so the kernels a reader sees are complete; the runtime's
// own tests build them directly.
#pragma once

namespace polyc::rt::ocl {

// Work-group reductions over local memory. Every work-item of the group must call them (they contain
// barriers) with a __local scratch array of get_local_size(0) elements; every work-item gets the result.
// The f64 variants exist when the including program enables cl_khr_fp64 and defines POLYC_USE_FP64.
inline constexpr const char *kWorkGroupReductionSource = R"CLC(
// ---- polyc device library: work-group reductions ----
// A tree over local memory: at each level the lower half folds in the upper half. Works for any group
// size (odd widths keep their middle element). Ends with a barrier so the scratch can be reused at once.
#define POLYC_DEFINE_WG_REDUCE(NAME, T, COMBINE)                                                    \
  T NAME(T value, __local T *scratch) {                                                             \
    const uint lid = get_local_id(0);                                                               \
    uint width = get_local_size(0);                                                                 \
    scratch[lid] = value;                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    while (width > 1) {                                                                             \
      const uint upper = (width + 1) / 2;                                                           \
      if (lid + upper < width)                                                                      \
        scratch[lid] = COMBINE(scratch[lid], scratch[lid + upper]);                                 \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
      width = upper;                                                                                \
    }                                                                                               \
    const T result = scratch[0];                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    return result;                                                                                  \
  }
#define POLYC_ADD(a, b) ((a) + (b))
POLYC_DEFINE_WG_REDUCE(polyc_wg_sum_f32, float, POLYC_ADD)
POLYC_DEFINE_WG_REDUCE(polyc_wg_max_f32, float, max)
POLYC_DEFINE_WG_REDUCE(polyc_wg_min_f32, float, min)
POLYC_DEFINE_WG_REDUCE(polyc_wg_sum_i32, int, POLYC_ADD)
POLYC_DEFINE_WG_REDUCE(polyc_wg_max_i32, int, max)
POLYC_DEFINE_WG_REDUCE(polyc_wg_min_i32, int, min)
#ifdef POLYC_USE_FP64
POLYC_DEFINE_WG_REDUCE(polyc_wg_sum_f64, double, POLYC_ADD)
POLYC_DEFINE_WG_REDUCE(polyc_wg_max_f64, double, max)
POLYC_DEFINE_WG_REDUCE(polyc_wg_min_f64, double, min)
#endif
)CLC";

// The flexible wavefront (seed 004, Listing 3, made correct). A wavefront over a rows x columns domain
// where point (r, c) needs only points (r', c') with r' <= r, c' <= c, (r', c') != (r, c). The kernel is
// persistent: each work-group repeatedly takes a column, computes rows while the left neighbour is
// ahead, publishes its progress after each row and releases the column when it catches up.
//
// Global state, zeroed by the host before the launch:
//   progress[c]  rows of column c finished (0..rows); non-increasing in c, since a column never passes
//                its left neighbour;
//   locks[c]     1 while a work-group owns column c;
//   completed[0] how many columns are complete; they complete in order, so columns [0, completed) are.
//
// Why it cannot deadlock, whatever order or concurrency the device runs work-groups with (PoCL's CPU
// device may run them one after another on a thread): a work-group never waits while it holds a lock,
// it computes rows only while they are ready and releases the column as soon as the left neighbour is
// not ahead. A work-group that holds no lock scans again (the scan reads but never waits). The lowest incomplete column is always ready
// (its left neighbour is complete); it is either free, so the scanning work-group takes it, or locked
// by a work-group that has started and is computing. So some work-group always makes progress, and a
// work-group running alone finishes all the work by itself.
//
// Memory ordering (OpenCL C 1.2, which PoCL 3.1 and NVIDIA's driver both compile; neither offers
// OpenCL 2.0 acquire/release atomics at device scope on both): counters and locks are read and written
// only with atomic_* functions; a publisher fences its data stores (mem_fence(CLK_GLOBAL_MEM_FENCE)) and
// synchronises its group (barrier) before the atomic that publishes progress; a reader fences after the
// atomic that observed progress and before its group reads the data. Data written during the kernel by
// other work-groups must be read through volatile pointers: GPU L1 caches are not coherent between
// compute units, and a volatile load bypasses them.
inline constexpr const char *kFlexibleWavefrontSource = R"CLC(
// ---- polyc device library: flexible wavefront (column locks, progress counters) ----
// The kernel is one flat loop (PoCL's work-group compiler rejects barriers under nested loops with
// early exits):
//   polyc_wf_state state = polyc_wf_begin();
//   while (!state.done) {
//     if (state.column < 0) polyc_wf_scan(&state, ...);          // look for a column, maybe lock it
//     else { compute row state.row of column state.column; polyc_wf_publish(&state, ...); }
//   }
// Every call is made by the whole work-group; the state is the same in every work-item.

// An atomic read: OpenCL C 1.2 has no atomic load; an atomic OR with zero is one.
#define POLYC_ATOMIC_LOAD(pointer) atomic_or((pointer), 0)

typedef struct {
  int column;    // the column this work-group holds the lock of; -1: none
  int row;       // the next row to compute in it
  int ready;     // rows below this are ready (the left neighbour's progress when last read)
  int scanStart; // where the next scan window starts; -1: at the lowest incomplete column
  int done;      // every column is complete
} polyc_wf_state;

polyc_wf_state polyc_wf_begin(void) {
  polyc_wf_state state;
  state.column = -1;
  state.row = state.ready = 0;
  state.scanStart = -1;
  state.done = 0;
  return state;
}

// Looks at G columns (G = the group size) from state->scanStart, or from the lowest incomplete column,
// for the lowest one that is incomplete, ready (its left neighbour is ahead) and unlocked, and tries to
// lock it. If none is, the next scan looks at the next G columns, or starts over when no column beyond
// could be ready. `scratch` holds G ints of local memory, `shared` 4.
void polyc_wf_scan(polyc_wf_state *state, __global int *progress, __global int *locks,
                   __global int *completed, int rows, int columns, __local int *scratch,
                   __local int *shared) {
  const int lid = get_local_id(0), groupSize = get_local_size(0);
  if (lid == 0)
    shared[0] = POLYC_ATOMIC_LOAD(completed);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int base = shared[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  const int start = state->scanStart < base ? base : state->scanStart;
  const int column = start + lid;
  int candidate = INT_MAX, exhausted = 1;
  if (column < columns && rows > 0) {
    const int left = column == 0 ? rows : POLYC_ATOMIC_LOAD(&progress[column - 1]);
    // A column whose left neighbour has not started cannot run, nor can any column after it.
    exhausted = left == 0;
    if (!exhausted) {
      const int mine = POLYC_ATOMIC_LOAD(&progress[column]);
      if (mine < left && mine < rows && POLYC_ATOMIC_LOAD(&locks[column]) == 0)
        candidate = column;
    }
  }
  candidate = polyc_wg_min_i32(candidate, scratch);
  exhausted = polyc_wg_max_i32(exhausted, scratch);
  if (base >= columns || rows <= 0) {
    state->done = 1;
    return;
  }
  if (candidate == INT_MAX) {
    state->scanStart = exhausted ? -1 : start + groupSize;
    return;
  }
  state->scanStart = -1;
  if (lid == 0) {
    int owned = -1;
    if (atomic_cmpxchg(&locks[candidate], 0, 1) == 0) {
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      // Under the lock the column's progress is ours to change; the left neighbour's only grows.
      const int row = POLYC_ATOMIC_LOAD(&progress[candidate]);
      const int ready = candidate == 0 ? rows : POLYC_ATOMIC_LOAD(&progress[candidate - 1]);
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      if (row < ready && row < rows) {
        owned = candidate;
        shared[2] = row;
        shared[3] = ready;
      } else {
        atomic_xchg(&locks[candidate], 0);
      }
    }
    shared[1] = owned;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  state->column = shared[1];
  state->row = shared[2];
  state->ready = shared[3];
  barrier(CLK_LOCAL_MEM_FENCE);
}

// Call after the stores of row state->row: publishes the column's progress, advances the row, and when
// the next row is not ready (after reading the left neighbour's progress once more; it never waits)
// releases the column.
void polyc_wf_publish(polyc_wf_state *state, __global int *progress, __global int *locks,
                      __global int *completed, int rows, __local int *shared) {
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  const int next = state->row + 1;
  if (get_local_id(0) == 0) {
    atomic_xchg(&progress[state->column], next);
    if (next == rows)
      atomic_max(completed, state->column + 1); // columns complete in order
    int ready = state->ready;
    if (next == ready && next < rows) {
      ready = POLYC_ATOMIC_LOAD(&progress[state->column - 1]);
      mem_fence(CLK_GLOBAL_MEM_FENCE);
    }
    if (next >= ready) {
      mem_fence(CLK_GLOBAL_MEM_FENCE); // the progress above is visible before the lock is free
      atomic_xchg(&locks[state->column], 0);
    }
    shared[3] = ready;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  state->row = next;
  state->ready = shared[3];
  if (state->row >= state->ready)
    state->column = -1;
  barrier(CLK_LOCAL_MEM_FENCE);
}
)CLC";

} // namespace polyc::rt::ocl
