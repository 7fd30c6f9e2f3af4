// Unit tests of the runtime's .npy reader and writer (runtime/src/Npy.cpp): files are built here
// byte by byte (independently of the writer), valid ones must give the right values, invalid ones a
// message naming the file and the problem, and no input may crash the parser.
#include "polyc/Npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "NpyBytes.h"

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace polyc::rt;
using ::testing::HasSubstr;

namespace {

using namespace polyc::rt::npytest;

template <typename T> std::vector<T> valuesOf(const NpyArray &array) {
  std::vector<T> values(array.bytes.size() / sizeof(T));
  std::memcpy(values.data(), array.bytes.data(), values.size() * sizeof(T));
  return values;
}

Result<NpyArray> parse(const Bytes &bytes) { return parseNpy(bytes.data(), bytes.size(), "t.npy"); }

std::string parseError(const Bytes &bytes) {
  Result<NpyArray> result = parse(bytes);
  EXPECT_FALSE(result) << "expected a failure";
  return result ? std::string() : result.message();
}

const std::string kF4x23 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

TEST(NpyRead, Float32Version1) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, 7.0f};
  Result<NpyArray> result = parse(makeNpy(kF4x23, littleEndian(values)));
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(result.value().dtype, DType::F32);
  EXPECT_EQ(result.value().shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(valuesOf<float>(result.value()), values);
}

TEST(NpyRead, MatchesNumpysExactBytes) {
  // np.save(f, np.zeros((2, 3), np.float32)) with numpy 1.24, copied byte for byte.
  // (The NUL bytes of the prefix rule out one C string literal.)
  Bytes file = {0x93, 'N', 'U', 'M', 'P', 'Y', 0x01, 0x00, 'v', 0x00};
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') + "\n";
  file.insert(file.end(), header.begin(), header.end());
  file.resize(file.size() + 24, 0);
  ASSERT_EQ(file.size(), 128u + 24u);
  Result<NpyArray> result = parse(file);
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(result.value().shape, (std::vector<int64_t>{2, 3}));
  // And the writer produces exactly these bytes.
  Result<Bytes> encoded = encodeNpy(DType::F32, {2, 3}, result.value().bytes.data(), 24);
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded.value(), file);
}

TEST(NpyRead, Versions2And3) {
  std::vector<double> values = {1.0, 2.0};
  for (int major : {2, 3}) {
    Result<NpyArray> result =
        parse(makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                      littleEndian(values), major));
    ASSERT_TRUE(result) << result.message();
    EXPECT_EQ(valuesOf<double>(result.value()), values);
  }
}

TEST(NpyRead, BigEndianIsConverted) {
  std::vector<double> doubles = {3.5, -1.0 / 3.0, 1e300};
  Result<NpyArray> f8 = parse(
      makeNpy("{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", bigEndian(doubles)));
  ASSERT_TRUE(f8) << f8.message();
  EXPECT_EQ(valuesOf<double>(f8.value()), doubles);

  std::vector<int32_t> ints = {1, -2, 0x12345678};
  Result<NpyArray> i4 = parse(
      makeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", bigEndian(ints)));
  ASSERT_TRUE(i4) << i4.message();
  EXPECT_EQ(i4.value().dtype, DType::I32);
  EXPECT_EQ(valuesOf<int32_t>(i4.value()), ints);

  std::vector<float> floats = {0.5f, -8.0f};
  Result<NpyArray> f4 = parse(
      makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", bigEndian(floats)));
  ASSERT_TRUE(f4) << f4.message();
  EXPECT_EQ(valuesOf<float>(f4.value()), floats);
}

TEST(NpyRead, FortranOrderIsTransposedToCOrder) {
  // The 2x3 matrix [[1, 2, 3], [4, 5, 6]] stored column by column.
  std::vector<int32_t> fortran = {1, 4, 2, 5, 3, 6};
  Result<NpyArray> result = parse(makeNpy(
      "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", littleEndian(fortran)));
  ASSERT_TRUE(result) << result.message();
  EXPECT_EQ(valuesOf<int32_t>(result.value()), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));

  // A 2x2x2 array with element (i, j, k) = 100i + 10j + k, Fortran order: i fastest.
  std::vector<int32_t> cube;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i)
        cube.push_back(100 * i + 10 * j + k);
  Result<NpyArray> cubeResult = parse(makeNpy(
      "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2, 2), }", littleEndian(cube)));
  ASSERT_TRUE(cubeResult) << cubeResult.message();
  EXPECT_EQ(valuesOf<int32_t>(cubeResult.value()),
            (std::vector<int32_t>{0, 1, 10, 11, 100, 101, 110, 111}));
}

