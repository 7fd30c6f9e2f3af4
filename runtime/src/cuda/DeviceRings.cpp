// A streamed run on the GPU (CudaCompute::computeStreamed): the device buffers of the streamed arrays hold
// their rings. A reader thread reads the input slices of the coming steps into pinned staging, a writer
// thread writes the output slices of the past ones, and the thread that launches the steps enqueues the
// uploads of step t + 1 on an upload stream while step t runs, and the downloads of step t on a download
// stream. Events order the streams: a step waits for its inputs' uploads and for the download of the slot
// it overwrites; an upload waits for the last step that read the slot it fills.
#include "polyc/Stream.h"
#include "polyc/Timer.h"
#include "polyc/cuda/Check.h"
#include "polyc/cuda/CudaCompute.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace polyc::rt::cuda {

namespace {

// Page-locked host memory: copies from and to it run asynchronously, at the link's full speed.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes) {
    if (bytes > 0)
      POLYC_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
  }
  ~PinnedBuffer() {
    if (ptr_)
      cudaFreeHost(ptr_);
  }
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  unsigned char *get() const { return static_cast<unsigned char *>(ptr_); }

private:
  void *ptr_ = nullptr;
};

// Host slices staged per array: the reader thread fills one while earlier ones upload, the writer thread
// empties one while later ones download. Four let the host run three steps ahead of the GPU.
constexpr int64_t StagedSlices = 4;

// One streamed array: its ring on the device, its staged slices on the host, and per slot the event of the
// last copy into or out of it.
struct Ring {
  SliceReader *reader = nullptr; // an input's
  SliceWriter *writer = nullptr; // an output's that is written
  int64_t slots = 0;
  size_t sliceBytes = 0;
  unsigned char *device = nullptr;
  std::array<std::unique_ptr<PinnedBuffer>, StagedSlices> staged;
  std::array<Event, StagedSlices> stagedCopied; // the copy from or into staged[k] done
  std::unique_ptr<Event[]> slotCopied; // per slot: the last upload into it, or download out of it, done
  unsigned char *slot(int64_t step) const { return device + size_t(step % slots) * sliceBytes; }
  unsigned char *stage(int64_t step) const { return staged[size_t(step % StagedSlices)]->get(); }
  Event &stageCopied(int64_t step) { return stagedCopied[size_t(step % StagedSlices)]; }
};

// Progress shared by the thread that runs the steps and the reader and writer threads: each waits on the
// others' counters, never on its own work.
class Progress {
public:
  // Waits until `counter` reaches `value`; false when the run stopped (a failure or the end) first.
  bool waitFor(const int64_t &counter, int64_t value) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return counter >= value || stopped_; });
    return counter >= value;
  }
  void advance(int64_t &counter, int64_t value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      counter = value;
    }
    changed_.notify_all();
  }
  void fail(const std::string &message) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failure_.empty())
        failure_ = message;
      stopped_ = true;
    }
    changed_.notify_all();
  }
  void stop() { fail(""); }
  // waitFor for the thread that runs the steps: the reader's or the writer's failure is thrown there.
  void require(const int64_t &counter, int64_t value) {
    if (!waitFor(counter, value)) {
      check();
      throw SliceError("the streamed run stopped");
    }
  }
  // Throws the reader's or the writer's failure, if any.
  void check() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty())
      throw SliceError(failure_);
  }

  int64_t read = 0;       // slices read into staging (reader)
  int64_t uploaded = 0;   // uploads enqueued (steps thread)
  int64_t downloaded = 0; // downloads enqueued (steps thread)
  int64_t written = 0;    // slices written out (writer)

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopped_ = false;
  std::string failure_;
};

class DeviceRings final : public StepHooks {
public:
  DeviceRings(RunContext &context, StreamSlices &slices, const std::vector<DeviceBuffer> &buffers,
              cudaStream_t compute)
      : compute_(compute) {
    for (size_t a = 0; a < context.arrays.size(); ++a) {
      const HostArray &array = context.arrays[a];
      if (array.spec->streamSlots == 0)
        continue;
      steps_ = array.shape.empty() ? 0 : array.shape[0];
      auto owned = std::make_unique<Ring>();
      Ring &ring = *owned;
      ring.reader = slices.readers[a].get();
      ring.writer = slices.writers[a].get();
      ring.slots = array.spec->streamSlots;
      ring.sliceBytes = size_t(sliceBytesOf(array));
      ring.device = buffers[a].as<unsigned char>();
      ring.slotCopied = std::make_unique<Event[]>(size_t(ring.slots));
      if (ring.reader || ring.writer)
        for (std::unique_ptr<PinnedBuffer> &staged : ring.staged)
          staged = std::make_unique<PinnedBuffer>(ring.sliceBytes);
      mostSlots_ = std::max(mostSlots_, ring.slots);
      if (array.spec->role == ArrayRole::Input)
        inputs_.push_back(std::move(owned));
      else if (ring.writer)
        outputs_.push_back(std::move(owned));
    }
    stepDone_ = std::make_unique<Event[]>(size_t(mostSlots_));
  }

  ~DeviceRings() override {
    progress_.stop();
    for (std::thread *thread : {&reader_, &writer_})
      if (thread->joinable())
        thread->join();
  }

  // Starts the reader and the writer and uploads the inputs of step 0.
  void start() {
    reader_ = std::thread([this] { readAll(); });
    writer_ = std::thread([this] { writeAll(); });
    if (steps_ > 0)
      upload(0);
  }

