// Unit tests of runMain (runtime/src/RunMain.cpp) in-process: param inference from input shapes for
// every affine form an extent can take (c*P + k, negative coefficients, a param twice, two unknowns
// resolved in turn), negative extents, the upload/compute/download protocol under --repeat, and
// exceptions from any of the three. (The command-line contract as a whole is tested by the lit tests
// in test/run/runtime.)
#include "polyc/Npy.h"
#include "polyc/Runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <stdexcept>
#include <string>
#include <unistd.h>

using namespace polyc::rt;
using ::testing::HasSubstr;

namespace {

AffineExtent extent(int64_t constant, std::vector<std::pair<unsigned, int64_t>> terms) {
  AffineExtent result;
  result.constant = constant;
  result.terms = std::move(terms);
  return result;
}

// Records the protocol and does a small computation: each output element is the sum of the first
// input (or 0), each inout element is incremented.
class Recorder : public Compute {
public:
  void upload(RunContext &context) override {
    ++uploads;
    if (throwIn == "upload")
      throw std::runtime_error("upload exploded");
    params = context.params;
    for (const HostArray &array : context.arrays)
      if (array.spec->role == ArrayRole::InOut && array.spec->dtype == DType::F64)
        inoutAtUpload.push_back(array.elementCount() ? array.bytes[0] : 0);
  }
  double compute(RunContext &context) override {
    ++computes;
    if (throwIn == "compute")
      throw std::runtime_error("compute exploded");
    if (throwIn == "int")
      throw 42;
    for (HostArray &array : context.arrays)
      if (array.spec->role == ArrayRole::InOut && array.spec->dtype == DType::F64)
        for (int64_t k = 0; k < array.elementCount(); ++k)
          array.data<double>()[k] += 1.0;
    return 0.001 * computes;
  }
  void download(RunContext &) override {
    ++downloads;
    if (throwIn == "download")
      throw std::runtime_error("download exploded");
  }
  int uploads = 0, computes = 0, downloads = 0;
  std::string throwIn;
  std::vector<int64_t> params;
  std::vector<unsigned char> inoutAtUpload;
};

class RunMain : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/polyc-runmain-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    folder_ = pattern;
  }
  void TearDown() override {
    if (DIR *dir = ::opendir(folder_.c_str())) {
      while (dirent *entry = ::readdir(dir))
        if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
          std::remove((folder_ + "/" + entry->d_name).c_str());
      ::closedir(dir);
    }
    ::rmdir(folder_.c_str());
  }

  std::string file(const std::string &name) const { return folder_ + "/" + name; }

  // Writes a float64 array of the given shape with values 0, 1, 2, ...
  std::string writeF64(const std::string &name, std::vector<int64_t> shape) {
    int64_t count = 1;
    for (int64_t e : shape)
      count *= e;
    std::vector<double> values(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k)
      values[size_t(k)] = double(k);
    std::string path = file(name);
    Status status = saveNpy(path, DType::F64, shape,
                            reinterpret_cast<const unsigned char *>(values.data()),
                            values.size() * sizeof(double));
    EXPECT_TRUE(status) << status.message();
    return path;
  }

  // Runs runMain with `args` (argv[0] added), capturing stderr into `errors`.
  int run(const ProgramInfo &info, Compute &compute, std::vector<std::string> args) {
    args.insert(args.begin(), "prog");
    std::vector<char *> argv;
    for (std::string &arg : args)
      argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    int status = runMain(int(args.size()), argv.data(), info, compute);
    errors = ::testing::internal::GetCapturedStderr();
    output = ::testing::internal::GetCapturedStdout();
    return status;
  }

  std::string folder_, errors, output;
};

TEST_F(RunMain, InfersParamsFromEveryAffineForm) {
  // params N, M, H, W; u[N - 2], v[3*M + 1, N - 2], z[H + W] (two unknowns: W comes from q),
  // q[W], d[10 - H] would be redundant with z; r[M + M]; output w[N + M].
  ProgramInfo info;
  info.name = "infer";
  info.params = {"N", "M", "H", "W"};
  info.arrays = {
      {"u", ArrayRole::Input, DType::F64, {extent(-2, {{0, 1}})}},
      {"v", ArrayRole::Input, DType::F64, {extent(1, {{1, 3}}), extent(-2, {{0, 1}})}},
      {"z", ArrayRole::Input, DType::F64, {extent(0, {{2, 1}, {3, 1}})}},
      {"q", ArrayRole::Input, DType::F64, {extent(0, {{3, 1}})}},
      {"d", ArrayRole::Input, DType::F64, {extent(10, {{2, -1}})}},
      {"r", ArrayRole::InOut, DType::F64, {extent(0, {{1, 1}, {1, 1}})}},
      {"w", ArrayRole::Output, DType::F64, {extent(0, {{0, 1}, {1, 1}})}},
  };
  Recorder recorder;
  int status = run(info, recorder,
                   {"--in", "u=" + writeF64("u.npy", {5}), "--in", "v=" + writeF64("v.npy", {7, 5}),
                    "--in", "z=" + writeF64("z.npy", {9}), "--in", "q=" + writeF64("q.npy", {3}),
                    "--in", "d=" + writeF64("d.npy", {4}), "--in", "r=" + writeF64("r.npy", {4}),
                    "--out", "w=" + file("w.npy")});
  ASSERT_EQ(status, 0) << errors;
  // N - 2 = 5, 3M + 1 = 7, W = 3, H + W = 9, 10 - H = 4, M + M = 4.
  EXPECT_EQ(recorder.params, (std::vector<int64_t>{7, 2, 6, 3}));
  Result<NpyArray> w = loadNpy(file("w.npy"));
  ASSERT_TRUE(w) << w.message();
  EXPECT_EQ(w.value().shape, std::vector<int64_t>{9});
}