TEST(NpyRead, ScalarsEmptyArraysAndOldSpellings) {
  Result<NpyArray> scalar =
      parse(makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                    littleEndian(std::vector<double>{2.5})));
  ASSERT_TRUE(scalar) << scalar.message();
  EXPECT_TRUE(scalar.value().shape.empty());
  EXPECT_EQ(valuesOf<double>(scalar.value()), std::vector<double>{2.5});

  Result<NpyArray> empty =
      parse(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", {}));
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_EQ(empty.value().shape, (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(empty.value().elementCount(), 0);

  // Python 2's numpy wrote longs; key order and quotes may differ; no trailing comma.
  Result<NpyArray> old =
      parse(makeNpy("{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"<i4\"}",
                    littleEndian(std::vector<int32_t>{7, 8})));
  ASSERT_TRUE(old) << old.message();
  EXPECT_EQ(valuesOf<int32_t>(old.value()), (std::vector<int32_t>{7, 8}));

  // An unpadded header is unusual but valid.
  Result<NpyArray> unpadded = parse(makeNpy(kF4x23, Bytes(24, 0), 1, false));
  ASSERT_TRUE(unpadded) << unpadded.message();
}

TEST(NpyRead, RefusesBadPrefix) {
  Bytes good = makeNpy(kF4x23, Bytes(24, 0));
  Bytes badMagic = good;
  badMagic[1] = 'X';
  EXPECT_THAT(parseError(badMagic), HasSubstr("t.npy: not a .npy file"));
  EXPECT_THAT(parseError(Bytes(good.begin(), good.begin() + 4)), HasSubstr("not a .npy file"));
  EXPECT_THAT(parseError(Bytes(good.begin(), good.begin() + 7)), HasSubstr("format version"));
  EXPECT_THAT(parseError(Bytes(good.begin(), good.begin() + 9)), HasSubstr("header length"));
  Bytes version = good;
  version[6] = 4;
  EXPECT_THAT(parseError(version), HasSubstr("unsupported .npy format version 4.0"));
  version[6] = 1;
  version[7] = 1;
  EXPECT_THAT(parseError(version), HasSubstr("version 1.1"));
  Bytes longHeader = good;
  longHeader[8] = 0xff;
  longHeader[9] = 0xff;
  EXPECT_THAT(parseError(longHeader), HasSubstr("truncated header"));
}

TEST(NpyRead, RefusesMalformedHeaders) {
  auto headerError = [](const std::string &header) { return parseError(makeNpy(header, Bytes(24, 0))); };
  EXPECT_THAT(headerError("descr: '<f4'"), HasSubstr("malformed header"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "),
              HasSubstr("malformed header"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False}"),
              HasSubstr("missing key 'shape'"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"),
              HasSubstr("unexpected key 'x'"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"),
              HasSubstr("'descr' appears twice"));
  EXPECT_THAT(headerError("{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}"),
              HasSubstr("expected ',' or '}'"));
  EXPECT_THAT(headerError("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}"),
              HasSubstr("malformed header"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x"),
              HasSubstr("unexpected text after the header dict"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}"),
              HasSubstr("'fortran_order' is an integer, expected True or False"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2, 3)}"),
              HasSubstr("malformed header"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}"),
              HasSubstr("'shape' is a list, expected a tuple"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (24)}"),
              HasSubstr("trailing comma"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}"),
              HasSubstr("negative extent -3"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'a')}"),
              HasSubstr("a shape entry is a string"));
  EXPECT_THAT(headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3.0)}"),
              HasSubstr("malformed integer"));
  EXPECT_THAT(
      headerError("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
      HasSubstr("does not fit a 64-bit integer"));
  EXPECT_THAT(headerError("{'descr': 4, 'fortran_order': False, 'shape': (2, 3)}"),
              HasSubstr("'descr' is an integer"));
  EXPECT_THAT(headerError("{1: 4, 'fortran_order': False, 'shape': (2, 3)}"),
              HasSubstr("a key is an integer"));
  std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': " +
                     std::string(200, '(') + std::string(200, ')') + "}";
  EXPECT_THAT(headerError(deep), HasSubstr("nests too deeply"));
  std::string rank65 = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i)
    rank65 += "1, ";
  EXPECT_THAT(headerError(rank65 + ")}"), HasSubstr("rank 65"));
}

TEST(NpyRead, RefusesUnsupportedDtypes) {
  auto descrError = [](const std::string &descr) {
    return parseError(makeNpy("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2, 3)}",
                              Bytes(24, 0)));
  };
  EXPECT_THAT(descrError("<i8"), HasSubstr("dtype '<i8' is not supported"));
  EXPECT_THAT(descrError("<f2"), HasSubstr("not supported"));
  EXPECT_THAT(descrError("|u1"), HasSubstr("not supported"));
  EXPECT_THAT(descrError("f4"), HasSubstr("not supported"));
  EXPECT_THAT(descrError("|f4"), HasSubstr("byte order '|'"));
  EXPECT_THAT(descrError("=f4"), HasSubstr("byte order '='"));
  EXPECT_THAT(parseError(makeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}",
                                 Bytes(8, 0))),
              HasSubstr("structured dtypes"));
}

