// The table of code generation targets and the emit steps shared by polyc emit and build (see Targets.h).
#include "Targets.h"

#include "compiler/codegen/cpu/CodeGenCpu.h"
#include "compiler/codegen/cuda/CodeGenCuda.h"
#include "compiler/codegen/opencl/CodeGenOpenCL.h"
#include "compiler/support/SourceError.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace polyc;
using namespace polyc::driver;

const std::vector<TargetInfo> &polyc::driver::targets() {
  static const std::vector<TargetInfo> table = {
      {"cpu", "C++17 + OpenMP", codegen::emitCpu, buildCpu, /*tilesForCaches=*/true, /*mapsToGpu=*/false,
       /*streams=*/true, /*mpi=*/true, /*mpiPipelines=*/true},
      // The CUDA and OpenCL code generators (compiler/codegen/cuda, compiler/codegen/opencl) fill in
      // their rows when they are part of the build.
      {"cuda", "CUDA", codegen::emitCuda, buildCuda, false, /*mapsToGpu=*/true, /*streams=*/true,
       /*mpi=*/true, /*mpiPipelines=*/true},
      {"opencl", "OpenCL C with a C++ host program", codegen::emitOpenCL, buildOpenCL, false,
       /*mapsToGpu=*/true, /*streams=*/false, /*mpi=*/true},
  };
  return table;
}

const TargetInfo *polyc::driver::findTarget(llvm::StringRef name) {
  for (const TargetInfo &t : targets())
    if (name == t.name)
      return &t;
  return nullptr;
}

std::string polyc::driver::targetNames() {
  std::string names;
  for (const TargetInfo &t : targets())
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

bool polyc::driver::generateSources(const EmitSettings &settings, llvm::SourceMgr &sm, std::string &programName,
                                    std::vector<codegen::GeneratedFile> &files) {
  std::unique_ptr<CompiledProgram> compiled = compileProgram(sm, settings.input, settings.pipeline);
  if (!compiled)
    return false;
  codegen::CodegenInput input{compiled->model,
                              compiled->deps,
                              compiled->schedule,
                              compiled->allocation,
                              settings.input,
                              settings.commandLine,
                              &sm,
                              &compiled->mapping,
                              settings.pipeline.mpi};
  input.mpiRecompute = settings.pipeline.mpiRecompute;
  input.mpiPipelines = settings.target->mpiPipelines;
  programName = codegen::programName(input);
  llvm::Expected<std::vector<codegen::GeneratedFile>> generated = [&] {
    try {
      return settings.target->emit(input);
    } catch (const isl::exception &e) {
      return llvm::Expected<std::vector<codegen::GeneratedFile>>(
          makeError(std::string("internal error in code generation (isl): ") + e.what()));
    }
  }();
  if (!generated) {
    reportError(generated.takeError(), sm);
    return false;
  }
  files = std::move(*generated);
  return true;
}

llvm::Error polyc::driver::writeFiles(llvm::StringRef dir, const std::vector<codegen::GeneratedFile> &files) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return makeError("cannot create the output folder '" + dir + "': " + ec.message());
  for (const codegen::GeneratedFile &file : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file.name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return makeError("cannot write '" + path + "': " + ec.message());
    os << file.contents;
    os.close();
    if (os.has_error())
      return makeError("cannot write '" + path + "': " + os.error().message());
  }
  return llvm::Error::success();
}
