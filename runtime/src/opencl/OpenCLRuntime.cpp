// The runtime's OpenCL part (see polyc/opencl/OpenCLRuntime.h): device choice, program build, buffers,
// kernels, event timing and recorded launch sequences, each OpenCL call checked and turned into an
// ocl::Error naming the call.
#include "polyc/opencl/OpenCLRuntime.h"

// cl_khr_command_buffer's types and entry-point signatures (the Khronos headers of 2023 and later).
#include <CL/cl_ext.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace polyc::rt::ocl {

const char *errorString(cl_int code) {
  switch (code) {
#define POLYC_CL_ERROR(name)                                                                         \
  case name:                                                                                         \
    return #name;
    POLYC_CL_ERROR(CL_SUCCESS)
    POLYC_CL_ERROR(CL_DEVICE_NOT_FOUND)
    POLYC_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    POLYC_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    POLYC_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    POLYC_CL_ERROR(CL_OUT_OF_RESOURCES)
    POLYC_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    POLYC_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    POLYC_CL_ERROR(CL_MEM_COPY_OVERLAP)
    POLYC_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    POLYC_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    POLYC_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    POLYC_CL_ERROR(CL_MAP_FAILURE)
    POLYC_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    POLYC_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    POLYC_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    POLYC_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    POLYC_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    POLYC_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    POLYC_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    POLYC_CL_ERROR(CL_INVALID_VALUE)
    POLYC_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    POLYC_CL_ERROR(CL_INVALID_PLATFORM)
    POLYC_CL_ERROR(CL_INVALID_DEVICE)
    POLYC_CL_ERROR(CL_INVALID_CONTEXT)
    POLYC_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    POLYC_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    POLYC_CL_ERROR(CL_INVALID_HOST_PTR)
    POLYC_CL_ERROR(CL_INVALID_MEM_OBJECT)
    POLYC_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    POLYC_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    POLYC_CL_ERROR(CL_INVALID_SAMPLER)
    POLYC_CL_ERROR(CL_INVALID_BINARY)
    POLYC_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    POLYC_CL_ERROR(CL_INVALID_PROGRAM)
    POLYC_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    POLYC_CL_ERROR(CL_INVALID_KERNEL_NAME)
    POLYC_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    POLYC_CL_ERROR(CL_INVALID_KERNEL)
    POLYC_CL_ERROR(CL_INVALID_ARG_INDEX)
    POLYC_CL_ERROR(CL_INVALID_ARG_VALUE)
    POLYC_CL_ERROR(CL_INVALID_ARG_SIZE)
    POLYC_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    POLYC_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    POLYC_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    POLYC_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    POLYC_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    POLYC_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    POLYC_CL_ERROR(CL_INVALID_EVENT)
    POLYC_CL_ERROR(CL_INVALID_OPERATION)
    POLYC_CL_ERROR(CL_INVALID_GL_OBJECT)
    POLYC_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    POLYC_CL_ERROR(CL_INVALID_MIP_LEVEL)
    POLYC_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    POLYC_CL_ERROR(CL_INVALID_PROPERTY)
    POLYC_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    POLYC_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    POLYC_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    POLYC_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef POLYC_CL_ERROR
  case -1001: // CL_PLATFORM_NOT_FOUND_KHR, from the ICD loader when no vendor is registered
    return "CL_PLATFORM_NOT_FOUND_KHR";
  default:
    return "unknown OpenCL error";
  }
}

void check(cl_int status, const char *call) {
  if (status == CL_SUCCESS)
    return;
  std::ostringstream message;
  message << call << ": " << errorString(status) << " (" << status << ")";
  if (status == -1001)
    message << "; no OpenCL platform is registered (check /etc/OpenCL/vendors or OCL_ICD_VENDORS)";
  throw Error(message.str(), status);
}

