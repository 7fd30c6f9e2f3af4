// What every code generator (cpu/, cuda/, opencl/) receives: the middle end's results and where they
// came from; and what it returns: named source files. Shared by all targets.
#pragma once

#include "compiler/map/Mapping.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
}

namespace polyc::codegen {

// One emitted file: `name` is relative to the output folder (for example "iir2d.cpp").
struct GeneratedFile {
  std::string name;
  std::string contents;
};

struct CodegenInput {
  const model::Model &model;
  const analysis::DependenceGraph &deps;
  const schedule::Schedule &schedule;
  const allocate::Allocation &allocation;
  std::string sourcePath;  // as the user gave it, for the banner comment
  std::string commandLine; // the polyc command that produced the code, without its -o (see EmitCommand)
  const llvm::SourceMgr *sourceMgr = nullptr; // optional: gives line numbers in comments
  const map::Mapping *mapping = nullptr;      // the GPU targets' mapping (required by them)
  // --mpi (the CPU target): every rank holds every array and computes its block of the outermost parallel
  // dimension of each band that can be distributed, then shares the rows it wrote (runtime/polyc/mpi).
  bool mpi = false;
  // --mpi: halos that later bands alone read are computed by widened blocks instead of sent (map::decompose).
  bool mpiRecompute = true;
  // --mpi: 2-D recurrences run as pipelines across the ranks (the target prints them; map::Pipeline).
  bool mpiPipelines = false;
};

// The program's C identifier: the source file's stem with characters outside [A-Za-z0-9_] replaced by
// '_' (and a leading '_' if it starts with a digit). Names the files, the run function and the structs.
std::string programName(const CodegenInput &input);

} // namespace polyc::codegen
