// The CUDA runtime wrappers of polyc/cuda/Device.h and the error formatting of Check.h.
#include "polyc/cuda/Device.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace polyc::rt::cuda {

void throwCudaError(cudaError_t status, const char *call, const char *file, int line) {
  std::string message = "CUDA error at ";
  message += file;
  message += ":" + std::to_string(line) + " in " + call + ": " + cudaGetErrorString(status) + " (" +
             cudaGetErrorName(status) + ")";
  throw CudaError(message);
}

DeviceBuffer::DeviceBuffer(size_t bytes) { resize(bytes); }

DeviceBuffer::~DeviceBuffer() {
  // Destructors must not throw; a failure to free is reported by the next checked call.
  if (ptr_)
    cudaFree(ptr_);
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (ptr_)
      cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::resize(size_t bytes) {
  if (bytes == bytes_ && ptr_)
    return;
  if (ptr_) {
    POLYC_CUDA_CHECK(cudaFree(ptr_));
    ptr_ = nullptr;
  }
  bytes_ = bytes;
  // cudaMalloc of zero bytes returns a null pointer; keep one byte so every array has an address.
  POLYC_CUDA_CHECK(cudaMalloc(&ptr_, bytes ? bytes : 1));
}

void DeviceBuffer::upload(const void *host, size_t bytes, cudaStream_t stream) {
  if (bytes)
    POLYC_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, bytes, cudaMemcpyHostToDevice, stream));
}

void DeviceBuffer::download(void *host, size_t bytes, cudaStream_t stream) const {
  if (bytes)
    POLYC_CUDA_CHECK(cudaMemcpyAsync(host, ptr_, bytes, cudaMemcpyDeviceToHost, stream));
}

void DeviceBuffer::fill(int byte, cudaStream_t stream) {
  POLYC_CUDA_CHECK(cudaMemsetAsync(ptr_, byte, bytes_ ? bytes_ : 1, stream));
}

Stream::Stream() { POLYC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
Stream::~Stream() { cudaStreamDestroy(stream_); }
void Stream::synchronize() const { POLYC_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

Event::Event() { POLYC_CUDA_CHECK(cudaEventCreate(&event_)); }
Event::~Event() { cudaEventDestroy(event_); }
void Event::record(cudaStream_t stream) { POLYC_CUDA_CHECK(cudaEventRecord(event_, stream)); }
void Event::synchronize() const { POLYC_CUDA_CHECK(cudaEventSynchronize(event_)); }

void EventTimer::start(cudaStream_t stream) { begin_.record(stream); }

double EventTimer::stop(cudaStream_t stream) {
  end_.record(stream);
  POLYC_CUDA_CHECK(cudaEventSynchronize(end_.get()));
  float milliseconds = 0;
  POLYC_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, begin_.get(), end_.get()));
  return milliseconds * 1e-3;
}

CapturedGraph::~CapturedGraph() {
  if (exec_)
    cudaGraphExecDestroy(exec_);
  if (graph_)
    cudaGraphDestroy(graph_);
}

void CapturedGraph::reset() {
  if (exec_)
    POLYC_CUDA_CHECK(cudaGraphExecDestroy(exec_));
  if (graph_)
    POLYC_CUDA_CHECK(cudaGraphDestroy(graph_));
  exec_ = nullptr;
  graph_ = nullptr;
}

void CapturedGraph::beginCapture(cudaStream_t stream) {
  reset();
  POLYC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
}

void CapturedGraph::endCapture(cudaStream_t stream, uint64_t key) {
  POLYC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  POLYC_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  key_ = key;
}

