// Unit tests of the slice readers and writers (runtime/src/Slices.cpp): every expected value comes from
// numbers the test writes itself (0, 1, 2, ...), in files built by hand, by saveNpy or through FIFOs fed
// and drained by a second thread in step with the slices.
#include "polyc/Png.h"
#include "polyc/Slices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "NpyBytes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace polyc::rt;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

using namespace polyc::rt::npytest;

template <typename T> std::vector<T> valuesOf(const Bytes &bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty())
    std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// 0, 1, 2, ... as T, shifted so that float types have a fraction.
template <typename T> std::vector<T> counting(size_t n) {
  std::vector<T> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = std::is_integral_v<T> ? T(i) - 3 : T(i) + T(0.25);
  return values;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

void writeBytes(const std::string &path, const Bytes &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

Bytes readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A write(2) loop for the test's own FIFO ends.
bool writeAll(int fd, const unsigned char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

// Joins a FIFO test's thread however the test ends: `release` unblocks it (and may return a descriptor
// to close after the join), so a failed assertion fails the test instead of std::terminate.
class Joiner {
public:
  Joiner(std::thread &thread, std::function<int()> release) : thread_(thread), release_(std::move(release)) {}
  ~Joiner() {
    if (!thread_.joinable())
      return;
    int fd = release_();
    thread_.join();
    if (fd >= 0)
      ::close(fd);
  }

private:
  std::thread &thread_;
  std::function<int()> release_;
};

// ---------------------------------------------------------------------------------------------
// PNG pictures: 8-bit grey, no filter, the image data in stored deflate blocks (as in kStored of
// PngTests.cpp), with the CRCs and Adler-32 computed here.

uint32_t crc32(const unsigned char *data, size_t size) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t k = 0; k < size; ++k) {
    c ^= data[k];
    for (int bit = 0; bit < 8; ++bit)
      c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

void putBigEndian32(Bytes &out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<unsigned char>(value >> shift));
}

void putChunk(Bytes &out, const char *type, const Bytes &body) {
  putBigEndian32(out, uint32_t(body.size()));
  Bytes typed(type, type + 4);
  typed.insert(typed.end(), body.begin(), body.end());
  out.insert(out.end(), typed.begin(), typed.end());
  putBigEndian32(out, crc32(typed.data(), typed.size()));
}

Bytes greyPng(uint32_t width, uint32_t height, const std::vector<uint8_t> &grey) {
  Bytes rows;
  for (uint32_t y = 0; y < height; ++y) {
    rows.push_back(0); // filter type None
    rows.insert(rows.end(), grey.begin() + y * width, grey.begin() + (y + 1) * width);
  }
  // zlib header (deflate, no dictionary), one final stored block: LEN, NLEN = ~LEN, the bytes.
  uint16_t length = uint16_t(rows.size()), complement = uint16_t(~length);
  Bytes zlib = {0x78, 0x01, 1};
  for (uint16_t field : {length, complement}) {
    zlib.push_back(static_cast<unsigned char>(field & 0xff));
    zlib.push_back(static_cast<unsigned char>(field >> 8));
  }
  for (unsigned char c : rows)
    zlib.push_back(c);
  uint32_t a = 1, b = 0;
  for (unsigned char c : rows) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  putBigEndian32(zlib, (b << 16) | a);

  Bytes png = {137, 80, 78, 71, 13, 10, 26, 10};
  Bytes header;
  putBigEndian32(header, width);
  putBigEndian32(header, height);
  header.insert(header.end(), {8, 0, 0, 0, 0}); // 8 bits, grey, deflate, filter 0, not interlaced
  putChunk(png, "IHDR", header);
  putChunk(png, "IDAT", zlib);
  putChunk(png, "IEND", {});
  return png;
}

class SliceFiles : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/polyc-slices-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    folder_ = pattern;
  }
  void TearDown() override { removeAll(folder_); }
  static void removeAll(const std::string &folder) {
    for (const std::string &name : entries(folder)) {
      std::string path = folder + "/" + name;
      struct stat info {};
      if (::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
        removeAll(path);
      else
        std::remove(path.c_str());
    }
    ::rmdir(folder.c_str());
  }
  static std::vector<std::string> entries(const std::string &folder) {
    std::vector<std::string> names;
    if (DIR *dir = ::opendir(folder.c_str())) {
      while (dirent *entry = ::readdir(dir))
        if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
          names.push_back(entry->d_name);
      ::closedir(dir);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::vector<std::string> entries() const { return entries(folder_); }
  std::string file(const std::string &name) const { return folder_ + "/" + name; }

  std::unique_ptr<SliceReader> open(const std::string &path, DType pngType = DType::F32) {
    Result<std::unique_ptr<SliceReader>> reader = openSliceReader(path, pngType);
    EXPECT_TRUE(reader) << reader.message();
    return reader ? std::move(reader.value()) : nullptr;
  }

  // saveNpy writes 0, 1, 2, ... of `shape`; the reader must give them back slice by slice.
  template <typename T> void readsSavedFile(DType dtype, const std::vector<int64_t> &shape) {
    SCOPED_TRACE(std::string(dtypeName(dtype)) + " " + npyShapeText(shape));
    std::vector<T> values = counting<T>(size_t(product(shape)));
    Bytes raw = littleEndian(values);
    std::string path = file("x.npy");
    ASSERT_TRUE(saveNpy(path, dtype, shape, raw.data(), raw.size()));
    std::unique_ptr<SliceReader> reader = open(path);
    ASSERT_TRUE(reader);
    EXPECT_EQ(reader->dtype(), dtype);
    EXPECT_EQ(reader->shape(), shape);
    size_t perSlice = size_t(product(std::vector<int64_t>(shape.begin() + 1, shape.end())));
    ASSERT_EQ(reader->sliceBytes(), perSlice * sizeof(T));
    for (int64_t k = 0; k < shape[0]; ++k) {
      Bytes slice(reader->sliceBytes() + 1, 0xAB); // one guard byte past the slice
      Status read = reader->readNext(slice.data());
      ASSERT_TRUE(read) << "slice " << k << ": " << read.message();
      EXPECT_EQ(slice.back(), 0xAB) << "wrote past the slice";
      slice.pop_back();
      std::vector<T> expected(values.begin() + k * perSlice, values.begin() + (k + 1) * perSlice);
      EXPECT_EQ(valuesOf<T>(slice), expected) << "slice " << k;
    }
    Bytes extra(reader->sliceBytes() + 1);
    Status past = reader->readNext(extra.data());
    ASSERT_FALSE(past);
    EXPECT_EQ(past.message(),
              path + ": no slice left: all " + std::to_string(shape[0]) + " slices were read");
  }

  std::string folder_;
};

TEST_F(SliceFiles, WriterRoundTripsThroughLoadNpy) {
  std::vector<int64_t> shape = {3, 2, 4};
  std::vector<float> values = counting<float>(24);
  Bytes raw = littleEndian(values);
  std::string path = file("y.npy");
  {
    Result<std::unique_ptr<SliceWriter>> writer = openSliceWriter(path, DType::F32, shape);
    ASSERT_TRUE(writer) << writer.message();
    for (size_t k = 0; k < 3; ++k) {
      Status wrote = writer.value()->writeNext(raw.data() + k * 32);
      ASSERT_TRUE(wrote) << wrote.message();
      EXPECT_FALSE(::access(path.c_str(), F_OK) == 0) << "the path appears only at commit";
    }
    Status committed = writer.value()->commit();
    ASSERT_TRUE(committed) << committed.message();
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"y.npy"}); // no temporary file left behind
  Result<NpyArray> loaded = loadNpy(path);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded.value().dtype, DType::F32);
  EXPECT_EQ(loaded.value().shape, shape);
  EXPECT_EQ(valuesOf<float>(loaded.value().bytes), values);
  // The same bytes as the whole-array writer's.
  ASSERT_TRUE(saveNpy(file("whole.npy"), DType::F32, shape, raw.data(), raw.size()));
  EXPECT_EQ(readBytes(path), readBytes(file("whole.npy")));
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST_F(SliceFiles, WriterOfZeroSlicesWritesTheHeaderOnly) {
  std::string path = file("empty.npy");
  Result<std::unique_ptr<SliceWriter>> writer = openSliceWriter(path, DType::F64, {0, 5});
  ASSERT_TRUE(writer) << writer.message();
  ASSERT_TRUE(writer.value()->commit());
  Result<NpyArray> loaded = loadNpy(path);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded.value().shape, (std::vector<int64_t>{0, 5}));
  EXPECT_TRUE(loaded.value().bytes.empty());
}

TEST_F(SliceFiles, ReaderGivesTheSlicesOfSavedFiles) {
  readsSavedFile<float>(DType::F32, {3, 2, 4});
  readsSavedFile<double>(DType::F64, {3, 2, 4});
  readsSavedFile<int32_t>(DType::I32, {3, 2, 4});
  readsSavedFile<float>(DType::F32, {7});
  readsSavedFile<double>(DType::F64, {5});
  readsSavedFile<int32_t>(DType::I32, {4, 3});
  readsSavedFile<float>(DType::F32, {0, 3, 4});  // no slices: the header only
  readsSavedFile<double>(DType::F64, {4, 0, 3}); // slices of 0 bytes
  readsSavedFile<int32_t>(DType::I32, {1, 1, 1});
}

TEST_F(SliceFiles, BigEndianIsSwappedPerSlice) {
  std::vector<float> values = counting<float>(6);
  std::string path = file("big.npy");
  writeBytes(path, makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (3, 2), }", bigEndian(values)));
  std::unique_ptr<SliceReader> reader = open(path);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->dtype(), DType::F32);
  for (size_t k = 0; k < 3; ++k) {
    Bytes slice(reader->sliceBytes());
    ASSERT_TRUE(reader->readNext(slice.data()));
    EXPECT_EQ(valuesOf<float>(slice), (std::vector<float>{values[2 * k], values[2 * k + 1]})) << k;
  }

  std::vector<double> doubles = counting<double>(4);
  writeBytes(path, makeNpy("{'descr': '>f8', 'fortran_order': False, 'shape': (4,), }", bigEndian(doubles)));
  reader = open(path);
  ASSERT_TRUE(reader);
  for (size_t k = 0; k < 4; ++k) {
    Bytes slice(reader->sliceBytes());
    ASSERT_TRUE(reader->readNext(slice.data()));
    EXPECT_EQ(valuesOf<double>(slice), std::vector<double>{doubles[k]});
  }
}

