// Time tiling of iterated stencils for the CPU target (Pluto's parallelogram tiles and wavefront of
// tiles). The time loop of a region streamed over time steps (a band of one sequential member with only
// parallel bands below it: Jacobi, heat, FDTD) runs one step after the other, every step streaming all
// of its arrays through the caches. Here the region is rescheduled as one permutable band, skewed so that
// every dependence points forward in each member (jacobi-2d: (t, 2t + i, 2t + j), the second statement
// of a step shifted by one); its first two members are cut into tiles, and the tiles run in wavefronts
// (tile of t + tile of the second member), the tiles of a wavefront in parallel. Inside a tile's point,
// the step's own loops run as the step-by-step schedule has them (a whole row of jacobi-2d, a plane of
// heat-3d; for a 1-D stencil the point is a step, and each statement runs its part of the row). 1-D to
// 3-D stencils (TimeTiling.cpp, MinSkewedMembers, MaxSkewedMembers).
//
// Both forms are kept, picked at run time by the size of a step (Schedule::TimeTiledRegion): a step
// whose arrays fit in the caches gains nothing from tiles and pays for the wavefront's start and end.
//
// The folded storage (Schedule::folded) stays as it was: the reuse of each folded slot (a later element
// written into the slot of one still to be read) is given to the scheduler as dependences, so the skew
// respects it. The caller checks the result with verifySchedule and verifyStorage (the wavefront's
// parallel member included) and keeps the step-by-step schedule when either rejects it.
#pragma once

#include "compiler/schedule/Schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace polyc::schedule {

struct TimeTilingOptions {
  bool enabled = false; // the CPU target sets it; --tile=none clears it
  // --time-tile=S,W: a tile's extent along the time member and along the first skewed space member (one
  // size: both). Empty: 16 x 64.
  std::vector<int64_t> sizes;
};

// Rewrites every iterated stencil's time loop in `schedule` into the two forms (tree, flat map, bands and
// timeTiled; the folded storage is kept). Returns the number of regions rewritten.
unsigned timeTile(const model::Model &model, const analysis::DependenceGraph &deps, Schedule &schedule,
                  const TimeTilingOptions &options);

} // namespace polyc::schedule
