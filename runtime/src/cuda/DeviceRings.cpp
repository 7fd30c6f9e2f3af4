// A streamed run on the GPU (CudaCompute::computeStreamed): the device buffers of the streamed arrays hold
// their rings. While step t runs on the compute stream, the host writes the output slices of step t - 1,
// reads the input slices of step t + 1 and uploads them on an upload stream; the outputs of step t are
// downloaded on a download stream once it ends. Events order the three: a step waits for its inputs'
// uploads and for the download of the slot it overwrites; an upload waits for the last step that read the
// slot it fills.
#include "polyc/Stream.h"
#include "polyc/Timer.h"
#include "polyc/cuda/Check.h"
#include "polyc/cuda/CudaCompute.h"

#include <algorithm>
#include <array>
#include <memory>
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

// One streamed array: its ring on the device, two staging slices on the host (one being copied while the
// host fills or empties the other), and per slot the event of the last copy into or out of it.
struct Ring {
  SliceReader *reader = nullptr; // an input's
  SliceWriter *writer = nullptr; // an output's that is written
  int64_t slots = 0;
  size_t sliceBytes = 0;
  unsigned char *device = nullptr;
  std::array<std::unique_ptr<PinnedBuffer>, 2> staging;
  std::array<Event, 2> stagingCopied;  // the copy from or into staging[k] done
  std::unique_ptr<Event[]> slotCopied; // per slot: the last upload into it, or download out of it, done
  unsigned char *slot(int64_t step) const { return device + size_t(step % slots) * sliceBytes; }
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
        for (std::unique_ptr<PinnedBuffer> &staging : ring.staging)
          staging = std::make_unique<PinnedBuffer>(ring.sliceBytes);
      mostSlots_ = std::max(mostSlots_, ring.slots);
      (array.spec->role == ArrayRole::Input ? inputs_ : outputs_).push_back(std::move(owned));
    }
    stepDone_ = std::make_unique<Event[]>(size_t(mostSlots_));
  }

  // The inputs of step 0, before the loop.
  void start() {
    if (steps_ > 0)
      upload(0);
  }

  void beforeStep(int64_t step) override {
    for (auto &ring : inputs_)
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(compute_, ring->slotCopied[size_t(step % ring->slots)].get(), 0));
    for (auto &ring : outputs_) // the download of the step that wrote this slot before (never recorded: none)
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(compute_, ring->slotCopied[size_t(step % ring->slots)].get(), 0));
  }

  void afterStep(int64_t step) override {
    stepDone_[size_t(step % mostSlots_)].record(compute_);
    download(step);
    if (step > 0)
      write(step - 1);
    if (step + 1 < steps_)
      upload(step + 1);
  }

  // After the loop: the last outputs written, the files committed.
  void finish() {
    if (steps_ > 0)
      write(steps_ - 1);
    POLYC_CUDA_CHECK(cudaStreamSynchronize(compute_));
    for (auto &ring : outputs_)
      if (ring->writer)
        if (Status status = ring->writer->commit(); !status)
          throw SliceError(status.message());
  }

private:
  // Reads the inputs of `step` into staging and uploads them into their slots, once the last step that read
  // those slots (step - slots) is done.
  void upload(int64_t step) {
    for (auto &ring : inputs_) {
      size_t k = size_t(step % 2);
      ring->stagingCopied[k].synchronize(); // the upload of step - 2 from this staging slice
      if (Status status = ring->reader->readNext(ring->staging[k]->get()); !status)
        throw SliceError(status.message());
      if (step >= ring->slots)
        POLYC_CUDA_CHECK(cudaStreamWaitEvent(upload_.get(),
                                             stepDone_[size_t((step - ring->slots) % mostSlots_)].get(), 0));
      POLYC_CUDA_CHECK(cudaMemcpyAsync(ring->slot(step), ring->staging[k]->get(), ring->sliceBytes,
                                       cudaMemcpyHostToDevice, upload_.get()));
      ring->slotCopied[size_t(step % ring->slots)].record(upload_.get());
      ring->stagingCopied[k].record(upload_.get());
    }
  }

  // Downloads the written outputs of `step`, once it is done.
  void download(int64_t step) {
    for (auto &ring : outputs_) {
      if (!ring->writer)
        continue;
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(download_.get(), stepDone_[size_t(step % mostSlots_)].get(), 0));
      POLYC_CUDA_CHECK(cudaMemcpyAsync(ring->staging[size_t(step % 2)]->get(), ring->slot(step),
                                       ring->sliceBytes, cudaMemcpyDeviceToHost, download_.get()));
      ring->slotCopied[size_t(step % ring->slots)].record(download_.get());
      ring->stagingCopied[size_t(step % 2)].record(download_.get());
    }
  }

  // Writes the outputs of `step` to their files, once downloaded.
  void write(int64_t step) {
    for (auto &ring : outputs_) {
      if (!ring->writer)
        continue;
      ring->stagingCopied[size_t(step % 2)].synchronize();
      if (Status status = ring->writer->writeNext(ring->staging[size_t(step % 2)]->get()); !status)
        throw SliceError(status.message());
    }
  }

  cudaStream_t compute_;
  Stream upload_, download_;
  std::vector<std::unique_ptr<Ring>> inputs_, outputs_;
  int64_t steps_ = 0, mostSlots_ = 1;
  std::unique_ptr<Event[]> stepDone_; // per step modulo mostSlots_: the step's kernels done
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