TEST_F(SliceFiles, FortranOrderIsServedInCOrder) {
  // C value (i, j) = 10 i + j, stored column by column.
  std::vector<int32_t> fortran;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i)
      fortran.push_back(10 * i + j);
  std::string path = file("f.npy");
  writeBytes(path,
             makeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", littleEndian(fortran)));
  std::unique_ptr<SliceReader> reader = open(path);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->shape(), (std::vector<int64_t>{2, 3}));
  Bytes slice(reader->sliceBytes());
  ASSERT_TRUE(reader->readNext(slice.data()));
  EXPECT_EQ(valuesOf<int32_t>(slice), (std::vector<int32_t>{0, 1, 2}));
  ASSERT_TRUE(reader->readNext(slice.data()));
  EXPECT_EQ(valuesOf<int32_t>(slice), (std::vector<int32_t>{10, 11, 12}));
  EXPECT_THAT(reader->readNext(slice.data()).message(), StartsWith(path + ": no slice left"));

  // A damaged Fortran-order file fails as loadNpy does, when opened.
  writeBytes(path, makeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                           littleEndian(std::vector<int32_t>{1, 2, 3})));
  Result<std::unique_ptr<SliceReader>> damaged = openSliceReader(path, DType::F32);
  ASSERT_FALSE(damaged);
  EXPECT_EQ(damaged.message(), loadNpy(path).message());
}

