// RAII wrappers over the CUDA runtime for generated programs: device buffers, host<->device
// transfers, streams, events and event timers, captured graphs, and the POLYC_CUDA_* environment
// settings. Every call is checked (Check.h).
#pragma once

#include "polyc/HashKey.h"
#include "polyc/cuda/Check.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <optional>
#include <utility>

namespace polyc::rt::cuda {

// A device allocation of `bytes` bytes, freed on destruction. Movable, not copyable.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)),
                                                bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  // Reallocates only when the size changes; the contents are then undefined.
  void resize(size_t bytes);
  // Grows the buffer to at least `bytes` (its contents are lost then); never shrinks it.
  void reserve(size_t bytes) {
    if (bytes > bytes_ || !ptr_)
      resize(bytes);
  }
  size_t bytes() const { return bytes_; }
  void *get() const { return ptr_; }
  template <typename T> T *as() const { return static_cast<T *>(ptr_); }

  void upload(const void *host, size_t bytes, cudaStream_t stream);  // host -> device, async
  void download(void *host, size_t bytes, cudaStream_t stream) const; // device -> host, async
  void fill(int byte, cudaStream_t stream);                           // cudaMemsetAsync

private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

class Stream {
public:
  Stream();
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const;

private:
  cudaStream_t stream_ = nullptr;
};

class Event {
public:
  Event();
  ~Event();
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream);
  void synchronize() const; // returns at once when never recorded

private:
  cudaEvent_t event_ = nullptr;
};

// Times a region of a stream with two device events: start(), work, stop() returns seconds
// (it synchronizes on the stop event).
class EventTimer {
public:
  void start(cudaStream_t stream);
  double stop(cudaStream_t stream);

private:
  Event begin_, end_;
};

// A CUDA graph captured from a stream once and replayed: the fixed wavefront's launches per
// hyperplane become one graph launch. `key` identifies what was captured (sizes, pointers); a
// different key recaptures.
class CapturedGraph {
public:
  CapturedGraph() = default;
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph &) = delete;
  CapturedGraph &operator=(const CapturedGraph &) = delete;

  bool matches(uint64_t key) const { return exec_ != nullptr && key_ == key; }
  void beginCapture(cudaStream_t stream);
  void endCapture(cudaStream_t stream, uint64_t key);
  void launch(cudaStream_t stream);

private:
  void reset();
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  uint64_t key_ = 0;
};

// Combines values into a key for CapturedGraph.
using polyc::rt::hashKey;

// A kernel's grid for grid-stride loops over extents x (in groups of `pointsPerBlock` per block), y
// and z: enough blocks to cover them, within the hardware's limits (the loops stride over the rest).
inline dim3 gridFor(int64_t x, int64_t pointsPerBlock, int64_t y = 1, int64_t z = 1) {
  auto clamp = [](int64_t v, int64_t most) { return unsigned(v < 1 ? 1 : (v > most ? most : v)); };
  return dim3(clamp((x + pointsPerBlock - 1) / pointsPerBlock, int64_t(1) << 20), clamp(y, 65535),
              clamp(z, 65535));
}

// The blocks of a kernel of a thread a point over two or three members: 2-D, up to TileY rows along y by
// 256 / rows threads along x (at least a warp: a row's loads are whole cache lines). With 256 threads
// along x alone, a row of 120 points left 136 of each block's threads idle (heat-3d at N = 120) and a
// block read from one row only; 32 x 8 idles 8 of 128 there, and its rows share the cache lines of their
// neighbours' reads. Fewer rows than TileY take fewer rows a block, so a single row keeps 256 x 1.
inline constexpr unsigned TileThreads = 256, TileY = 8;

// Whether `grid`, of `pointsPerBlock` threads a block along x, has a thread for every point of an x by y
// by z launch (y and z in blocks): each thread then takes at most one point along each axis, and a
// kernel's grid-stride loops run once. The kernels have an instance for that (`polyc_covers`), whose loops
// stop after their first iteration: without the loops' back edges heat-3d's step kernel ran 1.3x faster
// on the H200 (docs/performance.md). gridFor clamps a grid too large for the device; then they loop.
inline bool gridCovers(dim3 grid, int64_t x, int64_t pointsPerBlock, int64_t y = 1, int64_t z = 1) {
  return int64_t(grid.x) * pointsPerBlock >= x && int64_t(grid.y) >= y && int64_t(grid.z) >= z;
}

