// polyc build --target=cuda: compiles the emitted <prog>.cu with nvcc for one GPU architecture (SASS
// for it and PTX, so newer GPUs can still run it) and links it against the runtime's CUDA part and the
// runtime. nvcc: $CUDACXX, else nvcc on the PATH, else /usr/local/cuda/bin/nvcc.
#include "Commands.h"
#include "Targets.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
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
#ifndef POLYC_RUNTIME_CUDA_LIBRARY
#define POLYC_RUNTIME_CUDA_LIBRARY ""
#endif

using namespace llvm;
using namespace polyc;
using namespace polyc::driver;

static cl::opt<std::string> cudaArch("cuda-arch",
                                     cl::desc("GPU architecture for --target=cuda, sm_NN (default sm_90: H100/H200)"),
                                     cl::value_desc("sm_NN"), cl::init("sm_90"), cl::sub(BuildCommand));

// POLYC_RUNTIME_DIR (include/, libpolyc_runtime.a and libpolyc_runtime_cuda.a, directly or under lib/)
// when set, else where this build put them.
static bool locateCudaRuntime(std::string &includeDir, std::string &runtime, std::string &cuda) {
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
    cuda = find("libpolyc_runtime_cuda.a");
  } else {
    includeDir = POLYC_RUNTIME_INCLUDE_DIR;
    runtime = POLYC_RUNTIME_LIBRARY;
    cuda = POLYC_RUNTIME_CUDA_LIBRARY;
  }
  SmallString<256> header(includeDir);
  sys::path::append(header, "polyc", "cuda", "Wavefront.cuh");
  if (!sys::fs::exists(header)) {
    errs() << "polyc: error: cannot find the runtime's CUDA headers (no " << header
           << "); set POLYC_RUNTIME_DIR to a folder with include/ and the runtime libraries\n";
    return false;
  }
  for (const std::string &library : {runtime, cuda})
    if (library.empty() || !sys::fs::exists(library)) {
      errs() << "polyc: error: cannot find the runtime library '" << library
             << "' (this polyc was built without CUDA, or the library is not built: ninja polyc_runtime_cuda); "
                "set POLYC_RUNTIME_DIR\n";
      return false;
    }
  return true;
}

static std::optional<std::string> findNvcc() {
  if (const char *cudacxx = std::getenv("CUDACXX"); cudacxx && *cudacxx)
    return sys::fs::exists(cudacxx) ? std::optional<std::string>(cudacxx) : std::nullopt;
  if (ErrorOr<std::string> found = sys::findProgramByName("nvcc"))
    return *found;
  if (sys::fs::exists("/usr/local/cuda/bin/nvcc"))
    return std::string("/usr/local/cuda/bin/nvcc");
  return std::nullopt;
}

int polyc::driver::buildCuda(const BuildJob &job) {
  StringRef arch(cudaArch);
  unsigned number = 0;
  if (!arch.consume_front("sm_") || arch.getAsInteger(10, number) || number < 70) {
    errs() << "polyc: error: --cuda-arch expects sm_NN with NN >= 70 (the flexible wavefront needs Volta's "
              "memory model), got '"
           << cudaArch << "'\n";
    return 1;
  }
  std::string includeDir, runtime, cuda;
  if (!locateCudaRuntime(includeDir, runtime, cuda))
    return 1;
  std::optional<std::string> nvcc = findNvcc();
  if (!nvcc) {
    errs() << "polyc: error: cannot find nvcc (set CUDACXX, or put the CUDA toolkit's bin folder on the PATH)\n";
    return 1;
  }
  SmallString<256> source(job.sourceDir);
  sys::path::append(source, job.programName + ".cu");
  std::string n = std::to_string(number);
  std::vector<std::string> args = {*nvcc, "-std=c++17", "-O3", "-gencode",
                                   "arch=compute_" + n + ",code=[sm_" + n + ",compute_" + n + "]"};
  if (const char *extra = std::getenv("POLYC_NVCCFLAGS")) {
    SmallVector<StringRef> words;
    StringRef(extra).split(words, ' ', -1, false);
    for (StringRef w : words)
      args.push_back(w.str());
  }
  args.push_back("-I" + job.sourceDir);
  args.push_back("-I" + includeDir);
  args.push_back(source.str().str());
  args.push_back(cuda);
  args.push_back(runtime);
  // The runtime's CPU parts may use OpenMP; linking it is harmless otherwise.
  for (const char *flag : {"-Xcompiler", "-fopenmp", "-lpthread", "-o"})
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
  int status = sys::ExecuteAndWait(*nvcc, argRefs, std::nullopt, redirects, 0, 0, &message);
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