TEST_F(SliceFiles, TruncatedDataFailsAtItsSlice) {
  std::vector<float> values = counting<float>(12);
  Bytes raw = littleEndian(values);
  std::string path = file("t.npy");
  ASSERT_TRUE(saveNpy(path, DType::F32, {4, 3}, raw.data(), raw.size()));
  Bytes whole = readBytes(path);
  whole.resize(whole.size() - 5); // slice 3 has 7 of its 12 bytes
  writeBytes(path, whole);
  std::unique_ptr<SliceReader> reader = open(path);
  ASSERT_TRUE(reader);
  Bytes slice(reader->sliceBytes());
  for (int k = 0; k < 3; ++k)
    ASSERT_TRUE(reader->readNext(slice.data())) << k;
  Status last = reader->readNext(slice.data());
  ASSERT_FALSE(last);
  EXPECT_THAT(last.message(), StartsWith(path + ": truncated data: slice 3 of 4 has only 7 of its 12 bytes"));
  EXPECT_FALSE(reader->readNext(slice.data())); // and stays failed

  // Cut inside the header: the open fails with the message loadNpy gives.
  whole.resize(20);
  writeBytes(path, whole);
  Result<std::unique_ptr<SliceReader>> cut = openSliceReader(path, DType::F32);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.message(), loadNpy(path).message());
  EXPECT_THAT(cut.message(), StartsWith(path + ": truncated header"));
}

