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

// Parses a whole .npy file held in memory. `name` (usually the path) is used in messages:
// "x.npy: truncated data: ...". Every check of the format is done here; it never reads outside
// [data, data + size).
Result<NpyArray> parseNpy(const unsigned char *data, size_t size, const std::string &name);

// Reads and parses the file at `path`.
Result<NpyArray> loadNpy(const std::string &path);

// The whole contents of the file at `path`, or "PATH: cannot open: ..." / "PATH: cannot read: ...".
Result<std::vector<unsigned char>> readWholeFile(const std::string &path);

// The complete bytes of a .npy file (version 1.0, or 2.0 when the header needs more than 65535
// bytes) for native C-order data of `dtype` and `shape`; `bytes` must hold exactly
// product(shape) * dtypeSize(dtype) bytes.
Result<std::vector<unsigned char>> encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                                             const unsigned char *bytes, size_t byteCount);

// Writes encodeNpy's bytes to a temporary file beside `path`, then renames it over `path`, so a
// reader never sees a half-written file and a failure leaves no file behind.
Status saveNpy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
               const unsigned char *bytes, size_t byteCount);

// Writes `contents` to `path` atomically (temporary file in the same folder, fsync, rename).
Status writeFileAtomically(const std::string &path, const std::vector<unsigned char> &contents);

} // namespace polyc::rt