  void beforeStep(int64_t step) override {
    progress_.check();
    for (auto &ring : inputs_)
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(compute_, ring->slotCopied[size_t(step % ring->slots)].get(), 0));
    for (auto &ring : outputs_) // the download of the step that wrote this slot before (never recorded: none)
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(compute_, ring->slotCopied[size_t(step % ring->slots)].get(), 0));
  }

  void afterStep(int64_t step) override {
    stepDone_[size_t(step % mostSlots_)].record(compute_);
    download(step);
    if (step + 1 < steps_)
      upload(step + 1);
  }

  // After the loop: the writer done with the last slice, the files committed.
  void finish() {
    writer_.join();
    progress_.check();
    POLYC_CUDA_CHECK(cudaStreamSynchronize(compute_));
    for (auto &ring : outputs_)
      if (Status status = ring->writer->commit(); !status)
        throw SliceError(status.message());
  }

private:
  // The reader thread: every step's input slices into staging, as far ahead as staging allows.
  void readAll() {
    for (int64_t step = 0; step < steps_; ++step) {
      if (!progress_.waitFor(progress_.uploaded, step - StagedSlices + 1))
        return;
      for (auto &ring : inputs_) {
        ring->stageCopied(step).synchronize(); // the upload of step - StagedSlices from this staging slice
        if (Status status = ring->reader->readNext(ring->stage(step)); !status)
          return progress_.fail(status.message());
      }
      progress_.advance(progress_.read, step + 1);
    }
  }

  // The writer thread: every step's output slices to their files, as soon as they are downloaded.
  void writeAll() {
    for (int64_t step = 0; step < steps_; ++step) {
      if (!progress_.waitFor(progress_.downloaded, step + 1))
        return;
      for (auto &ring : outputs_) {
        ring->stageCopied(step).synchronize();
        if (Status status = ring->writer->writeNext(ring->stage(step)); !status)
          return progress_.fail(status.message());
      }
      progress_.advance(progress_.written, step + 1);
    }
  }

  // Uploads the inputs of `step` from staging into their slots, once read, and once step - 2 is done: the
  // slot held slice step - slots, which the steps up to step - slots + lag read, and slots = lag + 2
  // (Streaming.h). (Waiting for step - slots alone let the upload overwrite a slice that step - 2 was still
  // reading: fuzz seed 40442, a lag of 3, steps of 3 points, the host far ahead of the GPU.)
  void upload(int64_t step) {
    progress_.require(progress_.read, step + 1);
    for (auto &ring : inputs_) {
      if (step >= 2)
        POLYC_CUDA_CHECK(
            cudaStreamWaitEvent(upload_.get(), stepDone_[size_t((step - 2) % mostSlots_)].get(), 0));
      POLYC_CUDA_CHECK(cudaMemcpyAsync(ring->slot(step), ring->stage(step), ring->sliceBytes,
                                       cudaMemcpyHostToDevice, upload_.get()));
      ring->slotCopied[size_t(step % ring->slots)].record(upload_.get());
      ring->stageCopied(step).record(upload_.get());
    }
    progress_.advance(progress_.uploaded, step + 1);
  }

  // Downloads the written outputs of `step` into staging once it is done, and the writer has emptied that
  // staging slice.
  void download(int64_t step) {
    progress_.require(progress_.written, step - StagedSlices + 1);
    for (auto &ring : outputs_) {
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(download_.get(), stepDone_[size_t(step % mostSlots_)].get(), 0));
      POLYC_CUDA_CHECK(cudaMemcpyAsync(ring->stage(step), ring->slot(step), ring->sliceBytes,
                                       cudaMemcpyDeviceToHost, download_.get()));
      ring->slotCopied[size_t(step % ring->slots)].record(download_.get());
      ring->stageCopied(step).record(download_.get());
    }
    progress_.advance(progress_.downloaded, step + 1);
  }

  cudaStream_t compute_;
  Stream upload_, download_;
  std::vector<std::unique_ptr<Ring>> inputs_, outputs_; // outputs_: those written
  int64_t steps_ = 0, mostSlots_ = 1;
  std::unique_ptr<Event[]> stepDone_; // per step modulo mostSlots_: the step's kernels done
  Progress progress_;
  std::thread reader_, writer_;
};

} // namespace

double CudaCompute::computeStreamed(RunContext &context, StreamSlices &slices) {
  ensureStream();
  polyc_buffers.resize(context.arrays.size());
  for (size_t index = 0; index < context.arrays.size(); ++index) {
    HostArray &array = context.arrays[index];
    if (array.spec->streamSlots > 0) {
      polyc_buffers[index].resize(size_t(array.spec->streamSlots * sliceBytesOf(array)));
      continue;
    }
    polyc_buffers[index].resize(array.bytes.size());
    if (array.spec->role != ArrayRole::Output)
      polyc_buffers[index].upload(array.bytes.data(), array.bytes.size(), polyc_stream->get());
  }
  prepare(context, polyc_stream->get());
  polyc_stream->synchronize();

  DeviceRings rings(context, slices, polyc_buffers, polyc_stream->get());
  polyc_steps = &rings;
  struct Unhook { // the generated loop sees the rings of this run only, whatever it throws
    StepHooks *&hooks;
    ~Unhook() { hooks = nullptr; }
  } unhook{polyc_steps};
  Timer timer;
  rings.start();
  run(context, polyc_stream->get());
  rings.finish();
  double seconds = timer.seconds();
  download(context); // the outputs that are not streamed
  return seconds;
}

} // namespace polyc::rt::cuda