// Slices of 4 MiB and more are read in parallel parts: every part lands where it belongs, and a file cut
// inside such a slice fails at it like a small one.
TEST_F(SliceFiles, LargeSlicesAreReadInParts) {
  const int64_t width = (int64_t(1) << 20) + 7; // a little over 4 MiB of int32 a slice, parts of unequal end
  std::vector<int32_t> values = counting<int32_t>(size_t(3 * width));
  Bytes raw = littleEndian(values);
  std::string path = file("large.npy");
  ASSERT_TRUE(saveNpy(path, DType::I32, {3, width}, raw.data(), raw.size()));
  std::unique_ptr<SliceReader> reader = open(path);
  ASSERT_TRUE(reader);
  Bytes slice(reader->sliceBytes());
  for (int64_t k = 0; k < 3; ++k) {
    ASSERT_TRUE(reader->readNext(slice.data())) << k;
    std::vector<int32_t> got = valuesOf<int32_t>(slice);
    ASSERT_EQ(got.size(), size_t(width));
    for (int64_t i = 0; i < width; i += 4099)
      ASSERT_EQ(got[size_t(i)], values[size_t(k * width + i)]) << "slice " << k << ", element " << i;
    EXPECT_EQ(got.back(), values[size_t((k + 1) * width - 1)]);
  }

  // Written in parts likewise: the file holds every element in its place.
  std::string written = file("large-written.npy");
  {
    Result<std::unique_ptr<SliceWriter>> writer = openSliceWriter(written, DType::I32, {3, width});
    ASSERT_TRUE(writer);
    for (int64_t k = 0; k < 3; ++k)
      ASSERT_TRUE(writer.value()->writeNext(raw.data() + k * width * 4)) << k;
    ASSERT_TRUE(writer.value()->commit());
  }
  EXPECT_EQ(readBytes(written), readBytes(path));

  Bytes whole = readBytes(path);
  whole.resize(whole.size() - 8); // slice 2 lacks its last two elements
  writeBytes(path, whole);
  reader = open(path);
  ASSERT_TRUE(reader);
  ASSERT_TRUE(reader->readNext(slice.data()));
  ASSERT_TRUE(reader->readNext(slice.data()));
  Status last = reader->readNext(slice.data());
  ASSERT_FALSE(last);
  EXPECT_THAT(last.message(),
              StartsWith(path + ": truncated data: slice 2 of 3 has only " + std::to_string(4 * width - 8) +
                         " of its " + std::to_string(4 * width)));
}