struct Tile {
  dim3 grid, block;
  bool covers = false; // gridCovers: a thread for every point
};
inline Tile tileFor(int64_t x, int64_t y, int64_t z = 1) {
  unsigned rows = 1;
  while (rows < TileY && int64_t(rows) < y)
    rows *= 2;
  const unsigned columns = TileThreads / rows;
  const int64_t blockRows = (y + rows - 1) / rows;
  const dim3 grid = gridFor(x, columns, blockRows, z);
  return {grid, dim3(columns, rows), gridCovers(grid, x, columns, blockRows, z)};
}

// The threads per output of a reduction of `length` terms at each of `outputs` outputs (seed 001: from
// the number of terms): the next power of two of the length, clamped to [32, 1024], then halved while the
// groups would still number `fillThreads` threads: past that, larger groups add no parallelism, only
// longer reductions across their threads. (One H200, the rate network's 8,192 terms at 80,000 outputs,
// 20 steps: 0.0220 s with 32 threads per output, 0.0249 with 64, 0.0242 with 128, 0.0323 with 1,024.)
inline unsigned reductionGroupSize(int64_t length, int64_t outputs, int64_t fillThreads) {
  unsigned size = 32;
  while (size < 1024 && int64_t(size) < length)
    size *= 2;
  while (size > 32 && outputs * int64_t(size / 2) >= fillThreads)
    size /= 2;
  return size;
}
// Host: that size chosen at run time, the groups to fill twice the threads the device holds at once;
// POLYC_CUDA_GROUP forces one (measurement).
std::optional<int64_t> groupOverride();
int64_t residentThreads();
inline unsigned groupSizeFor(int64_t length, int64_t outputs) {
  if (std::optional<int64_t> forced = groupOverride())
    return unsigned(*forced);
  return reductionGroupSize(length, outputs, 2 * residentThreads());
}

// Host: calls `body(std::integral_constant<unsigned, G>())` with G = `size` (one of 32 .. 1024), so
// that kernels templated on the group size can be launched for a size chosen at run time.
template <typename Body> void dispatchGroupSize(unsigned size, Body &&body) {
  switch (size) {
  case 32: return body(std::integral_constant<unsigned, 32>());
  case 64: return body(std::integral_constant<unsigned, 64>());
  case 128: return body(std::integral_constant<unsigned, 128>());
  case 256: return body(std::integral_constant<unsigned, 256>());
  case 512: return body(std::integral_constant<unsigned, 512>());
  default: return body(std::integral_constant<unsigned, 1024>());
  }
}

// The device's properties, read once.
const cudaDeviceProp &deviceProperties();

// A scatter whose whole array fits in shared memory adds into a copy of it a block (a privatised
// histogram), which the block then adds to the array, one atomic an element it changed: the blocks' atomics
// do not queue on the few addresses a histogram of many points hits. The grid is capped at
// PrivateBlocksPerSM blocks a multiprocessor, whose threads take many points each (grid-stride loops).
// Privatised when the copy fits (at most PrivateHistogramBytes) and the points number at least
// PrivatePointsPerElement times the elements the blocks add back.
constexpr int64_t PrivateHistogramBytes = 32 * 1024;
constexpr unsigned PrivateBlocksPerSM = 2;
constexpr int64_t PrivatePointsPerElement = 4;
inline unsigned privateBlocks() {
  return PrivateBlocksPerSM * unsigned(deviceProperties().multiProcessorCount);
}
//   POLYC_CUDA_PRIVATE=0|1        scatters: add to the array (0) or to a copy a block (1) wherever the copy
//                                 fits in shared memory (default: the choice above)
std::optional<bool> privateOverride();
inline bool privateHistogram(int64_t bytes, int64_t elements, int64_t points) {
  if (bytes > PrivateHistogramBytes)
    return false;
  return privateOverride().value_or(points >= PrivatePointsPerElement * int64_t(privateBlocks()) * elements);
}
// `grid` with at most privateBlocks() blocks: z first, then y, then x shrink.
inline dim3 privateGrid(dim3 grid) {
  const uint64_t most = privateBlocks();
  for (unsigned *axis : {&grid.z, &grid.y, &grid.x})
    while (*axis > 1 && uint64_t(grid.x) * grid.y * grid.z > most)
      *axis = (*axis + 1) / 2;
  return grid;
}

