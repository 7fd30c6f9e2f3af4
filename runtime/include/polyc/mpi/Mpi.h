// The MPI layer of a CPU program built with `polyc build --mpi` (docs/running.md, "MPI"): every rank holds
// every array, runs each distributed band on its block of the band's outermost parallel dimension, and
// then sends the rows it wrote to the ranks that read them (all, or its neighbours' halos), before the
// next band reads them. Rank 0 alone writes the outputs and prints; a failure on any rank ends
// the whole job (MPI_Abort with the failure's exit status), never a hang.
#pragma once

#include "polyc/Runtime.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace polyc::rt::mpi {

// A block of a band's outermost parallel dimension: [first, end).
struct Block {
  int64_t first = 0, end = 0;
};

// Rank `rank` of `ranks`'s block of the `extent` values from `first`: contiguous blocks in rank order,
// their sizes differing by at most one (the first extent % ranks blocks one larger).
Block blockOf(int rank, int ranks, int64_t first, int64_t extent);
// This process's block (MPI_COMM_WORLD).
Block rankBlock(int64_t first, int64_t extent);
// Block-cyclic blocks, for a band whose work per value varies (a triangle's rows: Decompose.h,
// BandDecomposition::chunks): the `extent` values from `first` split as blockOf into ranks x `chunks`
// chunks, dealt to the ranks in snake order (0, 1, .., R - 1, then R - 1, .., 0, and again), so that each
// rank gets `chunks` of them from along the whole range; where the work grows linearly with the value,
// every pair of rounds gives every rank the same. `chunks` 1 is blockOf's one block.
std::vector<Block> chunksOf(int rank, int ranks, int64_t first, int64_t extent, int64_t chunks);
// This process's chunks.
std::vector<Block> rankChunks(int64_t first, int64_t extent, int64_t chunks);
// `block` of the `extent` values from `first` widened by `before` and `after` values, within them; an
// empty block stays empty (no rank's later band reads through it).
inline Block widenBlock(Block block, int64_t first, int64_t extent, int64_t before, int64_t after) {
  if (block.first >= block.end)
    return block;
  return {block.first - before > first ? block.first - before : first,
          block.end + after < first + extent ? block.end + after : first + extent};
}

// An array seen as rows along one dimension: `prefixCount` runs (the dimensions before it, in storage
// order) of `dimExtent` rows of `rowElements` elements (the dimensions after it).
struct RowLayout {
  void *data = nullptr;
  size_t elementBytes = 0;
  int64_t prefixCount = 0, dimExtent = 0, rowElements = 0;
};

// The blocks of a distributed band: rank r ran blockOf(r, ranks, first, extent) of its first member, or
// its chunksOf(r, ranks, first, extent, chunks) when `chunks` > 1, and wrote rows [block.first + shift,
// block.end + shift) of every run for each. Only shareRowBlocks takes chunks; the halo, gather and
// pipeline calls take one block a rank (Decompose.h never chunks their bands).
struct RowBlocks {
  int64_t first = 0, extent = 0, shift = 0;
  int64_t chunks = 1;
};

// Rows [begin, end) of the dimension.
struct Rows {
  int64_t begin = 0, end = 0;
  bool empty() const { return end <= begin; }
};

// The rows of `blocks` that rank `from` wrote and rank `to` reads: to's block reads rows
// [block.first + lo, block.end + hi); within [0, dimExtent). Empty when from == to.
Rows haloRows(int from, int to, int ranks, const RowBlocks &blocks, int64_t lo, int64_t hi,
              int64_t dimExtent);

// Copies rows between an array that is not in this process's memory (a GPU rank's device array, at
// RowLayout::data) and a packed host buffer: rows [rows.begin, rows.end) of every run, run after run. The
// exchanges below stage through them when given (host staging; polyc/cuda/MpiRows.h); then every message
// is one packed buffer of bytes.
class RowCopies {
public:
  virtual ~RowCopies() = default;
  virtual void toHost(const RowLayout &layout, Rows rows, void *packed) = 0;
  virtual void fromHost(const RowLayout &layout, Rows rows, const void *packed) = 0;
};

// The bytes of `rows` of every run of `layout`, packed.
size_t packedBytes(const RowLayout &layout, Rows rows);

// RowCopies of an array in this process's memory: what the exchanges use on CPU ranks when
// POLYC_MPI_PACKED=1, so that the packed path of GPU ranks is tested where there is no GPU.
class HostRowCopies final : public RowCopies {
public:
  void toHost(const RowLayout &layout, Rows rows, void *packed) override;
  void fromHost(const RowLayout &layout, Rows rows, const void *packed) override;
};

// After a distributed band, so that every copy of the array is equal again: each rank's rows go to every
// other rank (one broadcast a rank). Rows no rank wrote were equal on all ranks before.
void shareRowBlocks(const RowLayout &layout, const RowBlocks &blocks, RowCopies *copies = nullptr);
// After a distributed band whose readers read only near their own rows: each rank receives from the
// others the rows its block reads ([block.first + lo, block.end + hi)), point to point, all at once.
void exchangeHalo(const RowLayout &layout, const RowBlocks &blocks, int64_t lo, int64_t hi,
                  RowCopies *copies = nullptr);