TEST_F(SliceFiles, TrailingBytesFailAtTheLastSlice) {
  std::vector<int32_t> values = counting<int32_t>(6);
  std::string path = file("t.npy");
  Bytes bytes = makeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 2), }", littleEndian(values));
  bytes.insert(bytes.end(), {1, 2, 3});
  writeBytes(path, bytes);
  std::unique_ptr<SliceReader> reader = open(path);
  ASSERT_TRUE(reader);
  Bytes slice(reader->sliceBytes());
  ASSERT_TRUE(reader->readNext(slice.data()));
  ASSERT_TRUE(reader->readNext(slice.data()));
  Status last = reader->readNext(slice.data());
  ASSERT_FALSE(last);
  EXPECT_EQ(last.message(), loadNpy(path).message());
  EXPECT_THAT(last.message(), StartsWith(path + ": trailing bytes: "));
  EXPECT_THAT(last.message(), HasSubstr("(3 too many)"));

  // With no slices there is no last readNext: the open says so.
  writeBytes(path, makeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (0, 2), }", {9}));
  Result<std::unique_ptr<SliceReader>> empty = openSliceReader(path, DType::F32);
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.message(), StartsWith(path + ": trailing bytes: "));
}

TEST_F(SliceFiles, RefusesScalarsAndMissingFiles) {
  std::string path = file("s.npy");
  writeBytes(path,
             makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", littleEndian<double>({1.5})));
  Result<std::unique_ptr<SliceReader>> scalar = openSliceReader(path, DType::F32);
  ASSERT_FALSE(scalar);
  EXPECT_THAT(scalar.message(), StartsWith(path + ": a scalar"));
  Result<std::unique_ptr<SliceReader>> missing = openSliceReader(file("none.npy"), DType::F32);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.message(), file("none.npy") + ": cannot open: No such file or directory");
  Result<std::unique_ptr<SliceWriter>> scalarOut = openSliceWriter(file("o.npy"), DType::F32, {});
  ASSERT_FALSE(scalarOut);
  EXPECT_THAT(scalarOut.message(), StartsWith(file("o.npy") + ": a scalar"));
  EXPECT_TRUE(entries() == std::vector<std::string>{"s.npy"});
}

TEST_F(SliceFiles, ReadsAFifoSliceBySliceAsItArrives) {
  std::string path = file("in.fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const int64_t slices = 5, perSlice = 6;
  std::vector<double> values = counting<double>(size_t(slices * perSlice));
  Bytes header = makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (5, 2, 3), }", {});
  std::mutex mutex;
  std::condition_variable changed;
  int64_t consumed = 0;
  std::atomic<bool> inStep{true};
  // Writes slice k only once the reader has consumed slice k - 1: a reader that waited for more than a
  // slice would stall here (the timeout then lets the test fail instead of hanging).
  std::thread writer([&] {
    // Should the test stop reading early, a write fails with EPIPE instead of killing the test.
    sigset_t pipeSignal;
    sigemptyset(&pipeSignal);
    sigaddset(&pipeSignal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipeSignal, nullptr);
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0)
      return;
    writeAll(fd, header.data(), header.size());
    for (int64_t k = 0; k < slices; ++k) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (!changed.wait_for(lock, std::chrono::seconds(10), [&] { return consumed >= k; }))
          inStep = false;
      }
      writeAll(fd, reinterpret_cast<const unsigned char *>(values.data() + k * perSlice), perSlice * 8);
    }
    ::close(fd);
  });
  Joiner joiner(writer, [&] {
    std::lock_guard<std::mutex> lock(mutex);
    consumed = slices;
    changed.notify_all();
    return ::open(path.c_str(), O_RDONLY | O_NONBLOCK); // lets the writer's open return
  });
  Result<std::unique_ptr<SliceReader>> opened = openSliceReader(path, DType::F32);
  ASSERT_TRUE(opened) << opened.message();
  SliceReader &reader = *opened.value();
  EXPECT_EQ(reader.shape(), (std::vector<int64_t>{5, 2, 3}));
  for (int64_t k = 0; k < slices; ++k) {
    Bytes slice(reader.sliceBytes());
    Status read = reader.readNext(slice.data());
    ASSERT_TRUE(read) << read.message();
    EXPECT_EQ(valuesOf<double>(slice),
              std::vector<double>(values.begin() + k * perSlice, values.begin() + (k + 1) * perSlice));
    std::lock_guard<std::mutex> lock(mutex);
    consumed = k + 1;
    changed.notify_all();
  }
  writer.join();
  EXPECT_TRUE(inStep) << "the reader waited for more than one slice";
  Bytes extra(reader.sliceBytes());
  EXPECT_THAT(reader.readNext(extra.data()).message(), StartsWith(path + ": no slice left"));
}

