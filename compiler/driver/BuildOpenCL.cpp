// polyc build --target=opencl: compiles the emitted host program (<prog>.cpp, the kernels embedded in it)
// with the host C++ compiler and links it against the runtime's OpenCL part, the runtime and the
// OpenCL ICD loader (-lOpenCL). The kernels themselves are compiled by the OpenCL driver at run time.
#include "Targets.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

#ifndef POLYC_RUNTIME_INCLUDE_DIR
#define POLYC_RUNTIME_INCLUDE_DIR ""
#endif
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
  if (const char *dir = std::getenv("POLYC_RUNTIME_DIR"); dir && *dir) {
    SmallString<256> include(dir);
    sys::path::append(include, "include");
    includeDir = include.str().str();
    auto find = [&](const char *name) {
      SmallString<256> direct(dir), under(dir);
      sys::path::append(direct, name);
      sys::path::append(under, "lib", name);
      return sys::fs::exists(direct) ? direct.str().str() : under.str().str();
    };
    runtime = find("libpolyc_runtime.a");
    opencl = find("libpolyc_runtime_opencl.a");
  } else {
    includeDir = POLYC_RUNTIME_INCLUDE_DIR;
    runtime = POLYC_RUNTIME_LIBRARY;
    opencl = POLYC_RUNTIME_OPENCL_LIBRARY;
  }
  SmallString<256> header(includeDir);
  sys::path::append(header, "polyc", "opencl", "OpenCLRuntime.h");
  if (!sys::fs::exists(header)) {
    errs() << "polyc: error: cannot find the runtime's OpenCL headers (no " << header
           << "); set POLYC_RUNTIME_DIR to a folder with include/ and the runtime libraries\n";
    return false;
  }
  for (const std::string &library : {runtime, opencl})
    if (library.empty() || !sys::fs::exists(library)) {
      errs() << "polyc: error: cannot find the runtime library '" << library
             << "' (this polyc was built without OpenCL, or the library is not built: ninja "
                "polyc_runtime_opencl); set POLYC_RUNTIME_DIR\n";
      return false;
    }
  return true;
}

int polyc::driver::buildOpenCL(const BuildJob &job) {
  std::string includeDir, runtime, opencl;
  if (!locateOpenCLRuntime(includeDir, runtime, opencl))
    return 1;
  SmallVector<StringRef> compilerWords;
  const char *cxx = std::getenv("CXX");
  StringRef(cxx && *cxx ? cxx : "c++").split(compilerWords, ' ', -1, false);
  ErrorOr<std::string> compiler = sys::findProgramByName(compilerWords.front());
  if (!compiler) {
    errs() << "polyc: error: cannot find the C++ compiler '" << compilerWords.front()
           << "' (set CXX to a C++17 compiler)\n";
    return 1;
  }
  SmallString<256> source(job.sourceDir);
  sys::path::append(source, job.programName + ".cpp");
  std::vector<std::string> args = {*compiler};
  for (size_t k = 1; k < compilerWords.size(); ++k)
    args.push_back(compilerWords[k].str());
  for (const char *flag : {"-std=c++17", "-O2"})
    args.push_back(flag);
  if (const char *extra = std::getenv("POLYC_CXXFLAGS")) {
    SmallVector<StringRef> words;
    StringRef(extra).split(words, ' ', -1, false);
    for (StringRef w : words)
      args.push_back(w.str());
  }
  args.push_back("-I" + job.sourceDir);
  args.push_back("-I" + includeDir);
  args.push_back(source.str().str());
  args.push_back(opencl);
  args.push_back(runtime);
  // The runtime's CPU parts use OpenMP when it was built with it; linking it is harmless otherwise.
  for (const char *flag : {"-lOpenCL", "-fopenmp", "-lpthread", "-o"})
    args.push_back(flag);
  args.push_back(job.output);

  std::string commandText;
  for (const std::string &a : args)
    commandText += (commandText.empty() ? "" : " ") + a;
  if (job.verbose)
    errs() << commandText << "\n";
  SmallString<256> logPath(job.sourceDir);
  sys::path::append(logPath, "compiler-output.txt");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath), StringRef(logPath)};
  std::vector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = sys::ExecuteAndWait(*compiler, argRefs, std::nullopt, redirects, 0, 0, &message);
  auto log = MemoryBuffer::getFile(logPath);
  if (status != 0) {
    if (log)
      errs() << (*log)->getBuffer();
    errs() << "polyc: error: compiling the generated code failed"
           << (status < 0 ? " (" + message + ")" : " (exit status " + std::to_string(status) + ")")
           << "; the command was:\n  " << commandText << "\n";
    return 1;
  }
  if (job.verbose && log)
    errs() << (*log)->getBuffer();
  return 0;
}
