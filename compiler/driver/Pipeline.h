// The compilation pipeline up to the allocation, shared by the subcommands that need it (emit, build;
// explain may use it too): loadProgram -> hoistInputTerms -> factorSeparableSums ->
// computeTermsOncePerPoint -> buildModel -> snapshotUpdates ->
// removeDeadInstances -> computeDependences -> chooseSchedule -> verifySchedule, verifyStorage -> timeTile
// (checked again) -> chooseTiles -> planStreaming (--stream, checked again) -> allocate -> mapScheduleTree
// (GPU targets and explain). Errors are printed clang-style through the SourceMgr.
#pragma once

#include "compiler/map/Mapping.h"
#include "compiler/schedule/Tiling.h"
#include "compiler/schedule/TimeTiling.h"
#include "compiler/support/IslContext.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace polyc::driver {

struct PipelineOptions {
  std::map<std::string, int64_t> params; // --param NAME=VALUE
  allocate::AllocationChoice allocation = allocate::AllocationChoice::Auto;
  bool fuse = true;       // --no-fuse clears it
  bool fuseSiblings = true; // the GPU targets' (schedule::ScheduleOptions::fuseSiblings)
  bool hoist = true;      // --no-hoist clears it: no HoistInputTerms rewrite
  bool factor = true;     // --no-factor clears it: no FactorSums or PointTerms rewrite
  int64_t blockSize = 0;  // --block, 0: the cost model's
  schedule::TilingOptions tiling; // --tile
  schedule::TimeTilingOptions timeTiling; // set for a target that tiles for caches, unless --tile=none
  bool gpuMapping = true; // mapScheduleTree: emit and build clear it for the CPU target, which has none
  bool stream = false;    // --stream: inputs and outputs moved one slice per step of the outer loop
  bool mpi = false;       // --mpi: ranks of MPI, each computing a block of the distributed bands
  bool mpiRecompute = true; // --no-recompute clears it: every halo is sent (map::DecomposeOptions)
};

// Every stage's result. The isl context is declared first so that it is destroyed last.
struct CompiledProgram {
  IslContext isl;
  std::unique_ptr<ast::Program> program;
  model::Model model;
  analysis::DependenceGraph deps;
  schedule::Schedule schedule;
  allocate::Allocation allocation;
  map::Mapping mapping;
};

// Runs the pipeline on `path`. On an error in the program or the options, prints it (at its place in
// the source when the stage gives one) and returns null: the caller exits with status 1.
std::unique_ptr<CompiledProgram> compileProgram(llvm::SourceMgr &sm, llvm::StringRef path,
                                                const PipelineOptions &options);

// Parses `--param` values "NAME=VALUE" (VALUE a decimal integer); the same name twice with different
// values is an error.
llvm::Expected<std::map<std::string, int64_t>> parseParamAssignments(const std::vector<std::string> &texts);

// Prints an error from any stage as `file:line:col: error: ...` when it carries a source range
// (polyc::SourceError), else as `polyc: error: ...`. Returns 1, the exit status.
int reportError(llvm::Error error, llvm::SourceMgr &sm);

} // namespace polyc::driver
