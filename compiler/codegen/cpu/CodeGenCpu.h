// The CPU target: C++17 + OpenMP source for a scheduled, allocated program (`<prog>.cpp`) and its C
// interface (`<prog>.h`). Data-parallel loops become `#pragma omp parallel for`, fixed wavefronts a
// sequential hyperplane loop around a parallel one, flexible wavefronts a call to
// polyc::rt::cpu::runFlexibleWavefront; main() hands a ProgramInfo and a Compute to polyc::rt::runMain.
#pragma once

#include "compiler/codegen/CodegenInput.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace polyc::codegen {

// Errors: a band whose allocation this target cannot print (a flexible wavefront over more than one
// statement or a non-rectangular domain), an isl failure.
llvm::Expected<std::vector<GeneratedFile>> emitCpu(const CodegenInput &input);

} // namespace polyc::codegen
