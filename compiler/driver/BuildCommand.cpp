// polyc build: emits a target's sources into a temporary folder and compiles them with the target's
// compiler into an executable (for the CPU: the host C++ compiler with OpenMP, linked against the
// runtime library). The compiler's output is shown when it fails.
#include "Commands.h"
#include "Targets.h"

#include "compiler/support/SourceError.h"

#include "llvm/ADT/ScopeExit.h"
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

using namespace llvm;
using namespace polyc;
using namespace polyc::driver;

static cl::opt<std::string> buildOutput("o", cl::desc("The executable (default: the program's name)"),
                                        cl::value_desc("exe"), cl::sub(BuildCommand));
static cl::opt<bool> buildVerbose("v", cl::desc("Print the commands run"), cl::sub(BuildCommand));

// The runtime's headers and library: POLYC_RUNTIME_DIR (a folder with include/ and
// libpolyc_runtime.a, directly or under lib/) when set, else where this build put them.
static bool locateRuntime(std::string &includeDir, std::string &library) {
  if (const char *dir = std::getenv("POLYC_RUNTIME_DIR"); dir && *dir) {
    SmallString<256> include(dir), lib(dir), libUnder(dir);
    sys::path::append(include, "include");
    sys::path::append(lib, "libpolyc_runtime.a");
    sys::path::append(libUnder, "lib", "libpolyc_runtime.a");
    includeDir = include.str().str();
    library = sys::fs::exists(lib) ? lib.str().str() : libUnder.str().str();
  } else {
    includeDir = POLYC_RUNTIME_INCLUDE_DIR;
    library = POLYC_RUNTIME_LIBRARY;
  }
  SmallString<256> header(includeDir);
  sys::path::append(header, "polyc", "Runtime.h");
  if (!sys::fs::exists(header)) {
    errs() << "polyc: error: cannot find the runtime headers (no " << header
           << "); set POLYC_RUNTIME_DIR to a folder with include/ and libpolyc_runtime.a\n";
    return false;
  }
  if (!sys::fs::exists(library)) {
    errs() << "polyc: error: cannot find the runtime library '" << library
           << "'; build it (ninja polyc_runtime) or set POLYC_RUNTIME_DIR\n";
    return false;
  }
  return true;
}

static std::string quoted(StringRef arg) {
  if (!arg.empty() && arg.find_first_of(" \t\"'\\$") == StringRef::npos)
    return arg.str();
  std::string text = "'";
  for (char c : arg)
    text += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return text + "'";
}

int polyc::driver::buildCpu(const BuildJob &job) {
  std::string includeDir, library;
  if (!locateRuntime(includeDir, library))
    return 1;
  // $CXX may carry words of its own ("ccache g++"): the first is the program.
  SmallVector<StringRef> compilerWords;
  const char *cxx = std::getenv("CXX");
  StringRef(cxx && *cxx ? cxx : "c++").split(compilerWords, ' ', -1, false);
  ErrorOr<std::string> compiler = sys::findProgramByName(compilerWords.front());
  if (!compiler) {
    errs() << "polyc: error: cannot find the C++ compiler '" << compilerWords.front()
           << "' (set CXX to a C++17 compiler with OpenMP)\n";
    return 1;
  }
  SmallString<256> source(job.sourceDir);
  sys::path::append(source, job.programName + ".cpp");
  std::vector<std::string> args = {*compiler};
  for (size_t k = 1; k < compilerWords.size(); ++k)
    args.push_back(compilerWords[k].str());
  for (const char *flag : {"-std=c++17", "-O3", "-fopenmp"})
    args.push_back(flag);
  // Extra flags for experiments (-march=native, sanitizers), after ours so they can override.
  if (const char *extra = std::getenv("POLYC_CXXFLAGS")) {
    SmallVector<StringRef> words;
    StringRef(extra).split(words, ' ', -1, false);
    for (StringRef w : words)
      args.push_back(w.str());
  }
  args.push_back("-I" + job.sourceDir);
  args.push_back("-I" + includeDir);
  args.push_back(source.str().str());
  args.push_back(library);
  args.push_back("-lpthread");
  args.push_back("-o");
  args.push_back(job.output);

  std::string commandText;
  for (const std::string &a : args)
    commandText += (commandText.empty() ? "" : " ") + quoted(a);
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
  job.verbose = buildVerbose;

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
