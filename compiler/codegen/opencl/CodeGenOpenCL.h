// The OpenCL target: OpenCL C 1.2 kernels (<prog>.cl) and the host program that runs them through the
// OpenCL C API with the runtime's OpenCL part (<prog>.cpp, the kernels embedded as a string so the
// executable is self-contained), plus the library header (<prog>.h). Built by emitOpenCL.
#pragma once

#include "compiler/codegen/CodegenInput.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace polyc::codegen {

// Emits <prog>.cl, <prog>.cpp and <prog>.h. Bands map to kernels by their allocation: data-parallel
// (one work-item per point, the innermost dimension on get_global_id(0)), reduction (one work-group
// per point), fixed wavefront (a host loop over hyperplanes, one launch each), flexible wavefront (one
// persistent kernel over strips of columns with locks and progress counters, seed 004), sequential (one
// work-item). A band with a run-time condition gets both variants and an `if` on the host. Errors: a
// program the target cannot map (for example a flexible wavefront over a non-rectangular domain).
llvm::Expected<std::vector<GeneratedFile>> emitOpenCL(const CodegenInput &input);

} // namespace polyc::codegen
