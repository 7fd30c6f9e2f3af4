// Fusion: which statements of a region are computed in one loop nest, because they read the same arrays
// over the same domain ("package execution", seed 000) or because they are the pieces of one array's
// definition (a stencil step's interior and its boundary). Used by chooseSchedule.
#pragma once

#include "compiler/schedule/Schedule.h"

namespace polyc::schedule {

// `order` lists a region's statements in execution order; `fixedDims` leading dimensions are already
// scheduled by enclosing bands (equal for all of them); `regionDeps` are the dependences left inside the
// region. Returns the groups of two or more statements that can share one loop nest, in order.
std::vector<FusionGroup> findFusionGroups(const model::Model &model, const std::vector<unsigned> &order,
                                          unsigned fixedDims, const isl::union_map &regionDeps);

// The pieces of one array's definition in a region: statements that write the same array, with as many
// dimensions, none depending on itself or on another of them there. One loop nest over their union is
// one launch over the whole array, where apart the boundary's launch covers the bounding box of its faces
// (heat-3d: N^3 threads for 6N^2 points) and each is a launch or grid barrier of its own in every step.
// `components` are the region's strongly connected components in dependence order; returns them with
// each such set of pieces made one component, still in an order that keeps every dependence, and a
// group for each set.
struct PieceMerge {
  std::vector<std::vector<unsigned>> components;
  std::vector<FusionGroup> groups;
};
PieceMerge mergeDefinitionPieces(const model::Model &model, const std::vector<std::vector<unsigned>> &components,
                                 unsigned fixedDims, const isl::union_map &regionDeps);

// Sibling definitions, after mergeDefinitionPieces: consecutive components that are each a whole array's
// definition (its merged pieces, or one statement), over the same domain, with no dependence between
// them and an array they all read, become one component and one group (fdtd-2d's ey and ex updates: one
// launch or grid barrier a step for both, where apart each was one). At least one of them has pieces;
// runs of single statements are findFusionGroups'.
PieceMerge fuseSiblingDefinitions(const model::Model &model, PieceMerge merged, unsigned fixedDims,
                                  const isl::union_map &regionDeps);

} // namespace polyc::schedule
