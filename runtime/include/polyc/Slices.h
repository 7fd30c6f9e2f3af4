// Arrays streamed one slice (one index of dimension 0, e.g. one frame of a [T, H, W] video) at a time, for
// `--stream` executables: inputs are read as their slices arrive (a .npy file or FIFO, a folder of PNG
// frames) and outputs written as each slice is computed, so neither needs the whole array in memory.
#pragma once

#include "polyc/Npy.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace polyc::rt {

// An array read one slice (one index of dimension 0) at a time, in order: slice 0, then 1, ...
class SliceReader {
public:
  virtual ~SliceReader() = default;
  DType dtype() const { return dtype_; } // as stored (npy) or as requested (PNG)
  // The whole array's shape; shape()[0] slices (rank >= 1).
  const std::vector<int64_t> &shape() const { return shape_; }
  size_t sliceBytes() const { return sliceBytes_; } // product(shape[1:]) * dtypeSize(dtype)
  // Reads the next slice into `destination` (sliceBytes() bytes), native little-endian, C order.
  // Fails with "PATH: truncated data: slice K of N ..." etc. (K counts from 0); after the last slice, a
  // further call fails.
  virtual Status readNext(unsigned char *destination) = 0;

protected:
  SliceReader(DType dtype, std::vector<int64_t> shape, size_t sliceBytes)
      : dtype_(dtype), shape_(std::move(shape)), sliceBytes_(sliceBytes) {}

private:
  DType dtype_;
  std::vector<int64_t> shape_;
  size_t sliceBytes_;
};

// `path` is a .npy file or a folder of PNG frames (as loadPngFrames reads: *.png in name order, grey levels,
// `pngType` f32 or f64). Only the header (npy) or the listing and the first picture (PNG) are read here;
// each readNext reads one slice, so a named pipe (FIFO) works for .npy: the data is read sequentially with
// read(2), never seeked. Big-endian data is byte-swapped per slice. A Fortran-order file of rank > 1 cannot
// be read by slices: it is read whole here and served from memory. Rank 0 fails.
// For PNG: a picture whose size differs from the first fails at its readNext, naming the file.
// Trailing bytes after the last slice of a regular .npy file fail at the last readNext ("trailing bytes").
Result<std::unique_ptr<SliceReader>> openSliceReader(const std::string &path, DType pngType);

// An output written one slice at a time.
class SliceWriter {
public:
  virtual ~SliceWriter(); // without commit(): removes the temporary file (a failed run leaves no file)
  // Appends the next slice (sliceBytes of the shape) and writes it to the file at once (write(2), so a
  // reader of a FIFO gets it now; no fsync per slice).
  virtual Status writeNext(const unsigned char *source) = 0;
  // After the last slice (fails if fewer than shape[0] were written): for a regular path, fsync and rename
  // the temporary file onto the path (as writeFileAtomically does); for a FIFO or character device, close it.
  virtual Status commit() = 0;
};

// Writes the .npy header (npyHeaderBytes: the bytes encodeNpy writes before the data) for `dtype` and
// `shape` at once. A regular path (or one that does not exist yet) is written to a temporary file beside it
// (createTemporaryBeside); a path that is a FIFO or a character device (/dev/null) is opened and written
// directly (opening a FIFO waits for its reader). Rank 0 fails.
Result<std::unique_ptr<SliceWriter>> openSliceWriter(const std::string &path, DType dtype,
                                                     const std::vector<int64_t> &shape);

// Serves slices of whole arrays in memory (for the C interface of generated programs and for tests).
// `bytes` (product(shape) * dtypeSize bytes, rank >= 1) must outlive the reader.
std::unique_ptr<SliceReader> memorySliceReader(DType dtype, std::vector<int64_t> shape,
                                               const unsigned char *bytes);
// Writes slices into `bytes` (product(shape) * dtypeSize bytes, owned by the caller); commit() checks the
// count.
std::unique_ptr<SliceWriter> memorySliceWriter(DType dtype, std::vector<int64_t> shape, unsigned char *bytes);

} // namespace polyc::rt
