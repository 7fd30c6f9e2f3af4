// The polytope dependence graph: statements as nodes, flow/anti/output dependences as edges carrying
// their distance sets, classified uniform / affine / non-uniform. Built by computeDependences.
#pragma once

#include "compiler/model/Model.h"

#include <optional>
#include <vector>

namespace polyc::analysis {

enum class DependenceKind { Flow, Anti, Output };
enum class DependenceClass { Uniform, Affine, NonUniform };
const char *spelling(DependenceKind kind);   // "flow", "anti", "output"
const char *spelling(DependenceClass depClass); // "uniform", "affine", "non-uniform"

struct Dependence {
  DependenceKind kind = DependenceKind::Flow;
  unsigned source = 0, target = 0; // statement indices
  std::string array;               // the array through which the dependence goes
  isl::map relation;               // [params] -> { S_source[x] -> S_target[y] }
  // Distances y - x over the dimensions the two statements share (all of them for a self-dependence).
  isl::set distances;
  DependenceClass depClass = DependenceClass::Affine;
  // When the distance set is finite for the given params: its elements, sorted.
  std::optional<std::vector<std::vector<int64_t>>> distanceVectors;
  // How many leading dimensions `distances` covers: all of them for a self-dependence; for two
  // statements, the repeat dimension of a shared repeat block and the leading dimensions of the same name.
  unsigned sharedDims = 0;
};

struct DependenceGraph {
  isl::ctx ctx{nullptr};
  std::vector<Dependence> edges;
  isl::union_map flow() const;     // union of the flow relations
  isl::union_map validity() const; // every dependence a schedule must respect
};

// Errors: a dependence no schedule can order (a zero-distance self-dependence such as
// y[i] = y[i] + 1), reported with the equation's source location.
llvm::Expected<DependenceGraph> computeDependences(const model::Model &model);

} // namespace polyc::analysis