TEST_F(RunMain, RefusesShapesNoParamFits) {
  ProgramInfo info;
  info.name = "infer";
  info.params = {"H"};
  info.arrays = {{"x", ArrayRole::Input, DType::F64, {extent(0, {{0, 1}, {0, 1}})}}};
  Recorder recorder;
  EXPECT_EQ(run(info, recorder, {"--in", "x=" + writeF64("x.npy", {7})}), 2);
  EXPECT_THAT(errors, HasSubstr("dimension 0 has extent 7, which is not H + H for any non-negative H"));

  info.arrays = {{"x", ArrayRole::Input, DType::F64, {extent(10, {{0, -1}})}}};
  EXPECT_EQ(run(info, recorder, {"--in", "x=" + writeF64("x.npy", {11})}), 2);
  EXPECT_THAT(errors, HasSubstr("which is not -H + 10 for any non-negative H"));
  EXPECT_EQ(run(info, recorder, {"--in", "x=" + writeF64("x.npy", {4})}), 0) << errors;
  EXPECT_EQ(recorder.params, std::vector<int64_t>{6});
  EXPECT_EQ(recorder.computes, 1);
}

TEST_F(RunMain, RefusesNegativeExtents) {
  ProgramInfo info;
  info.name = "neg";
  info.params = {"N"};
  info.arrays = {{"y", ArrayRole::Output, DType::F64, {extent(-2, {{0, 1}})}}};
  Recorder recorder;
  EXPECT_EQ(run(info, recorder, {"--param", "N=1"}), 2);
  EXPECT_THAT(errors, HasSubstr("output 'y' with N=1 (--param N): the extent N - 2 is negative (-1)"));
  EXPECT_EQ(recorder.computes, 0);
}

TEST_F(RunMain, RepeatUploadsEveryRunAndDownloadsOnce) {
  ProgramInfo info;
  info.name = "repeat";
  info.params = {"N"};
  info.arrays = {{"s", ArrayRole::InOut, DType::F64, {extent(0, {{0, 1}})}}};
  Recorder recorder;
  std::string in = writeF64("s.npy", {3});
  ASSERT_EQ(run(info, recorder,
                {"--in", "s=" + in, "--out", "s=" + file("s_out.npy"), "--repeat", "5", "--json"}),
            0)
      << errors;
  EXPECT_EQ(recorder.uploads, 5);
  EXPECT_EQ(recorder.computes, 5);
  EXPECT_EQ(recorder.downloads, 1);
  // Every upload saw the inout as loaded (its first byte is that of 0.0), not as the last run left it.
  EXPECT_EQ(recorder.inoutAtUpload, std::vector<unsigned char>(5, 0));
  Result<NpyArray> out = loadNpy(file("s_out.npy"));
  ASSERT_TRUE(out) << out.message();
  std::vector<double> values(3);
  std::memcpy(values.data(), out.value().bytes.data(), 24);
  EXPECT_EQ(values, (std::vector<double>{1.0, 2.0, 3.0})); // one increment, not five
  // compute returned 0.001 * k: median 0.003, min 0.001, max 0.005.
  EXPECT_THAT(output, HasSubstr("\"program\": \"repeat\", \"repeat\": 5, \"median_s\": 0.003, "
                                "\"min_s\": 0.001, \"max_s\": 0.005, \"params\": {\"N\": 3}"));
}

TEST_F(RunMain, ExceptionsExitWithStatus3AndWriteNothing) {
  ProgramInfo info;
  info.name = "boom";
  info.params = {"N"};
  info.arrays = {{"y", ArrayRole::Output, DType::F64, {extent(0, {{0, 1}})}}};
  for (std::string where : {"upload", "compute", "download", "int"}) {
    Recorder recorder;
    recorder.throwIn = where;
    EXPECT_EQ(run(info, recorder, {"--param", "N=4", "--out", "y=" + file("y.npy")}), 3) << where;
    if (where == "int")
      EXPECT_THAT(errors, HasSubstr("boom: error: the computation failed with an unknown exception"));
    else
      EXPECT_THAT(errors, HasSubstr("boom: error: the computation failed: " + where + " exploded"));
    EXPECT_FALSE(loadNpy(file("y.npy"))) << "an output was written after a failure in " << where;
  }
}

} // namespace