// Run-time settings from the environment, documented in docs/running.md (CUDA):
//   POLYC_CUDA_GRAPH=0|1          fixed wavefront: plain launches (0) or a replayed CUDA graph (1, default)
//   POLYC_CUDA_GRID=N             flexible wavefront: the persistent kernel's grid (default: resident blocks)
//   POLYC_CUDA_WAVEFRONT=auto|fixed|flexible   override the allocation's run-time choice
//   POLYC_CUDA_VERBOSE=0|1        print launch configurations and choices to stderr
//   POLYC_CUDA_LANES=4|8|16|32    flexible wavefront: threads per point (default: from the window sums)
//   POLYC_CUDA_PUBLISH=N          flexible wavefront: steps between progress stores (default: the program's)
//   POLYC_CUDA_DECOUPLED=0|1      flexible wavefront: box-window recurrences by term tables (0) or by the
//                                 decoupled step wherever it applies (1, the default)
// A malformed value throws CudaError with a message naming the variable.
bool useCudaGraph();
std::optional<int64_t> gridOverride();
enum class WavefrontOverride { Auto, Fixed, Flexible };
WavefrontOverride wavefrontOverride();
bool verbose();
std::optional<int64_t> lanesOverride();
std::optional<int64_t> publishOverride();
//   POLYC_CUDA_GROUP=32|...|1024  reductions whose group size is chosen at run time: that many threads per
//   output
std::optional<int64_t> groupOverride();
std::optional<bool> decoupledOverride();

//   POLYC_CUDA_PERSISTENT=0|1     host loops: launches on the host (0) or the persistent grid-synchronised
//                                 kernel (1) wherever the program has one (default: the cost model's choice)
std::optional<bool> persistentOverride();
//   POLYC_CUDA_ROUND_TILES=0|1    repeat loops with round tiles (compiler/map, RoundTiles): a round a launch
//                                 (0) or several on tiles in shared memory (1, the default)
bool roundTiles();

//   POLYC_CUDA_INDEX=64           the kernels' index arithmetic in int64_t even where the run's sizes fit
//                                 in int (default: int where they fit, see indexFitsInt)
bool wideIndexForced();

// ---- Index arithmetic

// Host: whether every value fits in an int (the flexible wavefront's point code computes in int).
inline bool fitInInt(std::initializer_list<int64_t> values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; });
}

// Host: whether a run's kernels can index in int rather than int64_t (the kernels and the device struct
// are templates of the index type; 64-bit multiplies and adds take GPUs several instructions, and twice the
// registers: heat-3d's persistent kernel ran 1.7x faster in int). `values` are every param and the bounds
// of every statement's dimensions and schedule dimensions, `sizes` every array's element count. Values up
// to IndexValueMax leave room for affine expressions of them with coefficients summing to 16, and for a
// grid-stride loop's last step (a stride is at most 2^30 threads); an index into an array is below its
// size.
inline constexpr int64_t IndexValueMax = int64_t(1) << 27;
inline bool indexFitsInt(std::initializer_list<int64_t> values, std::initializer_list<int64_t> sizes) {
  if (wideIndexForced())
    return false;
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v >= -IndexValueMax && v <= IndexValueMax; }) &&
         fitInInt(sizes);
}

// ---- Host loops (compiler/map, Placement::HostLoop)

// Host: whether a host loop runs as its persistent kernel: the cost model's `preferred` unless
// POLYC_CUDA_PERSISTENT forces either form.
inline bool persistentChoice(bool preferred) { return persistentOverride().value_or(preferred); }

// A top-level host loop of at most this many iterations is captured into a CUDA graph and replayed; a
// longer one launches directly (a graph holds a node per launch, and its capture is not free).
inline constexpr int64_t GraphIterationsMax = 4096;

