// polyc build --target=cuda: compiles the emitted <prog>.cu with nvcc for one GPU architecture (SASS
// for it and PTX, so newer GPUs can still run it) and links it against the runtime's CUDA part and the
// runtime. nvcc: $CUDACXX, else nvcc on the PATH, else /usr/local/cuda/bin/nvcc.
#include "Commands.h"
#include "HostCompile.h"
#include "Targets.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

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
  includeDir = runtimeIncludeDir();
  runtime = runtimeLibrary("libpolyc_runtime.a", POLYC_RUNTIME_LIBRARY);
  cuda = runtimeLibrary("libpolyc_runtime_cuda.a", POLYC_RUNTIME_CUDA_LIBRARY);
  SmallString<256> header(includeDir);
  sys::path::append(header, "polyc", "cuda", "Wavefront.cuh");
  return runtimeHeaderExists(header, "runtime's CUDA headers", "the runtime libraries") &&
         runtimeLibrariesExist({runtime, cuda}, " (this polyc was built without CUDA, or the library is not built: "
                                                "ninja polyc_runtime_cuda); set POLYC_RUNTIME_DIR");
}

struct NcclInstall {
  std::string includeDir, libraryDir, library; // library: libnccl.so, or libnccl.so.2 alone
};

// NCCL's header and library: with the CUDA toolkit of `nvcc` (as the toolkit's own installers put it),
// or where the system's packages do (libnccl-dev: /usr/include and the multiarch library folder, as on
// the GPU machines).
static std::optional<NcclInstall> findNccl(const std::string &nvcc) {
  std::string toolkit = sys::path::parent_path(sys::path::parent_path(nvcc)).str();
  const std::pair<std::string, std::string> folders[] = {{toolkit + "/include", toolkit + "/lib64"},
                                                         {"/usr/include", "/usr/lib/x86_64-linux-gnu"},
                                                         {"/usr/include", "/usr/lib/aarch64-linux-gnu"},
                                                         {"/usr/include", "/usr/lib64"},
                                                         {"/usr/local/include", "/usr/local/lib"}};
  for (const auto &[includeDir, libraryDir] : folders) {
    if (!sys::fs::exists(includeDir + "/nccl.h"))
      continue;
    for (const char *library : {"libnccl.so", "libnccl.so.2"})
      if (sys::fs::exists(libraryDir + "/" + library))
        return NcclInstall{includeDir, libraryDir, library};
  }
  return std::nullopt;
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
  std::string mpiLibrary;
  std::vector<std::string> ncclFlags;
  if (job.mpi) {
    // nvcc compiles the host code and links with the MPI compiler wrapper, which adds MPI's headers and
    // libraries.
    std::string wrapper;
    if (!findMpi(wrapper, mpiLibrary))
      return 1;
    args.push_back("-ccbin");
    args.push_back(wrapper);
    // NCCL, when found: the ranks' rows then go GPU to GPU (polyc/cuda/MpiRows.h).
    if (std::optional<NcclInstall> nccl = findNccl(*nvcc)) {
      args.push_back("-DPOLYC_WITH_NCCL");
      // (No -I/usr/include: naming a system folder would reorder the compiler's own headers.)
      if (nccl->includeDir != "/usr/include")
        ncclFlags.push_back("-I" + nccl->includeDir);
      ncclFlags.insert(ncclFlags.end(), {"-L" + nccl->libraryDir, nccl->library == "libnccl.so" ? "-lnccl" : "-l:" + nccl->library, "-Xlinker",
                                         "-rpath=" + nccl->libraryDir});
    }
  }
  appendFlagsFromEnvironment(args, "POLYC_NVCCFLAGS");
  args.push_back("-I" + job.sourceDir);
  args.push_back("-I" + includeDir);
  args.push_back(source.str().str());
  if (!mpiLibrary.empty())
    args.push_back(mpiLibrary);
  args.push_back(cuda);
  args.push_back(runtime);
  args.insert(args.end(), ncclFlags.begin(), ncclFlags.end());
  // The runtime's CPU parts may use OpenMP; linking it is harmless otherwise.
  for (const char *flag : {"-Xcompiler", "-fopenmp", "-lpthread", "-o"})
    args.push_back(flag);
  args.push_back(job.output);
  return runCompiler(job, args);
}
