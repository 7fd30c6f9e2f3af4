// The Compute pattern of generated CUDA programs: one device buffer per program array (inputs,
// outputs, inouts), uploaded before each timed run and downloaded once after the last; the compute
// region is timed with device events around `run`, which the generated subclass implements.
#pragma once

#include "polyc/Runtime.h"
#include "polyc/Stream.h"
#include "polyc/cuda/Device.h"

#include <memory>
#include <vector>

namespace polyc::rt::cuda {

class CudaCompute : public Compute {
public:
  // Copies inputs and inouts to the device (allocating on first use) and waits, so the timed
  // region holds the computation only.
  void upload(RunContext &context) override;
  // Times `run` on the stream with device events and returns seconds.
  double compute(RunContext &context) override;
  // Copies outputs and inouts back to the host (not the streamed ones).
  void download(RunContext &context) override;
  // A streamed build's run (DeviceRings.cpp): the rings of the streamed arrays in their device buffers,
  // their slices moved on two copy streams while the steps run; the time from the first slice read to the
  // last written.
  double computeStreamed(RunContext &context, StreamSlices &slices) override;

protected:
  // Enqueues the whole computation on `stream`; the device arrays are `device<T>(index)` in
  // ProgramInfo::arrays order.
  virtual void run(const RunContext &context, cudaStream_t stream) = 0;
  // Work that belongs outside the timed region (workspace allocation, capturing a graph); called at
  // the end of every upload, with the device arrays in place.
  virtual void prepare(const RunContext &context, cudaStream_t stream) {
    (void)context;
    (void)stream;
  }

  template <typename T> T *device(unsigned arrayIndex) const { return polyc_buffers[arrayIndex].as<T>(); }

  // During computeStreamed: what a streamed build's loop calls around each step.
  StepHooks *polyc_steps = nullptr;

private:
  void ensureStream();
  // Created on the first upload, not in the constructor: a program constructs its Compute before
  // runMain, which turns CUDA errors into messages only from upload on (and --help needs no GPU).
  // Named in polyc's reserved namespace, as OpenCLCompute's are: a program's constant `timer` is
  // spelled timer_.
  std::unique_ptr<Stream> polyc_stream;
  std::unique_ptr<EventTimer> polyc_timer;
  std::vector<DeviceBuffer> polyc_buffers;
};

} // namespace polyc::rt::cuda
