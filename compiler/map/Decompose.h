// The MPI decomposition of a CPU program (polyc build --mpi): which bands the ranks share, each rank taking
// a block of the band's outermost parallel dimension, and the rows every rank then sends to the others.
// A band is distributed when its first member is parallel, no enclosing band is parallel (its loops are
// not inside an OpenMP loop or another distributed band), and every array it writes is written at an
// index equal to the statement dimension of that member plus a constant, in a dimension that is not
// folded: then a rank's writes lie in its block's rows of that dimension, in every run of the dimensions
// before it. Other bands run whole on every rank (the same result everywhere).
// Every array is allocated whole on every rank. After a distributed band each rank sends the rows it
// wrote: to every rank (broadcast), or only to the ranks whose blocks read them (halo); then rank 0
// collects an output's rows at the end.
// A halo that only later bands read can be recomputed instead of sent (seed 000's cut point, by
// recomputation): the writing band runs a widened block, the rows its readers need beyond their own
// blocks included, and the bands it reads from widen in turn (ghost zones).
// A reduction whose terms read rows the ranks computed in blocks, at its variable, is split by its terms
// instead of having those rows broadcast: each rank takes its block of the terms, and the partial values
// are combined across the ranks (an all-reduce, TermSplit).
#pragma once

#include "compiler/allocate/Allocation.h"
#include "compiler/map/Mapping.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace polyc::map {

// How the rows a distributed band wrote reach the ranks that read them.
enum class ExchangeKind {
  // Every rank gets every row (one broadcast a rank): some reader runs whole on every rank, splits
  // another range, gathers through an index array, or reads rows at no constant distance from its own.
  Broadcast,
  // Each rank gets only the rows its own block reads: [block.first + lo, block.end + hi) of the array's
  // dimension, from the ranks whose blocks wrote them (point to point). Every reader is a distributed band
  // over the same range, reading at member 0 plus a constant from lo to hi; every writer too, at `shift`.
  Halo,
};

// After a distributed band: `array`'s rows along `dim`, each rank's block shifted by `shift`.
struct RowExchange {
  std::string array;
  unsigned dim = 0;
  int64_t shift = 0;
  ExchangeKind kind = ExchangeKind::Broadcast;
  int64_t lo = 0, hi = 0;  // Halo: the rows a rank reads, relative to its block of member 0
  std::string why;         // Broadcast: the reader that needs every row; Halo: the readers
  std::string rowElements; // the elements of one row in every run of the dimensions before it (explain)
  unsigned elementBytes = 0;
  // Halo: the rows other ranks' blocks read are computed again on each reader's rank by this band's
  // widened block (BandDecomposition::widenBefore/After), so nothing is sent.
  bool recomputed = false;
  // Halo: whether another rank reads any of this block's rows (false: nothing to send).
  bool sends() const {
    return kind == ExchangeKind::Broadcast || (!recomputed && (lo < shift || hi > shift));
  }
};

// A band the ranks run as a pipeline (seed 004's flexible wavefront, across ranks): one statement over a
// rectangle of two dimensions, every dependence on itself at distances (d_row, d_column) >= 0 in them, the
// rows of its array written at (row + rowShift, column + columnShift). Rank r takes a block of the rows
// (BandDecomposition::first, extent: member 0 of the blocks is the row dimension, not the band's) and walks
// the columns in strips: before a strip it receives, from the ranks before it, the `depth` rows before its
// block in the strip's columns; after it, it sends its own rows that later blocks read. Within a strip the
// flexible wavefront runs as without MPI.
struct Pipeline {
  unsigned statement = 0;                // by index into Model::statements
  std::string columnFirst, columnExtent; // the column dimension's range, C expressions of the params
  std::string depth;                     // the largest row distance of a read of its own array (C)
  std::string array;                     // the array it writes: rows along dimension 0, columns along 1
  int64_t rowShift = 0, columnShift = 0;
};

