// Streamed runs: the slices of whole arrays in memory, and the CPU target's rings (see Stream.h).
#include "polyc/Stream.h"

#include "polyc/Npy.h"

#include <cstring>

namespace polyc::rt {

double Compute::computeStreamed(RunContext &, StreamSlices &) {
  throw std::logic_error("this program was not built with --stream");
}

int64_t sliceBytesOf(const HostArray &array) {
  int64_t bytes = int64_t(dtypeSize(array.spec->dtype));
  for (size_t d = 1; d < array.shape.size(); ++d)
    bytes *= array.shape[d];
  return bytes;
}

StreamSlices memorySlices(RunContext &context) {
  StreamSlices slices;
  slices.readers.resize(context.arrays.size());
  slices.writers.resize(context.arrays.size());
  for (size_t a = 0; a < context.arrays.size(); ++a) {
    HostArray &array = context.arrays[a];
    if (array.spec->streamSlots == 0)
      continue;
    if (array.spec->role == ArrayRole::Input)
      slices.readers[a] = memorySliceReader(array.spec->dtype, array.shape, array.bytes.data());
    else
      slices.writers[a] = memorySliceWriter(array.spec->dtype, array.shape, array.bytes.data());
  }
  return slices;
}

unsigned char *HostRings::add(std::unique_ptr<SliceReader> reader, std::unique_ptr<SliceWriter> writer,
                              int64_t slots, int64_t sliceBytes) {
  Ring ring;
  ring.reader = std::move(reader);
  ring.writer = std::move(writer);
  ring.slots = slots;
  ring.sliceBytes = sliceBytes;
  ring.storage.assign(size_t(slots * sliceBytes), 0);
  rings_.push_back(std::move(ring));
  return rings_.back().storage.data();
}

void HostRings::beforeStep(int64_t step) {
  for (Ring &ring : rings_)
    if (ring.reader)
      if (Status status = ring.reader->readNext(ring.slot(step)); !status)
        throw SliceError(status.message());
}

void HostRings::afterStep(int64_t step) {
  for (Ring &ring : rings_)
    if (ring.writer)
      if (Status status = ring.writer->writeNext(ring.slot(step)); !status)
        throw SliceError(status.message());
}

void HostRings::finish() {
  for (Ring &ring : rings_)
    if (ring.writer)
      if (Status status = ring.writer->commit(); !status)
        throw SliceError(status.message());
}

} // namespace polyc::rt