TEST_F(SliceFiles, WritesAFifoSliceBySlice) {
  std::string path = file("out.fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const std::vector<int64_t> shape = {4, 3};
  std::vector<int32_t> values = counting<int32_t>(12);
  Bytes raw = littleEndian(values);
  std::mutex mutex;
  std::condition_variable changed;
  Bytes received;
  std::thread reader([&] {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0)
      return;
    unsigned char buffer[7]; // small reads: the bytes arrive in pieces
    while (true) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      std::lock_guard<std::mutex> lock(mutex);
      received.insert(received.end(), buffer, buffer + n);
      changed.notify_all();
    }
    ::close(fd);
  });
  Joiner joiner(reader, [&] {
    ::close(::open(path.c_str(), O_WRONLY | O_NONBLOCK)); // lets the reader's open return, then EOF
    return -1;
  });
  Result<std::unique_ptr<SliceWriter>> opened = openSliceWriter(path, DType::I32, shape);
  ASSERT_TRUE(opened) << opened.message();
  SliceWriter &writer = *opened.value();
  size_t headerSize = npyHeaderBytes(DType::I32, shape).size();
  for (size_t k = 0; k < 4; ++k) {
    ASSERT_TRUE(writer.writeNext(raw.data() + 12 * k));
    // Each slice reaches the reader before the next one is written (no buffering until commit).
    std::unique_lock<std::mutex> lock(mutex);
    EXPECT_TRUE(changed.wait_for(lock, std::chrono::seconds(10),
                                 [&] { return received.size() >= headerSize + 12 * (k + 1); }))
        << "slice " << k << " did not arrive";
  }
  Status committed = writer.commit();
  ASSERT_TRUE(committed) << committed.message();
  reader.join();
  Result<NpyArray> parsed = parseNpy(received.data(), received.size(), "fifo");
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed.value().shape, shape);
  EXPECT_EQ(valuesOf<int32_t>(parsed.value().bytes), values);
  EXPECT_EQ(entries(), std::vector<std::string>{"out.fifo"}); // written directly, no temporary file
}

TEST_F(SliceFiles, AFifoWhoseReaderLeftFailsWithoutKillingTheProgram) {
  std::string path = file("out.fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread reader([&] { ::close(::open(path.c_str(), O_RDONLY)); });
  Joiner joiner(reader, [&] {
    ::close(::open(path.c_str(), O_WRONLY | O_NONBLOCK));
    return -1;
  });
  std::vector<float> values = counting<float>(4);
  Result<std::unique_ptr<SliceWriter>> opened = openSliceWriter(path, DType::F32, {2, 2});
  reader.join();
  // The header may have gone into the pipe before the reader closed it; a slice after that cannot.
  std::string message =
      opened ? opened.value()->writeNext(reinterpret_cast<unsigned char *>(values.data())).message()
             : opened.message();
  EXPECT_THAT(message, StartsWith(path + ": cannot write"));
  EXPECT_THAT(message, HasSubstr("Broken pipe"));
  sigset_t pending, mask;
  ASSERT_EQ(sigpending(&pending), 0);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE)) << "a SIGPIPE was left pending";
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, nullptr, &mask), 0);
  EXPECT_FALSE(sigismember(&mask, SIGPIPE)) << "the signal mask was not restored";
}

