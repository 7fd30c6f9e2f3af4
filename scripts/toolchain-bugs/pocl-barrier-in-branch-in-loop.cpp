// A PoCL 3.1 bug (Debian 12's libpocl2 3.1-3+deb12u1, the pthread CPU device), found by the fuzzer's long
// run (seed 54004058, 2026-11-28; the shrunk program is below): a barrier inside an `if` on a work-group
// uniform value (the group's id) inside a loop makes the kernel crash (SIGSEGV) or hang, by the group
// size. It is valid OpenCL 1.2: every work-item of a group takes the same branches and iterations.
// polyc's reduce kernels have this shape when isl guards a point inside a sequential loop of the band:
//   param W, B;
//   output f64 field0[2, B];
//   src9[e, 0] = 1;
//   src9[e, inline] = max(src9[e, inline - 1], sum(c, rand in 0..B + 1) 1) where inline >= 1;
//   field0[e, EOF] = src9[e, e];
//   i32 src9[1, W] boundary mirror;
// (W = 2, B = 5: S1_reduce's `for (inline_1 ...) { if (e1 == 0) { ... polyc_group_sum_i32 ... } }`).
// Without the loop, or with the `if` removed, it runs. polyc does not work around it (NVIDIA's OpenCL has
// no such bug as far as measured).
//
//   c++ -O1 -DCL_TARGET_OPENCL_VERSION=120 -DCL_USE_DEPRECATED_OPENCL_1_2_APIS pocl-barrier-in-branch-in-loop.cpp -lOpenCL -o t
//   for g in 1 2 4 8; do ./t $g; echo "exit $?"; done
//
// Measured 2026-11-28 here: group 1 right; 2 hangs; 4, 8 and 16 end with SIGSEGV (exit 139).
#include <CL/cl.h>
#include <cstdio>
#include <vector>
static const char *source = R"(
__kernel void k(const int W, __global int *out, const int lo, __local int *scratch) {
  const int lid = get_local_id(0);
  const int e = lo + (int)get_group_id(0);
  for (int i = 1; i < W; ++i) {
    if (e == 0) {
      scratch[lid] = lid;
      barrier(CLK_LOCAL_MEM_FENCE);
      int s = 0;
      for (int o = 0; o < (int)get_local_size(0); ++o)
        s += scratch[o];
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid == 0)
        out[i] = s;
    }
  }
})";
int main(int argc, char **argv) {
  size_t group = argc > 1 ? size_t(atoi(argv[1])) : 8;
  cl_platform_id platform; cl_device_id device; cl_int err;
  clGetPlatformIDs(1, &platform, nullptr);
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr);
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &err);
  if (clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) { std::puts("build failed"); return 1; }
  cl_kernel kernel = clCreateKernel(program, "k", &err);
  const int W = 2, lo = 0;
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 16 * sizeof(int), nullptr, &err);
  clSetKernelArg(kernel, 0, sizeof W, &W);
  clSetKernelArg(kernel, 1, sizeof out, &out);
  clSetKernelArg(kernel, 2, sizeof lo, &lo);
  clSetKernelArg(kernel, 3, group * sizeof(int), nullptr);
  size_t global = group;
  err = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &group, 0, nullptr, nullptr);
  std::vector<int> host(16);
  clEnqueueReadBuffer(queue, out, CL_TRUE, 0, 16 * sizeof(int), host.data(), 0, nullptr, nullptr);
  std::printf("group %zu: out[1] = %d (expected %zu)\n", group, host[1], group * (group - 1) / 2);
}
