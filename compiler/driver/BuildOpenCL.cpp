// polyc build --target=opencl: compiles the emitted host program (<prog>.cpp, the kernels embedded in it)
// with the host C++ compiler and links it against the runtime's OpenCL part, the runtime and the
// OpenCL ICD loader (-lOpenCL). The kernels themselves are compiled by the OpenCL driver at run time.
#include "HostCompile.h"
#include "Targets.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#ifndef POLYC_RUNTIME_LIBRARY
#define POLYC_RUNTIME_LIBRARY ""
#endif
#ifndef POLYC_RUNTIME_OPENCL_LIBRARY
#define POLYC_RUNTIME_OPENCL_LIBRARY ""
#endif

using namespace llvm;
using namespace polyc;
using namespace polyc::driver;

// POLYC_RUNTIME_DIR (include/, libpolyc_runtime.a and libpolyc_runtime_opencl.a, directly or under
// lib/) when set, else where this build put them.
static bool locateOpenCLRuntime(std::string &includeDir, std::string &runtime, std::string &opencl) {
  includeDir = runtimeIncludeDir();
  runtime = runtimeLibrary("libpolyc_runtime.a", POLYC_RUNTIME_LIBRARY);
  opencl = runtimeLibrary("libpolyc_runtime_opencl.a", POLYC_RUNTIME_OPENCL_LIBRARY);
  SmallString<256> header(includeDir);
  sys::path::append(header, "polyc", "opencl", "OpenCLRuntime.h");
  return runtimeHeaderExists(header, "runtime's OpenCL headers", "the runtime libraries") &&
         runtimeLibrariesExist({runtime, opencl}, " (this polyc was built without OpenCL, or the library is not "
                                                  "built: ninja polyc_runtime_opencl); set POLYC_RUNTIME_DIR");
}

int polyc::driver::buildOpenCL(const BuildJob &job) {
  std::string includeDir, runtime, opencl;
  if (!locateOpenCLRuntime(includeDir, runtime, opencl))
    return 1;
  std::vector<std::string> args;
  std::string mpiLibrary;
  if (!hostCompilerFor(job, "a C++17 compiler", args, mpiLibrary))
    return 1;
  SmallString<256> source(job.sourceDir);
  sys::path::append(source, job.programName + ".cpp");
  for (const char *flag : {"-std=c++17", "-O2"})
    args.push_back(flag);
  appendFlagsFromEnvironment(args, "POLYC_CXXFLAGS");
  args.push_back("-I" + job.sourceDir);
  args.push_back("-I" + includeDir);
  args.push_back(source.str().str());
  if (!mpiLibrary.empty())
    args.push_back(mpiLibrary);
  args.push_back(opencl);
  args.push_back(runtime);
  // The runtime's CPU parts use OpenMP when it was built with it; linking it is harmless otherwise.
  for (const char *flag : {"-lOpenCL", "-fopenmp", "-lpthread", "-o"})
    args.push_back(flag);
  args.push_back(job.output);
  return runCompiler(job, args);
}
