// The code generation targets, in one table that `polyc emit` and `polyc build` dispatch through, and
// what the two subcommands share: their options, running the pipeline and a target's code generator,
// writing the files. A target whose generator is not part of this build is refused with
// "target 'NAME' is not available in this build".
//
// Adding a target: give its row in Targets.cpp an `emit` function (its CodeGen<Target>.h entry) and,
// for `polyc build`, a `build` function that compiles the emitted files (see buildCpu).
#pragma once

#include "Pipeline.h"

#include "compiler/codegen/CodegenInput.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace polyc::driver {

// The emitted files of one program, in a folder, to compile into `output`.
struct BuildJob {
  std::string programName;
  std::string sourceDir;
  std::vector<codegen::GeneratedFile> files;
  std::string output; // the executable
  std::string march;  // -march for the cpu target's compile; empty: the compiler's baseline
  bool mpi = false;   // --mpi: the MPI compiler wrapper and the runtime's MPI layer
  bool verbose = false;
};

using EmitFunction = llvm::Expected<std::vector<codegen::GeneratedFile>> (*)(const codegen::CodegenInput &);
// Compiles and links a BuildJob; prints its own errors; returns the exit status.
using BuildFunction = int (*)(const BuildJob &);

struct TargetInfo {
  const char *name;        // --target=NAME
  const char *description; // for --help and errors
  EmitFunction emit;       // null: the target's code generator is not in this build
  BuildFunction build;     // null: polyc build does not support the target yet
  bool tilesForCaches = false; // applies tile sizes and time-tiles stencils (the CPU's caches)
  bool mapsToGpu = false;      // prints the GPU mapping of the schedule tree (compiler/map)
  bool streams = false;        // supports --stream (Schedule::streaming)
  bool mpi = false;            // supports --mpi (ranks of MPI)
  bool mpiPipelines = false;   // --mpi runs 2-D recurrences as pipelines across the ranks (map::Pipeline;
                               // the cpu printer alone prints them so far)
};

const std::vector<TargetInfo> &targets();
const TargetInfo *findTarget(llvm::StringRef name);
// "cpu, cuda, opencl": the names --target takes, for errors.
std::string targetNames();

// The CPU target's build: the host C++ compiler with OpenMP, the runtime's headers and library.
int buildCpu(const BuildJob &job);
// The OpenCL target's build (BuildOpenCL.cpp): the host C++ compiler, the runtime's OpenCL part and
// -lOpenCL.
int buildOpenCL(const BuildJob &job);
// The CUDA target's build: nvcc for --cuda-arch (default sm_90), the runtime's CUDA part (BuildCuda.cpp).
int buildCuda(const BuildJob &job);

// The options emit and build share (defined in EmitCommand.cpp, registered for both subcommands).
struct EmitSettings {
  std::string input;
  const TargetInfo *target = nullptr;
  PipelineOptions pipeline;
  std::string commandLine; // canonical, without -o: recorded in the emitted files' banner
};
// Reads them for the subcommand being run ("emit" or "build"). Prints an error and returns false on
// a bad value (unknown target, malformed --param, negative --block).
bool readEmitSettings(llvm::StringRef subcommand, EmitSettings &settings);

// Runs the pipeline and the target's code generator on settings.input. Prints errors; returns false.
bool generateSources(const EmitSettings &settings, llvm::SourceMgr &sm, std::string &programName,
                     std::vector<codegen::GeneratedFile> &files);

// Writes `files` into `dir`, creating it if needed.
llvm::Error writeFiles(llvm::StringRef dir, const std::vector<codegen::GeneratedFile> &files);

} // namespace polyc::driver