TEST_F(SliceFiles, WriterToACharacterDevice) {
  Result<std::unique_ptr<SliceWriter>> writer = openSliceWriter("/dev/null", DType::F32, {2, 2});
  ASSERT_TRUE(writer) << writer.message();
  float values[4] = {1, 2, 3, 4};
  ASSERT_TRUE(writer.value()->writeNext(reinterpret_cast<unsigned char *>(values)));
  ASSERT_TRUE(writer.value()->writeNext(reinterpret_cast<unsigned char *>(values + 2)));
  Status committed = writer.value()->commit();
  EXPECT_TRUE(committed) << committed.message();
  struct stat info {};
  ASSERT_EQ(::stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
}

TEST_F(SliceFiles, WriterWithoutCommitLeavesNothing) {
  std::vector<float> values = counting<float>(6);
  Bytes raw = littleEndian(values);
  {
    Result<std::unique_ptr<SliceWriter>> writer = openSliceWriter(file("y.npy"), DType::F32, {3, 2});
    ASSERT_TRUE(writer) << writer.message();
    ASSERT_TRUE(writer.value()->writeNext(raw.data()));
    EXPECT_EQ(entries().size(), 1u); // the temporary file
  }
  EXPECT_TRUE(entries().empty());
  {
    Result<std::unique_ptr<SliceWriter>> writer = openSliceWriter(file("z.npy"), DType::F32, {3, 2});
    ASSERT_TRUE(writer) << writer.message();
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(SliceFiles, CommitNeedsEverySlice) {
  std::vector<float> values = counting<float>(6);
  Bytes raw = littleEndian(values);
  std::string path = file("y.npy");
  {
    Result<std::unique_ptr<SliceWriter>> opened = openSliceWriter(path, DType::F32, {3, 2});
    ASSERT_TRUE(opened) << opened.message();
    SliceWriter &writer = *opened.value();
    ASSERT_TRUE(writer.writeNext(raw.data()));
    ASSERT_TRUE(writer.writeNext(raw.data() + 8));
    Status early = writer.commit();
    ASSERT_FALSE(early);
    EXPECT_EQ(early.message(), path + ": only 2 of 3 slices were written");
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
    // The writer goes on after the refusal: the third slice, then a fourth too many.
    ASSERT_TRUE(writer.writeNext(raw.data() + 16));
    Status tooMany = writer.writeNext(raw.data());
    ASSERT_FALSE(tooMany);
    EXPECT_THAT(tooMany.message(), StartsWith(path + ": cannot write slice 3: all 3 slices"));
    ASSERT_TRUE(writer.commit());
    EXPECT_FALSE(writer.commit());
    EXPECT_FALSE(writer.writeNext(raw.data()));
  }
  Result<NpyArray> loaded = loadNpy(path);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(valuesOf<float>(loaded.value().bytes), values);
  EXPECT_EQ(entries(), std::vector<std::string>{"y.npy"});
  // Into a folder that does not exist: no temporary file can be made.
  Result<std::unique_ptr<SliceWriter>> nowhere = openSliceWriter(file("no/y.npy"), DType::F32, {1});
  ASSERT_FALSE(nowhere);
  EXPECT_THAT(nowhere.message(), StartsWith(file("no/y.npy") + ": cannot create a temporary file beside it"));
}

class SlicePngFolder : public SliceFiles {
protected:
  // Frame f has grey levels 40 f + 3 p for pixel p, all below 256.
  std::string writeFrames(const std::string &name, int frames, uint32_t width, uint32_t height) {
    std::string folder = file(name);
    EXPECT_EQ(::mkdir(folder.c_str(), 0755), 0);
    for (int f = 0; f < frames; ++f) {
      std::vector<uint8_t> grey(width * height);
      for (size_t p = 0; p < grey.size(); ++p)
        grey[p] = uint8_t(40 * f + 3 * p);
      char frameName[32];
      std::snprintf(frameName, sizeof frameName, "/%04d.png", f);
      writeBytes(folder + frameName, greyPng(width, height, grey));
    }
    writeBytes(folder + "/notes.txt", {'x'}); // not a picture: ignored
    return folder;
  }
};

TEST_F(SlicePngFolder, GivesTheFramesOfLoadPngFrames) {
  std::string folder = writeFrames("frames", 3, 4, 3);
  for (DType type : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(type));
    Result<NpyArray> whole = loadPngFrames(folder, type);
    ASSERT_TRUE(whole) << whole.message();
    std::unique_ptr<SliceReader> reader = open(folder, type);
    ASSERT_TRUE(reader);
    EXPECT_EQ(reader->dtype(), type);
    EXPECT_EQ(reader->shape(), (std::vector<int64_t>{3, 3, 4}));
    ASSERT_EQ(reader->sliceBytes(), 12 * dtypeSize(type));
    for (size_t f = 0; f < 3; ++f) {
      Bytes slice(reader->sliceBytes());
      Status read = reader->readNext(slice.data());
      ASSERT_TRUE(read) << read.message();
      EXPECT_TRUE(std::equal(slice.begin(), slice.end(), whole.value().bytes.begin() + f * slice.size()));
      for (size_t p = 0; p < 12; ++p) {
        double grey = type == DType::F32 ? valuesOf<float>(slice)[p] : valuesOf<double>(slice)[p];
        EXPECT_EQ(grey, double(40 * f + 3 * p)) << "frame " << f << " pixel " << p;
      }
    }
    Bytes extra(reader->sliceBytes());
    EXPECT_THAT(reader->readNext(extra.data()).message(), StartsWith(folder + ": no slice left"));
  }
  Result<std::unique_ptr<SliceReader>> ints = openSliceReader(folder, DType::I32);
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.message(), loadPngFrames(folder, DType::I32).message());
}

TEST_F(SlicePngFolder, APictureOfAnotherSizeFailsAtItsSlice) {
  std::string folder = writeFrames("frames", 3, 4, 3);
  std::vector<uint8_t> wide(5 * 3, 7);
  writeBytes(folder + "/0002.png", greyPng(5, 3, wide));
  std::unique_ptr<SliceReader> reader = open(folder);
  ASSERT_TRUE(reader);
  Bytes slice(reader->sliceBytes());
  ASSERT_TRUE(reader->readNext(slice.data()));
  ASSERT_TRUE(reader->readNext(slice.data()));
  Status third = reader->readNext(slice.data());
  ASSERT_FALSE(third);
  EXPECT_EQ(third.message(), folder + "/0002.png: 5 x 3 pixels, but 0000.png has 4 x 3");
  EXPECT_EQ(third.message(), loadPngFrames(folder, DType::F32).message());

  ASSERT_EQ(::mkdir(file("empty-folder").c_str(), 0755), 0);
  Result<std::unique_ptr<SliceReader>> none = openSliceReader(file("empty-folder"), DType::F32);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.message(), file("empty-folder") + ": no .png files in the folder");
}

