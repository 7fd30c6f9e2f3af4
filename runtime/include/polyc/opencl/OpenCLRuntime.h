// The runtime's OpenCL part: device choice (POLYC_OPENCL_DEVICE), context and profiling queue, program
// build with the build log on failure, RAII buffers/kernels/events, launch sequences recorded into
// command buffers, and OpenCLCompute, the base of every generated OpenCL program's Compute. Every
// OpenCL call is checked; a failure throws ocl::Error.
#pragma once

#include "polyc/HashKey.h"

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "polyc/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace polyc::rt::ocl {

// An OpenCL failure: the message names the call and the error ("clBuildProgram: CL_BUILD_PROGRAM_FAILURE
// (-11)"), followed by the build log for a failed build. Generated mains report it and exit with 3.
class Error : public std::runtime_error {
public:
  Error(const std::string &message, cl_int code) : std::runtime_error(message), code_(code) {}
  cl_int code() const { return code_; }

private:
  cl_int code_;
};

// "CL_OUT_OF_RESOURCES" for -5; "unknown OpenCL error" for codes outside the table.
const char *errorString(cl_int code);

// Throws Error("<call>: <errorString(status)> (<status>)") unless status is CL_SUCCESS.
void check(cl_int status, const char *call);

// Owns one OpenCL object through its release function; movable, not copyable.
template <typename Handle, cl_int (*Release)(Handle)> class Owned {
public:
  Owned() = default;
  explicit Owned(Handle handle) : handle_(handle) {}
  Owned(Owned &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owned &operator=(Owned &&other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  ~Owned() { reset(); }
  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  void reset() {
    if (handle_)
      Release(handle_); // a release failure in a destructor has nowhere to go
    handle_ = nullptr;
  }

private:
  Handle handle_ = nullptr;
};

using ContextHandle = Owned<cl_context, clReleaseContext>;
using QueueHandle = Owned<cl_command_queue, clReleaseCommandQueue>;
using ProgramHandle = Owned<cl_program, clReleaseProgram>;
using KernelHandle = Owned<cl_kernel, clReleaseKernel>;
using MemHandle = Owned<cl_mem, clReleaseMemObject>;
using EventHandle = Owned<cl_event, clReleaseEvent>;

// What device selection saw, for messages and for sizing persistent grids.
struct DeviceInfo {
  std::string platformName;
  std::string deviceName;
  std::string deviceVersion;   // "OpenCL 3.0 CUDA"
  std::string openclCVersion;  // "OpenCL C 1.2 ..."
  unsigned platformIndex = 0, deviceIndex = 0;
  bool isGpu = false;
  cl_uint computeUnits = 1;
  size_t maxWorkGroupSize = 1;
  cl_ulong localMemBytes = 0;
  bool hasFp64 = false;
  std::string platformVendor, deviceVendor; // CL_PLATFORM_VENDOR, CL_DEVICE_VENDOR
  std::string extensions;                   // CL_DEVICE_EXTENSIONS, space-separated
  bool isNvidia = false;                    // isNvidiaVendor(platformVendor, deviceVendor)
};

// Whether either vendor string names NVIDIA (case-insensitive): its driver gets the options below.
bool isNvidiaVendor(const std::string &platformVendor, const std::string &deviceVendor);

// The options polyc adds to every program build for `info`'s device (Program's constructor, the one
// place), on NVIDIA only: "-D POLYC_NV_FENCE=1" (DeviceLibrary.h's device fence and progress
// publication in PTX: fence.acq_rel.gpu, red.release.gpu) unless `nvFence` (POLYC_OPENCL_NV_FENCE) is
// "0"; "-D POLYC_NV_SHUFFLE=1"
// (DeviceLibrary.h's reductions by warp shuffles) when `nvShuffle` (POLYC_OPENCL_NV_SHUFFLE) is "1" (off
// by default: the H100 ran the IIR 8-17% slower with them, docs/performance.md); and
// "-cl-nv-maxrregcount=N" when the device lists cl_nv_compiler_options, N from `nvMaxRegisters`
// (POLYC_OPENCL_NV_MAXRREG): unset or empty 128, so that 512 work-items fit in the 64K registers of a
// streaming multiprocessor; "0" passes nothing. Each returned option starts with a space. Throws an
// Error naming the variable for a bad value.
std::string deviceBuildOptions(const DeviceInfo &info, const char *nvShuffle, const char *nvMaxRegisters,
                               const char *nvFence = nullptr);
// " -D POLYC_HELD_TERMS=N" for `heldTerms` (POLYC_OPENCL_HELD_TERMS, every device): how many of its term
// table's terms a lane keeps in registers (DeviceLibrary.h); unset or empty: nothing (the library's 8).
// Throws an Error naming the variable unless it is an integer in [1, 32].
std::string heldTermsOption(const char *heldTerms);

// Lists every (platform, device) pair, in platform then device order. Throws when no platform exists.
std::vector<DeviceInfo> listDevices();

// Picks a device: `selector` is "P:D" (platform and device indices), or a case-insensitive substring of
// "<platform name> <device name>"; empty means the first GPU, else the first device of any type.
// Throws an Error listing the devices when nothing matches.
DeviceInfo chooseDevice(const std::string &selector);

class Buffer;
class Kernel;

// One device with its context and an in-order queue with profiling enabled.
class Device {
public:
  // Chooses by the environment variable POLYC_OPENCL_DEVICE (see chooseDevice).
  static Device fromEnvironment();
  explicit Device(const DeviceInfo &info);

  const DeviceInfo &info() const { return info_; }
  cl_device_id id() const { return device_; }
  cl_context context() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }

  void finish() const;

private:
  DeviceInfo info_;
  cl_device_id device_ = nullptr;
  ContextHandle context_;
  QueueHandle queue_;
};

// A device buffer of `bytes` bytes (at least one byte is allocated, so empty arrays still get a handle).
class Buffer {
public:
  Buffer() = default;
  Buffer(const Device &device, size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  // Allocates `bytes` unless the buffer already has that size (then it keeps its handle and contents),
  // so that repeated runs see the same cl_mem and a recorded LaunchSequence stays valid.
  void resize(const Device &device, size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  cl_mem get() const { return mem_.get(); }
  explicit operator bool() const { return static_cast<bool>(mem_); }
  size_t bytes() const { return bytes_; }
  // Blocking copies of the whole buffer (or `bytes` of it) between host and device.
  void write(const Device &device, const void *host, size_t bytes) const;
  void read(const Device &device, void *host, size_t bytes) const;
  // Fills the buffer with a repeated 32-bit pattern (blocking); bytes() must be a multiple of 4.
  void fill32(const Device &device, uint32_t pattern) const;

private:
  MemHandle mem_;
  size_t bytes_ = 0;
};

// A built program. `options` are passed to clBuildProgram, followed by deviceBuildOptions for the device
// (with the environment's settings); a failure throws with the build log.
class Program {
public:
  Program() = default;
  Program(const Device &device, const std::string &source, const std::string &options);
  cl_program get() const { return program_.get(); }
  // The options the program was built with (those given and the device's).
  const std::string &options() const { return options_; }
  Kernel kernel(const char *name) const;
  // The build log (warnings included) of the last build.
  std::string buildLog() const;
  // Writes the device's binary of the program (PTX on NVIDIA, for ptxas and cuobjdump) to `path`; the
  // constructor calls it when POLYC_OPENCL_SAVE_BINARY names a file.
  void saveBinary(const std::string &path) const;

private:
  cl_device_id device_ = nullptr;
  ProgramHandle program_;
  std::string options_;
};

class Kernel {
public:
  Kernel() = default;
  explicit Kernel(cl_kernel kernel, std::string name) : kernel_(kernel), name_(std::move(name)) {}
  cl_kernel get() const { return kernel_.get(); }
  explicit operator bool() const { return static_cast<bool>(kernel_); }
  const std::string &name() const { return name_; }

  // A plain value (not a pointer or memory object) equal to the one set before is not set again.
  template <typename T> Kernel &arg(cl_uint index, const T &value) {
    setArg(index, sizeof(T), &value, !std::is_pointer_v<T>);
    return *this;
  }
  Kernel &arg(cl_uint index, const Buffer &buffer) {
    cl_mem mem = buffer.get();
    setArg(index, sizeof(cl_mem), &mem);
    return *this;
  }
  // Local memory of `bytes` bytes for a __local pointer argument.
  Kernel &localArg(cl_uint index, size_t bytes) {
    setArg(index, bytes, nullptr);
    return *this;
  }
  // The largest work-group this kernel can run with on `device` (registers, local memory).
  size_t maxWorkGroupSize(const Device &device) const;
  // A new kernel object of the same program and function with the arguments set so far (the values
  // are kept here: OpenCL cannot read them back). A LaunchSequence records a copy per launch.
  Kernel copy() const;

private:
  struct ArgValue {
    bool isSet = false;
    bool isLocal = false; // a __local size, no value
    size_t size = 0;
    std::vector<unsigned char> bytes;
  };
  void setArg(cl_uint index, size_t size, const void *value, bool skipUnchanged = false);
  KernelHandle kernel_;
  std::string name_;
  std::vector<ArgValue> args_;
};

class LaunchSequence;

// Where a band's launches go: straight to the queue (RegionTimer) or into a LaunchSequence being
// recorded. Generated code that may be recorded enqueues through this interface.
class LaunchSink {
public:
  virtual ~LaunchSink() = default;
  // Enqueues (or records) a 1D NDRange of `globalSize` work-items in groups of `localSize` (0: the
  // implementation's choice) with the kernel's current arguments. globalSize 0 does nothing.
  virtual void enqueue(const Device &device, const Kernel &kernel, size_t globalSize, size_t localSize) = 0;
};

// Times a region of enqueued commands by device events: from the start of the first command to the
// end of a marker enqueued after the last (the queue is in order). A replayed LaunchSequence is one
// command of the region; when it comes first, a marker before it opens the region.
class RegionTimer : public LaunchSink {
public:
  // Enqueues a 1D NDRange of `globalSize` work-items in groups of `localSize` (0: implementation's
  // choice). globalSize 0 enqueues nothing.
  void enqueue(const Device &device, const Kernel &kernel, size_t globalSize, size_t localSize) override;
  // Waits for the queue and returns the seconds between the first start and the last end (0 when
  // nothing was enqueued). Throws when a kernel or a replayed sequence ended in an error.
  double finish(const Device &device);

private:
  friend class LaunchSequence;
  EventHandle first_, last_;
  std::vector<EventHandle> replays_; // replayed command buffers, for their execution status
  bool pending_ = false; // commands were enqueued after the first
};

// ---- Recorded launch sequences (cl_khr_command_buffer, an OpenCL 3.0 extension). A fixed wavefront
// enqueues one kernel per hyperplane, thousands in a row, each costing microseconds of host time in
// the driver; recorded once into a command buffer, they replay with one enqueue.

// POLYC_OPENCL_COMMAND_BUFFER=0|1: 0 enqueues every launch directly; 1 (the default, also when unset)
// records and replays where the device has cl_khr_command_buffer. Another value throws an Error.
bool commandBuffersWanted();

// Whether `device` can record: it lists cl_khr_command_buffer, its platform gives the entry points,
// and the queue has the properties the extension requires there.
bool hasCommandBuffers(const Device &device);

// What a recorded sequence depends on (the params, the cl_mem handles).
using polyc::rt::hashKey;

// A sequence of launches recorded once into a command buffer and replayed with one enqueue, keyed by
// `key` (a different key records again). Kernel arguments belong to each recorded launch: every launch
// is recorded with its own copy of the kernel (Kernel::copy), because the spec captures arguments when
// a command is recorded but some implementations (PoCL 3.1) read the kernel object's arguments when the
// buffer is enqueued. Whenever recording is off (commandBuffersWanted), not available
// (hasCommandBuffers) or a command-buffer call fails, the launches are enqueued directly instead (a
// failure is reported on stderr with POLYC_OPENCL_VERBOSE=1 and turns recording off for this
// sequence). Not copyable.
class LaunchSequence {
public:
  LaunchSequence();
  ~LaunchSequence();
  LaunchSequence(const LaunchSequence &) = delete;
  LaunchSequence &operator=(const LaunchSequence &) = delete;

  // Records the launches `enqueue(LaunchSink &)` makes, unless a sequence with `key` is recorded
  // already or recording is off, unavailable or failed before. For work outside the timed region
  // (a Compute's upload).
  template <typename Enqueue> void record(const Device &device, uint64_t key, Enqueue &&enqueue) {
    LaunchSink *recorder = beginRecording(device, key);
    if (!recorder)
      return;
    try {
      enqueue(*recorder);
    } catch (...) {
      abandonRecording();
      throw;
    }
    endRecording();
  }
  // Replays the sequence recorded with `key` through `timer` (recording it first if needed); where
  // there is none, calls `enqueue(timer)`, which enqueues the launches directly.
  template <typename Enqueue>
  void enqueueOrReplay(const Device &device, RegionTimer &timer, uint64_t key, Enqueue &&enqueue) {
    record(device, key, enqueue);
    if (!replay(device, timer, key))
      enqueue(static_cast<LaunchSink &>(timer));
  }

  // Whether a sequence with `key` is recorded and ready to replay.
  bool recorded(uint64_t key) const;
  // The launches in the recorded sequence (0 when none is recorded).
  size_t commands() const;

private:
  struct State;
  LaunchSink *beginRecording(const Device &device, uint64_t key);
  void endRecording();
  void abandonRecording();
  bool replay(const Device &device, RegionTimer &timer, uint64_t key);
  std::unique_ptr<State> state_;
};

// The base of a generated program's Compute: owns the device and its built program. The device is
// chosen and the program built on the first upload(), inside runMain, so that --help and bad input
// never touch OpenCL and a device failure is reported as a failed computation (exit status 3).
// Subclasses call prepare() first in upload() and enqueue their kernels through a RegionTimer.
class OpenCLCompute : public Compute {
public:
  // `source` is built with `options` (plus -cl-std=CL1.2) for the device POLYC_OPENCL_DEVICE chooses.
  // Set POLYC_OPENCL_VERBOSE=1 to print the chosen device and the build log on stderr.
  OpenCLCompute(std::string source, std::string options)
      : polyc_source(std::move(source)), polyc_options(std::move(options)) {}

protected:
  void prepare();
  const Device &device() const { return *polyc_device; }
  const Program &program() const { return polyc_program; }

private:
  // Named in polyc's reserved namespace (polyc_ without a trailing '_', never a spelling of a program's
  // name): the generated subclass's code sees these names before the namespace-scope constants of the
  // program, and a constant `device` is spelled device_.
  std::string polyc_source, polyc_options;
  std::unique_ptr<Device> polyc_device;
  Program polyc_program;
};

// ---- Launch shapes for generated kernels. Each can be forced through the environment (for tuning and
// tests); a forced value that is out of range throws an Error naming the variable.

// Throws unless `elements` fits the 32-bit indices generated kernels use.
void checkIndexable(const std::string &what, int64_t elements);

// The work-group size for a kernel in which a whole work-group computes one point with reductions of
// `reductionLength` terms (fixed wavefront, reduction bands): a power of two, 32 or 64 on a GPU and up
// to 8 on a CPU device, within what the kernel allows (`kernelLimit`). POLYC_OPENCL_GROUP_SIZE overrides.
size_t pointGroupSize(bool isGpu, size_t kernelLimit, int64_t reductionLength);
size_t pointGroupSize(const Device &device, const Kernel &kernel, int64_t reductionLength);

// Repeat loops with round tiles (compiler/map, RoundTiles): several rounds a launch on tiles in local
// memory, unless POLYC_OPENCL_ROUND_TILES=0 runs a round a launch.
bool roundTiles();

// The work-group size of a kernel where every work-item computes its own point: 256 on a GPU (a
// multiple of the 32-wide warp), 64 on a CPU, within what the kernel allows.
size_t itemGroupSize(const Device &device, const Kernel &kernel);

// A scatter whose whole array fits in local memory adds into a copy of it a work-group (a privatised
// histogram), which the work-group then adds to the array (polyc/cuda/Device.h's privateHistogram, the same
// rule): where the copy takes at most half the device's local memory and 32 KiB, and the points number at
// least PrivatePointsPerElement times the elements the work-groups add back. POLYC_OPENCL_PRIVATE=0|1
// forces either form where the copy fits.
constexpr int64_t PrivateHistogramBytes = 32 * 1024;
constexpr int64_t PrivateGroupsPerUnit = 2;
constexpr int64_t PrivatePointsPerElement = 4;
bool privateHistogram(const Device &device, int64_t bytes, int64_t elements, int64_t points);
// The work-items of a privatised scatter's launch: at most PrivateGroupsPerUnit work-groups of `group` a
// compute unit, each work-item taking every so many points.
size_t privateItems(const Device &device, int64_t points, size_t group);

// The local memory of a term table (DeviceLibrary.h) for a window sum over variables with `extents`
// values each: their product of `termBytes` terms, at least one term (OpenCL refuses a local argument of
// 0 bytes), saturating at 2^24 terms (far more than any device's local memory, so the strip shape then
// reports that the kernel does not fit rather than the size overflowing).
size_t termTableBytes(std::initializer_list<int64_t> extents, size_t termBytes);

// One window a flexible wavefront's point reads (an array at the point's row and column plus bounded
// offsets): rows back..ahead and columns left..right around the point, held in local memory as a ring
// of recent rows (see DeviceLibrary.h and the generated kernel).
struct WindowSpec {
  int64_t back = 0, ahead = 0, left = 0, right = 0;
  size_t elementBytes = 4;
};
// A window's ring for a strip: ringRows (a power of two, > strip + back + ahead) rows of
// left + strip + right elements, stored twice over (2 * ringRows rows) so that a point's window is
// contiguous in the ring: row r lives at slots r % ringRows and r % ringRows + ringRows.
struct WindowShape {
  int ringRows = 1, ringCols = 1;
  size_t bytes = 0;
};
// The shape of a flexible wavefront over strips: `strip` image columns per processor column, `lanes`
// work-items per point (a power of two), the windows' rings in local memory, and the persistent grid.
struct StripShape {
  int strip = 1, lanes = 1;
  std::vector<WindowShape> windows; // in the order given to chooseStripShape
  int columns = 0, steps = 0, lag = 0, polls = 0;
  size_t groups = 0, groupSize = 1;
};
// Chooses a shape for a rows x cols domain whose points read `windows`, with `stagedBytes` of
// point-invariant arrays copied to local memory once per work-group, reductions whose innermost
// variable runs over `innerExtent` values (0: no reduction; lanes per point: the smallest power of
// two >= innerExtent, 4 to 32 on a GPU, 4 on a CPU) and a scratch slot of `scratchBytes` per
// work-item. When the reductions take their terms from tables of up to `tableTerms` terms (0: none),
// the lanes follow the terms instead: the largest power of two <= tableTerms / 8, 4 to 16 on a GPU. The work-group (strip x lanes) stays within the kernel's CL_KERNEL_WORK_GROUP_SIZE and
// the local memory; the strip shrinks until both hold. Environment overrides: POLYC_OPENCL_STRIP,
// POLYC_OPENCL_LANES, POLYC_OPENCL_GROUPS, POLYC_OPENCL_POLLS. Throws when even a strip of one column
// does not fit in local memory.
// On NVIDIA the strip follows the CUDA target's rule (stripWidthFor in polyc/cuda/Device.h: 64, 64, 32, 16
// columns for 4, 8, 16, 32 lanes, 64 without lanes) where the kernel's work-group limit allows it, unless
// POLYC_OPENCL_NV_STRIP=0 (then 16 as on other GPUs).
StripShape chooseStripShape(const Device &device, const Kernel &kernel, int64_t rows, int64_t cols,
                            const std::vector<WindowSpec> &windows, size_t stagedBytes, int64_t innerExtent,
                            size_t scratchBytes, int64_t tableTerms = 0);
// What chooseStripShape reads of the device and kernel; `maxGroup` is the smaller of the kernel's
// CL_KERNEL_WORK_GROUP_SIZE and the device's maximum.
struct StripLimits {
  bool isGpu = false, isNvidia = false;
  size_t maxGroup = 1;
  cl_ulong localMemBytes = 0;
  cl_uint computeUnits = 1;
};
StripShape chooseStripShape(const StripLimits &limits, int64_t rows, int64_t cols,
                            const std::vector<WindowSpec> &windows, size_t stagedBytes, int64_t innerExtent,
                            size_t scratchBytes, int64_t tableTerms = 0);

// The run-time choice between a band's fixed and flexible wavefront: `conditionHolds` is the cost
// model's condition (for example M > 1), `flexibleWhenHolds` says which variant it selects. Returns
// whether to take the variant the condition selects, unless POLYC_OPENCL_WAVEFRONT=fixed|flexible
// forces one (auto or unset: the condition decides).
bool takeConditionVariant(bool conditionHolds, bool flexibleWhenHolds);

// The shared state of one flexible wavefront: per-column progress and locks, and the count of complete
// columns; reset (zeroed) before every launch.
class WavefrontBoard {
public:
  void reset(const Device &device, int columns);
  const Buffer &progress() const { return progress_; }
  const Buffer &locks() const { return locks_; }
  const Buffer &completed() const { return completed_; }

private:
  Buffer progress_, locks_, completed_;
  int columns_ = -1;
};

// Whole-array transfers between a RunContext array and a device buffer.
void uploadArray(const Device &device, const Buffer &buffer, const HostArray &array);
void downloadArray(const Device &device, const Buffer &buffer, HostArray &array);

// Runs `compute` once for a library call (<prog>_run): `params` in ProgramInfo::params order, `arrays`
// pointing to each array of ProgramInfo::arrays in order, dense row-major. Inputs are read, outputs and
// inouts written back. Throws Error (or std::bad_alloc) on failure.
void runOnce(const ProgramInfo &info, Compute &compute, const std::vector<int64_t> &params,
             const std::vector<void *> &arrays);

// The changed flag of a repeat loop that stops early (`until unchanged(...)`): after iteration `done`
// (from 0) the program's polyc_record_changed kernel copies the flag into slot done % checkEvery of
// `ring` and clears it; every checkEvery iterations (1: each) the host reads the records back, merged
// over the ranks by `combine(records, count)`. Whether the loop stops now: a record read says an
// iteration changed nothing (the later ones, run ahead, changed nothing either: the generated code asks
// for more than 1 only then).
inline constexpr int ChangedRingSize = 64;
inline void onThisRank(int *, int) {}
template <typename Combine>
bool stopAfter(const Device &device, LaunchSink &sink, Kernel &record, const Buffer &flag, const Buffer &ring,
               int64_t done, int checkEvery, Combine combine) {
  const int slot = int(done % checkEvery);
  record.arg(0, flag.get()).arg(1, ring.get()).arg(2, cl_int(slot));
  sink.enqueue(device, record, 1, 1);
  if (slot != checkEvery - 1)
    return false;
  int records[ChangedRingSize];
  ring.read(device, records, size_t(checkEvery) * sizeof(int));
  combine(records, checkEvery);
  for (int k = 0; k < checkEvery; ++k)
    if (records[k] == 0)
      return true;
  return false;
}

} // namespace polyc::rt::ocl
