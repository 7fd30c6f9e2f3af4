// The CUDA target: `<prog>.cu` (device code, the host schedule, a Compute for polyc::rt::runMain and
// main) and `<prog>.h` (the C interface) for a scheduled, allocated program. Bands become kernels
// on top of the runtime's CUDA part (runtime/include/polyc/cuda):
//   data-parallel  the band's leading parallel loops on the grid, the innermost on threadIdx.x;
//   reduction      a group of G threads per point (block reductions, seed 001), G from the allocation;
//   fixed          a host loop over hyperplanes, one launch each, or one replayed CUDA graph;
//   flexible       one persistent kernel taking strips of columns under locks (seed 004), falling
//                  back to the fixed wavefront when its shared-memory windows do not fit;
//   sequential     one thread.
// A run-time condition of the allocation ("M > 1") chooses between the variants when the program runs.
#pragma once

#include "compiler/codegen/CodegenInput.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace polyc::codegen {

// Errors: an isl failure, or a program the CUDA target cannot print (named in the message).
llvm::Expected<std::vector<GeneratedFile>> emitCuda(const CodegenInput &input);

} // namespace polyc::codegen