// exchangeHalo begun and finished apart, so that the work between overlaps the messages: begin() posts
// an exchange's messages (several may be under way), finish() waits for all of them and, with copies,
// copies the received rows into place; the destructor finishes. Between the two, no other MPI call, and
// no work that writes the rows sent or reads the rows received.
class HaloExchanges {
public:
  explicit HaloExchanges(RowCopies *copies = nullptr);
  ~HaloExchanges();
  HaloExchanges(const HaloExchanges &) = delete;
  HaloExchanges &operator=(const HaloExchanges &) = delete;
  void begin(const RowLayout &layout, const RowBlocks &blocks, int64_t lo, int64_t hi);
  void finish();

private:
  struct Pending;
  RowCopies *copies_;
  std::unique_ptr<Pending> pending_;
};
// A shared band's block in the order that lets its halos travel while it works: the `firstRows` rows at
// its start and the `lastRows` at its end (those other ranks read), then the rows between.
std::array<Block, 3> edgesFirst(Block block, int64_t firstRows, int64_t lastRows);
// At the end of a run: rank 0 receives every other rank's rows of an output that only halos shared.
void gatherRowBlocks(const RowLayout &layout, const RowBlocks &blocks, RowCopies *copies = nullptr);

// A band the ranks run as a pipeline (compiler/map/Decompose.h, Pipeline) over a two-dimensional array of
// `layout` (one run: rows along dimension 0, a row's elements its columns): rank r wrote the rows of its
// block of `blocks`, and its block reads the `depth` rows before it, which earlier ranks wrote. The ranks
// walk the columns in strips: before a strip each rank receives those rows in the strip's columns from
// the ranks that wrote them (receive), after it sends its own rows that later blocks read (send). A send
// returns once the message is delivered: left under way while the next strip is computed, a message
// larger than MPI's eager limit would wait for the sender's next MPI call, a strip later (measured: the
// IIR at 2048^2, M = 17, on 2 CPU ranks, 0.84 s that way against 0.63 s).
class PipelineStrips {
public:
  PipelineStrips(const RowLayout &layout, const RowBlocks &blocks, int64_t depth, RowCopies *copies = nullptr)
      : layout_(layout), blocks_(blocks), depth_(depth), copies_(copies) {}

  void receive(Rows columns) const;
  void send(Rows columns) const;
  // The columns of a strip: POLYC_MPI_STRIP, else `columns` over 16 strips a rank (a rank waits for the
  // ones before it during (ranks - 1) strips of 16 x ranks), all of them on one rank, at least 1.
  static int64_t stripWidth(int64_t columns);

private:
  void exchange(Rows columns, bool receiving) const;

  RowLayout layout_;
  RowBlocks blocks_;
  int64_t depth_;
  RowCopies *copies_;
};
// The rows of `blocks` that rank `from` wrote and a pipeline's rank `to` reads before its block: [to's
// block.first - depth, to's block.first) within from's block (shifted); empty unless from < to.
Rows pipelineRows(int from, int to, int ranks, const RowBlocks &blocks, int64_t depth, int64_t dimExtent);
// A pipeline's rank `rank` as one kernel a rank sees it (polyc/cuda/PeerPipeline.h): the earlier ranks it
// receives rows from, the later ranks it sends rows to and which (from its block's first row: the
// array's row block.first + blocks.shift), and how many rows before its block it reads.
struct PipelinePeers {
  struct Target {
    int rank = 0;
    int64_t first = 0, end = 0;
  };
  std::vector<int> sources;
  std::vector<Target> targets;
  int64_t rowsBefore = 0;
};
PipelinePeers pipelinePeers(int rank, int ranks, const RowBlocks &blocks, int64_t depth, int64_t dimExtent);
// `rows` of a layout of one run in `columns` (elements of a row) as a layout whose runs are those rows and
// whose rows are the columns: the messages of a strip are then those of a block of rows.
RowLayout columnsOfRows(const RowLayout &layout, Rows rows);

// How the ranks' partial values of a reduction split by its terms are combined: summed, or the largest or
// the smallest taken.
enum class Combine { Sum, Max, Min };
// Combines the `count` values at `values` of every rank, element by element, in place (MPI_Allreduce):
// afterwards every rank holds the same combined values.
void combineValues(float *values, int64_t count, Combine op);
void combineValues(double *values, int64_t count, Combine op);
void combineValues(int32_t *values, int64_t count, Combine op);
// The largest of the ranks' values at each position, in place: the records of a repeat loop that stops
// early (polyc/cuda/ChangedFlag.cuh), so that every rank stops after the same iteration.
inline void largestOverRanks(int32_t *values, int count) { combineValues(values, count, Combine::Max); }
// One value combined (a statement instance's own reduction).
template <typename T> T combineValue(T value, Combine op) {
  combineValues(&value, 1, op);
  return value;
}

// What the GPU ranks' direct paths agree on before they are taken (polyc/cuda/PeerPipeline.h): every call
// is collective, on MPI_COMM_WORLD.
struct World {
  int rank = 0, ranks = 1;
};
World world();
// Whether `value` holds on every rank.
bool onEveryRank(bool value);
// Whether `value` is true on some rank (collective): a repeat loop that stops early goes on while an
// element changed on any rank.
bool onAnyRank(bool value);
// Whether every rank runs on this host (MPI_COMM_TYPE_SHARED).
bool oneHost();
// Rank r's `bytes` bytes at `mine` into all[r * bytes, (r + 1) * bytes), on every rank.
void allGatherBytes(const void *mine, size_t bytes, void *all);
// Every rank waits for the others.
void barrier();

// runMain (Runtime.h) under MPI: initialises MPI, runs the program on every rank with the outputs and the
// report on rank 0 only, and turns a failure on any rank into MPI_Abort with its exit status.
int runMainMpi(int argc, char **argv, const ProgramInfo &info, Compute &compute);

} // namespace polyc::rt::mpi
