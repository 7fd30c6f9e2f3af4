// Tile sizes for the CPU target's caches: which bands of the schedule are tiled, and how (DESIGN.md:
// "permutable bands are tiled"). The choice is recorded in Schedule::bands[k].tileSizes; the CPU code
// generator applies it to the tree it prints (isl's band tiling: tile loops outside, point loops
// inside). The GPU targets do not tile yet.
#pragma once

#include "compiler/model/Model.h"
#include "compiler/schedule/Schedule.h"

#include <cstdint>
#include <vector>

namespace polyc::schedule {

struct TilingOptions {
  bool enabled = true;        // --tile=none clears it
  std::vector<int64_t> sizes; // --tile=S0,S1,...: a tiled band's sizes, outermost first; empty: the model's
};

// Chooses tile sizes for every band that gains from tiles: a permutable band of at least two members,
// all parallel, none a hyperplane or repeat loop, whose members are statement dimensions, and in which
// some statement's reduction reads a block along one member but not another (gemm's sum over k of
// A[i, k] * B[k, j]: B's block does not change with i, so a tile of rows reads it once). Stencil steps,
// where every read follows every member, are not tiled: their rows stream through the cache already.
void chooseTiles(const model::Model &model, Schedule &schedule, const TilingOptions &options);

// The default sizes of a tiled band with `members` members: 32 for each member but the last, 64 for the
// last (a multiple of the CPU target's runs of 64 points, so that a run is never split by a tile).
std::vector<int64_t> defaultTileSizes(unsigned members);

} // namespace polyc::schedule
