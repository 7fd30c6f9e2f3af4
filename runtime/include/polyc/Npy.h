// .npy file I/O for generated programs: a strict reader (versions 1.0, 2.0, 3.0; f32/f64/i32 in
// either byte order; C or Fortran order) that returns native little-endian C-order data or a message,
// and an atomic writer (temporary file in the same folder, then rename).
#pragma once

#include "polyc/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace polyc::rt {

// A value or a message saying what went wrong; nothing in the .npy code throws or aborts on bad bytes.
template <typename T> class Result {
public:
  static Result success(T value) {
    Result result;
    result.ok_ = true;
    result.value_ = std::move(value);
    return result;
  }
  static Result failure(std::string message) {
    Result result;
    result.ok_ = false;
    result.message_ = std::move(message);
    return result;
  }
  explicit operator bool() const { return ok_; }
  T &value() { return value_; }
  const T &value() const { return value_; }
  const std::string &message() const { return message_; }

private:
  bool ok_ = false;
  T value_{};
  std::string message_;
};

// Success or a message, for operations without a value.
class Status {
public:
  static Status success() { return Status(); }
  static Status failure(std::string message) {
    Status status;
    status.ok_ = false;
    status.message_ = std::move(message);
    return status;
  }
  explicit operator bool() const { return ok_; }
  const std::string &message() const { return message_; }

private:
  bool ok_ = true;
  std::string message_;
};

// An array as read from a .npy file: always native (little-endian) byte order and C (row-major) order,
// whatever the file's byte order and fortran_order were.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // empty: a scalar
  std::vector<unsigned char> bytes;
  int64_t elementCount() const;
};

// The bytes per element of a dtype, its numpy name ("float32") and its little-endian descr ("<f4").
size_t dtypeSize(DType dtype);
const char *dtypeName(DType dtype);
const char *dtypeDescr(DType dtype);

// The largest rank a file may declare (numpy 2's limit).
constexpr size_t kNpyMaxRank = 64;

// What a .npy file's prefix and header say about its data.
struct NpyHeader {
  DType dtype = DType::F32;
  bool bigEndian = false;
  bool fortranOrder = false;
  std::vector<int64_t> shape; // empty: a scalar
  size_t dataOffset = 0;      // the data's first byte in the file: magic, version, length, header
  uint64_t byteCount = 0;     // product(shape) * dtypeSize(dtype)
};

// How many bytes the prefix and header take, as far as the first `size` bytes tell: at least 8 until
// the version is known, then the prefix, then prefix + header length. At most `size` for bytes that are
// not a supported .npy prefix, so that a reader of a pipe knows how much to read before parseNpyHeader.
size_t npyHeaderSize(const unsigned char *data, size_t size);

// Parses and checks the prefix and header (every check parseNpy makes except the data's size); bytes
// after the header are ignored. Messages start with `name`.
Result<NpyHeader> parseNpyHeader(const unsigned char *data, size_t size, const std::string &name);

// "NAME: truncated data: ..." or "NAME: trailing bytes: ..." unless `available` (the bytes after the
// header) is the header's byteCount.
Status checkNpyDataSize(const NpyHeader &header, uint64_t available, const std::string &name);

// numpy's spelling of a shape: (), (3,), (2, 3).
std::string npyShapeText(const std::vector<int64_t> &shape);

// Parses a whole .npy file held in memory. `name` (usually the path) is used in messages:
// "x.npy: truncated data: ...". Every check of the format is done here; it never reads outside
// [data, data + size).
Result<NpyArray> parseNpy(const unsigned char *data, size_t size, const std::string &name);

// Reads and parses the file at `path`.
Result<NpyArray> loadNpy(const std::string &path);

// The whole contents of the file at `path`, or "PATH: cannot open: ..." / "PATH: cannot read: ...".
Result<std::vector<unsigned char>> readWholeFile(const std::string &path);

// product(shape) * dtypeSize(dtype) (0 when an extent is 0), or "cannot write a negative extent -1" /
// "the shape (...) is too large".
Result<uint64_t> npyDataBytes(DType dtype, const std::vector<int64_t> &shape);

// The prefix and header of a .npy file (version 1.0, or 2.0 when the header needs more than 65535
// bytes) for C-order little-endian data of `dtype` and `shape`, padded so the data starts at a multiple
// of 64 bytes. The shape must pass npyDataBytes.
std::vector<unsigned char> npyHeaderBytes(DType dtype, const std::vector<int64_t> &shape);

// The complete bytes of a .npy file (version 1.0, or 2.0 when the header needs more than 65535
// bytes) for native C-order data of `dtype` and `shape`; `bytes` must hold exactly
// product(shape) * dtypeSize(dtype) bytes.
Result<std::vector<unsigned char>> encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                                             const unsigned char *bytes, size_t byteCount);

// Writes encodeNpy's bytes to a temporary file beside `path`, then renames it over `path`, so a
// reader never sees a half-written file and a failure leaves no file behind.
Status saveNpy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
               const unsigned char *bytes, size_t byteCount);

// Whether `path` is a named pipe or a device (/dev/null): written in place, since a file renamed onto it
// would replace it.
bool writtenInPlace(const std::string &path);

// Writes all of `size` bytes to `fd`; false (errno set) on an error. A pipe whose reader went away fails
// with EPIPE instead of killing the program with SIGPIPE.
bool writeFully(int fd, const unsigned char *data, size_t size);

// Writes `contents` to `path` atomically (temporary file in the same folder, fsync, rename); a named pipe
// or a device (/dev/null) is written in place.
Status writeFileAtomically(const std::string &path, const std::vector<unsigned char> &contents);

// A file beside `path` that becomes `path` when committed: named as `path` cut to fit 255 bytes +
// ".tmp-XXXXXX", mode 0644, open for writing.
struct TemporaryFile {
  int fd = -1;
  std::string path;
};
Result<TemporaryFile> createTemporaryBeside(const std::string &path);
// Flushes `file` to disk, closes it and renames it onto `path`; on failure it is removed. Either way
// `file.fd` is -1 afterwards.
Status commitTemporaryFile(TemporaryFile &file, const std::string &path);
// Closes and removes `file` (a failed or abandoned write); nothing when already closed.
void abandonTemporaryFile(TemporaryFile &file);

} // namespace polyc::rt
