// The upload / timed compute / download cycle shared by every generated CUDA program.
#include "polyc/cuda/CudaCompute.h"

namespace polyc::rt::cuda {

void CudaCompute::ensureStream() {
  if (!polyc_stream) {
    polyc_stream = std::make_unique<Stream>();
    polyc_timer = std::make_unique<EventTimer>();
  }
}

void CudaCompute::upload(RunContext &context) {
  ensureStream();
  polyc_buffers.resize(context.arrays.size());
  for (size_t index = 0; index < context.arrays.size(); ++index) {
    HostArray &array = context.arrays[index];
    polyc_buffers[index].resize(array.bytes.size());
    if (array.spec->role == ArrayRole::Output) {
      // Outputs are not read before they are written; a poison fill makes an element the
      // kernels forgot visible (NaN for floats) instead of a plausible stale value.
      polyc_buffers[index].fill(0xff, polyc_stream->get());
      continue;
    }
    polyc_buffers[index].upload(array.bytes.data(), array.bytes.size(), polyc_stream->get());
  }
  prepare(context, polyc_stream->get());
  polyc_stream->synchronize();
}

double CudaCompute::compute(RunContext &context) {
  polyc_timer->start(polyc_stream->get());
  run(context, polyc_stream->get());
  return polyc_timer->stop(polyc_stream->get());
}

void CudaCompute::download(RunContext &context) {
  if (!polyc_stream)
    return;
  for (size_t index = 0; index < context.arrays.size(); ++index) {
    HostArray &array = context.arrays[index];
    if (array.spec->role == ArrayRole::Input || array.spec->streamSlots > 0)
      continue;
    polyc_buffers[index].download(array.bytes.data(), array.bytes.size(), polyc_stream->get());
  }
  polyc_stream->synchronize();
}

} // namespace polyc::rt::cuda
