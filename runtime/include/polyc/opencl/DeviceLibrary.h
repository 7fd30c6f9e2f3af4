// Device-side OpenCL C building blocks, kept as source text: work-group reductions and the flexible
// wavefront's column locks and progress counters (seed 004). polyc's OpenCL code generator copies the
// parts a program uses into the emitted .cl, so the kernels a reader sees are complete; the runtime's
// own tests build them directly.
#pragma once

namespace polyc::rt::ocl {

// Work-group reductions over local memory. Every work-item of the group must call them (they contain
// barriers) with a __local scratch array of get_local_size(0) elements; every work-item gets the result.
// The f64 variants exist when the including program enables cl_khr_fp64 and defines POLYC_USE_FP64.
// On NVIDIA with POLYC_OPENCL_NV_SHUFFLE=1 the runtime builds with -D POLYC_NV_SHUFFLE=1 (deviceBuildOptions
// in OpenCLRuntime.h): the reductions then combine within a warp by PTX shuffles (shfl.sync.bfly, the
// instruction CUDA's __shfl_xor_sync compiles to) instead of local memory and barriers. Off by default:
// slower than local memory on the H100 (docs/performance.md, OpenCL).
inline constexpr const char *kWorkGroupReductionSource = R"CLC(
// ---- polyc device library: work-group reductions ----
#if defined(POLYC_NV_SHUFFLE) && POLYC_NV_SHUFFLE
// Warp shuffles (NVIDIA only: inline PTX). They rely on how NVIDIA runs a 1D work-group: work-item l is
// lane l % 32 of warp l / 32. A shuffle must be executed by every lane named in its member mask, so the
// callers below name only lanes that exist and call it: all work-items of the group call the reductions
// (their contract), and a run of G consecutive work-items (G a power of two <= 32, runs aligned at
// multiples of G) lies inside one warp. __asm__ rather than asm: clang in OpenCL C mode (which the
// runtime's tests use to check this code for nvptx64) has no GNU `asm` keyword. Programs known to build
// on NVIDIA's OpenCL use `asm`; __asm__ there is unverified, so a build with POLYC_NV_SHUFFLE that fails
// is built again without it (Program's constructor, with a message on stderr).
static inline uint polyc_nv_lane_id(void) {
  uint id;
  __asm__ volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}
// The value of the lane whose id differs from this one's by xor `laneMask`, among the lanes `members`.
static inline uint polyc_nv_shfl_xor(uint value, uint laneMask, uint members) {
  uint result;
  __asm__ volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, %3;" : "=r"(result) : "r"(value), "r"(laneMask), "r"(members));
  return result;
}
#define POLYC_NV_SHFL_XOR_float(value, laneMask, members) as_float(polyc_nv_shfl_xor(as_uint(value), laneMask, members))
#define POLYC_NV_SHFL_XOR_int(value, laneMask, members) as_int(polyc_nv_shfl_xor(as_uint(value), laneMask, members))
#ifdef POLYC_USE_FP64
static inline double polyc_nv_shfl_xor_double(double value, uint laneMask, uint members) {
  uint2 halves = as_uint2(value);
  halves.x = polyc_nv_shfl_xor(halves.x, laneMask, members);
  halves.y = polyc_nv_shfl_xor(halves.y, laneMask, members);
  return as_double(halves);
}
#define POLYC_NV_SHFL_XOR_double(value, laneMask, members) polyc_nv_shfl_xor_double(value, laneMask, members)
#endif
// Butterfly over runs of `width` lanes (a power of two <= 32) within the warp: afterwards every lane of
// a run holds the run's combination.
#define POLYC_NV_RUN_REDUCE(T, COMBINE, value, width, members)                                      \
  for (uint polyc_mask = (width) / 2; polyc_mask > 0; polyc_mask /= 2)                              \
    value = COMBINE(value, POLYC_NV_SHFL_XOR_##T(value, polyc_mask, members));
// Whole group: when its size is a multiple of 32 (every warp full), each warp reduces by shuffles, its
// lane 0 writes the warp's value to scratch, and after one barrier every work-item combines the warps'
// values (in warp order). Otherwise the local-memory tree below runs.
#define POLYC_WG_REDUCE_SHUFFLED(T, COMBINE)                                                        \
  if (get_local_size(0) % 32 == 0) {                                                                \
    const uint warps = get_local_size(0) / 32;                                                      \
    POLYC_NV_RUN_REDUCE(T, COMBINE, value, 32, 0xffffffffu)                                         \
    if (polyc_nv_lane_id() == 0)                                                                    \
      scratch[get_local_id(0) / 32] = value;                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    T result = scratch[0];                                                                          \
    for (uint warp = 1; warp < warps; ++warp)                                                       \
      result = COMBINE(result, scratch[warp]);                                                      \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    return result;                                                                                  \
  }
// Runs of `lanes`: up to 32 lanes a run is inside one warp and is reduced by shuffles among its own lanes
// only (no barrier, no local memory); a longer run is whole warps (lanes divides the group size), reduced
// by shuffles per warp and then across the run's warps through scratch (two barriers).
#define POLYC_GROUP_REDUCE_SHUFFLED(T, COMBINE)                                                     \
  if (lanes <= 32) {                                                                                \
    const uint run = (uint)lanes, laneId = polyc_nv_lane_id();                                      \
    const uint members = run == 32 ? 0xffffffffu : ((1u << run) - 1u) << (laneId & ~(run - 1u));    \
    POLYC_NV_RUN_REDUCE(T, COMBINE, value, run, members)                                            \
    return value;                                                                                   \
  } else {                                                                                          \
    const int lid = get_local_id(0), firstWarp = (lid - (lid & (lanes - 1))) / 32;                   \
    POLYC_NV_RUN_REDUCE(T, COMBINE, value, 32, 0xffffffffu)                                         \
    if (polyc_nv_lane_id() == 0)                                                                    \
      scratch[lid / 32] = value;                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    T result = scratch[firstWarp];                                                                  \
    for (int warp = 1; warp < lanes / 32; ++warp)                                                   \
      result = COMBINE(result, scratch[firstWarp + warp]);                                          \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    return result;                                                                                  \
  }
#else
#define POLYC_WG_REDUCE_SHUFFLED(T, COMBINE)
#define POLYC_GROUP_REDUCE_SHUFFLED(T, COMBINE)
#endif

// A tree over local memory: at each level the lower half folds in the upper half. Works for any group
// size (odd widths keep their middle element). Ends with a barrier so the scratch can be reused at once.
#define POLYC_DEFINE_WG_REDUCE(NAME, T, COMBINE)                                                    \
  T NAME(T value, __local T *scratch) {                                                             \
    POLYC_WG_REDUCE_SHUFFLED(T, COMBINE)                                                            \
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

// The same over each run of G consecutive work-items (G a power of two dividing the group size): the
// lanes of one point when a work-group computes several points at once. Every lane gets its run's
// result. All work-items of the group must call it (it has barriers).
// A run of up to 32 lanes is combined by each of its lanes in lane order after one barrier (32 local
// reads cost less than a barrier per level of a tree); a longer one by a tree over local memory.
// NAME ends with a barrier, so the scratch can be reused at once; NAME##_unsynced does not: its caller
// must pass a barrier before the group writes the scratch again (a flexible wavefront's step, whose
// publication has one, saves a barrier per step), and must not rely on it to order its other
// local-memory accesses (with NVIDIA shuffles it has no barrier at all for runs of up to 32).
#define POLYC_DEFINE_GROUP_REDUCE(NAME, T, COMBINE)                                                 \
  T NAME##_unsynced(T value, int lanes, __local T *scratch) {                                       \
    POLYC_GROUP_REDUCE_SHUFFLED(T, COMBINE)                                                         \
    const int lid = get_local_id(0), lane = lid & (lanes - 1), first = lid - lane;                  \
    scratch[lid] = value;                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    for (int width = lanes > 32 ? lanes / 2 : 0; width > 0; width /= 2) {                           \
      if (lane < width)                                                                             \
        scratch[lid] = COMBINE(scratch[lid], scratch[lid + width]);                                 \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
    }                                                                                               \
    T result = scratch[first];                                                                      \
    for (int other = 1; other < (lanes > 32 ? 1 : lanes); ++other)                                  \
      result = COMBINE(result, scratch[first + other]);                                             \
    return result;                                                                                  \
  }                                                                                                 \
  T NAME(T value, int lanes, __local T *scratch) {                                                  \
    const T result = NAME##_unsynced(value, lanes, scratch);                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                   \
    return result;                                                                                  \
  }
POLYC_DEFINE_GROUP_REDUCE(polyc_group_sum_f32, float, POLYC_ADD)
POLYC_DEFINE_GROUP_REDUCE(polyc_group_max_f32, float, max)
POLYC_DEFINE_GROUP_REDUCE(polyc_group_min_f32, float, min)
POLYC_DEFINE_GROUP_REDUCE(polyc_group_sum_i32, int, POLYC_ADD)
POLYC_DEFINE_GROUP_REDUCE(polyc_group_max_i32, int, max)
POLYC_DEFINE_GROUP_REDUCE(polyc_group_min_i32, int, min)
#ifdef POLYC_USE_FP64
POLYC_DEFINE_GROUP_REDUCE(polyc_group_sum_f64, double, POLYC_ADD)
POLYC_DEFINE_GROUP_REDUCE(polyc_group_max_f64, double, max)
POLYC_DEFINE_GROUP_REDUCE(polyc_group_min_f64, double, min)
#endif
)CLC";

// The flexible wavefront (seed 004, Listing 3, made correct). The processors' "columns" are walked in
// "steps": step s of column c may run once column c - 1 has finished step s + lag (all of it when
// s + lag is past its last step), and after step s - 1 of column c. Point (r, c) of a quarter-plane
// recurrence computed one point per step has lag 0; a strip of S image columns skewed inside (lane l
// computes row s - l at step s) has lag S - 1, or S when the next row of the halo is loaded early.
// The kernel is persistent: each work-group repeatedly takes a column, computes steps while the left
// neighbour allows, publishes its progress after each step and releases the column when it catches up.
//
// Global state, zeroed by the host before the launch:
//   progress[c]  steps of column c finished (0..steps); a column never passes its left neighbour;
//   locks[c]     1 while a work-group owns column c;
//   completed[0] how many columns are complete; they complete in order, so columns [0, completed) are.
//
// Why it cannot deadlock, whatever order or concurrency the device runs work-groups with (PoCL's CPU
// device runs each work-group to its end on one thread, other work-groups waiting for a thread): a
// work-group holds at most one lock and only while it runs, and it never waits unboundedly while it
// holds one: when the next step is not allowed it reads the left neighbour's progress at most
// `polls` + 1 times and then releases the column. A work-group that holds no lock scans again (the
// scan reads but never waits). The lowest incomplete column is always ready (its left neighbour is
// complete): it is free, so a scanning work-group takes it, or owned by a work-group that is running
// and computing it. So some work-group always makes progress, and one running alone finishes
// everything by itself; polls = 0 means no waiting at all while holding a lock.
//
// Memory ordering (OpenCL C 1.2, which PoCL 3.1 and NVIDIA's driver both compile; they do not both offer
// OpenCL 2.0 acquire/release atomics at device scope): counters and locks are only read and written
// with atomic_* functions. A publisher synchronises its group (barrier) after the step's stores, then
// its work-item 0 fences for the whole device (POLYC_DEVICE_FENCE) and publishes progress with an
// atomic, and fences again before the atomic that frees the lock; a reader fences after the atomic that
// observed progress (or took the lock) and before its group reads the data. Data written during the
// kernel by other work-groups is read through volatile pointers: GPU L1 caches are not coherent between
// compute units, and a volatile load bypasses them. NVIDIA's driver compiles mem_fence(CLK_GLOBAL_MEM_FENCE)
// before a barrier to a work-group fence (membar.cta, seen in its PTX on the H100, 2026-11-22): with it
// as the publisher's only fence, 2048x2048 M = 31 went wrong in 5 of 6 runs. The portable device fence is
// therefore a separate write_mem_fence/read_mem_fence in one work-item (membar.gl), after the barrier.
// On NVIDIA the runtime defines POLYC_NV_FENCE (deviceBuildOptions): the device fence is one PTX
// fence.acq_rel.gpu and progress is published by one red.release.gpu. The pair above is two membar.gl,
// each a sequentially consistent fence followed by an invalidation of the L1 cache (MEMBAR.SC.GPU and
// CCTL.IVALL in the driver's SASS), where a release before the progress atomic and an acquire after the
// one that observed it are all the protocol needs (the CUDA target's cuda::atomic_ref release stores and
// acquire loads compile to the same MEMBAR.ALL.GPU). On the H100 the flexible IIR took 9-28% less time
// (docs/performance.md, OpenCL). A driver that rejects the inline PTX gets the portable program
// (Program's constructor rebuilds without the vendor options).
inline constexpr const char *kFlexibleWavefrontSource = R"CLC(
// ---- polyc device library: flexible wavefront (column locks, progress counters) ----
// The kernel is one flat loop (PoCL's work-group compiler rejects barriers under nested loops with
// early exits):
//   polyc_wf_state state = polyc_wf_begin();
//   while (!state.done) {
//     if (state.column < 0) polyc_wf_scan(&state, ...);   // look for a column, maybe lock it
//     else { compute step state.step of column state.column; polyc_wf_publish(&state, ...); }
//   }
// Every call is made by the whole work-group; the state is the same in every work-item.

// An atomic read: OpenCL C 1.2 has no atomic load; an atomic OR with zero is one.
#define POLYC_ATOMIC_LOAD(pointer) atomic_or((pointer), 0)

// A fence for the whole device, in one work-item (see the memory-ordering note in DeviceLibrary.h):
// orders its global memory operations, and after a barrier its work-group's, before what follows.
// POLYC_RELEASE_MAX(pointer, value): atomic_max after such a fence, in one work-item; on NVIDIA one
// red.release.gpu (a release needs no invalidation of the L1 cache, which a fence.acq_rel also does).
#if defined(POLYC_NV_FENCE) && POLYC_NV_FENCE
#define POLYC_DEVICE_FENCE() __asm__ volatile("fence.acq_rel.gpu;" ::: "memory")
#define POLYC_RELEASE_MAX(pointer, value)                                                          \
  __asm__ volatile("red.release.gpu.global.max.s32 [%0], %1;" ::"l"(pointer), "r"(value) : "memory")
#else
#define POLYC_DEVICE_FENCE() (write_mem_fence(CLK_GLOBAL_MEM_FENCE), read_mem_fence(CLK_GLOBAL_MEM_FENCE))
#define POLYC_RELEASE_MAX(pointer, value) (POLYC_DEVICE_FENCE(), atomic_max((pointer), (value)))
#endif

typedef struct {
  int column;    // the column this work-group holds the lock of; -1: none
  int step;      // the next step to compute in it
  int limit;     // the last step the left neighbour allows, as last seen
  int scanStart; // where the next scan window starts; -1: at the lowest incomplete column
  int done;      // every column is complete
} polyc_wf_state;

polyc_wf_state polyc_wf_begin(void) {
  polyc_wf_state state;
  state.column = -1;
  state.step = state.limit = 0;
  state.scanStart = -1;
  state.done = 0;
  return state;
}

// The last step a column may compute when its left neighbour has finished `leftProgress` steps.
int polyc_wf_limit(int leftProgress, int steps, int lag) {
  return leftProgress >= steps ? steps - 1 : leftProgress - 1 - lag;
}

// Looks at G columns (G = the group size) from state->scanStart, or from the lowest incomplete column,
// for the lowest one that is incomplete, allowed to run and unlocked, and tries to lock it. If none
// is, the next scan looks at the next G columns, or starts over when no column beyond could run.
// `scratch` holds G ints of local memory, `shared` 4.
void polyc_wf_scan(polyc_wf_state *state, __global int *progress, __global int *locks,
                   __global int *completed, int columns, int steps, int lag, __local int *scratch,
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
  if (column < columns && steps > 0) {
    const int mine = POLYC_ATOMIC_LOAD(&progress[column]);
    const int limit =
        column == 0 ? steps - 1 : polyc_wf_limit(POLYC_ATOMIC_LOAD(&progress[column - 1]), steps, lag);
    // A column that has not started and may not start: no column after it may either.
    exhausted = mine == 0 && limit < 0;
    if (mine < steps && mine <= limit && POLYC_ATOMIC_LOAD(&locks[column]) == 0)
      candidate = column;
  }
  candidate = polyc_wg_min_i32(candidate, scratch);
  exhausted = polyc_wg_max_i32(exhausted, scratch);
  if (base >= columns || steps <= 0) {
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
      POLYC_DEVICE_FENCE();
      // Under the lock the column's progress is ours to change; the left neighbour's only grows.
      const int step = POLYC_ATOMIC_LOAD(&progress[candidate]);
      const int limit = candidate == 0
                            ? steps - 1
                            : polyc_wf_limit(POLYC_ATOMIC_LOAD(&progress[candidate - 1]), steps, lag);
      POLYC_DEVICE_FENCE();
      if (step < steps && step <= limit) {
        owned = candidate;
        shared[2] = step;
        shared[3] = limit;
      } else {
        atomic_xchg(&locks[candidate], 0);
      }
    }
    shared[1] = owned;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  state->column = shared[1];
  state->step = shared[2];
  state->limit = shared[3];
  barrier(CLK_LOCAL_MEM_FENCE);
}

// Call after the stores of step state->step: advances the step and publishes the column's progress
// every POLYC_WF_PUBLISH_EVERY steps, at the column's end and before waiting (each publication costs a
// device-wide fence, which would otherwise dominate a short step). When the next step is not allowed it
// reads the left neighbour's progress at most polls + 1 times, then releases the column
// (state->column becomes -1).
#define POLYC_WF_PUBLISH_EVERY 4
void polyc_wf_publish(polyc_wf_state *state, __global int *progress, __global int *locks,
                      __global int *completed, int steps, int lag, int polls, __local int *shared) {
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  const int next = state->step + 1;
  // The same in every work-item: whether the next step needs newer progress on the left, and whether
  // the column ends. Only then does the group wait for work-item 0 (two more barriers); otherwise the
  // barrier above is the step's only one, and work-item 0 publishes while the others go on.
  const int stalled = next < steps && next > state->limit;
  const int leaving = stalled || next >= steps;
  if (get_local_id(0) == 0) {
    if (leaving || next % POLYC_WF_PUBLISH_EVERY == 0) {
      // The group's stores (ordered by the barrier) before the progress; it only grows: a max needs no reply.
      POLYC_RELEASE_MAX(&progress[state->column], next);
      if (next == steps)
        atomic_max(completed, state->column + 1); // columns complete in order
    }
    if (leaving) {
      int limit = state->limit;
      for (int poll = 0; next < steps && next > limit && poll <= polls; ++poll)
        limit = polyc_wf_limit(POLYC_ATOMIC_LOAD(&progress[state->column - 1]), steps, lag);
      POLYC_DEVICE_FENCE(); // the left data behind the progress we saw; our progress before the lock is free
      if (next >= steps || next > limit)
        atomic_xchg(&locks[state->column], 0);
      shared[3] = limit;
    }
  }
  state->step = next;
  if (leaving) {
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    state->limit = shared[3];
    if (state->step >= steps || state->step > state->limit)
      state->column = -1;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// ---- polyc device library: term tables ----
// A window sum whose terms are a point-invariant coefficient times one window cell is the same list of
// (coefficient, offset from the point's cell) pairs at every point. The kernel builds the list once per
// work-group in local memory; a point's lanes then take its terms in turn (every lane busy whatever the
// window's shape, no loop nest, no `where` test per term), a lane's first POLYC_HELD_TERMS terms from
// private arrays that the unrolled loops index by constants (registers).
typedef struct __attribute__((aligned(8))) { float coefficient; int offset; } polyc_term_f32;
typedef struct __attribute__((aligned(8))) { int coefficient; int offset; } polyc_term_i32;
#ifdef POLYC_USE_FP64
typedef struct __attribute__((aligned(16))) { double coefficient; int offset; } polyc_term_f64;
#endif
#ifndef POLYC_HELD_TERMS
#define POLYC_HELD_TERMS 8
#endif

// How many work-items before this one (in work-item order) have `keep` set; *kept gets the group's
// total. All work-items call it, `scratch` holds get_local_size(0) ints. A Hillis-Steele scan, two
// barriers per doubling: it runs while the tables are built, once per work-group.
int polyc_wg_count_before(int keep, __local int *scratch, int *kept) {
  const int lid = get_local_id(0), size = get_local_size(0);
  scratch[lid] = keep;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int distance = 1; distance < size; distance *= 2) {
    const int before = lid >= distance ? scratch[lid - distance] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[lid] += before;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *kept = scratch[size - 1];
  const int result = scratch[lid] - keep;
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}
)CLC";

} // namespace polyc::rt::ocl
