// Unit tests of the runtime's OpenCL part and of the device library (work-group reductions, the flexible
// wavefront's locks and progress counters), run on whatever OpenCL device is present (PoCL in CI).
// References are plain sequential loops written here.
#include "polyc/opencl/DeviceLibrary.h"
#include "polyc/opencl/OpenCLRuntime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
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

// ---- recorded launch sequences (cl_khr_command_buffer) ----

// Sets an environment variable for one test and restores the old value (or its absence) after.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    had_ = std::getenv(name) != nullptr;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnvironment() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

private:
  std::string name_, old_;
  bool had_ = false;
};

// Each launch reads the cell the launch before wrote, so the result depends on the order of the
// launches and on each one's own arguments (i, v and the __local size).
const char *kChainKernel = R"CLC(
__kernel void chain(__global int *p, const int i, const int v, __local int *s) {
  s[get_local_id(0)] = v + (int)get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0)
    p[i] = (p[i > 0 ? i - 1 : 0] * 3 + s[get_local_size(0) - 1]) % 1000003;
}
)CLC";

constexpr int kChainLength = 40;
constexpr size_t kChainGroup = 8;

// Launch i (0 <= i < kChainLength) with v = base + 7 i; p starts as zeros.
std::vector<int> referenceChain(int base) {
  std::vector<int> p(kChainLength + 1, 0);
  for (int i = 0; i < kChainLength; ++i)
    p[i] = (p[i > 0 ? i - 1 : 0] * 3 + base + 7 * i + int(kChainGroup) - 1) % 1000003;
  return p;
}

void enqueueChain(const Device &device, Kernel &kernel, const Buffer &p, LaunchSink &sink, int base) {
  kernel.arg(0, p).localArg(3, kChainGroup * sizeof(cl_int));
  for (int i = 0; i < kChainLength; ++i) {
    kernel.arg(1, cl_int(i)).arg(2, cl_int(base + 7 * i));
    sink.enqueue(device, kernel, kChainGroup, kChainGroup);
  }
  sink.enqueue(device, kernel, 0, kChainGroup); // an empty launch is no command
}

std::vector<int> readChain(const Device &device, const Buffer &p) {
  std::vector<int> values(kChainLength + 1, -1);
  p.read(device, values.data(), values.size() * sizeof(int));
  return values;
}

class LaunchSequenceTest : public ::testing::Test {
protected:
  void SetUp() override {
    device_ = std::make_unique<Device>(Device::fromEnvironment());
    program_ = Program(*device_, kChainKernel, "-cl-std=CL1.2");
    kernel_ = program_.kernel("chain");
    p_ = Buffer(*device_, (kChainLength + 1) * sizeof(int));
  }
  // Zeroes p, runs `body` in a timed region and returns p.
  template <typename Body> std::vector<int> run(Body &&body, double *seconds = nullptr) {
    p_.fill32(*device_, 0);
    RegionTimer timer;
    body(timer);
    double elapsed = timer.finish(*device_);
    if (seconds)
      *seconds = elapsed;
    return readChain(*device_, p_);
  }
  bool isPocl() const { return device_->info().platformName.find("Portable Computing Language") != std::string::npos; }

  std::unique_ptr<Device> device_;
  Program program_;
  Kernel kernel_;
  Buffer p_;
};

