// The upload / timed compute / download cycle shared by every generated CUDA program.
#include "polyc/cuda/CudaCompute.h"

namespace polyc::rt::cuda {

void CudaCompute::upload(RunContext &context) {
  if (!stream_) {
    stream_ = std::make_unique<Stream>();
    timer_ = std::make_unique<EventTimer>();
  }
  buffers_.resize(context.arrays.size());
  for (size_t index = 0; index < context.arrays.size(); ++index) {
    HostArray &array = context.arrays[index];
    buffers_[index].resize(array.bytes.size());
    if (array.spec->role == ArrayRole::Output) {
      // Outputs are not read before they are written; a poison fill makes an element the
      // kernels forgot visible (NaN for floats) instead of a plausible stale value.
      buffers_[index].fill(0xff, stream_->get());
      continue;
    }
    buffers_[index].upload(array.bytes.data(), array.bytes.size(), stream_->get());
  }
  prepare(context, stream_->get());
  stream_->synchronize();
}

double CudaCompute::compute(RunContext &context) {
  timer_->start(stream_->get());
  run(context, stream_->get());
  return timer_->stop(stream_->get());
}

void CudaCompute::download(RunContext &context) {
  if (!stream_)
    return;
  for (size_t index = 0; index < context.arrays.size(); ++index) {
    HostArray &array = context.arrays[index];
    if (array.spec->role == ArrayRole::Input)
      continue;
    buffers_[index].download(array.bytes.data(), array.bytes.size(), stream_->get());
  }
  stream_->synchronize();
}

} // namespace polyc::rt::cuda
