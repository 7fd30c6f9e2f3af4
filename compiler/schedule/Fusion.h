// Fusion ("package execution", seed 000): which consecutive statements of a region are computed in one
// loop nest because they read the same arrays over the same domain. Used by chooseSchedule.
#pragma once

#include "compiler/schedule/Schedule.h"

namespace polyc::schedule {

// `order` lists a region's statements in execution order; `fixedDims` leading dimensions are already
// scheduled by enclosing bands (equal for all of them); `regionDeps` are the dependences left inside the
// region. Returns the groups of two or more statements that can share one loop nest, in order.
std::vector<FusionGroup> findFusionGroups(const model::Model &model, const std::vector<unsigned> &order,
                                          unsigned fixedDims, const isl::union_map &regionDeps);

} // namespace polyc::schedule