TEST_F(LaunchSequenceTest, SavedBinaryBuildsTheSameProgram) {
  // POLYC_OPENCL_SAVE_BINARY writes the device's binary: a program created from that file builds and
  // has the kernel.
  const std::string path = ::testing::TempDir() + "polyc-saved-binary.bin";
  std::remove(path.c_str());
  {
    ScopedEnvironment save("POLYC_OPENCL_SAVE_BINARY", path.c_str());
    Program saved(*device_, kChainKernel, "-cl-std=CL1.2");
  }
  std::ifstream file(path, std::ios::binary);
  ASSERT_TRUE(file) << path;
  const std::string binary((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(binary.empty());
  const unsigned char *data = reinterpret_cast<const unsigned char *>(binary.data());
  const size_t size = binary.size();
  const cl_device_id id = device_->id();
  cl_int status = CL_SUCCESS;
  cl_program program = clCreateProgramWithBinary(device_->context(), 1, &id, &size, &data, nullptr, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  EXPECT_EQ(clBuildProgram(program, 1, &id, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "chain", &status);
  EXPECT_EQ(status, CL_SUCCESS);
  if (kernel)
    clReleaseKernel(kernel);
  clReleaseProgram(program);
  std::remove(path.c_str());
}

TEST_F(LaunchSequenceTest, PoclHasCommandBuffers) {
  // PoCL 3.1 (CI's device) lists cl_khr_command_buffer; elsewhere this test has nothing to check.
  if (!isPocl())
    GTEST_SKIP() << "not PoCL: " << device_->info().platformName;
  EXPECT_TRUE(hasCommandBuffers(*device_));
}

TEST_F(LaunchSequenceTest, ReplaysEachLaunchWithItsOwnArgumentsInOrder) {
  ScopedEnvironment on("POLYC_OPENCL_COMMAND_BUFFER", "1");
  if (!hasCommandBuffers(*device_))
    GTEST_SKIP() << "no cl_khr_command_buffer on " << device_->info().deviceName;
  LaunchSequence sequence;
  sequence.record(*device_, 42, [&](LaunchSink &sink) { enqueueChain(*device_, kernel_, p_, sink, 5); });
  ASSERT_TRUE(sequence.recorded(42));
  EXPECT_FALSE(sequence.recorded(43));
  EXPECT_EQ(sequence.commands(), size_t(kChainLength));
  // Arguments set after recording belong to no recorded launch.
  kernel_.arg(1, cl_int(3)).arg(2, cl_int(-100000));
  int enqueued = 0;
  auto replay = [&](RegionTimer &timer) {
    sequence.enqueueOrReplay(*device_, timer, 42, [&](LaunchSink &sink) {
      ++enqueued;
      enqueueChain(*device_, kernel_, p_, sink, 5);
    });
  };
  double seconds = 0;
  EXPECT_EQ(run(replay, &seconds), referenceChain(5));
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 10.0);
  // A second replay of the same buffer gives the same values.
  EXPECT_EQ(run(replay), referenceChain(5));
  EXPECT_EQ(enqueued, 0) << "the launches were enqueued directly instead of replayed";
}

TEST_F(LaunchSequenceTest, RecordsOnFirstUseAndAgainForAnotherKey) {
  ScopedEnvironment on("POLYC_OPENCL_COMMAND_BUFFER", nullptr); // unset: on where available
  if (!hasCommandBuffers(*device_))
    GTEST_SKIP() << "no cl_khr_command_buffer on " << device_->info().deviceName;
  LaunchSequence sequence;
  int calls = 0;
  auto runWith = [&](uint64_t key, int base) {
    return run([&](RegionTimer &timer) {
      sequence.enqueueOrReplay(*device_, timer, key, [&](LaunchSink &sink) {
        ++calls;
        enqueueChain(*device_, kernel_, p_, sink, base);
      });
    });
  };
  EXPECT_EQ(runWith(1, 11), referenceChain(11)); // recorded here, then replayed
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(runWith(1, 11), referenceChain(11)); // replayed only
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(runWith(2, 29), referenceChain(29)); // a new key records again
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(sequence.recorded(2));
  EXPECT_FALSE(sequence.recorded(1));
}

TEST_F(LaunchSequenceTest, ForcedOffEnqueuesDirectly) {
  ScopedEnvironment off("POLYC_OPENCL_COMMAND_BUFFER", "0");
  EXPECT_FALSE(commandBuffersWanted());
  LaunchSequence sequence;
  sequence.record(*device_, 7, [&](LaunchSink &sink) { enqueueChain(*device_, kernel_, p_, sink, 3); });
  EXPECT_FALSE(sequence.recorded(7));
  EXPECT_EQ(sequence.commands(), 0u);
  int calls = 0;
  auto direct = [&](RegionTimer &timer) {
    sequence.enqueueOrReplay(*device_, timer, 7, [&](LaunchSink &sink) {
      ++calls;
      EXPECT_EQ(&sink, static_cast<LaunchSink *>(&timer)); // straight to the queue
      enqueueChain(*device_, kernel_, p_, sink, 3);
    });
  };
  EXPECT_EQ(run(direct), referenceChain(3));
  EXPECT_EQ(run(direct), referenceChain(3));
  EXPECT_EQ(calls, 2);
}

TEST_F(LaunchSequenceTest, EmptySequenceReplaysNothing) {
  ScopedEnvironment on("POLYC_OPENCL_COMMAND_BUFFER", "1");
  if (!hasCommandBuffers(*device_))
    GTEST_SKIP() << "no cl_khr_command_buffer on " << device_->info().deviceName;
  LaunchSequence sequence;
  auto nothing = [&](LaunchSink &sink) { sink.enqueue(*device_, kernel_, 0, kChainGroup); };
  sequence.record(*device_, 9, nothing);
  EXPECT_TRUE(sequence.recorded(9));
  EXPECT_EQ(sequence.commands(), 0u);
  double seconds = -1;
  std::vector<int> zeros(kChainLength + 1, 0);
  EXPECT_EQ(run([&](RegionTimer &timer) { sequence.enqueueOrReplay(*device_, timer, 9, nothing); }, &seconds), zeros);
  EXPECT_EQ(seconds, 0.0);
}

TEST(OpenCLCommandBuffer, SettingIsZeroOrOne) {
  {
    ScopedEnvironment bad("POLYC_OPENCL_COMMAND_BUFFER", "yes");
    try {
      commandBuffersWanted();
      FAIL() << "POLYC_OPENCL_COMMAND_BUFFER=yes was accepted";
    } catch (const Error &error) {
      EXPECT_EQ(std::string(error.what()), "POLYC_OPENCL_COMMAND_BUFFER='yes': expected 0 or 1");
    }
  }
  ScopedEnvironment empty("POLYC_OPENCL_COMMAND_BUFFER", "");
  EXPECT_TRUE(commandBuffersWanted());
}

TEST(OpenCLCommandBuffer, KeysDependOnEveryValueAndItsPlace) {
  EXPECT_EQ(hashKey({1, 2, 3}), hashKey({1, 2, 3}));
  EXPECT_NE(hashKey({1, 2, 3}), hashKey({1, 2, 4}));
  EXPECT_NE(hashKey({1, 2, 3}), hashKey({3, 2, 1}));
  EXPECT_NE(hashKey({1, 2}), hashKey({1, 2, 0}));
  EXPECT_NE(hashKey({uint64_t(1) << 40}), hashKey({uint64_t(1) << 41}));
}

TEST(OpenCLKernel, CopyKeepsTheArgumentsSetSoFar) {
  Device device = Device::fromEnvironment();
  Program program(device, kChainKernel, "-cl-std=CL1.2");
  Kernel kernel = program.kernel("chain");
  Buffer p(device, (kChainLength + 1) * sizeof(int));
  p.fill32(device, 0);
  kernel.arg(0, p).arg(1, cl_int(0)).arg(2, cl_int(100)).localArg(3, kChainGroup * sizeof(cl_int));
  Kernel copy = kernel.copy();
  EXPECT_NE(copy.get(), kernel.get());
  EXPECT_EQ(copy.name(), "chain");
  kernel.arg(2, cl_int(-5)); // the copy keeps 100
  RegionTimer timer;
  timer.enqueue(device, copy, kChainGroup, kChainGroup);
  timer.finish(device);
  EXPECT_EQ(readChain(device, p)[0], 100 + int(kChainGroup) - 1);
}

TEST(OpenCLBuffer, ResizeKeepsTheHandleOfTheSameSize) {
  Device device = Device::fromEnvironment();
  Buffer buffer;
  buffer.resize(device, 64);
  ASSERT_TRUE(buffer);
  cl_mem first = buffer.get();
  int value = 1234;
  buffer.write(device, &value, sizeof(value));
  buffer.resize(device, 64);
  EXPECT_EQ(buffer.get(), first);
  int back = 0;
  buffer.read(device, &back, sizeof(back));
  EXPECT_EQ(back, 1234);
  buffer.resize(device, 128);
  EXPECT_EQ(buffer.bytes(), 128u);
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
  // Runs inside a warp, a group that is not whole warps (20), whole warps, and runs of several warps.
  for (auto [localSize, lanes] :
       {std::pair<size_t, int>{8, 1}, {8, 2}, {20, 4}, {32, 8}, {64, 64}, {96, 32}, {256, 128}}) {
    if (localSize > kernel.maxWorkGroupSize(device))
      continue;
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

// polyc_wg_count_before (term tables): each work-item's count of kept work-items before it, and the total.
TEST(OpenCLDeviceLibrary, CountBeforeIsAnExclusivePrefixOfTheKeptFlags) {
  Device device = Device::fromEnvironment();
  const char *kernelText = R"CLC(
__kernel void count_before(__global const int *keep, __global int *before, __global int *kept, __local int *scratch) {
  int total;
  before[get_global_id(0)] = polyc_wg_count_before(keep[get_global_id(0)], scratch, &total);
  kept[get_global_id(0)] = total;
}
)CLC";
  Program program(device, std::string(kWorkGroupReductionSource) + kFlexibleWavefrontSource + kernelText,
                  "-cl-std=CL1.2");
  Kernel kernel = program.kernel("count_before");
  std::mt19937 random(5);
  for (size_t localSize : {1, 2, 3, 32, 100, 256}) {
    if (localSize > kernel.maxWorkGroupSize(device))
      continue;
    const size_t groups = 3, n = groups * localSize;
    std::vector<int> keep(n), before(n), kept(n);
    for (int &k : keep)
      k = int(random() % 3 == 0);
    Buffer keepBuffer(device, n * sizeof(int)), beforeBuffer(device, n * sizeof(int)), keptBuffer(device, n * sizeof(int));
    keepBuffer.write(device, keep.data(), n * sizeof(int));
    kernel.arg(0, keepBuffer).arg(1, beforeBuffer).arg(2, keptBuffer).localArg(3, localSize * sizeof(int));
    RegionTimer timer;
    timer.enqueue(device, kernel, n, localSize);
    timer.finish(device);
    beforeBuffer.read(device, before.data(), n * sizeof(int));
    keptBuffer.read(device, kept.data(), n * sizeof(int));
    for (size_t g = 0; g < groups; ++g) {
      int count = 0;
      for (size_t l = 0; l < localSize; ++l) {
        ASSERT_EQ(before[g * localSize + l], count) << "group size " << localSize << ", item " << l;
        count += keep[g * localSize + l];
      }
      for (size_t l = 0; l < localSize; ++l)
        ASSERT_EQ(kept[g * localSize + l], count) << "group size " << localSize;
    }
  }
}

TEST(OpenCLTermTables, HeldTermsOptionIsValidated) {
  EXPECT_EQ(heldTermsOption(nullptr), "");
  EXPECT_EQ(heldTermsOption(""), "");
  EXPECT_EQ(heldTermsOption("16"), " -D POLYC_HELD_TERMS=16");
  EXPECT_EQ(heldTermsOption("1"), " -D POLYC_HELD_TERMS=1");
  for (const char *bad : {"0", "33", "-4", "8x", "eight"}) {
    try {
      heldTermsOption(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find("POLYC_OPENCL_HELD_TERMS"), std::string::npos) << error.what();
    }
  }
}

TEST(OpenCLTermTables, BytesAreTheProductOfTheExtentsAtLeastOneTermAndSaturate) {
  EXPECT_EQ(termTableBytes({31, 31}, 8), size_t(961 * 8));
  EXPECT_EQ(termTableBytes({5}, 16), size_t(80));
  EXPECT_EQ(termTableBytes({0, 7}, 8), size_t(8)); // an empty sum still gets a (never read) term
  EXPECT_EQ(termTableBytes({-3, 7}, 8), size_t(8));
  EXPECT_EQ(termTableBytes({int64_t(1) << 40, int64_t(1) << 40}, 8), size_t(8) << 24);
}

// Kernel::arg does not set a plain value again when it is unchanged; every launch still sees the value
// last given, also after a buffer argument changed in between and in a copy.
TEST(OpenCLKernel, UnchangedValuesAreKeptAndChangesSeen) {
  Device device = Device::fromEnvironment();
  Program program(device, "__kernel void put(const int v, const int w, __global int *out, const int at) {\n"
                          "  out[at] = 100 * v + w;\n}\n",
                  "-cl-std=CL1.2");
  Kernel kernel = program.kernel("put");
  Buffer first(device, 8 * sizeof(int)), second(device, 8 * sizeof(int));
  first.fill32(device, 0);
  second.fill32(device, 0);
  RegionTimer timer;
  const int values[][3] = {{1, 2, 0}, {1, 2, 1}, {1, 3, 2}, {4, 3, 3}, {4, 3, 4}};
  for (const auto &v : values) {
    kernel.arg(0, v[0]).arg(1, v[1]).arg(2, first).arg(3, v[2]);
    timer.enqueue(device, kernel, 1, 1);
  }
  kernel.arg(2, second).arg(3, 0); // same v, w and index: only the buffer changes
  timer.enqueue(device, kernel, 1, 1);
  Kernel copy = kernel.copy();
  copy.arg(3, 1);
  timer.enqueue(device, copy, 1, 1);
  timer.finish(device);
  std::vector<int> gotFirst(8), gotSecond(8);
  first.read(device, gotFirst.data(), 8 * sizeof(int));
  second.read(device, gotSecond.data(), 8 * sizeof(int));
  EXPECT_EQ(gotFirst, (std::vector<int>{102, 102, 103, 403, 403, 0, 0, 0}));
  EXPECT_EQ(gotSecond, (std::vector<int>{403, 403, 0, 0, 0, 0, 0, 0}));
}

// ---- vendor build options (NVIDIA: warp shuffles, a register limit) ----

DeviceInfo vendorDevice(const std::string &platformVendor, const std::string &deviceVendor,
                        const std::string &extensions) {
  DeviceInfo info;
  info.platformVendor = platformVendor;
  info.deviceVendor = deviceVendor;
  info.extensions = extensions;
  info.isNvidia = isNvidiaVendor(platformVendor, deviceVendor);
  return info;
}

TEST(OpenCLVendor, NvidiaByPlatformOrDeviceVendor) {
  EXPECT_TRUE(isNvidiaVendor("NVIDIA Corporation", "NVIDIA Corporation"));
  EXPECT_TRUE(isNvidiaVendor("The pocl project", "NVIDIA Corporation"));
  EXPECT_TRUE(isNvidiaVendor("nvidia", ""));
  EXPECT_FALSE(isNvidiaVendor("The pocl project", "GenuineIntel"));
  EXPECT_FALSE(isNvidiaVendor("Advanced Micro Devices, Inc.", "AMD"));
  EXPECT_FALSE(isNvidiaVendor("", ""));
}

TEST(OpenCLVendor, NvidiaBuildOptions) {
  const DeviceInfo nvidia = vendorDevice("NVIDIA Corporation", "NVIDIA Corporation",
                                         "cl_khr_fp64 cl_nv_compiler_options cl_nv_device_attribute_query");
  // The PTX fence unless turned off; shuffles only when asked for (slower on the H100); 128 registers
  // unless told otherwise.
  EXPECT_EQ(deviceBuildOptions(nvidia, nullptr, nullptr), " -D POLYC_NV_FENCE=1 -cl-nv-maxrregcount=128");
  EXPECT_EQ(deviceBuildOptions(nvidia, "", "", ""), " -D POLYC_NV_FENCE=1 -cl-nv-maxrregcount=128");
  EXPECT_EQ(deviceBuildOptions(nvidia, "1", "64", "1"),
            " -D POLYC_NV_FENCE=1 -D POLYC_NV_SHUFFLE=1 -cl-nv-maxrregcount=64");
  EXPECT_EQ(deviceBuildOptions(nvidia, "0", nullptr, "0"), " -cl-nv-maxrregcount=128");
  EXPECT_EQ(deviceBuildOptions(nvidia, "1", "0", "0"), " -D POLYC_NV_SHUFFLE=1");
  EXPECT_EQ(deviceBuildOptions(nvidia, "0", "0", "0"), "");
  // The register limit only where the driver lists the extension that defines the option.
  const DeviceInfo plain = vendorDevice("NVIDIA Corporation", "NVIDIA Corporation", "cl_khr_fp64 cl_nv_compiler");
  EXPECT_EQ(deviceBuildOptions(plain, "1", "64", "0"), " -D POLYC_NV_SHUFFLE=1");
  for (const char *bad : {"2", "yes", "-1"}) {
    EXPECT_THROW(deviceBuildOptions(nvidia, bad, nullptr), Error) << bad;
    EXPECT_THROW(deviceBuildOptions(nvidia, nullptr, nullptr, bad), Error) << bad;
  }
  for (const char *bad : {"8", "256", "64k", "-64"})
    EXPECT_THROW(deviceBuildOptions(nvidia, nullptr, bad), Error) << bad;
}

TEST(OpenCLVendor, OtherDevicesGetNoOptions) {
  const DeviceInfo pocl = vendorDevice("The pocl project", "GenuineIntel", "cl_khr_fp64 cl_nv_compiler_options");
  EXPECT_EQ(deviceBuildOptions(pocl, nullptr, nullptr), "");
  EXPECT_EQ(deviceBuildOptions(pocl, "1", "64", "1"), "");
}

// The device here (PoCL in CI) is not NVIDIA's: its programs build without POLYC_NV_SHUFFLE, so the
// reductions tested above are the local-memory ones, whatever the environment says.
TEST(OpenCLVendor, ProgramsHereUseTheLocalMemoryReductions) {
  Device device = Device::fromEnvironment();
  if (device.info().isNvidia)
    GTEST_SKIP() << "an NVIDIA device: the shuffled reductions are the ones tested";
  ScopedEnvironment shuffle("POLYC_OPENCL_NV_SHUFFLE", "1");
  const std::string probe = R"CLC(
__kernel void probe(__global int *out) {
#if defined(POLYC_NV_SHUFFLE)
  out[0] = 1;
#else
  out[0] = 2;
#endif
}
)CLC";
  Program program(device, std::string(kWorkGroupReductionSource) + probe, "-cl-std=CL1.2");
  EXPECT_EQ(program.options(), "-cl-std=CL1.2");
  Kernel kernel = program.kernel("probe");
  Buffer out(device, sizeof(int));
  kernel.arg(0, out);
  RegionTimer timer;
  timer.enqueue(device, kernel, 1, 1);
  timer.finish(device);
  int value = 0;
  out.read(device, &value, sizeof(int));
  EXPECT_EQ(value, 2);
}

// ---- a point's work-group (fixed wavefront, reduction bands) ----

TEST(OpenCLPointGroup, GpuGroupsAreOneOrTwoWarps) {
  ScopedEnvironment unset("POLYC_OPENCL_GROUP_SIZE", nullptr);
  EXPECT_EQ(pointGroupSize(true, 1024, 9), 32u);   // M = 3
  EXPECT_EQ(pointGroupSize(true, 1024, 33), 64u);
  EXPECT_EQ(pointGroupSize(true, 1024, 289), 64u); // M = 17
  EXPECT_EQ(pointGroupSize(true, 1024, 961), 64u); // M = 31
  EXPECT_EQ(pointGroupSize(true, 48, 961), 32u);   // the kernel's limit, down to a power of two
  EXPECT_EQ(pointGroupSize(false, 4096, 3), 4u);
  EXPECT_EQ(pointGroupSize(false, 4096, 961), 8u);
}

TEST(OpenCLPointGroup, EnvironmentOverridesWithinTheLimit) {
  ScopedEnvironment size("POLYC_OPENCL_GROUP_SIZE", "128");
  EXPECT_EQ(pointGroupSize(true, 1024, 9), 128u);
  EXPECT_THROW(pointGroupSize(true, 64, 9), Error);
}

// ---- the flexible wavefront's strip shape ----

StripLimits gpuLimits(bool nvidia, size_t maxGroup) {
  StripLimits limits;
  limits.isGpu = true;
  limits.isNvidia = nvidia;
  limits.maxGroup = maxGroup;
  limits.localMemBytes = 1 << 20; // no window here: local memory does not bound the strip
  limits.computeUnits = 132;
  return limits;
}

// On NVIDIA the strip follows the CUDA target (64, 64, 32, 16 columns for 4, 8, 16, 32 lanes) when the
// kernel allows 512 work-items; with 256 it is halved where the group would not fit.
TEST(OpenCLStripShape, NvidiaFollowsTheCudaRuleWithinTheKernelLimit) {
  ScopedEnvironment strip("POLYC_OPENCL_STRIP", nullptr), lanes("POLYC_OPENCL_LANES", nullptr),
      rule("POLYC_OPENCL_NV_STRIP", nullptr);
  struct Case {
    int64_t innerExtent;
    size_t maxGroup;
    int lanes, strip;
  };
  for (const Case &c : {Case{3, 512, 4, 64}, Case{5, 512, 8, 64}, Case{9, 512, 16, 32}, Case{17, 512, 32, 16},
                        Case{31, 512, 32, 16}, Case{3, 256, 4, 64}, Case{5, 256, 8, 32}, Case{9, 256, 16, 16},
                        Case{31, 256, 32, 8}, Case{31, 1024, 32, 16}, Case{0, 512, 1, 64}}) {
    const StripShape shape = chooseStripShape(gpuLimits(true, c.maxGroup), 2048, 2048, {}, 0, c.innerExtent, 4);
    EXPECT_EQ(shape.lanes, c.lanes) << "extent " << c.innerExtent << ", limit " << c.maxGroup;
    EXPECT_EQ(shape.strip, c.strip) << "extent " << c.innerExtent << ", limit " << c.maxGroup;
    EXPECT_EQ(shape.groupSize, size_t(c.strip * c.lanes));
    EXPECT_EQ(shape.columns, (2048 + c.strip - 1) / c.strip);
  }
}

// With term tables the lanes follow the table's terms (about 8 a lane, 4 to 16 lanes), not the
// innermost variable's extent: the IIR filter's M x M tables at M = 3, 5, 9, 17, 31.
TEST(OpenCLStripShape, TableTermsChooseTheLanes) {
  ScopedEnvironment strip("POLYC_OPENCL_STRIP", nullptr), lanes("POLYC_OPENCL_LANES", nullptr),
      rule("POLYC_OPENCL_NV_STRIP", nullptr);
  struct Case {
    int64_t innerExtent, tableTerms;
    int lanes, strip;
  };
  for (const Case &c : {Case{3, 9, 4, 64}, Case{5, 25, 4, 64}, Case{9, 81, 8, 32}, Case{17, 289, 16, 16},
                        Case{31, 961, 16, 16}, Case{31, 7, 4, 64}}) {
    const StripShape shape = chooseStripShape(gpuLimits(true, 256), 2048, 2048, {}, 0, c.innerExtent, 4, c.tableTerms);
    EXPECT_EQ(shape.lanes, c.lanes) << "table of " << c.tableTerms;
    EXPECT_EQ(shape.strip, c.strip) << "table of " << c.tableTerms;
  }
  // Another GPU follows the same rule, a CPU keeps 4 lanes, and the override still wins.
  EXPECT_EQ(chooseStripShape(gpuLimits(false, 256), 64, 64, {}, 0, 31, 4, 961).lanes, 16);
  StripLimits cpu = gpuLimits(false, 256);
  cpu.isGpu = false;
  EXPECT_EQ(chooseStripShape(cpu, 64, 64, {}, 0, 31, 4, 961).lanes, 4);
  ScopedEnvironment forced("POLYC_OPENCL_LANES", "32");
  EXPECT_EQ(chooseStripShape(gpuLimits(true, 256), 64, 64, {}, 0, 31, 4, 961).lanes, 32);
}

TEST(OpenCLStripShape, OtherGpusAndTheSwitchKeepSixteenColumns) {
  ScopedEnvironment strip("POLYC_OPENCL_STRIP", nullptr), lanes("POLYC_OPENCL_LANES", nullptr);
  {
    ScopedEnvironment rule("POLYC_OPENCL_NV_STRIP", nullptr);
    EXPECT_EQ(chooseStripShape(gpuLimits(false, 512), 64, 64, {}, 0, 3, 4).strip, 16);
    EXPECT_EQ(chooseStripShape(gpuLimits(false, 256), 64, 64, {}, 0, 31, 4).strip, 8);
  }
  ScopedEnvironment rule("POLYC_OPENCL_NV_STRIP", "0");
  EXPECT_EQ(chooseStripShape(gpuLimits(true, 512), 64, 64, {}, 0, 3, 4).strip, 16);
  EXPECT_EQ(chooseStripShape(gpuLimits(true, 512), 64, 64, {}, 0, 31, 4).strip, 16);
  EXPECT_EQ(chooseStripShape(gpuLimits(true, 256), 64, 64, {}, 0, 31, 4).strip, 8);
  ScopedEnvironment bad("POLYC_OPENCL_NV_STRIP", "2");
  EXPECT_THROW(chooseStripShape(gpuLimits(true, 512), 64, 64, {}, 0, 3, 4), Error);
}

TEST(OpenCLStripShape, OverridesAndLocalMemoryStillBound) {
  ScopedEnvironment rule("POLYC_OPENCL_NV_STRIP", nullptr);
  {
    ScopedEnvironment strip("POLYC_OPENCL_STRIP", "24"), lanes("POLYC_OPENCL_LANES", "16");
    const StripShape shape = chooseStripShape(gpuLimits(true, 512), 64, 64, {}, 0, 31, 4);
    EXPECT_EQ(shape.strip, 24);
    EXPECT_EQ(shape.lanes, 16);
    EXPECT_EQ(shape.groupSize, 384u);
  }
  {
    // 32 lanes allow at most 16 columns in 512 work-items.
    ScopedEnvironment strip("POLYC_OPENCL_STRIP", "17");
    EXPECT_THROW(chooseStripShape(gpuLimits(true, 512), 64, 64, {}, 0, 31, 4), Error);
  }
  // A window whose ring does not fit with 64 columns: the strip halves until it does. Ring for strip s:
  // rows = the power of two above s + 10, columns 10 + s, twice, 4 bytes each.
  ScopedEnvironment strip("POLYC_OPENCL_STRIP", nullptr), lanes("POLYC_OPENCL_LANES", nullptr);
  StripLimits limits = gpuLimits(true, 512);
  limits.localMemBytes = 48 * 1024;
  WindowSpec window;
  window.back = 10;
  window.left = 10;
  const StripShape shape = chooseStripShape(limits, 2048, 2048, {window}, 0, 3, 4);
  // 64 columns: 128 rows x 74 x 2 x 4 = 75776 bytes (too many); 32: 64 x 42 x 8 = 21504 (+ scratch) fits.
  EXPECT_EQ(shape.strip, 32);
  EXPECT_EQ(shape.lanes, 4);
  ASSERT_EQ(shape.windows.size(), 1u);
  EXPECT_EQ(shape.windows[0].ringRows, 64);
  EXPECT_EQ(shape.windows[0].ringCols, 42);
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
