// Streamed runs (polyc build --stream): the arrays that a program reads or writes one slice per step of
// its outer sequential loop (ArraySpec::streamSlots) live in rings of slices. The generated loop calls
// StepHooks::beforeStep(t) and afterStep(t) around each step; the hooks read slice t of each streamed
// input into its ring before the step and write slice t of each streamed output after it, from files
// (runMain) or from the whole arrays of the C interface. HostRings are the CPU target's hooks; the CUDA
// target's overlap the transfers with the steps (cuda/CudaCompute.h).
#pragma once

#include "polyc/Runtime.h"
#include "polyc/Slices.h"

#include <memory>
#include <stdexcept>
#include <vector>

namespace polyc::rt {

class StepHooks {
public:
  virtual ~StepHooks() = default;
  virtual void beforeStep(int64_t step) = 0;
  virtual void afterStep(int64_t step) = 0;
};

// The sources and sinks of one streamed run, indexed like ProgramInfo::arrays: a reader for each streamed
// input, a writer for each streamed output that is written (null: computed, not written).
struct StreamSlices {
  std::vector<std::unique_ptr<SliceReader>> readers;
  std::vector<std::unique_ptr<SliceWriter>> writers;
};

// A slice that could not be read or written during a run (a truncated input file, a full disk): bad input,
// reported by runMain with exit status 2 and this message.
class SliceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Slices of the whole arrays in `context` (the C interface of a streamed build): readers over its streamed
// inputs' bytes, writers into its streamed outputs' bytes (which must be allocated).
StreamSlices memorySlices(RunContext &context);

// The CPU target's rings: host memory, filled and drained synchronously by the hooks.
class HostRings final : public StepHooks {
public:
  // A ring of `slots` slices of `reader`'s array; returns its storage, slot s at s * sliceBytes.
  template <typename T> T *input(std::unique_ptr<SliceReader> reader, int64_t slots) {
    int64_t sliceBytes = int64_t(reader->sliceBytes());
    return reinterpret_cast<T *>(add(std::move(reader), nullptr, slots, sliceBytes));
  }
  // A ring for an output, drained into `writer` (null: not written).
  template <typename T> T *output(std::unique_ptr<SliceWriter> writer, int64_t slots, int64_t sliceElements) {
    return reinterpret_cast<T *>(add(nullptr, std::move(writer), slots, sliceElements * int64_t(sizeof(T))));
  }
  void beforeStep(int64_t step) override;
  void afterStep(int64_t step) override;
  // After the last step: commits the writers (renames their files into place).
  void finish();

private:
  struct Ring {
    std::unique_ptr<SliceReader> reader;
    std::unique_ptr<SliceWriter> writer;
    int64_t slots = 0, sliceBytes = 0;
    std::vector<unsigned char> storage;
    unsigned char *slot(int64_t step) { return storage.data() + (step % slots) * sliceBytes; }
  };
  unsigned char *add(std::unique_ptr<SliceReader> reader, std::unique_ptr<SliceWriter> writer, int64_t slots,
                     int64_t sliceBytes);
  std::vector<Ring> rings_;
};

// The bytes of one slice of `spec`'s array with `shape` (the extents after the first, times the element
// size).
int64_t sliceBytesOf(const HostArray &array);

} // namespace polyc::rt
