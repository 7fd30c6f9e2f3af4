// Slice-at-a-time reading and writing of arrays (see polyc/Slices.h): FIFOs and devices through read(2) and
// write(2) in order; regular .npy files at each slice's offset, large slices in parallel parts; PNG folders
// one picture per slice; arrays in memory.
#include "polyc/Slices.h"

#include "polyc/Png.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace polyc::rt {

namespace {

// product(shape[1:]) * dtypeSize(dtype); false when it does not fit (possible only when shape[0] is 0,
// otherwise the whole array's size would not fit either).
bool sliceSize(DType dtype, const std::vector<int64_t> &shape, size_t &bytes) {
  uint64_t size = dtypeSize(dtype);
  bool overflow = false;
  for (size_t d = 1; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      bytes = 0;
      return true;
    }
    overflow = overflow || __builtin_mul_overflow(size, uint64_t(shape[d]), &size);
  }
  bytes = size_t(size);
  return !overflow && size <= uint64_t(SIZE_MAX);
}

int64_t sliceCount(const std::vector<int64_t> &shape) { return shape.empty() ? 0 : shape[0]; }

std::string typeAndShape(DType dtype, const std::vector<int64_t> &shape) {
  return "the shape " + npyShapeText(shape) + " of " + dtypeName(dtype);
}

std::string sliceOf(int64_t index, const std::vector<int64_t> &shape) {
  return "slice " + std::to_string(index) + " of " + std::to_string(sliceCount(shape));
}

Status noSliceLeft(const std::string &name, const std::vector<int64_t> &shape) {
  return Status::failure(name + ": no slice left: all " + std::to_string(sliceCount(shape)) +
                         " slices were read");
}