struct BandDecomposition {
  unsigned band = 0;
  bool distributed = false;
  std::optional<Pipeline> pipeline;   // distributed as a pipeline: blocks of its statement's row dimension
  std::string first, extent;          // the range of member 0, C expressions of the params
  std::vector<RowExchange> exchanges; // one per array the band writes
  // Each statement's dimension equal to member 0 (by index into Model::statements): the generated code
  // runs an instance only on the rank whose block holds that value.
  std::map<unsigned, unsigned> statementDims;
  std::string reason; // why it is or is not distributed
  // Each rank runs [block.first - widenBefore, block.end + widenAfter) of member 0 (clipped to the
  // range): the rows later bands read beyond their blocks, computed here rather than received.
  int64_t widenBefore = 0, widenAfter = 0;
  std::string widenWhy; // the recomputed arrays and what they feed
  // Block-cyclic (the cost model's choice where the work per value of member 0 varies, a triangle's
  // rows): each rank runs `chunks` chunks of the range dealt in snake order (polyc::rt::mpi::chunksOf)
  // instead of one block, so that the ranks' shares of the work are alike. Only for a band every one of
  // whose exchanges is a broadcast and whose blocks no other decision depends on (halos it reads, terms
  // split over its rows); 1 otherwise.
  int64_t chunks = 1;
  std::string chunksWhy; // the statement whose work varies
};

// An output whose rows stay with the ranks that computed them (halo exchanges only): rank 0 collects
// every other rank's block of rows at the end, before it writes the output.
struct RowGather {
  RowExchange rows;
  std::string first, extent; // the blocks' range
};

// A statement whose reduction the ranks split by its terms (an all-reduce): every rank runs all of its
// instances, each over only the values of `variable` in the rank's block, the blocks of the band that
// wrote the rows those terms read, so that a rank reads only rows it computed itself; the ranks' partial
// values are then combined (added up, or the largest or smallest taken) before the statement finishes
// with them. Seed 003's weight updates, data-parallel over the cases: sum(p in 0..P) d2[p, k] * h[p, j]
// after h and d2 were computed in blocks of p.
struct TermSplit {
  unsigned statement = 0;                  // by index into Model::statements
  const ast::IndexVar *variable = nullptr; // the reduction's variable whose values the ranks split
  std::string first, extent;               // its blocks' range: the writing band's, C expressions of the params
  // Where the partial values are combined: after each run of this fully parallel band (all of its
  // statements split), or after each instance of the statement when -1 (one directly in a repeat loop).
  int band = -1;
  std::vector<const ast::ArrayRead *> ownRows; // the reads of rows the rank computed (at the variable)
  std::string values;                          // the elements of the written array, combined each time (C)
  unsigned elementBytes = 0;
  std::string why; // the writing bands and arrays
};

struct Decomposition {
  std::vector<BandDecomposition> bands; // one per schedule band, same order
  std::vector<TermSplit> splits;        // in statement order
  std::vector<RowGather> gathers;       // at the end of the run, in array order
};

// The most rows a band's block is widened by on either side to recompute halos; beyond it, rows are sent.
constexpr int64_t kMaxWidening = 16;
// The chunks a rank of a block-cyclic band runs (BandDecomposition::chunks): with work growing linearly
// along the range, any even number balances the ranks; 4 also evens out curvature (a sum over a triangle)
// at a broadcast per chunk.
constexpr int64_t kChunksPerRank = 4;

struct DecomposeOptions {
  bool recompute = true; // polyc --no-recompute clears it: every halo is sent
  bool pipelines = false; // bands run as pipelines (Pipeline): the cpu target's; the GPU targets' not yet
};

Decomposition decompose(const model::Model &model, const schedule::Schedule &schedule,
                        const allocate::Allocation &allocation, const DecomposeOptions &options = {});

// The GPU mapping as ranks of MPI run it: rows move between the launches, on the host, so there is no
// persistent kernel and no CUDA graph. A distributed matrix product computes the rank's block of its rows
// (member 0), and the statements that followed it are bands of their own again; a product whose sum the
// ranks split by its terms sums the rank's block of them.
Mapping mappingForRanks(Mapping mapping, const Decomposition &decomposition);

} // namespace polyc::map
