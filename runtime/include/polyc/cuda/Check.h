// Error checking for every CUDA runtime call and kernel launch in the runtime and in generated CUDA
// programs: a failure throws CudaError naming the call, the file and the line; runMain turns the
// exception into a message and exit status 3.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace polyc::rt::cuda {

class CudaError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// "CUDA error at FILE:LINE in CALL: MESSAGE (NAME)"
[[noreturn]] void throwCudaError(cudaError_t status, const char *call, const char *file, int line);

inline void check(cudaError_t status, const char *call, const char *file, int line) {
  if (status != cudaSuccess)
    throwCudaError(status, call, file, line);
}

// After a launch: a bad configuration shows up in cudaGetLastError, a fault inside the kernel only at
// the next synchronizing call, which is itself checked.
inline void checkLaunch(const char *kernel, const char *file, int line) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throwCudaError(status, (std::string("launch of ") + kernel).c_str(), file, line);
}

} // namespace polyc::rt::cuda

#define POLYC_CUDA_CHECK(call) ::polyc::rt::cuda::check((call), #call, __FILE__, __LINE__)
#define POLYC_CUDA_CHECK_LAUNCH(kernel) ::polyc::rt::cuda::checkLaunch(kernel, __FILE__, __LINE__)