static std::string platformString(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  check(clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string text(size, '\0');
  check(clGetPlatformInfo(platform, what, size, text.data(), nullptr), "clGetPlatformInfo");
  while (!text.empty() && text.back() == '\0')
    text.pop_back();
  return text;
}

static std::string deviceString(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  check(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string text(size, '\0');
  check(clGetDeviceInfo(device, what, size, text.data(), nullptr), "clGetDeviceInfo");
  while (!text.empty() && text.back() == '\0')
    text.pop_back();
  return text;
}

template <typename T> static T deviceValue(cl_device_id device, cl_device_info what) {
  T value{};
  check(clGetDeviceInfo(device, what, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}

static std::vector<cl_platform_id> platformIds() {
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  if (status == CL_SUCCESS && count == 0)
    status = -1001;
  check(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  return platforms;
}

static std::vector<cl_device_id> deviceIds(cl_platform_id platform) {
  cl_uint count = 0;
  cl_int status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (status == CL_DEVICE_NOT_FOUND)
    return {}; // a platform without devices is not an error for listing
  check(status, "clGetDeviceIDs");
  std::vector<cl_device_id> devices(count);
  check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr), "clGetDeviceIDs");
  return devices;
}

static DeviceInfo describe(cl_platform_id platform, cl_device_id device, unsigned p, unsigned d) {
  DeviceInfo info;
  info.platformName = platformString(platform, CL_PLATFORM_NAME);
  info.deviceName = deviceString(device, CL_DEVICE_NAME);
  info.deviceVersion = deviceString(device, CL_DEVICE_VERSION);
  info.openclCVersion = deviceString(device, CL_DEVICE_OPENCL_C_VERSION);
  info.platformIndex = p;
  info.deviceIndex = d;
  info.isGpu = (deviceValue<cl_device_type>(device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) != 0;
  info.computeUnits = deviceValue<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS);
  info.maxWorkGroupSize = deviceValue<size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  info.localMemBytes = deviceValue<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE);
  info.extensions = deviceString(device, CL_DEVICE_EXTENSIONS);
  info.hasFp64 = info.extensions.find("cl_khr_fp64") != std::string::npos;
  info.platformVendor = platformString(platform, CL_PLATFORM_VENDOR);
  info.deviceVendor = deviceString(device, CL_DEVICE_VENDOR);
  info.isNvidia = isNvidiaVendor(info.platformVendor, info.deviceVendor);
  return info;
}

std::vector<DeviceInfo> listDevices() {
  std::vector<DeviceInfo> all;
  std::vector<cl_platform_id> platforms = platformIds();
  for (unsigned p = 0; p < platforms.size(); ++p) {
    std::vector<cl_device_id> devices = deviceIds(platforms[p]);
    for (unsigned d = 0; d < devices.size(); ++d)
      all.push_back(describe(platforms[p], devices[d], p, d));
  }
  return all;
}

static std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool isNvidiaVendor(const std::string &platformVendor, const std::string &deviceVendor) {
  return lowered(platformVendor).find("nvidia") != std::string::npos ||
         lowered(deviceVendor).find("nvidia") != std::string::npos;
}

// Whether the space-separated extension list names `extension` (a whole name: cl_khr_command_buffer
// is a prefix of the names of its layered extensions).
static bool listsExtension(const std::string &extensions, const std::string &extension) {
  std::istringstream words(extensions);
  std::string word;
  while (words >> word)
    if (word == extension)
      return true;
  return false;
}

// An on/off environment value: unset or empty gives `unset`.
static bool switchValue(const char *name, const char *text, bool unset) {
  const std::string value = text ? text : "";
  if (value.empty())
    return unset;
  if (value != "0" && value != "1")
    throw Error(std::string(name) + "='" + value + "': expected 0 or 1", CL_INVALID_VALUE);
  return value == "1";
}

std::string deviceBuildOptions(const DeviceInfo &info, const char *nvShuffle, const char *nvMaxRegisters,
                               const char *nvFence) {
  if (!info.isNvidia)
    return "";
  std::string options;
  if (switchValue("POLYC_OPENCL_NV_FENCE", nvFence, true))
    options += " -D POLYC_NV_FENCE=1";
  if (switchValue("POLYC_OPENCL_NV_SHUFFLE", nvShuffle, false))
    options += " -D POLYC_NV_SHUFFLE=1";
  const std::string registers = nvMaxRegisters ? nvMaxRegisters : "";
  long count = 128;
  if (!registers.empty()) {
    char *end = nullptr;
    count = std::strtol(registers.c_str(), &end, 10);
    // 0: pass nothing; otherwise what ptxas accepts for a register limit.
    if (*end != '\0' || count < 0 || (count > 0 && count < 16) || count > 255)
      throw Error("POLYC_OPENCL_NV_MAXRREG='" + registers + "': expected 0 or an integer in [16, 255]",
                  CL_INVALID_VALUE);
  }
  if (count > 0 && listsExtension(info.extensions, "cl_nv_compiler_options"))
    options += " -cl-nv-maxrregcount=" + std::to_string(count);
  return options;
}

std::string heldTermsOption(const char *heldTerms) {
  const std::string text = heldTerms ? heldTerms : "";
  if (text.empty())
    return "";
  char *end = nullptr;
  const long count = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || count < 1 || count > 32)
    throw Error("POLYC_OPENCL_HELD_TERMS='" + text + "': expected an integer in [1, 32]", CL_INVALID_VALUE);
  return " -D POLYC_HELD_TERMS=" + std::to_string(count);
}

// "P:D" with both parts decimal; anything else is a name substring.
static bool parseIndices(const std::string &selector, unsigned &platform, unsigned &device) {
  size_t colon = selector.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == selector.size())
    return false;
  auto allDigits = [](const std::string &s) {
    return !s.empty() && s.size() < 9 &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  std::string p = selector.substr(0, colon), d = selector.substr(colon + 1);
  if (!allDigits(p) || !allDigits(d))
    return false;
  platform = static_cast<unsigned>(std::stoul(p));
  device = static_cast<unsigned>(std::stoul(d));
  return true;
}

DeviceInfo chooseDevice(const std::string &selector) {
  std::vector<DeviceInfo> all = listDevices();
  if (all.empty())
    throw Error("no OpenCL device found on any platform", CL_DEVICE_NOT_FOUND);
  if (selector.empty()) {
    for (const DeviceInfo &info : all)
      if (info.isGpu)
        return info;
    return all.front();
  }
  unsigned platform = 0, device = 0;
  bool byIndex = parseIndices(selector, platform, device);
  for (const DeviceInfo &info : all) {
    if (byIndex ? (info.platformIndex == platform && info.deviceIndex == device)
                : lowered(info.platformName + " " + info.deviceName).find(lowered(selector)) !=
                      std::string::npos)
      return info;
  }
  std::ostringstream message;
  message << "POLYC_OPENCL_DEVICE='" << selector << "' matches no OpenCL device; the devices are:";
  for (const DeviceInfo &info : all)
    message << "\n  " << info.platformIndex << ":" << info.deviceIndex << "  " << info.platformName
            << " / " << info.deviceName;
  throw Error(message.str(), CL_DEVICE_NOT_FOUND);
}

Device Device::fromEnvironment() {
  const char *selector = std::getenv("POLYC_OPENCL_DEVICE");
  return Device(chooseDevice(selector ? selector : ""));
}

Device::Device(const DeviceInfo &info) : info_(info) {
  std::vector<cl_platform_id> platforms = platformIds();
  if (info.platformIndex >= platforms.size())
    throw Error("OpenCL platform " + std::to_string(info.platformIndex) + " disappeared",
                CL_INVALID_PLATFORM);
  std::vector<cl_device_id> devices = deviceIds(platforms[info.platformIndex]);
  if (info.deviceIndex >= devices.size())
    throw Error("OpenCL device " + std::to_string(info.deviceIndex) + " disappeared", CL_INVALID_DEVICE);
  device_ = devices[info.deviceIndex];

  cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platforms[info.platformIndex]), 0};
  cl_int status = CL_SUCCESS;
  context_ = ContextHandle(clCreateContext(properties, 1, &device_, nullptr, nullptr, &status));
  check(status, "clCreateContext");
  // clCreateCommandQueue is the OpenCL 1.2 call every driver has (NVIDIA's included).
  queue_ = QueueHandle(clCreateCommandQueue(context_.get(), device_, CL_QUEUE_PROFILING_ENABLE, &status));
  check(status, "clCreateCommandQueue");
}