TEST(NpyRead, RefusesWrongDataSize) {
  EXPECT_THAT(parseError(makeNpy(kF4x23, Bytes(20, 0))),
              HasSubstr("t.npy: truncated data: the shape (2, 3) of float32 needs 24 bytes of "
                        "data, the file has 20"));
  EXPECT_THAT(parseError(makeNpy(kF4x23, Bytes(25, 0))),
              HasSubstr("trailing bytes: the shape (2, 3) of float32 needs 24 bytes of data, the "
                        "file has 25 (1 too many)"));
  EXPECT_THAT(parseError(makeNpy(
                  "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", {})),
              HasSubstr("too large"));
  EXPECT_THAT(parseError(makeNpy(
                  "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807,)}", {})),
              HasSubstr("too large"));
  // A zero extent makes an otherwise huge shape empty.
  Result<NpyArray> empty = parse(makeNpy(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775807)}", {}));
  EXPECT_TRUE(empty) << empty.message();
}

TEST(NpyWrite, EmptyArrayWithHugeExtentsRoundTrips) {
  // Found by NpyFuzzer: the reader accepted this empty shape, the writer refused it as too large
  // because it multiplied the extents before reaching the zero.
  Result<NpyArray> read = parse(makeNpy(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (3720368547758073, 7758073, 0, 2)}", {}));
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read.value().elementCount(), 0);
  Result<Bytes> encoded = encodeNpy(DType::F64, read.value().shape, nullptr, 0);
  ASSERT_TRUE(encoded) << encoded.message();
  Result<NpyArray> back = parse(encoded.value());
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back.value().shape, read.value().shape);
}

TEST(NpyRead, NoPrefixOrMutationCrashes) {
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  Bytes good = makeNpy(kF4x23, littleEndian(values));
  for (size_t length = 0; length < good.size(); ++length)
    EXPECT_FALSE(parseNpy(good.data(), length, "t.npy")) << "prefix of " << length << " bytes";
  std::mt19937 random(4);
  for (int trial = 0; trial < 20000; ++trial) {
    Bytes mutated = good;
    int flips = 1 + int(random() % 4);
    for (int f = 0; f < flips; ++f)
      mutated[random() % mutated.size()] = static_cast<unsigned char>(random());
    Result<NpyArray> result = parse(mutated);
    if (result) { // whatever parsed must be self-consistent
      EXPECT_EQ(result.value().bytes.size(),
                size_t(result.value().elementCount()) * dtypeSize(result.value().dtype));
    }
  }
}

class NpyFiles : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/polyc-npy-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    folder_ = pattern;
  }
  void TearDown() override {
    for (const std::string &name : entries())
      std::remove((folder_ + "/" + name).c_str());
    ::rmdir(folder_.c_str());
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR *dir = ::opendir(folder_.c_str())) {
      while (dirent *entry = ::readdir(dir))
        if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
          names.push_back(entry->d_name);
      ::closedir(dir);
    }
    return names;
  }
  std::string folder_;
};

