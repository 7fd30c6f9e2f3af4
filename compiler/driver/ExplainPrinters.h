// The views of `polyc explain`: text, JSON (schema in docs/explain-json.md), the dependence graph as
// Graphviz dot, and an SVG picture of a 2D iteration space. Each lives in its own Explain*.cpp.
#pragma once

#include "compiler/map/Decompose.h"
#include "compiler/map/Mapping.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace polyc::driver {

struct ExplainInput {
  std::string path;
  const model::Model &model;
  const analysis::DependenceGraph &deps;
  const schedule::Schedule &schedule;
  const allocate::Allocation &allocation;
  const map::Mapping &mapping;
  const map::Decomposition *decomposition = nullptr; // --mpi: the bands the ranks share
  // --mpi: the same with every halo sent (--no-recompute), the volumes recomputing saves (text only)
  const map::Decomposition *sentDecomposition = nullptr;
  std::string mpiTarget = "cpu";                     // --mpi: the target whose decomposition it is
};

// The equation of a statement as written (whitespace collapsed), and its line in the source.
std::string equationText(const model::Statement &stmt);
unsigned equationLine(const model::Statement &stmt, const llvm::SourceMgr &sm);
std::string vectorText(const std::vector<int64_t> &v);
template <typename T> std::string islText(const T &object);

void printExplainText(const ExplainInput &in, const llvm::SourceMgr &sm, llvm::raw_ostream &os);
llvm::json::Value explainJson(const ExplainInput &in, const llvm::SourceMgr &sm);
void printExplainDot(const ExplainInput &in, llvm::raw_ostream &os);
llvm::Error printExplainSvg(const ExplainInput &in, llvm::raw_ostream &os);

} // namespace polyc::driver

#include <sstream>

template <typename T> std::string polyc::driver::islText(const T &object) {
  std::ostringstream os;
  os << object;
  return os.str();
}