void Device::finish() const { check(clFinish(queue_.get()), "clFinish"); }

Buffer::Buffer(const Device &device, size_t bytes, cl_mem_flags flags) : bytes_(bytes) {
  cl_int status = CL_SUCCESS;
  mem_ = MemHandle(clCreateBuffer(device.context(), flags, std::max<size_t>(bytes, 1), nullptr, &status));
  check(status, "clCreateBuffer");
}

void Buffer::resize(const Device &device, size_t bytes, cl_mem_flags flags) {
  if (mem_ && bytes_ == bytes)
    return;
  mem_.reset(); // free the old buffer before allocating the new one
  *this = Buffer(device, bytes, flags);
}

void Buffer::write(const Device &device, const void *host, size_t bytes) const {
  if (bytes == 0)
    return;
  check(clEnqueueWriteBuffer(device.queue(), mem_.get(), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
}

void Buffer::read(const Device &device, void *host, size_t bytes) const {
  if (bytes == 0)
    return;
  check(clEnqueueReadBuffer(device.queue(), mem_.get(), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
}

void Buffer::fill32(const Device &device, uint32_t pattern) const {
  if (bytes_ == 0)
    return;
  check(clEnqueueFillBuffer(device.queue(), mem_.get(), &pattern, sizeof(pattern), 0, bytes_, 0, nullptr,
                            nullptr),
        "clEnqueueFillBuffer");
  device.finish();
}

Program::Program(const Device &device, const std::string &source, const std::string &options)
    : device_(device.id()) {
  const std::string extra = deviceBuildOptions(device.info(), std::getenv("POLYC_OPENCL_NV_SHUFFLE"),
                                               std::getenv("POLYC_OPENCL_NV_MAXRREG"),
                                               std::getenv("POLYC_OPENCL_NV_FENCE"));
  const std::string portable = options + heldTermsOption(std::getenv("POLYC_OPENCL_HELD_TERMS"));
  options_ = portable + extra;
  const char *text = source.c_str();
  size_t length = source.size();
  cl_int status = CL_SUCCESS;
  program_ = ProgramHandle(clCreateProgramWithSource(device.context(), 1, &text, &length, &status));
  check(status, "clCreateProgramWithSource");
  status = clBuildProgram(program_.get(), 1, &device_, options_.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS && !extra.empty()) {
    // The vendor options are an optimisation: a driver that rejects them (or the inline PTX they enable)
    // still gets the portable program, and says so.
    std::fprintf(stderr, "polyc: OpenCL build with '%s' failed (%s); building without them. Build log:\n%s\n",
                 extra.c_str(), errorString(status), buildLog().c_str());
    options_ = portable;
    status = clBuildProgram(program_.get(), 1, &device_, options_.c_str(), nullptr, nullptr);
  }
  if (status != CL_SUCCESS) {
    std::string message = std::string("clBuildProgram: ") + errorString(status) + " (" +
                          std::to_string(status) + ") on " + device.info().deviceName + " with options '" +
                          options_ + "'";
    std::string log = buildLog();
    if (!log.empty())
      message += "; build log:\n" + log;
    throw Error(message, status);
  }
  if (const char *path = std::getenv("POLYC_OPENCL_SAVE_BINARY"); path && *path)
    saveBinary(path);
}

void Program::saveBinary(const std::string &path) const {
  size_t size = 0;
  check(clGetProgramInfo(program_.get(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  std::string binary(size, '\0');
  unsigned char *data = reinterpret_cast<unsigned char *>(binary.data());
  check(clGetProgramInfo(program_.get(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  std::ofstream file(path, std::ios::binary);
  file.write(binary.data(), std::streamsize(binary.size()));
  if (!file.flush())
    throw Error("POLYC_OPENCL_SAVE_BINARY: cannot write '" + path + "'", CL_INVALID_VALUE);
}

std::string Program::buildLog() const {
  size_t size = 0;
  if (clGetProgramBuildInfo(program_.get(), device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS)
    return "";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program_.get(), device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
      CL_SUCCESS)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

Kernel Program::kernel(const char *name) const {
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program_.get(), name, &status);
  check(status, (std::string("clCreateKernel(") + name + ")").c_str());
  return Kernel(kernel, name);
}

void Kernel::setArg(cl_uint index, size_t size, const void *value, bool skipUnchanged) {
  // A value the kernel object holds already is not set again: a fixed wavefront's host loop sets its
  // arguments before each of thousands of launches, and some (a bound that is 0 for half of them) do not
  // change. Every change goes through here, so args_ is what the kernel object holds. Not for memory
  // objects: a new buffer may get the handle value of a released one, and a driver may have resolved the
  // old one's address when it was set.
  if (skipUnchanged && index < args_.size() && value) {
    const ArgValue &known = args_[index];
    if (known.isSet && !known.isLocal && known.size == size &&
        std::memcmp(known.bytes.data(), value, size) == 0)
      return;
  }
  cl_int status = clSetKernelArg(kernel_.get(), index, size, value);
  if (status != CL_SUCCESS)
    check(status, ("clSetKernelArg(" + name_ + ", " + std::to_string(index) + ")").c_str());
  if (args_.size() <= index)
    args_.resize(index + 1);
  ArgValue &arg = args_[index];
  arg.isSet = true;
  arg.isLocal = value == nullptr;
  arg.size = size;
  if (value)
    arg.bytes.assign(static_cast<const unsigned char *>(value), static_cast<const unsigned char *>(value) + size);
}

Kernel Kernel::copy() const {
  cl_program program = nullptr;
  check(clGetKernelInfo(kernel_.get(), CL_KERNEL_PROGRAM, sizeof(program), &program, nullptr), "clGetKernelInfo");
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, name_.c_str(), &status);
  check(status, ("clCreateKernel(" + name_ + ")").c_str());
  Kernel result(kernel, name_);
  for (size_t index = 0; index < args_.size(); ++index) {
    const ArgValue &arg = args_[index];
    if (arg.isSet)
      result.setArg(cl_uint(index), arg.size, arg.isLocal ? nullptr : arg.bytes.data());
  }
  return result;
}

size_t Kernel::maxWorkGroupSize(const Device &device) const {
  size_t size = 0;
  check(clGetKernelWorkGroupInfo(kernel_.get(), device.id(), CL_KERNEL_WORK_GROUP_SIZE, sizeof(size), &size,
                                 nullptr),
        "clGetKernelWorkGroupInfo");
  return size;
}

void RegionTimer::enqueue(const Device &device, const Kernel &kernel, size_t globalSize, size_t localSize) {
  if (globalSize == 0)
    return;
  // Only the first command keeps an event: a host loop of thousands of launches (the fixed wavefront)
  // should not pay for an event each. finish() closes the region with a marker.
  cl_event event = nullptr;
  cl_int status = clEnqueueNDRangeKernel(device.queue(), kernel.get(), 1, nullptr, &globalSize,
                                         localSize ? &localSize : nullptr, 0, nullptr,
                                         first_ ? nullptr : &event);
  if (status != CL_SUCCESS)
    check(status, ("clEnqueueNDRangeKernel(" + kernel.name() + ")").c_str());
  if (!first_)
    first_ = EventHandle(event);
  else
    pending_ = true;
}

static cl_ulong profilingTime(cl_event event, cl_profiling_info what) {
  cl_ulong value = 0;
  check(clGetEventProfilingInfo(event, what, sizeof(value), &value, nullptr), "clGetEventProfilingInfo");
  return value;
}

double RegionTimer::finish(const Device &device) {
  if (pending_) {
    // The queue is in order, so the marker ends after every command enqueued before it.
    cl_event marker = nullptr;
    check(clEnqueueMarkerWithWaitList(device.queue(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
    last_ = EventHandle(marker);
  }
  device.finish();
  if (!first_)
    return 0.0;
  for (cl_event event : {first_.get(), last_.get()}) {
    if (!event)
      continue;
    cl_int state = CL_COMPLETE;
    check(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(state), &state, nullptr),
          "clGetEventInfo");
    if (state < 0)
      check(state, "kernel execution");
  }
  for (const EventHandle &replay : replays_) {
    cl_int state = CL_COMPLETE;
    check(clGetEventInfo(replay.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(state), &state, nullptr),
          "clGetEventInfo");
    if (state < 0)
      check(state, "command buffer execution");
  }
  replays_.clear();
  cl_ulong start = profilingTime(first_.get(), CL_PROFILING_COMMAND_START);
  cl_ulong end = profilingTime(last_ ? last_.get() : first_.get(), CL_PROFILING_COMMAND_END);
  first_.reset();
  last_.reset();
  pending_ = false;
  return end > start ? static_cast<double>(end - start) * 1e-9 : 0.0;
}

// POLYC_OPENCL_VERBOSE set to anything but empty or 0.
static bool verboseEnabled() {
  const char *verbose = std::getenv("POLYC_OPENCL_VERBOSE");
  return verbose && *verbose && std::string(verbose) != "0";
}

// ---- recorded launch sequences

bool commandBuffersWanted() {
  const char *text = std::getenv("POLYC_OPENCL_COMMAND_BUFFER");
  std::string value = text ? text : "";
  if (value.empty() || value == "1")
    return true;
  if (value == "0")
    return false;
  throw Error("POLYC_OPENCL_COMMAND_BUFFER='" + value + "': expected 0 or 1", CL_INVALID_VALUE);
}

// The extension's entry points on one platform (all null when the device lacks the extension).
struct CommandBufferApi {
  clCreateCommandBufferKHR_fn create = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  explicit operator bool() const { return create && ndrange && finalize && enqueue && release; }
};

// The entry points, or an empty api with `why` saying what is missing.
static CommandBufferApi commandBufferApi(const Device &device, std::string &why) {
  CommandBufferApi api;
  if (!listsExtension(deviceString(device.id(), CL_DEVICE_EXTENSIONS), "cl_khr_command_buffer")) {
    why = "the device does not list cl_khr_command_buffer";
    return api;
  }
  cl_platform_id platform = deviceValue<cl_platform_id>(device.id(), CL_DEVICE_PLATFORM);
  auto entry = [&](const char *name) { return clGetExtensionFunctionAddressForPlatform(platform, name); };
  api.create = reinterpret_cast<clCreateCommandBufferKHR_fn>(entry("clCreateCommandBufferKHR"));
  api.ndrange = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(entry("clCommandNDRangeKernelKHR"));
  api.finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(entry("clFinalizeCommandBufferKHR"));
  api.enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(entry("clEnqueueCommandBufferKHR"));
  api.release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(entry("clReleaseCommandBufferKHR"));
  if (!api) {
    why = "the platform gives no address for one of the cl_khr_command_buffer functions";
    return CommandBufferApi();
  }
  cl_command_queue_properties required = 0, present = 0;
  if (clGetDeviceInfo(device.id(), CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof(required),
                      &required, nullptr) != CL_SUCCESS)
    required = 0;
  check(clGetCommandQueueInfo(device.queue(), CL_QUEUE_PROPERTIES, sizeof(present), &present, nullptr),
        "clGetCommandQueueInfo");
  if ((required & ~present) != 0) {
    why = "the extension requires queue properties " + std::to_string(required) + ", the queue has " +
          std::to_string(present);
    return CommandBufferApi();
  }
  return api;
}

bool hasCommandBuffers(const Device &device) {
  std::string why;
  return static_cast<bool>(commandBufferApi(device, why));
}

// The recording side of a LaunchSequence: a LaunchSink that records each launch into the command
// buffer, in order (each command waits for the one before through a sync point).
struct LaunchSequence::State : LaunchSink {
  enum class Phase { Empty, Recording, Ready, Off };
  Phase phase = Phase::Empty;
  CommandBufferApi api;
  bool apiLoaded = false;
  cl_command_buffer_khr buffer = nullptr;
  std::vector<Kernel> kernels; // the copies the commands were recorded with, alive while recorded
  uint64_t key = 0;
  size_t commands = 0;
  cl_sync_point_khr last = 0;
  bool failed = false;  // a command-buffer call failed while recording
  std::string failure;  // what failed
  std::chrono::steady_clock::time_point started;

  ~State() override { release(); }

  void release() {
    if (buffer)
      api.release(buffer); // a release failure has nowhere to go
    buffer = nullptr;
    kernels.clear();
    commands = 0;
  }

  // Turns recording off for this sequence after `what` failed.
  void turnOff(const std::string &what) {
    if (verboseEnabled())
      std::fprintf(stderr, "polyc: OpenCL command buffer not used (%s); launches are enqueued directly\n",
                   what.c_str());
    release();
    phase = Phase::Off;
  }

  void enqueue(const Device &device, const Kernel &kernel, size_t globalSize, size_t localSize) override {
    (void)device;
    if (globalSize == 0 || failed)
      return;
    try {
      Kernel copy = kernel.copy();
      cl_sync_point_khr point = 0;
      cl_int status = api.ndrange(buffer, nullptr, nullptr, copy.get(), 1, nullptr, &globalSize,
                                  localSize ? &localSize : nullptr, commands ? 1 : 0, commands ? &last : nullptr,
                                  &point, nullptr);
      check(status, ("clCommandNDRangeKernelKHR(" + kernel.name() + ")").c_str());
      kernels.push_back(std::move(copy));
      last = point;
      ++commands;
    } catch (const Error &error) {
      // The launches go straight to the queue instead (enqueueOrReplay), or are left to compute().
      failed = true;
      failure = error.what();
    }
  }
};

LaunchSequence::LaunchSequence() = default;
LaunchSequence::~LaunchSequence() = default;

LaunchSink *LaunchSequence::beginRecording(const Device &device, uint64_t key) {
  if (!state_)
    state_ = std::make_unique<State>();
  State &state = *state_;
  if (state.phase == State::Phase::Off || (state.phase == State::Phase::Ready && state.key == key) ||
      !commandBuffersWanted())
    return nullptr;
  if (!state.apiLoaded) {
    std::string why;
    state.api = commandBufferApi(device, why);
    state.apiLoaded = true;
    if (!state.api) {
      state.turnOff(why);
      return nullptr;
    }
  }
  state.release();
  cl_command_queue queue = device.queue();
  cl_int status = CL_SUCCESS;
  state.buffer = state.api.create(1, &queue, nullptr, &status);
  if (status != CL_SUCCESS || !state.buffer) {
    state.buffer = nullptr;
    state.turnOff(std::string("clCreateCommandBufferKHR: ") + errorString(status) + " (" + std::to_string(status) +
                  ")");
    return nullptr;
  }
  state.phase = State::Phase::Recording;
  state.key = key;
  state.failed = false;
  state.started = std::chrono::steady_clock::now();
  return &state;
}

void LaunchSequence::endRecording() {
  State &state = *state_;
  if (state.failed)
    return state.turnOff(state.failure);
  if (state.commands > 0) {
    cl_int status = state.api.finalize(state.buffer);
    if (status != CL_SUCCESS)
      return state.turnOff(std::string("clFinalizeCommandBufferKHR: ") + errorString(status) + " (" +
                           std::to_string(status) + ")");
  } else {
    state.release(); // nothing to replay
  }
  state.phase = State::Phase::Ready;
  if (verboseEnabled()) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - state.started).count();
    std::fprintf(stderr, "polyc: OpenCL command buffer: recorded %zu launches in %.1f ms\n", state.commands, ms);
  }
}

void LaunchSequence::abandonRecording() {
  state_->release();
  state_->phase = State::Phase::Empty;
}

bool LaunchSequence::recorded(uint64_t key) const {
  return state_ && state_->phase == State::Phase::Ready && state_->key == key;
}

size_t LaunchSequence::commands() const {
  return state_ && state_->phase == State::Phase::Ready ? state_->commands : 0;
}

bool LaunchSequence::replay(const Device &device, RegionTimer &timer, uint64_t key) {
  if (!recorded(key) || !commandBuffersWanted())
    return false;
  State &state = *state_;
  if (state.commands == 0)
    return true;
  if (!timer.first_) {
    // The region starts with this replay: a marker before it gives the start time.
    cl_event marker = nullptr;
    check(clEnqueueMarkerWithWaitList(device.queue(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
    timer.first_ = EventHandle(marker);
  }
  cl_event event = nullptr;
  cl_int status = state.api.enqueue(0, nullptr, state.buffer, 0, nullptr, &event);
  if (status != CL_SUCCESS) {
    state.turnOff(std::string("clEnqueueCommandBufferKHR: ") + errorString(status) + " (" + std::to_string(status) +
                  ")");
    return false;
  }
  timer.replays_.push_back(EventHandle(event));
  timer.pending_ = true;
  return true;
}

void OpenCLCompute::prepare() {
  if (polyc_device)
    return;
  auto device = std::make_unique<Device>(Device::fromEnvironment());
  bool isVerbose = verboseEnabled();
  if (isVerbose) {
    const DeviceInfo &info = device->info();
    std::fprintf(stderr, "polyc: OpenCL device %u:%u %s / %s (%s, %s, %u compute units)\n",
                 info.platformIndex, info.deviceIndex, info.platformName.c_str(), info.deviceName.c_str(),
                 info.deviceVersion.c_str(), info.openclCVersion.c_str(), info.computeUnits);
  }
  polyc_program = Program(*device, polyc_source, "-cl-std=CL1.2 " + polyc_options);
  if (isVerbose) {
    std::fprintf(stderr, "polyc: OpenCL build options: %s\n", polyc_program.options().c_str());
    std::string log = polyc_program.buildLog();
    if (!log.empty())
      std::fprintf(stderr, "polyc: OpenCL build log:\n%s\n", log.c_str());
  }
  polyc_device = std::move(device);
}

void checkIndexable(const std::string &what, int64_t elements) {
  if (elements > int64_t(INT32_MAX))
    throw Error(what + " has " + std::to_string(elements) +
                    " elements; the OpenCL target indexes with 32-bit integers (at most 2147483647)",
                CL_INVALID_BUFFER_SIZE);
}

size_t termTableBytes(std::initializer_list<int64_t> extents, size_t termBytes) {
  constexpr int64_t Saturated = int64_t(1) << 24;
  int64_t terms = 1;
  for (int64_t extent : extents)
    terms = std::min(Saturated, terms * std::clamp<int64_t>(extent, 0, Saturated));
  return size_t(std::max<int64_t>(terms, 1)) * termBytes;
}

// A positive integer from the environment, or `fallback` when the variable is unset.
static int64_t environmentValue(const char *name, int64_t fallback, int64_t low, int64_t high) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < low || value > high)
    throw Error(std::string(name) + "='" + text + "': expected an integer in [" + std::to_string(low) + ", " +
                    std::to_string(high) + "]",
                CL_INVALID_VALUE);
  return value;
}

static int64_t powerOfTwoAtLeast(int64_t value) {
  int64_t power = 1;
  while (power < value)
    power *= 2;
  return power;
}

static int64_t powerOfTwoAtMost(int64_t value) {
  int64_t power = 1;
  while (power * 2 <= value)
    power *= 2;
  return power;
}

size_t pointGroupSize(bool isGpu, size_t kernelLimit, int64_t reductionLength) {
  const int64_t limit = powerOfTwoAtMost(int64_t(std::max<size_t>(kernelLimit, 1)));
  // On a GPU at most 64: a point's group is a warp or two, as the CUDA target's 32 threads per point. On
  // the H100 the fixed wavefront at 8192^2 ran M = 17 in 115 ms with 64 work-items against 201 ms with
  // 256, M = 31 in 208 against 269 (docs/performance.md, OpenCL): a wider group spends more on its
  // reduction's barriers than its extra lanes save.
  int64_t size = isGpu ? std::clamp<int64_t>(powerOfTwoAtLeast(reductionLength), 32, 64)
                       : std::clamp<int64_t>(powerOfTwoAtLeast(reductionLength), 1, 8);
  size = environmentValue("POLYC_OPENCL_GROUP_SIZE", std::min(size, limit), 1, limit);
  return size_t(size);
}

// The most work-items a work-group of `kernel` may have on `device`.
static size_t groupLimit(const Device &device, const Kernel &kernel) {
  return std::min(kernel.maxWorkGroupSize(device), device.info().maxWorkGroupSize);
}

size_t pointGroupSize(const Device &device, const Kernel &kernel, int64_t reductionLength) {
  return pointGroupSize(device.info().isGpu, groupLimit(device, kernel), reductionLength);
}

size_t itemGroupSize(const Device &device, const Kernel &kernel) {
  const int64_t limit = int64_t(groupLimit(device, kernel));
  return size_t(std::min<int64_t>(device.info().isGpu ? 256 : 64, limit));
}

bool roundTiles() {
  static const bool on =
      switchValue("POLYC_OPENCL_ROUND_TILES", std::getenv("POLYC_OPENCL_ROUND_TILES"), true);
  return on;
}

bool privateHistogram(const Device &device, int64_t bytes, int64_t elements, int64_t points) {
  if (bytes > PrivateHistogramBytes || uint64_t(bytes) > device.info().localMemBytes / 2)
    return false;
  // The variable read once: the choice is made before every launch of a scatter, in loops too.
  static const char *const forced = std::getenv("POLYC_OPENCL_PRIVATE");
  const int64_t groups = PrivateGroupsPerUnit * int64_t(device.info().computeUnits);
  return switchValue("POLYC_OPENCL_PRIVATE", forced, points >= PrivatePointsPerElement * groups * elements);
}

size_t privateItems(const Device &device, int64_t points, size_t group) {
  const int64_t groups = PrivateGroupsPerUnit * int64_t(device.info().computeUnits);
  const int64_t needed = (points + int64_t(group) - 1) / int64_t(group);
  return size_t(std::max<int64_t>(1, std::min(groups, needed))) * group;
}

StripShape chooseStripShape(const Device &device, const Kernel &kernel, int64_t rows, int64_t cols,
                            const std::vector<WindowSpec> &windows, size_t stagedBytes, int64_t innerExtent,
                            size_t scratchBytes, int64_t tableTerms) {
  StripLimits limits;
  limits.isGpu = device.info().isGpu;
  limits.isNvidia = device.info().isNvidia;
  limits.maxGroup = groupLimit(device, kernel);
  limits.localMemBytes = device.info().localMemBytes;
  limits.computeUnits = device.info().computeUnits;
  StripShape shape = chooseStripShape(limits, rows, cols, windows, stagedBytes, innerExtent, scratchBytes, tableTerms);
  if (verboseEnabled())
    std::fprintf(stderr,
                 "polyc: OpenCL flexible shape: strip %d x lanes %d = %zu work-items (kernel limit %zu), %zu groups, "
                 "%d columns, polls %d\n",
                 shape.strip, shape.lanes, shape.groupSize, limits.maxGroup, shape.groups, shape.columns, shape.polls);
  return shape;
}

// The CUDA target's strip width for `lanes` per point (stripWidthFor in polyc/cuda/Device.h, which this
// runtime does not include): wider strips for fewer lanes, so that a block has 256 to 512 threads.
static int64_t cudaStripWidth(int64_t lanes) { return lanes >= 32 ? 16 : lanes >= 16 ? 32 : 64; }

// POLYC_OPENCL_NV_STRIP: unset, empty or 1 follows cudaStripWidth on NVIDIA; 0 keeps 16 columns.
static bool nvStripRuleWanted() {
  return switchValue("POLYC_OPENCL_NV_STRIP", std::getenv("POLYC_OPENCL_NV_STRIP"), true);
}

StripShape chooseStripShape(const StripLimits &limits, int64_t rows, int64_t cols,
                            const std::vector<WindowSpec> &windows, size_t stagedBytes, int64_t innerExtent,
                            size_t scratchBytes, int64_t tableTerms) {
  const bool gpu = limits.isGpu;
  const int64_t maxGroup = powerOfTwoAtMost(int64_t(std::max<size_t>(limits.maxGroup, 1)));
  // Lanes per point over the innermost reduction variable, at most a warp: lanes past its extent
  // would idle. A CPU runs the lanes one after another, so more than a few only adds barriers.
  int64_t lanes = innerExtent <= 0 ? 1 : std::clamp<int64_t>(powerOfTwoAtLeast(innerExtent), 4, gpu ? 32 : 4);
  // A term table deals its terms out evenly whatever the window's shape, so the lanes follow the terms
  // instead: about 8 or more a lane, at most 16 lanes, which leaves a strip of 16 columns within the 256
  // work-items NVIDIA's driver allows the kernel (on the H100, M = 17 and 31 ran a third faster so than with
  // 32 lanes and strips of 8: docs/performance.md, OpenCL).
  if (tableTerms > 0)
    lanes = std::clamp<int64_t>(powerOfTwoAtMost(std::max<int64_t>(tableTerms / 8, 1)), 4, gpu ? 16 : 4);
  lanes = environmentValue("POLYC_OPENCL_LANES", std::min(lanes, maxGroup), 1, maxGroup);
  if (lanes & (lanes - 1))
    throw Error("POLYC_OPENCL_LANES must be a power of two", CL_INVALID_VALUE);
  // 16: what the CUDA target measured best with 256-thread blocks (docs/performance.md); NVIDIA's OpenCL
  // gets the CUDA target's wider strips when the kernel may have that many work-items.
  int64_t strip = gpu ? (limits.isNvidia && nvStripRuleWanted() ? cudaStripWidth(lanes) : 16) : 8;
  strip = std::min(strip, std::max<int64_t>(1, maxGroup / lanes));
  strip = environmentValue("POLYC_OPENCL_STRIP", strip, 1, std::max<int64_t>(1, maxGroup / lanes));
  StripShape shape;
  // Local memory: the rings, the staged arrays, a scratch and an int scratch of one slot per work-item.
  for (;; strip = (strip + 1) / 2) {
    shape.strip = int(strip);
    shape.lanes = int(lanes);
    shape.groupSize = size_t(strip * lanes);
    shape.windows.clear();
    size_t local = stagedBytes + shape.groupSize * (scratchBytes + sizeof(cl_int)) + 64;
    for (const WindowSpec &window : windows) {
      WindowShape ring;
      ring.ringRows = int(powerOfTwoAtLeast(strip + window.back + window.ahead + 1));
      ring.ringCols = int(window.left + strip + window.right);
      ring.bytes = 2 * size_t(ring.ringRows) * size_t(ring.ringCols) * window.elementBytes;
      local += ring.bytes + 16; // each local argument may be aligned
      shape.windows.push_back(ring);
    }
    if (local <= limits.localMemBytes)
      break;
    if (strip == 1)
      throw Error("the flexible wavefront's windows and staged arrays (" + std::to_string(local) +
                      " bytes with strips of one column) do not fit in " +
                      std::to_string(limits.localMemBytes) +
                      " bytes of local memory; use --allocation=fixed",
                  CL_OUT_OF_RESOURCES);
  }
  checkIndexable("the flexible wavefront's steps", rows + strip);
  shape.columns = int((cols + strip - 1) / strip);
  shape.steps = int(rows + strip - 1);
  shape.lag = int(strip); // strip - 1 for the skew, 1 for loading the next halo row early
  shape.polls = int(environmentValue("POLYC_OPENCL_POLLS", gpu ? 64 : 4, 0, 1 << 30));
  // One group per compute unit on a CPU (a waiting group would only hold a thread); on a GPU a few per
  // unit. More groups than can run at once is safe: a group that has not started holds no lock.
  int64_t groups = int64_t(limits.computeUnits) * (gpu ? 2 : 1);
  groups = environmentValue("POLYC_OPENCL_GROUPS", groups, 1, 1 << 20);
  shape.groups = size_t(std::max<int64_t>(1, std::min<int64_t>(groups, shape.columns)));
  return shape;
}

bool takeConditionVariant(bool conditionHolds, bool flexibleWhenHolds) {
  const char *text = std::getenv("POLYC_OPENCL_WAVEFRONT");
  std::string choice = text ? text : "";
  if (choice.empty() || choice == "auto")
    return conditionHolds;
  if (choice != "fixed" && choice != "flexible")
    throw Error("POLYC_OPENCL_WAVEFRONT='" + choice + "': expected auto, fixed or flexible", CL_INVALID_VALUE);
  return (choice == "flexible") == flexibleWhenHolds;
}

void WavefrontBoard::reset(const Device &device, int columns) {
  if (columns != columns_) {
    progress_ = Buffer(device, size_t(columns) * sizeof(cl_int));
    locks_ = Buffer(device, size_t(columns) * sizeof(cl_int));
    completed_ = Buffer(device, sizeof(cl_int));
    columns_ = columns;
  }
  progress_.fill32(device, 0);
  locks_.fill32(device, 0);
  completed_.fill32(device, 0);
}

void uploadArray(const Device &device, const Buffer &buffer, const HostArray &array) {
  buffer.write(device, array.bytes.data(), array.bytes.size());
}

void downloadArray(const Device &device, const Buffer &buffer, HostArray &array) {
  buffer.read(device, array.bytes.data(), array.bytes.size());
}

static size_t elementBytes(DType dtype) { return dtype == DType::F64 ? 8 : 4; }

void runOnce(const ProgramInfo &info, Compute &compute, const std::vector<int64_t> &params,
             const std::vector<void *> &arrays) {
  if (params.size() != info.params.size() || arrays.size() != info.arrays.size())
    throw Error("runOnce: " + std::to_string(params.size()) + " params and " + std::to_string(arrays.size()) +
                    " arrays given, the program has " + std::to_string(info.params.size()) + " and " +
                    std::to_string(info.arrays.size()),
                CL_INVALID_VALUE);
  for (size_t p = 0; p < params.size(); ++p)
    if (params[p] < 0)
      throw Error("param " + info.params[p] + " = " + std::to_string(params[p]) + " is negative", CL_INVALID_VALUE);
  RunContext context;
  context.params = params;
  for (size_t a = 0; a < info.arrays.size(); ++a) {
    const ArraySpec &spec = info.arrays[a];
    HostArray host;
    host.spec = &spec;
    int64_t count = 1;
    for (const AffineExtent &extent : spec.shape) {
      int64_t value = extent.constant;
      for (auto [param, coefficient] : extent.terms)
        value += coefficient * params[param];
      host.shape.push_back(std::max<int64_t>(extent.divide(value), 0));
      count *= host.shape.back();
    }
    host.bytes.resize(size_t(count) * elementBytes(spec.dtype));
    if (spec.role != ArrayRole::Output && !host.bytes.empty())
      std::memcpy(host.bytes.data(), arrays[a], host.bytes.size());
    context.arrays.push_back(std::move(host));
  }
  compute.upload(context);
  compute.compute(context);
  compute.download(context);
  for (size_t a = 0; a < info.arrays.size(); ++a)
    if (info.arrays[a].role != ArrayRole::Input && !context.arrays[a].bytes.empty())
      std::memcpy(arrays[a], context.arrays[a].bytes.data(), context.arrays[a].bytes.size());
}

} // namespace polyc::rt::ocl