TEST(MemorySlices, RoundTrip) {
  std::vector<int64_t> shape = {4, 2, 3};
  std::vector<double> values = counting<double>(24);
  std::vector<double> copy(24, -1.0);
  std::unique_ptr<SliceWriter> writer =
      memorySliceWriter(DType::F64, shape, reinterpret_cast<unsigned char *>(copy.data()));
  std::unique_ptr<SliceReader> source =
      memorySliceReader(DType::F64, shape, reinterpret_cast<const unsigned char *>(values.data()));
  EXPECT_EQ(source->shape(), shape);
  EXPECT_EQ(source->sliceBytes(), 48u);
  Bytes slice(source->sliceBytes());
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(source->readNext(slice.data()));
    if (k < 3) { // commit before the last slice fails
      EXPECT_FALSE(writer->commit());
    }
    ASSERT_TRUE(writer->writeNext(slice.data()));
  }
  EXPECT_FALSE(source->readNext(slice.data()));
  EXPECT_FALSE(writer->writeNext(slice.data()));
  Status committed = writer->commit();
  ASSERT_TRUE(committed) << committed.message();
  EXPECT_EQ(copy, values);

  std::unique_ptr<SliceReader> none = memorySliceReader(DType::F32, {0, 8}, nullptr);
  EXPECT_EQ(none->sliceBytes(), 32u);
  EXPECT_THAT(none->readNext(slice.data()).message(), HasSubstr("no slice left: all 0 slices were read"));
  EXPECT_TRUE(memorySliceWriter(DType::F32, {0, 8}, nullptr)->commit());
}

} // namespace