// Host: launches the persistent kernel of a host loop, `threads` threads a block: one block when
// `oneBlock` (its barriers are then the block's), else enough blocks for the `work` threads of the
// largest launch inside, and no more than can be resident at once, since its grid barriers need every
// block resident (POLYC_CUDA_GRID overrides within that limit). The kernel's parameters are taken as
// they are declared (the device view and int64_t loop values).
template <typename... Params>
void launchPersistent(void (*kernel)(Params...), const char *name, int64_t work, unsigned threads, bool oneBlock,
                      cudaStream_t stream, Params... args) {
  int perProcessor = 0;
  POLYC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perProcessor, kernel, int(threads), 0));
  const int64_t resident = int64_t(std::max(perProcessor, 1)) * deviceProperties().multiProcessorCount;
  int64_t blocks = oneBlock ? 1 : std::clamp<int64_t>((work + threads - 1) / threads, 1, resident);
  if (const std::optional<int64_t> forced = gridOverride())
    blocks = std::min(*forced, resident);
  if (verbose())
    std::fprintf(stderr, "polyc: %s: persistent kernel, %lld blocks of %u threads (%lld resident)\n", name,
                 (long long)blocks, threads, (long long)resident);
  void *pointers[] = {static_cast<void *>(&args)...};
  POLYC_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(kernel), dim3(unsigned(blocks)),
                                               dim3(threads), pointers, 0, stream));
}

// Enqueues a sequence of launches on `stream`: directly when POLYC_CUDA_GRAPH=0, else by replaying
// `graph`, captured from `enqueue` the first time and whenever `key` changes. `prepareOnly` captures
// without launching (for Compute::prepare, outside the timed region).
template <typename Enqueue>
void enqueueOrReplay(CapturedGraph &graph, uint64_t key, cudaStream_t stream, bool prepareOnly,
                     Enqueue &&enqueue) {
  if (!useCudaGraph()) {
    if (!prepareOnly)
      enqueue(stream);
    return;
  }
  if (!graph.matches(key)) {
    graph.beginCapture(stream);
    enqueue(stream);
    graph.endCapture(stream, key);
  }
  if (!prepareOnly)
    graph.launch(stream);
}

// ---- The flexible wavefront's launch shape (host side; the strips are in polyc/cuda/Wavefront.cuh)

// Host: the threads per point of a flexible wavefront whose window sums share among a point's lanes a
// loop of `length` terms: the smallest power of two >= length, from 4 to 32 (POLYC_CUDA_LANES
// overrides). Lanes beyond the loop's length would only idle, and a warp then holds several points.
inline unsigned lanesFor(int64_t length) {
  if (const std::optional<int64_t> forced = lanesOverride())
    return unsigned(*forced);
  unsigned lanes = 4;
  while (lanes < 32 && lanes < length) // at most a warp
    lanes *= 2;
  return lanes;
}

// The strip width that goes with G lanes per point when a point's lanes share a loop (no term tables):
// 16 columns for 32 lanes (512 threads), wider strips for fewer lanes, up to 64 columns. Wider strips
// mean fewer hand-overs between blocks on the critical path (each costs the strip's skew plus a
// publication), and a step's latency, not its work, limits small windows.
__host__ __device__ constexpr int stripWidthFor(unsigned lanes) { return lanes >= 32 ? 16 : lanes >= 16 ? 32 : 64; }

// Host: the terms per point a term table holds at most: the product of its variables' extents (0 when
// one is empty), capped at 2^24 terms (128 MiB: no block holds that, so the capacity never overflows and
// a table that large makes the launch fall back to the fixed wavefront).
inline int64_t termCapacity(std::initializer_list<int64_t> extents) {
  constexpr int64_t Unfittable = int64_t(1) << 24;
  int64_t capacity = 1;
  for (int64_t extent : extents)
    capacity = extent <= 0 ? 0 : std::min(Unfittable, capacity * std::min(extent, Unfittable));
  return capacity;
}

// The compile-time shape of a flexible wavefront's strip: G threads per point ("lanes"), S columns per
// strip, and K terms of each term table held in registers per lane (0: the strip has no term tables).
template <unsigned G, int S, int K> struct StripShape {
  static constexpr unsigned Lanes = G;
  static constexpr int Width = S;
  static constexpr int Held = K;
};

