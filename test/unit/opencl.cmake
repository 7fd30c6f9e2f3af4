# The runtime's OpenCL part and device library, run on whatever OpenCL device is present (PoCL in CI).
if(POLYC_HAVE_OPENCL)
  polyc_add_unittest(OpenCLRuntimeTests SOURCES OpenCLRuntimeTests.cpp LIBS polyc_runtime_opencl)
endif()
