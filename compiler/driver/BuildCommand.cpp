// polyc build: emits a target's sources into a temporary folder and compiles them with the target's
// compiler into an executable (for the CPU: the host C++ compiler with OpenMP, linked against the
// runtime library). The compiler's output is shown when it fails.
#include "Commands.h"
#include "HostCompile.h"
#include "Targets.h"

#include "compiler/support/SourceError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

#ifndef POLYC_RUNTIME_LIBRARY
#define POLYC_RUNTIME_LIBRARY ""
#endif
#ifndef POLYC_RUNTIME_MPI_LIBRARY
#define POLYC_RUNTIME_MPI_LIBRARY ""
#endif
#ifndef POLYC_MPICXX
#define POLYC_MPICXX "mpicxx"
#endif

using namespace llvm;
using namespace polyc;
using namespace polyc::driver;

static cl::opt<std::string> buildOutput("o", cl::desc("The executable (default: the program's name)"),
                                        cl::value_desc("exe"), cl::sub(BuildCommand));
static cl::opt<bool> buildVerbose("v", cl::desc("Print the commands run"), cl::sub(BuildCommand));
static cl::opt<std::string>
    buildMarch("march",
               cl::desc("The CPU the cpu target's code is compiled for: native (this machine's) or a name the "
                        "host compiler knows (x86-64-v3, znver3, ...). Default: the compiler's baseline"),
               cl::value_desc("cpu"), cl::sub(BuildCommand));

// A CPU name as compilers spell them: letters, digits, '-', '_', '.'.
static bool isCpuName(StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool polyc::driver::hostCompilerFor(const BuildJob &job, llvm::StringRef requirement,
                                    std::vector<std::string> &command, std::string &mpiLibrary) {
  if (!job.mpi)
    return findHostCompiler(requirement, command);
  // The MPI compiler wrapper adds MPI's headers and libraries to the host compiler's command.
  std::string wrapper;
  if (!findMpi(wrapper, mpiLibrary))
    return false;
  command.push_back(wrapper);
  return true;
}

bool polyc::driver::findMpi(std::string &wrapper, std::string &library) {
  const char *given = std::getenv("POLYC_MPICXX");
  wrapper = given && *given ? given : POLYC_MPICXX;
  library = runtimeLibrary("libpolyc_runtime_mpi.a", POLYC_RUNTIME_MPI_LIBRARY);
  return runtimeLibrariesExist({library}, "; this polyc was built without MPI (install libopenmpi-dev and "
                                          "rebuild) or set POLYC_RUNTIME_DIR");
}

int polyc::driver::buildCpu(const BuildJob &job) {
  std::string includeDir = runtimeIncludeDir();
  std::string library = runtimeLibrary("libpolyc_runtime.a", POLYC_RUNTIME_LIBRARY);
  SmallString<256> header(includeDir);
  sys::path::append(header, "polyc", "Runtime.h");
  if (!runtimeHeaderExists(header, "runtime headers", "libpolyc_runtime.a") ||
      !runtimeLibrariesExist({library}, "; build it (ninja polyc_runtime) or set POLYC_RUNTIME_DIR"))
    return 1;
  std::vector<std::string> args;
  std::string mpiLibrary;
  if (!hostCompilerFor(job, "a C++17 compiler with OpenMP", args, mpiLibrary))
    return 1;
  SmallString<256> source(job.sourceDir);
  sys::path::append(source, job.programName + ".cpp");
  const bool gnu = isGnuCompiler(job, args);
  for (const char *flag : {"-std=c++17", "-O3", "-fopenmp"})
    args.push_back(flag);
  // GCC 12's loop distribution (on at -O3) reorders a loop nest that reads a row written two iterations
  // of the outer loop before at a stride-2 column under a guard, and reads it before it is written
  // (fuzz seed 91001466; scripts/toolchain-bugs/gcc-loop-distribution.cpp, 15 lines, no polyc).
  if (gnu)
    args.push_back("-fno-tree-loop-distribution");
  if (!job.march.empty())
    args.push_back("-march=" + job.march);
  // Extra flags for experiments (sanitizers), after ours so they can override.
  appendFlagsFromEnvironment(args, "POLYC_CXXFLAGS");
  args.push_back("-I" + job.sourceDir);
  args.push_back("-I" + includeDir);
  args.push_back(source.str().str());
  if (!mpiLibrary.empty())
    args.push_back(mpiLibrary);
  args.push_back(library);
  args.push_back("-lpthread");
  args.push_back("-o");
  args.push_back(job.output);
  return runCompiler(job, args);
}

int polyc::driver::runBuild() {
  EmitSettings settings;
  if (!readEmitSettings("build", settings))
    return 1;
  if (!settings.target->build) {
    errs() << "polyc: error: polyc build does not support target '" << settings.target->name
           << "' yet; use polyc emit\n";
    return 1;
  }
  SourceMgr sm;
  BuildJob job;
  if (!generateSources(settings, sm, job.programName, job.files))
    return 1;
  job.output = buildOutput.empty() ? job.programName : std::string(buildOutput);
  job.mpi = settings.pipeline.mpi;
  job.verbose = buildVerbose;
  if (buildMarch.getNumOccurrences()) {
    if (!isCpuName(buildMarch)) {
      errs() << "polyc: error: --march: '" << buildMarch << "' is not a CPU name (native, x86-64-v3, ...)\n";
      return 1;
    }
    if (StringRef(settings.target->name) != "cpu")
      errs() << "polyc: warning: --march applies to the cpu target; the " << settings.target->name
             << " target's host code keeps the compiler's baseline\n";
    else
      job.march = buildMarch;
  }

  SmallString<128> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("polyc-build", dir)) {
    errs() << "polyc: error: cannot create a temporary folder: " << ec.message() << "\n";
    return 1;
  }
  job.sourceDir = dir.str().str();
  auto cleanup = make_scope_exit([&] { sys::fs::remove_directories(job.sourceDir); });
  if (Error err = writeFiles(job.sourceDir, job.files))
    return reportError(std::move(err), sm);
  if (job.verbose)
    errs() << "polyc: emitted " << job.files.size() << " files into " << job.sourceDir << "\n";
  return settings.target->build(job);
}