// A block of the flexible wavefront: the strip's compute threads (whole warps), then one coordinator
// warp that talks to the other blocks (Wavefront.cuh, runFlexibleWavefront).
constexpr int flexibleBlockThreads(int computeThreads) { return computeThreads + 32; /* one warp */ }
// The blocks an SM the kernel's registers are fitted for (its __launch_bounds__): two where the columns
// outnumber the SMs (8192^2 at M = 9: 256 strips) and a second block's steps fill the issue slots the
// first leaves idle; one for strips of more than 256 compute threads, whose window sums need more than
// the 60 registers two such blocks leave (ptxas spilled inside the step), and for lanes holding more
// than 18 terms (`held`), which need more than the 113 registers two blocks of 256 leave (36 took 167).
constexpr int flexibleMinBlocks(int computeThreads, int held = 0) {
  return computeThreads <= 256 && held <= 18 ? 2 : 1;
}

// The shapes of strips whose window sums are term tables, by the terms per point they serve best
// (capacity: the product of the sums' extents, M x M for an M x M window). A term a lane holds in
// registers costs an add, a shared load of its window cell and an FMA (so does an empty slot: it reads a
// zero cell, LaneTerms); one read from the table two dependent shared loads more; and a step costs the block
// its busiest warp: so few lanes per point, each holding all of its terms, with 256 threads a strip
// where that fits in registers (measured on the H100: docs/performance.md at 2c04002, CUDA, "Strip shapes by
// window size"). K is the terms a lane of the shape's largest square window holds (M^2 - 1 over G: 2 at
// M = 3, 6 at M = 5 and 7, 10 at M = 9, 18 at M = 17); larger windows fall to 32 lanes holding 16 and
// reading the rest from the table.
//
// The last shape is an alternative, not chosen by capacity: 8 lanes x 32 columns holding 36 terms, one
// block an SM, for up to 289 terms where the 16 x 16 strips would outnumber the blocks that can be
// resident (termTableShapeIndex). Then half as many strips take the image in fewer rounds. Measured on
// the H100 (docs/performance.md at 2c04002, CUDA, sessions 14 and 15): 4-5% faster at 8192^2 with M = 13 and
// 17, 9% at 4096 x 8192; at 2048^2, whose 128 strips of 16 are all resident, 12-20% slower (so not there).
struct TermTableShape {
  int64_t upTo; // the largest capacity the shape serves
  unsigned lanes;
  int width, held;
};
inline constexpr TermTableShape TermTableShapes[] = {
    {9, 4, 64, 2},   {16, 4, 64, 4},    {25, 4, 64, 6},         {49, 8, 32, 6},
    {81, 8, 32, 10}, {289, 16, 16, 18}, {INT64_MAX, 32, 16, 16}, {289, 8, 32, 36},
};
inline constexpr int TermTableShapeCount = int(sizeof(TermTableShapes) / sizeof(TermTableShapes[0]));
inline constexpr int WideTermTableShape = TermTableShapeCount - 1;   // the alternative
inline constexpr int TermTableShapesByCapacity = WideTermTableShape; // the shapes before it

// Host: the index in TermTableShapes of the shape for `capacity` terms per point; with `forcedLanes`
// (POLYC_CUDA_LANES), the first shape of those lanes that serves the capacity, else the largest of them.
// Without forced lanes, the wide alternative replaces the 16 x 16 shape when that shape's strips over
// `columns` would be more than `multiprocessors` times the blocks it fits an SM (0 multiprocessors: never).
inline int termTableShapeIndex(int64_t capacity, std::optional<int64_t> forcedLanes, int64_t columns = 0,
                               int multiprocessors = 0) {
  int chosen = -1;
  for (int index = 0; index < TermTableShapesByCapacity; ++index) {
    const TermTableShape &shape = TermTableShapes[index];
    if (forcedLanes && int64_t(shape.lanes) != *forcedLanes)
      continue;
    chosen = index;
    if (capacity <= shape.upTo)
      break;
  }
  const TermTableShape &shape = TermTableShapes[chosen], &wide = TermTableShapes[WideTermTableShape];
  if (!forcedLanes && multiprocessors > 0 && shape.upTo == wide.upTo) {
    const int64_t strips = (columns + shape.width - 1) / shape.width;
    const int64_t resident =
        int64_t(multiprocessors) * flexibleMinBlocks(int(shape.lanes) * shape.width, shape.held);
    if (strips > resident)
      chosen = WideTermTableShape;
  }
  return chosen;
}

