// polyc-opencl-enqueue-floor: the floor of a schedule with one kernel enqueue per step on an OpenCL
// device (the fixed wavefront's shape): N enqueues of a kernel that does nothing, on one in-order queue,
// with 0 and 3 arguments set before each through the runtime's Kernel::arg, and as the generated fixed
// wavefront now sets them ("fixed-loop": the hyperplane t each time, the first point's index
// max(0, t - H + 1) with H = (N + 1) / 2, which Kernel::arg does not set again while it stays 0), timed on
// the host around clFinish, and with no arguments set on a queue without profiling ("no-profiling"). Prints
// one line per measurement: "enqueue_floor WHAT: T us per enqueue (N enqueues, median of 5)".
// Device choice as the runtime's (POLYC_OPENCL_DEVICE). Used by scripts/opencl-gpu.sh.
//   polyc-opencl-enqueue-floor [N]    (default 4095: the 2048x2048 IIR's hyperplanes)
#include "polyc/opencl/OpenCLRuntime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  const int enqueues = argc > 1 ? std::max(1, std::atoi(argv[1])) : 4095;
  try {
    const polyc::rt::ocl::Device device = polyc::rt::ocl::Device::fromEnvironment();
    const char *source = "__kernel void nothing(int a, int b, int c, __global int *out) {\n"
                         "  if (a < 0 && get_global_id(0) == 0) out[0] = b + c;\n"
                         "}\n";
    const polyc::rt::ocl::Program program(device, source, "");
    polyc::rt::ocl::Kernel kernel = program.kernel("nothing");
    const polyc::rt::ocl::Buffer out(device, sizeof(cl_int));
    kernel.arg(0, cl_int(0)).arg(1, cl_int(0)).arg(2, cl_int(0)).arg(3, out);
    const size_t global = 256, local = 256;
    const int rows = (enqueues + 1) / 2;
    // The median over 5 repeats of the host time per enqueue of `enqueues` launches on `queue`, each after
    // setArgs(step).
    auto timePerEnqueue = [&](cl_command_queue queue, auto &&setArgs) {
      std::vector<double> perEnqueue;
      for (int repeat = 0; repeat < 5; ++repeat) {
        polyc::rt::ocl::check(clFinish(queue), "clFinish");
        const auto start = std::chrono::steady_clock::now();
        for (int step = 0; step < enqueues; ++step) {
          setArgs(step);
          polyc::rt::ocl::check(
              clEnqueueNDRangeKernel(queue, kernel.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr),
              "clEnqueueNDRangeKernel");
        }
        polyc::rt::ocl::check(clFinish(queue), "clFinish");
        const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
        perEnqueue.push_back(1e6 * elapsed.count() / enqueues);
      }
      std::sort(perEnqueue.begin(), perEnqueue.end());
      return perEnqueue[2];
    };
    auto report = [&](const std::string &what, double microseconds) {
      std::printf("enqueue_floor %s: %.2f us per enqueue (%d enqueues, median of 5)\n", what.c_str(), microseconds,
                  enqueues);
    };
    // A queue without CL_QUEUE_PROFILING_ENABLE (the runtime's queue has it, for its device timers): what
    // profiling adds to each enqueue.
    {
      cl_int status = CL_SUCCESS;
      cl_command_queue plain = clCreateCommandQueue(device.context(), device.id(), 0, &status);
      polyc::rt::ocl::check(status, "clCreateCommandQueue");
      const double microseconds = timePerEnqueue(plain, [](int) {});
      clReleaseCommandQueue(plain);
      report("no-profiling", microseconds);
    }
    for (int args : {0, 3})
      report("args " + std::to_string(args), timePerEnqueue(device.queue(), [&](int step) {
               for (int a = 0; a < args; ++a)
                 kernel.arg(unsigned(a), cl_int(step));
             }));
    report("fixed-loop", timePerEnqueue(device.queue(), [&](int step) {
             kernel.arg(0, cl_int(step)).arg(1, cl_int(std::max(0, step - rows + 1)));
           }));
  } catch (const std::exception &failure) {
    std::fprintf(stderr, "polyc-opencl-enqueue-floor: %s\n", failure.what());
    return 1;
  }
  return 0;
}
