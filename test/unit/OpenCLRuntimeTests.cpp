// Unit tests of the runtime's OpenCL part and of the device library (work-group reductions, the flexible
// wavefront's locks and progress counters), run on whatever OpenCL device is present (PoCL in CI).
// References are plain sequential loops written here.
#include "polyc/opencl/DeviceLibrary.h"
#include "polyc/opencl/OpenCLRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace polyc::rt::ocl;

namespace {

TEST(OpenCLErrors, TableNamesCodes) {
  EXPECT_STREQ(errorString(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_STREQ(errorString(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_STREQ(errorString(CL_INVALID_KERNEL_ARGS), "CL_INVALID_KERNEL_ARGS");
  EXPECT_STREQ(errorString(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_STREQ(errorString(-12345), "unknown OpenCL error");
}

TEST(OpenCLErrors, CheckNamesTheCall) {
  EXPECT_NO_THROW(check(CL_SUCCESS, "clFinish"));
  try {
    check(CL_INVALID_VALUE, "clEnqueueReadBuffer");
    FAIL() << "check did not throw";
  } catch (const Error &error) {
    EXPECT_EQ(std::string(error.what()), "clEnqueueReadBuffer: CL_INVALID_VALUE (-30)");
    EXPECT_EQ(error.code(), CL_INVALID_VALUE);
  }
}

TEST(OpenCLDevice, ChoosesByIndexAndName) {
  std::vector<DeviceInfo> all = listDevices();
  ASSERT_FALSE(all.empty());
  DeviceInfo byIndex = chooseDevice("0:0");
  EXPECT_EQ(byIndex.platformIndex, 0u);
  EXPECT_EQ(byIndex.deviceIndex, 0u);
  EXPECT_EQ(byIndex.deviceName, all.front().deviceName);
  // A substring of the device name, in another case, finds the same device.
  std::string name = all.front().deviceName.substr(0, 4);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  EXPECT_EQ(chooseDevice(name).deviceName, all.front().deviceName);
  DeviceInfo fallback = chooseDevice("");
  EXPECT_FALSE(fallback.deviceName.empty());
  EXPECT_GE(fallback.computeUnits, 1u);
}

TEST(OpenCLDevice, UnknownSelectorListsDevices) {
  for (const char *selector : {"no-such-device-anywhere", "99:0", "0:99"}) {
    try {
      chooseDevice(selector);
      FAIL() << selector << " was accepted";
    } catch (const Error &error) {
      std::string message = error.what();
      EXPECT_NE(message.find("matches no OpenCL device"), std::string::npos) << message;
      EXPECT_NE(message.find("0:0"), std::string::npos) << message;
    }
  }
}

TEST(OpenCLProgram, BuildFailureCarriesTheLog) {
  Device device = Device::fromEnvironment();
  try {
    Program program(device, "__kernel void broken(__global int *p) { p[0] = undeclared_name; }",
                    "-cl-std=CL1.2");
    FAIL() << "a broken program built";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("clBuildProgram: CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << message;
    EXPECT_NE(message.find("undeclared_name"), std::string::npos) << message;
  }
}

TEST(OpenCLProgram, UnknownKernelNamesIt) {
  Device device = Device::fromEnvironment();
  Program program(device, "__kernel void present(__global int *p) { p[0] = 1; }", "-cl-std=CL1.2");
  try {
    program.kernel("absent");
    FAIL() << "an absent kernel was created";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("clCreateKernel(absent): CL_INVALID_KERNEL_NAME"),
              std::string::npos)
        << error.what();
  }
}

TEST(OpenCLBuffer, RoundTripAndTimedKernel) {
  Device device = Device::fromEnvironment();
  Program program(device,
                  "__kernel void scale(__global float *p, const float factor, const int n) {"
                  "  int i = get_global_id(0); if (i < n) p[i] *= factor; }",
                  "-cl-std=CL1.2");
  Kernel kernel = program.kernel("scale");
  const int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i)
    host[i] = float(i) - 300.5f;
  Buffer buffer(device, n * sizeof(float));
  buffer.write(device, host.data(), host.size() * sizeof(float));
  kernel.arg(0, buffer).arg(1, 2.0f).arg(2, n);
  RegionTimer timer;
  timer.enqueue(device, kernel, 1024, 64);
  timer.enqueue(device, kernel, 1024, 64); // a region of two launches: the marker closes it
  double seconds = timer.finish(device);
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 10.0);
  std::vector<float> back(n, -1.0f);
  buffer.read(device, back.data(), back.size() * sizeof(float));
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(back[i], host[i] * 4.0f) << i;
  EXPECT_EQ(RegionTimer().finish(device), 0.0);
}

// ---- work-group reductions ----

const char *kReduceKernels = R"CLC(
__kernel void reduce_f32(__global const float *in, __global float *out, __local float *scratch) {
  const float v = in[get_global_id(0)];
  const float s = polyc_wg_sum_f32(v, scratch);
  const float hi = polyc_wg_max_f32(v, scratch);
  const float lo = polyc_wg_min_f32(v, scratch);
  // Every work-item gets the result: each writes it, the host checks them all.
  out[3 * get_global_id(0) + 0] = s;
  out[3 * get_global_id(0) + 1] = hi;
  out[3 * get_global_id(0) + 2] = lo;
}
__kernel void group_sum_i32(__global const int *in, __global int *out, const int lanes, __local int *scratch) {
  out[get_global_id(0)] = polyc_group_sum_i32(in[get_global_id(0)], lanes, scratch);
}
__kernel void reduce_i32(__global const int *in, __global int *out, __local int *scratch) {
  const int v = in[get_global_id(0)];
  out[3 * get_global_id(0) + 0] = polyc_wg_sum_i32(v, scratch);
  out[3 * get_global_id(0) + 1] = polyc_wg_max_i32(v, scratch);
  out[3 * get_global_id(0) + 2] = polyc_wg_min_i32(v, scratch);
}
)CLC";

TEST(OpenCLDeviceLibrary, WorkGroupReductions) {
  Device device = Device::fromEnvironment();
  Program program(device, std::string(kWorkGroupReductionSource) + kReduceKernels, "-cl-std=CL1.2");
  Kernel f32 = program.kernel("reduce_f32"), i32 = program.kernel("reduce_i32");
  std::mt19937 random(7);
  for (size_t localSize : {1, 2, 3, 7, 32, 100, 256}) {
    if (localSize > f32.maxWorkGroupSize(device) || localSize > i32.maxWorkGroupSize(device))
      continue;
    const size_t groups = 5, n = groups * localSize;
    std::vector<int> ints(n);
    std::vector<float> floats(n);
    for (size_t i = 0; i < n; ++i) {
      ints[i] = int(random() % 2001) - 1000;
      floats[i] = float(ints[i]) * 0.25f; // exact in float, so sums are exact whatever the order
    }
    Buffer inF(device, n * sizeof(float)), outF(device, 3 * n * sizeof(float));
    Buffer inI(device, n * sizeof(int)), outI(device, 3 * n * sizeof(int));
    inF.write(device, floats.data(), n * sizeof(float));
    inI.write(device, ints.data(), n * sizeof(int));
    f32.arg(0, inF).arg(1, outF).localArg(2, localSize * sizeof(float));
    i32.arg(0, inI).arg(1, outI).localArg(2, localSize * sizeof(int));
    RegionTimer timer;
    timer.enqueue(device, f32, n, localSize);
    timer.enqueue(device, i32, n, localSize);
    timer.finish(device);
    std::vector<float> gotF(3 * n);
    std::vector<int> gotI(3 * n);
    outF.read(device, gotF.data(), gotF.size() * sizeof(float));
    outI.read(device, gotI.data(), gotI.size() * sizeof(int));
    for (size_t g = 0; g < groups; ++g) {
      int sum = 0, hi = std::numeric_limits<int>::min(), lo = std::numeric_limits<int>::max();
      for (size_t l = 0; l < localSize; ++l) {
        int v = ints[g * localSize + l];
        sum += v;
        hi = std::max(hi, v);
        lo = std::min(lo, v);
      }
      for (size_t l = 0; l < localSize; ++l) {
        size_t item = g * localSize + l;
        ASSERT_EQ(gotI[3 * item + 0], sum) << "local size " << localSize << " group " << g;
        ASSERT_EQ(gotI[3 * item + 1], hi) << "local size " << localSize;
        ASSERT_EQ(gotI[3 * item + 2], lo) << "local size " << localSize;
        ASSERT_EQ(gotF[3 * item + 0], float(sum) * 0.25f) << "local size " << localSize;
        ASSERT_EQ(gotF[3 * item + 1], float(hi) * 0.25f) << "local size " << localSize;
        ASSERT_EQ(gotF[3 * item + 2], float(lo) * 0.25f) << "local size " << localSize;
      }
    }
  }
}

TEST(OpenCLDeviceLibrary, GroupReductionsOverLanes) {
  Device device = Device::fromEnvironment();
  Program program(device, std::string(kWorkGroupReductionSource) + kReduceKernels, "-cl-std=CL1.2");
  Kernel kernel = program.kernel("group_sum_i32");
  std::mt19937 random(11);
  for (auto [localSize, lanes] : {std::pair<size_t, int>{8, 1}, {8, 2}, {32, 8}, {64, 64}, {96, 32}}) {
    const size_t n = 3 * localSize;
    std::vector<int> in(n), out(n);
    for (int &v : in)
      v = int(random() % 201) - 100;
    Buffer inBuffer(device, n * sizeof(int)), outBuffer(device, n * sizeof(int));
    inBuffer.write(device, in.data(), n * sizeof(int));
    kernel.arg(0, inBuffer).arg(1, outBuffer).arg(2, lanes).localArg(3, localSize * sizeof(int));
    RegionTimer timer;
    timer.enqueue(device, kernel, n, localSize);
    timer.finish(device);
    outBuffer.read(device, out.data(), n * sizeof(int));
    for (size_t item = 0; item < n; ++item) {
      size_t first = item - item % lanes;
      int sum = 0;
      for (int l = 0; l < lanes; ++l)
        sum += in[first + l];
      ASSERT_EQ(out[item], sum) << "group " << localSize << ", lanes " << lanes << ", item " << item;
    }
  }
}

// ---- the flexible wavefront ----

// An integer recurrence with an IIR-shaped window, so any stale or early read changes the result
// exactly: y[r, c] = (x[r, c] + sum over (k1, k2) in [0, K)^2 \ (0, 0) of b[k1, k2] * y[r - k1, c - k2])
// mod 2^15 (zero outside the domain). Each visit of a point is counted.
const char *kWavefrontKernel = R"CLC(
__kernel void recurrence(const int rows, const int columns, const int K, const int polls, __global const int *x,
                         __global const int *b, __global int *y, __global int *visits,
                         __global int *progress, __global int *locks, __global int *completed,
                         __local int *scratch) {
  __local int shared[4];
  volatile __global const int *ySeen = y;
  const int lid = get_local_id(0), groupSize = get_local_size(0);
  polyc_wf_state state = polyc_wf_begin();
  while (!state.done) {
    if (state.column < 0) {
      polyc_wf_scan(&state, progress, locks, completed, columns, rows, 0, scratch, shared);
    } else {
      const int c = state.column, r = state.step;
      int partial = 0;
      for (int k = lid; k < K * K; k += groupSize) {
        const int k1 = k / K, k2 = k % K;
        if ((k1 != 0 || k2 != 0) && r - k1 >= 0 && c - k2 >= 0)
          partial += b[k] * ySeen[(r - k1) * columns + (c - k2)];
      }
      const int total = polyc_wg_sum_i32(partial, scratch);
      if (lid == 0) {
        y[r * columns + c] = (x[r * columns + c] + total) & 0x7fff;
        atomic_inc(&visits[r * columns + c]);
      }
      polyc_wf_publish(&state, progress, locks, completed, rows, 0, polls, shared);
    }
  }
}
)CLC";

std::vector<int> referenceRecurrence(int rows, int columns, int K, const std::vector<int> &x,
                                     const std::vector<int> &b) {
  std::vector<int> y(size_t(rows) * columns, 0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < columns; ++c) {
      int total = 0;
      for (int k1 = 0; k1 < K; ++k1)
        for (int k2 = 0; k2 < K; ++k2)
          if ((k1 || k2) && r - k1 >= 0 && c - k2 >= 0)
            total += b[k1 * K + k2] * y[size_t(r - k1) * columns + (c - k2)];
      y[size_t(r) * columns + c] = (x[size_t(r) * columns + c] + total) & 0x7fff;
    }
  return y;
}

struct WavefrontCase {
  int rows, columns, K;
  size_t groups, localSize;
  int polls = 0; // reads of the left neighbour before giving a column up
};

class FlexibleWavefront : public ::testing::TestWithParam<WavefrontCase> {};

TEST_P(FlexibleWavefront, MatchesSequentialAndVisitsEachPointOnce) {
  const WavefrontCase &test = GetParam();
  Device device = Device::fromEnvironment();
  Program program(device,
                  std::string(kWorkGroupReductionSource) + kFlexibleWavefrontSource + kWavefrontKernel,
                  "-cl-std=CL1.2");
  Kernel kernel = program.kernel("recurrence");
  if (test.localSize > kernel.maxWorkGroupSize(device))
    GTEST_SKIP() << "the device cannot run groups of " << test.localSize;
  std::mt19937 random(test.rows * 1000 + test.columns * 10 + test.K);
  const size_t points = size_t(test.rows) * test.columns;
  std::vector<int> x(points), b(size_t(test.K) * test.K);
  for (int &v : x)
    v = int(random() % 1000);
  for (int &v : b)
    v = int(random() % 7) - 3;
  std::vector<int> expected = referenceRecurrence(test.rows, test.columns, test.K, x, b);

  Buffer xBuffer(device, points * sizeof(int)), bBuffer(device, b.size() * sizeof(int));
  Buffer yBuffer(device, points * sizeof(int)), visits(device, points * sizeof(int));
  Buffer progress(device, size_t(test.columns) * sizeof(int)), locks(device, size_t(test.columns) * sizeof(int));
  Buffer completed(device, sizeof(int));
  xBuffer.write(device, x.data(), points * sizeof(int));
  bBuffer.write(device, b.data(), b.size() * sizeof(int));
  yBuffer.fill32(device, 0xdeadbeef); // poisoned: an unwritten or early-read point shows
  for (const Buffer *zeroed : {&visits, &progress, &locks, &completed})
    zeroed->fill32(device, 0);
  kernel.arg(0, test.rows).arg(1, test.columns).arg(2, test.K).arg(3, test.polls).arg(4, xBuffer);
  kernel.arg(5, bBuffer).arg(6, yBuffer).arg(7, visits).arg(8, progress).arg(9, locks).arg(10, completed);
  kernel.localArg(11, test.localSize * sizeof(int));
  RegionTimer timer;
  timer.enqueue(device, kernel, test.groups * test.localSize, test.localSize);
  timer.finish(device);

  std::vector<int> y(points), seen(points), finalProgress(test.columns);
  yBuffer.read(device, y.data(), points * sizeof(int));
  visits.read(device, seen.data(), points * sizeof(int));
  progress.read(device, finalProgress.data(), finalProgress.size() * sizeof(int));
  for (size_t p = 0; p < points; ++p) {
    ASSERT_EQ(seen[p], 1) << "point (" << p / test.columns << ", " << p % test.columns << ")";
    ASSERT_EQ(y[p], expected[p]) << "point (" << p / test.columns << ", " << p % test.columns << ")";
  }
  for (int c = 0; c < test.columns; ++c)
    ASSERT_EQ(finalProgress[c], test.rows) << "column " << c;
}

// One work-group (it must do everything alone), a few, and more than there are columns; groups of one
// work-item and of many; degenerate shapes.
INSTANTIATE_TEST_SUITE_P(Grids, FlexibleWavefront,
                         ::testing::Values(WavefrontCase{1, 1, 3, 1, 1}, WavefrontCase{1, 17, 3, 1, 8},
                                           WavefrontCase{17, 1, 3, 3, 8}, WavefrontCase{23, 19, 1, 4, 4},
                                           WavefrontCase{40, 33, 3, 1, 1}, WavefrontCase{40, 33, 3, 1, 64},
                                           WavefrontCase{40, 33, 2, 2, 16}, WavefrontCase{40, 33, 5, 7, 8},
                                           WavefrontCase{40, 33, 3, 64, 32}, WavefrontCase{9, 5, 4, 40, 4},
                                           WavefrontCase{40, 33, 3, 5, 8, 50}, WavefrontCase{40, 33, 4, 1, 8, 50},
                                           WavefrontCase{0, 5, 3, 3, 4}, WavefrontCase{5, 0, 3, 3, 4}),
                         [](const ::testing::TestParamInfo<WavefrontCase> &info) {
                           const WavefrontCase &c = info.param;
                           return std::to_string(c.rows) + "x" + std::to_string(c.columns) + "_K" +
                                  std::to_string(c.K) + "_g" + std::to_string(c.groups) + "_l" +
                                  std::to_string(c.localSize) + "_p" + std::to_string(c.polls);
                         });

} // namespace