namespace detail {
template <int I> using TableShapeAt = StripShape<TermTableShapes[I].lanes, TermTableShapes[I].width, TermTableShapes[I].held>;
template <int I, typename Body> auto dispatchTableShape(int index, Body &body) {
  if constexpr (I + 1 < TermTableShapeCount) {
    if (index != I)
      return dispatchTableShape<I + 1>(index, body);
  }
  return body(TableShapeAt<I>());
}
} // namespace detail

// Host: returns body(Shape()) with the StripShape of TermTableShapes[index].
template <typename Body> auto withTableShapeAt(int index, Body &&body) {
  return detail::dispatchTableShape<0>(index, body);
}

// Host: returns body(Shape()) with the StripShape of the term tables' `capacity` for a domain of `columns`
// columns on this device (termTableShapeIndex; POLYC_CUDA_LANES overrides the lanes).
template <typename Body> auto withTermTableShape(int64_t capacity, int64_t columns, Body &&body) {
  return withTableShapeAt(
      termTableShapeIndex(capacity, lanesOverride(), columns, deviceProperties().multiProcessorCount), body);
}

// The longest run of a sliding sum (SlidingSum.cuh) that a data-parallel kernel is instantiated for; a
// longer run, or one whose length only the device knows, takes the kernel that loops over its steps.
inline constexpr int SlidingRunMax = 32;

namespace detail {
template <int Lo, typename Body, int... Offsets>
bool withConstantIn(int64_t value, Body &body, std::integer_sequence<int, Offsets...>) {
  return ((value == Lo + Offsets && (body(std::integral_constant<int, Lo + Offsets>()), true)) || ...);
}
} // namespace detail

// Host: calls body(std::integral_constant<int, value>()) and returns true for a value in [Lo, Hi]; returns
// false without calling it otherwise. How a kernel built for each of a few values is picked at run time.
template <int Lo, int Hi, typename Body> bool withConstantIn(int64_t value, Body &&body) {
  static_assert(Lo <= Hi, "an empty range");
  return detail::withConstantIn<Lo>(value, body, std::make_integer_sequence<int, Hi - Lo + 1>());
}

// Host: calls body(std::integral_constant<int, length>()) for a length in [1, SlidingRunMax], else
// body(std::integral_constant<int, 0>()), the kernel for any length.
template <typename Body> void withSlidingRun(int64_t length, Body &&body) {
  if (!withConstantIn<1, SlidingRunMax>(length, body))
    body(std::integral_constant<int, 0>());
}

// The window extents the decoupled step (DecoupledWindow.cuh) is built for. Its halo (M - 1 columns) is
// loaded by one warp and lies in the left strip; larger windows use the term tables.
inline constexpr int DecoupledMinExtent = 2, DecoupledMaxExtent = 32;

// Whether the decoupled step is built for a box window of `extent`. Where it is, it runs by default: since
// its pipes were unrolled (session 18) it measured as fast as the term tables or faster at every window
// tried (H100, docs/performance.md at 2c04002, CUDA, "Loads a whole pipe ahead"): at M = 3 1.82 ms
// against 1.95 on a 2048^2 image and 9.21 against 9.42 on 8192^2; at M = 17 2.06 against 2.71 and 11.5
// against 16.2.
inline bool decoupledStepBuiltFor(int64_t extent) {
  return extent >= DecoupledMinExtent && extent <= DecoupledMaxExtent;
}

// Host: returns body(Shape()) with Shape = StripShape<G, stripWidthFor(G), 0> for G = lanes (4, 8, 16 or
// 32): the shape of a strip whose points' lanes share a loop (lanesFor).
template <typename Body> auto withLaneShape(unsigned lanes, Body &&body) {
  switch (lanes) {
  case 4: return body(StripShape<4, stripWidthFor(4), 0>());
  case 8: return body(StripShape<8, stripWidthFor(8), 0>());
  case 16: return body(StripShape<16, stripWidthFor(16), 0>());
  default: return body(StripShape<32, stripWidthFor(32), 0>());
  }
}

} // namespace polyc::rt::cuda