int openRetrying(const std::string &path, int flags) {
  int fd;
  do
    fd = ::open(path.c_str(), flags | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  return fd;
}

// One thread copies between the page cache and memory at about 7 GB/s, slower than a GPU consumes or makes
// 1080p frames (an H100's optical flow reads 8 MB and writes 17 MB a frame in 1.2 ms): slices of at least
// ParallelBytes of a regular file are moved in ParallelParts parts at once.
constexpr size_t ParallelBytes = size_t(1) << 22, ParallelParts = 4;

// Runs `move(at, size)` over [0, size) of a slice, in parts on threads of their own when it is large; each
// part returns 0 or an errno. False (errno set to the first part's) when a part failed.
bool inParts(size_t size, const std::function<int(size_t, size_t)> &move) {
  const size_t parts = size >= ParallelBytes ? ParallelParts : 1, part = (size + parts - 1) / parts;
  std::vector<int> errors(parts, 0);
  auto run = [&](size_t k) {
    size_t begin = std::min(size, k * part);
    errors[k] = move(begin, std::min(size, begin + part) - begin);
  };
  std::vector<std::thread> helpers;
  for (size_t k = 1; k < parts; ++k)
    helpers.emplace_back(run, k);
  run(0);
  for (std::thread &helper : helpers)
    helper.join();
  for (int error : errors)
    if (error) {
      errno = error;
      return false;
    }
  return true;
}

// pread or pwrite of `size` bytes at `offset` of the file, whole; 0 or an errno (EIO for a file that
// ended first).
template <typename Transfer, typename Byte>
int transferAt(Transfer transfer, int fd, Byte *data, size_t size, off_t offset) {
  for (size_t done = 0; done < size;) {
    ssize_t n = transfer(fd, data + done, size - done, offset + off_t(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    done += size_t(n);
  }
  return 0;
}

// Reads up to `size` bytes, fewer only at the end of the file; false (errno set) on an error.
bool readFully(int fd, unsigned char *data, size_t size, size_t &got) {
  got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, data + got, size - got);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (n == 0)
      break;
    got += size_t(n);
  }
  return true;
}

// Appends to `bytes` what the file has left; false (errno set) on an error. Grows as data arrives, so a
// short file costs little whatever it claims.
bool readToEnd(int fd, std::vector<unsigned char> &bytes) {
  constexpr size_t kChunk = 1 << 16;
  while (true) {
    size_t old = bytes.size(), got;
    bytes.resize(old + kChunk);
    bool ok = readFully(fd, bytes.data() + old, kChunk, got);
    bytes.resize(old + got);
    if (!ok)
      return false;
    if (got < kChunk)
      return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Readers

class MemoryReader : public SliceReader {
public:
  // Serves `bytes`, or `owned` when that is not empty.
  MemoryReader(DType dtype, std::vector<int64_t> shape, size_t sliceBytes, const unsigned char *bytes,
               std::vector<unsigned char> owned, std::string name)
      : SliceReader(dtype, std::move(shape), sliceBytes), owned_(std::move(owned)),
        bytes_(owned_.empty() ? bytes : owned_.data()), name_(std::move(name)) {}

  Status readNext(unsigned char *destination) override {
    if (next_ >= sliceCount(shape()))
      return noSliceLeft(name_, shape());
    if (sliceBytes())
      std::memcpy(destination, bytes_ + size_t(next_) * sliceBytes(), sliceBytes());
    ++next_;
    return Status::success();
  }

private:
  std::vector<unsigned char> owned_; // a Fortran-order file, converted
  const unsigned char *bytes_;
  std::string name_;
  int64_t next_ = 0;
};

class NpyFileReader : public SliceReader {
public:
  NpyFileReader(std::string path, int fd, NpyHeader header, size_t sliceBytes, bool regular)
      : SliceReader(header.dtype, header.shape, sliceBytes), path_(std::move(path)), fd_(fd),
        header_(std::move(header)), regular_(regular) {}
  ~NpyFileReader() override { ::close(fd_); }

  Status readNext(unsigned char *destination) override {
    if (!failure_)
      return failure_; // the stream's position is unknown after a failure
    if (next_ >= sliceCount(shape()))
      return noSliceLeft(path_, shape());
    failure_ = readSlice(destination);
    return failure_;
  }

  // Trailing bytes of a regular file: checked by size, since reading past the data would block on a FIFO.
  Status checkTrailingBytes() const {
    if (!regular_)
      return Status::success();
    struct stat info;
    if (::fstat(fd_, &info) != 0)
      return Status::failure(path_ + ": cannot read: " + std::strerror(errno));
    uint64_t size = uint64_t(info.st_size);
    return checkNpyDataSize(header_, size > header_.dataOffset ? size - header_.dataOffset : 0, path_);
  }

private:
  Status readSlice(unsigned char *destination) {
    size_t got;
    if (!(regular_ ? readAt(destination, got) : readFully(fd_, destination, sliceBytes(), got)))
      return Status::failure(path_ + ": cannot read " + sliceOf(next_, shape()) + ": " +
                             std::strerror(errno));
    if (got < sliceBytes())
      return Status::failure(path_ + ": truncated data: " + sliceOf(next_, shape()) + " has only " +
                             std::to_string(got) + " of its " + std::to_string(sliceBytes()) + " bytes (" +
                             typeAndShape(dtype(), shape()) + " needs " + std::to_string(header_.byteCount) +
                             " bytes of data)");
    if (header_.bigEndian) {
      size_t elementSize = dtypeSize(dtype());
      for (size_t offset = 0; offset < got; offset += elementSize)
        std::reverse(destination + offset, destination + offset + elementSize);
    }
    if (++next_ == sliceCount(shape()))
      return checkTrailingBytes();
    return Status::success();
  }

  // A regular file's slice, at its offset (in parts when large: inParts); `got` is what the file has of it.
  bool readAt(unsigned char *destination, size_t &got) {
    const uint64_t offset = header_.dataOffset + uint64_t(next_) * sliceBytes();
    struct stat info;
    if (::fstat(fd_, &info) != 0)
      return false;
    uint64_t size = uint64_t(info.st_size);
    got = size <= offset ? 0 : size_t(std::min<uint64_t>(size - offset, sliceBytes()));
    return inParts(got, [&](size_t at, size_t bytes) {
      return transferAt(::pread, fd_, destination + at, bytes, off_t(offset + at));
    });
  }

  std::string path_;
  int fd_;
  NpyHeader header_;
  bool regular_;
  int64_t next_ = 0;
  Status failure_;
};

class PngFolderReader : public SliceReader {
public:
  PngFolderReader(DType dtype, std::string folder, std::vector<std::string> names, GreyImage first)
      : SliceReader(dtype, {int64_t(names.size()), first.height, first.width},
                    first.pixels.size() * dtypeSize(dtype)),
        folder_(std::move(folder)), names_(std::move(names)), first_(std::move(first)) {}

  Status readNext(unsigned char *destination) override {
    if (!failure_)
      return failure_;
    if (next_ >= sliceCount(shape()))
      return noSliceLeft(folder_, shape());
    if (next_ == 0) {
      greyLevelBytes(first_, dtype(), destination);
      first_ = GreyImage(); // decoded by openSliceReader for the size; not needed again
    } else {
      Result<GreyImage> image = loadPngFrame(folder_, names_, size_t(next_), shape()[1], shape()[2]);
      if (!image)
        return failure_ = Status::failure(image.message());
      greyLevelBytes(image.value(), dtype(), destination);
    }
    ++next_;
    return Status::success();
  }

private:
  std::string folder_;
  std::vector<std::string> names_;
  GreyImage first_;
  int64_t next_ = 0;
  Status failure_;
};

Result<std::unique_ptr<SliceReader>> openPngFolder(const std::string &folder, DType dtype) {
  using R = Result<std::unique_ptr<SliceReader>>;
  Result<std::vector<std::string>> names = listPngFrames(folder, dtype);
  if (!names)
    return R::failure(names.message());
  Result<GreyImage> first = loadPngFrame(folder, names.value(), 0);
  if (!first)
    return R::failure(first.message());
  return R::success(
      std::make_unique<PngFolderReader>(dtype, folder, std::move(names.value()), std::move(first.value())));
}

Result<std::unique_ptr<SliceReader>> openNpyFile(const std::string &path) {
  using R = Result<std::unique_ptr<SliceReader>>;
  int fd = openRetrying(path, O_RDONLY);
  if (fd < 0)
    return R::failure(path + ": cannot open: " + std::strerror(errno));
  auto fail = [&](std::string message) {
    ::close(fd);
    return R::failure(std::move(message));
  };
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return fail(path + ": cannot open: " + std::strerror(errno));
  bool regular = S_ISREG(info.st_mode);

  // Exactly the prefix and header, a piece at a time as npyHeaderSize learns their length, so that not
  // a byte of the data is consumed; a short file stops early and parseNpyHeader says what is missing.
  std::vector<unsigned char> header;
  while (true) {
    size_t need = npyHeaderSize(header.data(), header.size());
    if (need <= header.size())
      break;
    size_t old = header.size(), want = std::min<size_t>(need - old, 1 << 16), got;
    header.resize(old + want);
    if (!readFully(fd, header.data() + old, want, got))
      return fail(path + ": cannot read: " + std::strerror(errno));
    header.resize(old + got);
    if (got < want)
      break;
  }
  Result<NpyHeader> parsed = parseNpyHeader(header.data(), header.size(), path);
  if (!parsed)
    return fail(parsed.message());
  NpyHeader &npy = parsed.value();
  if (npy.shape.empty())
    return fail(path + ": a scalar (shape ()) has no slices to read");
  size_t sliceBytes;
  if (!sliceSize(npy.dtype, npy.shape, sliceBytes))
    return fail(path + ": a slice of " + typeAndShape(npy.dtype, npy.shape) + " is too large");

  if (npy.fortranOrder && npy.shape.size() > 1) {
    // Slice k is scattered over the whole file: read it all and convert it, as loadNpy does.
    if (!readToEnd(fd, header))
      return fail(path + ": cannot read: " + std::strerror(errno));
    ::close(fd);
    Result<NpyArray> array = parseNpy(header.data(), header.size(), path);
    if (!array)
      return R::failure(array.message());
    return R::success(std::make_unique<MemoryReader>(npy.dtype, npy.shape, sliceBytes, nullptr,
                                                     std::move(array.value().bytes), path));
  }

  auto reader = std::make_unique<NpyFileReader>(path, fd, npy, sliceBytes, regular);
  // No readNext will look for trailing bytes when there are no slices.
  if (npy.shape[0] == 0)
    if (Status trailing = reader->checkTrailingBytes(); !trailing)
      return R::failure(trailing.message());
  return R::success(std::move(reader));
}

// ---------------------------------------------------------------------------------------------
// Writers

class MemoryWriter : public SliceWriter {
public:
  MemoryWriter(std::vector<int64_t> shape, size_t sliceBytes, unsigned char *bytes)
      : shape_(std::move(shape)), sliceBytes_(sliceBytes), bytes_(bytes) {}

  Status writeNext(const unsigned char *source) override {
    if (next_ >= sliceCount(shape_))
      return Status::failure("memory array: cannot write slice " + std::to_string(next_) + ": all " +
                             std::to_string(sliceCount(shape_)) + " slices were already written");
    if (sliceBytes_)
      std::memcpy(bytes_ + size_t(next_) * sliceBytes_, source, sliceBytes_);
    ++next_;
    return Status::success();
  }

  Status commit() override {
    if (next_ < sliceCount(shape_))
      return Status::failure("memory array: only " + std::to_string(next_) + " of " +
                             std::to_string(sliceCount(shape_)) + " slices were written");
    return Status::success();
  }

private:
  std::vector<int64_t> shape_;
  size_t sliceBytes_;
  unsigned char *bytes_;
  int64_t next_ = 0;
};

class NpyFileWriter : public SliceWriter {
public:
  // `file` is a temporary file beside `path`, or, when `direct`, `path` itself (a FIFO or a device).
  NpyFileWriter(std::string path, TemporaryFile file, bool direct, std::vector<int64_t> shape,
                size_t sliceBytes, size_t dataOffset)
      : path_(std::move(path)), file_(std::move(file)), direct_(direct), shape_(std::move(shape)),
        sliceBytes_(sliceBytes), dataOffset_(dataOffset) {}
  ~NpyFileWriter() override {
    if (!direct_)
      abandonTemporaryFile(file_);
    else if (file_.fd >= 0)
      ::close(file_.fd);
  }
  int fd() const { return file_.fd; }

  Status writeNext(const unsigned char *source) override {
    if (finished_)
      return Status::failure(path_ + ": cannot write after commit()");
    if (!failure_)
      return failure_;
    if (next_ >= sliceCount(shape_))
      return Status::failure(path_ + ": cannot write slice " + std::to_string(next_) + ": all " +
                             std::to_string(sliceCount(shape_)) + " slices were already written");
    if (!(direct_ ? writeFully(file_.fd, source, sliceBytes_) : writeAt(source)))
      return failure_ = Status::failure(path_ + ": cannot write " + sliceOf(next_, shape_) + ": " +
                                        std::strerror(errno));
    ++next_;
    return Status::success();
  }

  Status commit() override {
    if (finished_)
      return Status::failure(path_ + ": commit() was already called");
    if (!failure_)
      return failure_;
    if (next_ < sliceCount(shape_))
      return Status::failure(path_ + ": only " + std::to_string(next_) + " of " +
                             std::to_string(sliceCount(shape_)) + " slices were written");
    finished_ = true;
    if (!direct_)
      return commitTemporaryFile(file_, path_);
    int fd = file_.fd;
    file_.fd = -1;
    if (::close(fd) != 0)
      return Status::failure(path_ + ": cannot close: " + std::strerror(errno));
    return Status::success();
  }

private:
  // A slice of the temporary file at its offset, in parts when large (inParts).
  bool writeAt(const unsigned char *source) {
    const uint64_t offset = dataOffset_ + uint64_t(next_) * sliceBytes_;
    return inParts(sliceBytes_, [&](size_t at, size_t bytes) {
      return transferAt(::pwrite, file_.fd, source + at, bytes, off_t(offset + at));
    });
  }

  std::string path_;
  TemporaryFile file_;
  bool direct_;
  std::vector<int64_t> shape_;
  size_t sliceBytes_;
  size_t dataOffset_; // the header's bytes
  int64_t next_ = 0;
  bool finished_ = false;
  Status failure_;
};

} // namespace

Result<std::unique_ptr<SliceReader>> openSliceReader(const std::string &path, DType pngType) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    return openPngFolder(path, pngType);
  return openNpyFile(path);
}

SliceWriter::~SliceWriter() = default;

Result<std::unique_ptr<SliceWriter>> openSliceWriter(const std::string &path, DType dtype,
                                                     const std::vector<int64_t> &shape) {
  using R = Result<std::unique_ptr<SliceWriter>>;
  if (shape.empty())
    return R::failure(path + ": a scalar (shape ()) cannot be written by slices");
  Result<uint64_t> total = npyDataBytes(dtype, shape);
  if (!total)
    return R::failure(path + ": " + total.message());
  size_t sliceBytes;
  if (!sliceSize(dtype, shape, sliceBytes))
    return R::failure(path + ": a slice of " + typeAndShape(dtype, shape) + " is too large");

  bool direct = writtenInPlace(path);
  TemporaryFile file;
  if (direct) {
    file.fd = openRetrying(path, O_WRONLY);
    if (file.fd < 0)
      return R::failure(path + ": cannot open: " + std::strerror(errno));
  } else {
    Result<TemporaryFile> created = createTemporaryBeside(path);
    if (!created)
      return R::failure(created.message());
    file = std::move(created.value());
  }
  std::vector<unsigned char> header = npyHeaderBytes(dtype, shape);
  auto writer =
      std::make_unique<NpyFileWriter>(path, std::move(file), direct, shape, sliceBytes, header.size());
  if (!writeFully(writer->fd(), header.data(), header.size()))
    return R::failure(path + ": cannot write: " + std::strerror(errno)); // the writer removes its file
  return R::success(std::move(writer));
}

std::unique_ptr<SliceReader> memorySliceReader(DType dtype, std::vector<int64_t> shape,
                                               const unsigned char *bytes) {
  size_t sliceBytes = 0;
  if (!sliceSize(dtype, shape, sliceBytes))
    sliceBytes = 0; // only with shape[0] == 0: no slice is ever served
  return std::make_unique<MemoryReader>(dtype, std::move(shape), sliceBytes, bytes,
                                        std::vector<unsigned char>(), "memory array");
}

std::unique_ptr<SliceWriter> memorySliceWriter(DType dtype, std::vector<int64_t> shape,
                                               unsigned char *bytes) {
  size_t sliceBytes = 0;
  if (!sliceSize(dtype, shape, sliceBytes))
    sliceBytes = 0;
  return std::make_unique<MemoryWriter>(std::move(shape), sliceBytes, bytes);
}

} // namespace polyc::rt