TEST_F(NpyFiles, SaveThenLoadRoundTrips) {
  std::vector<double> values = {1.0, -2.0, 3.5, 4.25};
  Bytes raw = littleEndian(values);
  std::string path = folder_ + "/y.npy";
  Status saved = saveNpy(path, DType::F64, {2, 2}, raw.data(), raw.size());
  ASSERT_TRUE(saved) << saved.message();
  EXPECT_EQ(entries(), std::vector<std::string>{"y.npy"}); // no temporary file left behind
  Result<NpyArray> loaded = loadNpy(path);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(loaded.value().shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(valuesOf<double>(loaded.value()), values);
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);

  // Overwriting replaces the file whole.
  Bytes scalar = littleEndian(std::vector<int32_t>{42});
  ASSERT_TRUE(saveNpy(path, DType::I32, {}, scalar.data(), scalar.size()));
  Result<NpyArray> reloaded = loadNpy(path);
  ASSERT_TRUE(reloaded) << reloaded.message();
  EXPECT_EQ(valuesOf<int32_t>(reloaded.value()), std::vector<int32_t>{42});
}

// A file name of 255 bytes is valid; the temporary file beside it must still fit in a name (found by
// the program fuzzer: an output array named with 250 characters could not be written).
TEST_F(NpyFiles, LongestFileNameSaves) {
  Bytes raw = littleEndian(std::vector<float>{1.0f, 2.0f});
  std::string name = std::string(251, 'v') + ".npy";
  Status saved = saveNpy(folder_ + "/" + name, DType::F32, {2}, raw.data(), raw.size());
  ASSERT_TRUE(saved) << saved.message();
  EXPECT_EQ(entries(), std::vector<std::string>{name});
  Result<NpyArray> loaded = loadNpy(folder_ + "/" + name);
  ASSERT_TRUE(loaded) << loaded.message();
  EXPECT_EQ(valuesOf<float>(loaded.value()), (std::vector<float>{1.0f, 2.0f}));
}

TEST_F(NpyFiles, SaveFailuresLeaveNothingBehind) {
  Bytes raw(16, 0);
  Status missing = saveNpy(folder_ + "/no/such/dir/y.npy", DType::F32, {4}, raw.data(), raw.size());
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(), HasSubstr("no/such/dir/y.npy: cannot create a temporary file"));
  Status wrongSize = saveNpy(folder_ + "/y.npy", DType::F32, {5}, raw.data(), raw.size());
  ASSERT_FALSE(wrongSize);
  EXPECT_THAT(wrongSize.message(), HasSubstr("the data has 16 bytes"));
  EXPECT_TRUE(entries().empty());
}

TEST(NpyWrite, VersionByteFollowsHeaderLength) {
  // Rank 64 (the most a reader accepts) still fits version 1.0.
  std::vector<int64_t> shape(64, 1);
  Bytes raw(4, 0);
  Result<Bytes> encoded = encodeNpy(DType::F32, shape, raw.data(), raw.size());
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded.value()[6], 1);
  EXPECT_EQ((encoded.value().size() - 4) % 64, 0u);
  Result<NpyArray> back = parse(encoded.value());
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back.value().shape, shape);

  // Only a header over 65535 bytes needs version 2.0 (4-byte length); 30000 dimensions do.
  std::vector<int64_t> huge(30000, 1);
  Result<Bytes> long2 = encodeNpy(DType::F32, huge, raw.data(), raw.size());
  ASSERT_TRUE(long2);
  const Bytes &bytes = long2.value();
  EXPECT_EQ(bytes[6], 2);
  size_t length = bytes[8] | bytes[9] << 8 | bytes[10] << 16 | size_t(bytes[11]) << 24;
  EXPECT_EQ(12 + length + 4, bytes.size());
  EXPECT_EQ((12 + length) % 64, 0u);
  EXPECT_EQ(bytes[12 + length - 1], '\n');
  EXPECT_THAT(parseError(bytes), HasSubstr("rank 30000"));
}

TEST_F(NpyFiles, LoadReportsMissingFiles) {
  Result<NpyArray> missing = loadNpy(folder_ + "/absent.npy");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.message(), HasSubstr("absent.npy: cannot open: No such file or directory"));
  Result<NpyArray> folder = loadNpy(folder_);
  ASSERT_FALSE(folder);
  EXPECT_THAT(folder.message(), HasSubstr(folder_));
}

} // namespace
