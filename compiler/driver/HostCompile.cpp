// The plumbing the targets' `polyc build` functions share (see HostCompile.h).
#include "HostCompile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>

#ifndef POLYC_RUNTIME_INCLUDE_DIR
#define POLYC_RUNTIME_INCLUDE_DIR ""
#endif

using namespace llvm;
using namespace polyc;
using namespace polyc::driver;

static const char *runtimeDirFromEnvironment() {
  const char *dir = std::getenv("POLYC_RUNTIME_DIR");
  return dir && *dir ? dir : nullptr;
}

std::string polyc::driver::runtimeIncludeDir() {
  const char *dir = runtimeDirFromEnvironment();
  if (!dir)
    return POLYC_RUNTIME_INCLUDE_DIR;
  SmallString<256> include(dir);
  sys::path::append(include, "include");
  return include.str().str();
}

std::string polyc::driver::runtimeLibrary(StringRef fileName, StringRef builtPath) {
  const char *dir = runtimeDirFromEnvironment();
  if (!dir)
    return builtPath.str();
  SmallString<256> direct(dir), under(dir);
  sys::path::append(direct, fileName);
  sys::path::append(under, "lib", fileName);
  return sys::fs::exists(direct) ? direct.str().str() : under.str().str();
}

bool polyc::driver::runtimeHeaderExists(StringRef header, StringRef what, StringRef contents) {
  if (sys::fs::exists(header))
    return true;
  errs() << "polyc: error: cannot find the " << what << " (no " << header
         << "); set POLYC_RUNTIME_DIR to a folder with include/ and " << contents << "\n";
  return false;
}

bool polyc::driver::runtimeLibrariesExist(ArrayRef<std::string> libraries, StringRef advice) {
  for (const std::string &library : libraries)
    if (library.empty() || !sys::fs::exists(library)) {
      errs() << "polyc: error: cannot find the runtime library '" << library << "'" << advice << "\n";
      return false;
    }
  return true;
}

bool polyc::driver::findHostCompiler(StringRef requirement, std::vector<std::string> &command) {
  SmallVector<StringRef> words;
  const char *cxx = std::getenv("CXX");
  StringRef(cxx && *cxx ? cxx : "c++").split(words, ' ', -1, false);
  ErrorOr<std::string> compiler = sys::findProgramByName(words.front());
  if (!compiler) {
    errs() << "polyc: error: cannot find the C++ compiler '" << words.front() << "' (set CXX to "
           << requirement << ")\n";
    return false;
  }
  command = {*compiler};
  for (size_t k = 1; k < words.size(); ++k)
    command.push_back(words[k].str());
  return true;
}

bool polyc::driver::isGnuCompiler(const BuildJob &job, const std::vector<std::string> &compiler) {
  SmallString<256> versionPath(job.sourceDir);
  sys::path::append(versionPath, "compiler-version.txt");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(versionPath), StringRef(versionPath)};
  std::vector<StringRef> argRefs(compiler.begin(), compiler.end());
  argRefs.push_back("--version");
  if (sys::ExecuteAndWait(compiler.front(), argRefs, std::nullopt, redirects) != 0)
    return false;
  auto version = MemoryBuffer::getFile(versionPath);
  return version && (*version)->getBuffer().contains("Free Software Foundation");
}

void polyc::driver::appendFlagsFromEnvironment(std::vector<std::string> &args, const char *variable) {
  const char *flags = std::getenv(variable);
  if (!flags)
    return;
  SmallVector<StringRef> words;
  StringRef(flags).split(words, ' ', -1, false);
  for (StringRef w : words)
    args.push_back(w.str());
}

// An argument as the shell reads it, so that the printed command can be pasted.
static std::string quoted(StringRef arg) {
  if (!arg.empty() && arg.find_first_of(" \t\"'\\$") == StringRef::npos)
    return arg.str();
  std::string text = "'";
  for (char c : arg)
    text += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return text + "'";
}

int polyc::driver::runCompiler(const BuildJob &job, const std::vector<std::string> &args) {
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
  int status = sys::ExecuteAndWait(args.front(), argRefs, std::nullopt, redirects, 0, 0, &message);
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
