// The target-neutral GPU mapping of the whole schedule tree: for every band, whether its loops run on
// the host around the kernels of the bands inside it, are a kernel's grid, run in a kernel's threads,
// or run in one thread; and for a host loop whose launches may be too small to pay for themselves, the
// persistent grid-synchronised kernel that can replace it. Built by mapScheduleTree; the CUDA and OpenCL
// printers print it, polyc explain shows it.
#pragma once

#include "compiler/allocate/Allocation.h"

#include <optional>
#include <string>
#include <vector>

namespace polyc::map {

enum class Placement {
  HostLoop,     // a sequential band with parallel work inside: its loops on the host, launches inside
  Kernel,       // the band's parallel members are a kernel's grid, as its allocation says
  InKernel,     // under a Kernel or SingleThread band: loops of the threads that run it
  SingleThread, // no parallel dimension in or under it: one thread runs it in order
};
const char *spelling(Placement placement);

// A host loop as one cooperative kernel: its threads stride over each kernel band inside (a thread per
// point, or a warp per point for a reduction) and meet at a grid-wide barrier after each, so an
// iteration costs barriers, not launches.
struct PersistentForm {
  // The points of the largest launch inside one iteration, as a C expression of the params ("H * W").
  std::string pointsPerStep;
  unsigned threadsPerPoint = 1; // the most threads a point of a band inside takes
  int64_t threadsMin = 0;       // the persistent kernel is chosen from pointsPerStep x threadsPerPoint threads
  int64_t oneBlockThreadsMax = 0; // and up to this many, as one block with block barriers
  // False when only the one-block form pays (whyOneBlockOnly): a thread of a band inside sums a whole
  // reduction alone, or every band inside is a thread a point with no reduction.
  bool gridWide = true;
  std::string whyOneBlockOnly;
  std::string condition;        // that choice as a C expression of the params ("true"/"false" when fixed)
  std::optional<bool> chosen;   // the choice when the params fix pointsPerStep; else made at run time
  unsigned barriersPerStep = 0; // grid barriers per iteration of the loop
};

// A kernel band that is a matrix product: its one statement is X[.., a, b] op= f(sum(c in lo..hi) A * B)
// over a box of (a, b), the band's two members, both parallel; A reads at (a, c) and not b, B at (b, c) and
// not a. CUDA runs it as tiles of outputs through shared memory, the terms split over blocks when the
// outputs are few (runtime/include/polyc/cuda/Product.cuh); other targets keep the band's grid.
struct ProductForm {
  unsigned statement = 0;
  unsigned rowDim = 0, columnDim = 0; // the statement dimensions of the band's members 0 (a) and 1 (b)
  const ast::Reduction *sum = nullptr;
  const ast::ArrayRead *rowFactor = nullptr, *columnFactor = nullptr; // A and B
  // Whether the factor's last index moves with c (X[p, i] summed over i), so that its tile loads along
  // the terms; else along the outputs (d1[p, j] summed over p).
  bool rowAlongTerms = false, columnAlongTerms = false;
  // The ranges of a and b: first values and extents, C expressions of the params.
  std::string rowFirst, rows, columnFirst, columns;
  // Statements of the bands right after this one that the product computes at each output, after its
  // store (producer-consumer fusion: the MLP's output deltas after the output layer): pointwise over the
  // same box, each reading what the product and the ones before it write only at its own point and
  // writing nothing they read or write.
  std::vector<unsigned> followers;
  std::vector<std::string> followerConditions; // each one's condition on the params ("" when always)
};

// A top-level repeat loop whose iteration is one simultaneous update of one array from its old values
// (model/SnapshotUpdates: the copy of the old values, then the update reading the copy at bounded
// offsets), over the whole array at every point: its rounds may run several a launch, each block
// (work-group) on a tile of the array and a halo of `rounds x reach` points around it, in on-chip memory,
// writing the tile's own points to the other of two buffers (overlapped time tiles: the blocks compute
// the halos' points again; none reads what another writes in the launch). A loop that stops early runs
// its launches ahead as its iterations do (IslAstPrinter::mayRunAhead), the flag telling whether a
// launch's last round changed an element.
struct RoundTiles {
  unsigned copy = 0, update = 0; // the statements: the copy of the old values, the update
  std::string array, snapshot;   // the updated array and the copy (a local array of the same shape)
  std::vector<int64_t> reach;    // per array dimension: the farthest the update reads the copy from its point
  std::vector<int64_t> tile;     // per array dimension: the points a block owns
  unsigned rounds = 0;           // the most rounds a launch
  const ast::RepeatBlock *block = nullptr; // the loop's range: block->lo .. block->hi
  // The points a block holds along each dimension, tile + 2 x rounds x reach.
  int64_t held(unsigned dim) const { return tile[dim] + 2 * int64_t(rounds) * reach[dim]; }
  // For messages: "48 x 48 points of E (32 x 32 its own".
  std::string heldPoints() const {
    std::string held, own;
    for (unsigned k = 0; k < tile.size(); ++k) {
      held += (k ? " x " : "") + std::to_string(this->held(k));
      own += (k ? " x " : "") + std::to_string(tile[k]);
    }
    return held + " points of " + array + " (" + own + " its own";
  }
};

// The round tiles of top-level host loop `band`, or none with the reason in `why` (RoundTiles.cpp).
std::optional<RoundTiles> findRoundTiles(const model::Model &model, const schedule::Schedule &schedule,
                                         unsigned band, std::string &why);

struct BandMapping {
  unsigned band = 0;
  int parent = -1; // the enclosing band in the schedule tree (index into Schedule::bands), -1 at the top
  Placement placement = Placement::SingleThread;
  // Kernel: the band members spread over the grid, outermost first: the innermost run of up to three
  // parallel members (the last on the grid's x dimension); the members outside them are host loops
  // (before) or loops of each thread (after).
  std::vector<unsigned> gridMembers;
  // Kernel, inside a persistent kernel: the threads of a point, one for a data-parallel band, up to a
  // warp for a reduction (the persistent kernel's blocks are of one size for all its bands).
  unsigned persistentGroup = 1;
  // The iterations of the band's host loops, as a C expression of the params: all its members for a
  // HostLoop, those before the grid members for a Kernel; empty when there are none or isl gives no
  // single affine expression for them.
  std::string iterations;
  // At the top of the tree: the band's launches, a known number per iteration (no loop on the host
  // inside it), may be captured into a CUDA graph and replayed when `iterations` is small enough.
  bool replayable = false;
  std::optional<PersistentForm> persistent; // HostLoop at the top of the tree, when every launch inside
                                            // is data-parallel or a reduction, none reducing on the host
  std::optional<ProductForm> product;       // Kernel: when the band is a matrix product
  // Kernel: a band of one scatter (model::Statement::scatter), a thread a point: it may add into a copy of
  // its array a block (work-group) in shared (local) memory, added to the array at the end, where the copy
  // fits and the points are many (the runtimes' privateHistogram, at run time); else atomics on the array.
  std::optional<unsigned> privatisedScatter;
  // HostLoop at the top of the tree: its rounds in tiles, several a launch (POLYC_CUDA_ROUND_TILES and
  // POLYC_OPENCL_ROUND_TILES=0 run them one a launch instead).
  std::optional<RoundTiles> roundTiles;
  int computedIn = -1; // Kernel: the band of the matrix product that computes its statement (a follower)
  std::string reason;                       // the decision in words, for polyc explain
};

struct Mapping {
  std::vector<BandMapping> bands; // one per schedule band, same order
  // A streamed schedule (Schedule::streaming) whose outer loop cannot run on the host one step at a time:
  // why; the GPU targets refuse to emit it (the CPU target streams it).
  std::string streamProblem;
};

// A band node of a schedule tree, as the walks of the mapping and the MPI decomposition record it.
struct BandNode {
  int parent = -1; // the enclosing band (an index into the same list), -1 at the top
  isl::schedule_node node;
  isl::union_set domain; // the instances that reach the band
  isl::multi_union_pw_aff partial;
};
// The band nodes of `tree` in pre-order (the order of Schedule::bands).
std::vector<BandNode> bandNodes(const isl::schedule &tree);

// The statement dimension that band member `member` is on `domain` (one statement's instances in the band:
// the member's value equal to that dimension's everywhere), if any.
std::optional<unsigned> memberDim(const isl::set &domain, const isl::multi_union_pw_aff &partial,
                                  unsigned member);

// The matrix product that kernel band `band` computes (its `domain`, the instances reaching it, and
// `partial`, its partial schedule), or none with the reason in `why` (Product.cpp). `around`: the params
// for which the loops around the band run (its ranges are printed for those).
std::optional<ProductForm> findProduct(const model::Model &model, const schedule::Schedule &schedule,
                                       unsigned band, const isl::union_set &domain,
                                       const isl::multi_union_pw_aff &partial, const isl::set &around,
                                       std::string &why);

// Whether `statement` can follow the statements of `product` (its statement, then its followers) at
// each output of the product (ProductForm::followers): `domain` and `partial` are those of its band, which
// comes right after the product's or its last follower's in the tree; `around` as for findProduct. The
// condition on the params under which it has instances where the product has ("" when always), or none.
std::optional<std::string> canFollowProduct(const model::Model &model, const ProductForm &product,
                                            unsigned statement, const isl::union_set &productDomain,
                                            const isl::union_set &domain,
                                            const isl::multi_union_pw_aff &partial, const isl::set &around);

// The mapping of every band of `schedule`'s tree (pre-order, as Schedule::bands).
llvm::Expected<Mapping> mapScheduleTree(const model::Model &model, const schedule::Schedule &schedule,
                                        const allocate::Allocation &allocation);

} // namespace polyc::map
