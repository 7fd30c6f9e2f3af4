# The host side of the runtime's CUDA part (no GPU needed: CI has none): launch shapes, group sizes,
# graph keys, the POLYC_CUDA_* settings, error messages of checked calls.
if(TARGET polyc_runtime_cuda)
  polyc_add_unittest(CudaRuntimeTests SOURCES CudaRuntimeTests.cpp LIBS polyc_runtime_cuda)
endif()