void CapturedGraph::launch(cudaStream_t stream) { POLYC_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

const cudaDeviceProp &deviceProperties() {
  static const cudaDeviceProp properties = [] {
    int device = 0;
    POLYC_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp result;
    POLYC_CUDA_CHECK(cudaGetDeviceProperties(&result, device));
    return result;
  }();
  return properties;
}

int64_t residentThreads() {
  const cudaDeviceProp &properties = deviceProperties();
  return int64_t(properties.maxThreadsPerMultiProcessor) * properties.multiProcessorCount;
}

static std::optional<int64_t> integerFromEnvironment(const char *name, int64_t min, int64_t max) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (errno || *end || value < min || value > max)
    throw CudaError(std::string("invalid ") + name + "='" + text + "': expected an integer in [" +
                    std::to_string(min) + ", " + std::to_string(max) + "]");
  return value;
}

bool useCudaGraph() { return integerFromEnvironment("POLYC_CUDA_GRAPH", 0, 1).value_or(1) == 1; }

std::optional<int64_t> gridOverride() {
  return integerFromEnvironment("POLYC_CUDA_GRID", 1, (int64_t(1) << 31) - 1);
}

std::optional<int64_t> lanesOverride() {
  std::optional<int64_t> lanes = integerFromEnvironment("POLYC_CUDA_LANES", 4, 32);
  if (lanes && (*lanes & (*lanes - 1)))
    throw CudaError("invalid POLYC_CUDA_LANES='" + std::to_string(*lanes) + "': expected 4, 8, 16 or 32");
  return lanes;
}

std::optional<int64_t> groupOverride() {
  std::optional<int64_t> group = integerFromEnvironment("POLYC_CUDA_GROUP", 32, 1024);
  if (group && (*group & (*group - 1)))
    throw CudaError("invalid POLYC_CUDA_GROUP='" + std::to_string(*group) + "': expected 32, 64, ..., 1024");
  return group;
}

std::optional<int64_t> publishOverride() { return integerFromEnvironment("POLYC_CUDA_PUBLISH", 1, 1 << 20); }

std::optional<bool> decoupledOverride() {
  std::optional<int64_t> value = integerFromEnvironment("POLYC_CUDA_DECOUPLED", 0, 1);
  return value ? std::optional<bool>(*value == 1) : std::nullopt;
}

std::optional<bool> persistentOverride() {
  std::optional<int64_t> value = integerFromEnvironment("POLYC_CUDA_PERSISTENT", 0, 1);
  return value ? std::optional<bool>(*value == 1) : std::nullopt;
}

bool roundTiles() {
  static const bool on = integerFromEnvironment("POLYC_CUDA_ROUND_TILES", 0, 1).value_or(1) == 1;
  return on;
}

std::optional<bool> privateOverride() {
  // Read once: the choice is made before every launch of a scatter, in loops too.
  static const std::optional<bool> forced = [] {
    std::optional<int64_t> value = integerFromEnvironment("POLYC_CUDA_PRIVATE", 0, 1);
    return value ? std::optional<bool>(*value == 1) : std::nullopt;
  }();
  return forced;
}

bool wideIndexForced() {
  static const bool forced = [] {
    std::optional<int64_t> bits = integerFromEnvironment("POLYC_CUDA_INDEX", 32, 64);
    if (bits && *bits != 32 && *bits != 64)
      throw CudaError("invalid POLYC_CUDA_INDEX='" + std::to_string(*bits) + "': expected 32 or 64");
    return bits.value_or(32) == 64;
  }();
  return forced;
}

bool verbose() {
  static const bool enabled = integerFromEnvironment("POLYC_CUDA_VERBOSE", 0, 1).value_or(0) == 1;
  return enabled;
}

WavefrontOverride wavefrontOverride() {
  const char *text = std::getenv("POLYC_CUDA_WAVEFRONT");
  if (!text || !*text || !std::strcmp(text, "auto"))
    return WavefrontOverride::Auto;
  if (!std::strcmp(text, "fixed"))
    return WavefrontOverride::Fixed;
  if (!std::strcmp(text, "flexible"))
    return WavefrontOverride::Flexible;
  throw CudaError(std::string("invalid POLYC_CUDA_WAVEFRONT='") + text +
                  "': expected auto, fixed or flexible");
}

} // namespace polyc::rt::cuda
