// The chosen schedule: an isl schedule tree over all statements, its bands with per-dimension
// parallelism and (for uniform recurrences) the Lamport hyperplane, the fusion groups and the folded
// storage. Built by chooseSchedule; checked independently by verifySchedule (Legality.cpp).
#pragma once

#include "compiler/analysis/DependenceGraph.h"

#include <optional>
#include <string>
#include <vector>

namespace polyc::schedule {

// A maximal permutable group of schedule dimensions over some statements.
struct Band {
  std::vector<unsigned> statements;
  std::vector<std::string> dimNames; // readable names of the band's schedule dimensions
  std::vector<bool> coincident;      // per dimension: no dependence carried, so parallel
  bool isSequentialRepeat = false;   // the band of a repeat loop
  bool stopsWhenUnchanged = false;   // a repeat loop that stops early (`until unchanged(...)`)
  // For a uniform recurrence scheduled by a hyperplane: pi, with pi . d >= 1 for every distance d.
  // The band's first dimension is then t = pi . x and the rest enumerate points within a hyperplane.
  std::vector<int64_t> hyperplane;
  std::string hyperplaneCount; // the number of hyperplanes over the domain, as an expression of params
  std::string hyperplaneExpr;  // t = pi . x over the statement's dimensions, e.g. "i + j"
  // The CPU target's tile sizes, one per member, outermost first; empty: not tiled (Tiling.h).
  std::vector<int64_t> tileSizes;
};

// Statements computed in one loop nest, one kernel ("package execution", seed 000).
struct FusionGroup {
  std::vector<unsigned> statements;
  std::string reason; // e.g. "all read gx, gy, gt in the same loop nest"
};

// A dimension of an array whose uses only look back a bounded distance is stored modulo a window.
struct FoldedStorage {
  std::string array;
  unsigned dim = 0;
  std::string window; // the number of slots, as an expression of params and constants ("2", "L")
  int64_t windowValue = -1; // when it is a compile-time constant
};

// An array that a streamed build (polyc build --stream, Streaming.h) holds as a ring of slices along its
// first dimension, one slice per step of the outer loop: an input's arrive before the step that first reads
// them, an output's leave after the step that writes them.
struct StreamedArray {
  std::string array;
  bool isInput = true;
  int64_t lag = 0; // the steps read slices t - lag .. t
  int64_t slots =
      2; // lag + 2: during step t the slice of step t + 1 arrives, or the one of step t - 1 leaves
};

struct Streaming {
  std::string stepName;                 // the outer loop's dimension ("t")
  std::vector<StreamedArray> arrays;    // in the order of the program's declarations
  std::vector<std::string> wholeArrays; // inputs and outputs moved whole, each with the reason
};

// The instances of an identity copy along a folded dimension that the schedule no longer runs: the slot
// already holds the value (CopyElision.h).
struct ElidedCopies {
  unsigned statement = 0;
  std::string description; // for polyc explain
};

// An iterated stencil's time loop given two schedules (TimeTiling.h): under a filter on `param` = 1 the
// time-tiled one, otherwise the step-by-step one. The generated code sets `param` before the loops from
// the points of a step (polyc::rt::cpu::timeTiled): the sum over `stepExtents`, one list for each
// statement of the region, of the product of its extents within a step (functions of the params).
struct TimeTiledRegion {
  isl::id param;
  std::vector<std::vector<isl::pw_aff>> stepExtents;
  std::string description; // "band 2 (S2, S3, S4, S5): (t, 2t + i, ...), tiles of 16 x 64, ..."
};

// `bands` lists the tree's band nodes in pre-order (a depth-first walk from the root, children in
// order), so the k-th band node met while walking `tree` is bands[k].
struct Schedule {
  isl::schedule tree;                 // over model.domains()
  isl::union_map scheduleMap;         // the same as a flat map, statement -> time vector
  std::vector<Band> bands;            // in execution order
  std::vector<FusionGroup> fusionGroups;
  std::vector<FoldedStorage> folded;
  std::vector<TimeTiledRegion> timeTiled; // the CPU target's (empty unless timeTile ran)
  std::vector<ElidedCopies> elided; // copies into folded slots that already hold the value (CopyElision.h)
  std::optional<Streaming> streaming; // a streamed build's rings (Streaming.h); their folds are in `folded`
};

struct ScheduleOptions {
  bool fuse = true;         // --no-fuse turns it off
  // Sibling definitions share one band (fuseSiblingDefinitions): on the GPU targets, where it saves a launch
  // or a grid barrier a step. The CPU keeps them apart: fused, the boundary pieces become tests at every
  // point of one loop that no longer vectorises (fdtd-2d 2.6x slower on 2 threads).
  bool fuseSiblings = true;
  bool streamSteps = false; // --stream: one outer loop over the statements' shared first dimension if legal
};

llvm::Expected<Schedule> chooseSchedule(const model::Model &model, const analysis::DependenceGraph &deps,
                                        const ScheduleOptions &options);

// A band node's statements, members' parallelism and readable member names (no repeat or hyperplane
// information: chooseSchedule adds those).
Band describeBand(const model::Model &model, const isl::schedule_node_band &band);

// The tree's schedule as one flat map, every statement's time vector padded with zeros to one length.
isl::union_map flatScheduleMap(const isl::schedule &tree);

// Independent check: every dependence's source runs before its target under the schedule on every
// target: the first dimension at which their time vectors differ is a band's sequential member or a
// sequence's position (the points of a parallel member, and a set's children, run in no order).
// Returns an error naming the first violated dependence.
llvm::Error verifySchedule(const model::Model &model, const analysis::DependenceGraph &deps,
                           const Schedule &schedule);

// Independent check of the folded storage (Schedule::folded): no instance writes to a slot between the
// write of the value it holds and a read of that value, the points of parallel members and the
// children of set nodes counting as unordered. Returns an error naming the array and the statements.
llvm::Error verifyStorage(const model::Model &model, const analysis::DependenceGraph &deps,
                          const Schedule &schedule);

} // namespace polyc::schedule
