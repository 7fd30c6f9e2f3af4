// Unit tests of the host side of the runtime's CUDA part (polyc/cuda/Device.h, Check.h): nothing here
// touches a GPU, so they run in CI. The device side is checked on a GPU by scripts/gpu-check.sh.
#include "polyc/cuda/Check.h"
#include "polyc/cuda/Device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace polyc::rt::cuda;

TEST(CudaGrid, CoversTheExtentInBlocksOfPoints) {
  dim3 grid = gridFor(1000, 256);
  EXPECT_EQ(grid.x, 4u);
  EXPECT_EQ(grid.y, 1u);
  EXPECT_EQ(grid.z, 1u);
  grid = gridFor(1024, 8, 7, 3);
  EXPECT_EQ(grid.x, 128u);
  EXPECT_EQ(grid.y, 7u);
  EXPECT_EQ(grid.z, 3u);
}

TEST(CudaGrid, ClampsToTheHardwareLimitsAndAtLeastOneBlock) {
  dim3 grid = gridFor(0, 256, 0, -5);
  EXPECT_EQ(grid.x, 1u);
  EXPECT_EQ(grid.y, 1u);
  EXPECT_EQ(grid.z, 1u);
  grid = gridFor(int64_t(1) << 40, 1, int64_t(1) << 20, 70000);
  EXPECT_EQ(grid.x, 1u << 20); // grid-stride loops cover the rest
  EXPECT_EQ(grid.y, 65535u);
  EXPECT_EQ(grid.z, 65535u);
}

TEST(CudaGroupSize, NextPowerOfTwoClampedTo32And1024) {
  EXPECT_EQ(groupSizeFor(0), 32u);
  EXPECT_EQ(groupSizeFor(32), 32u);
  EXPECT_EQ(groupSizeFor(33), 64u);
  EXPECT_EQ(groupSizeFor(100), 128u);
  EXPECT_EQ(groupSizeFor(1024), 1024u);
  EXPECT_EQ(groupSizeFor(4500), 1024u);
}

TEST(CudaGroupSize, DispatchPassesTheSizeAsACompileTimeConstant) {
  for (unsigned size : {32u, 64u, 128u, 256u, 512u, 1024u}) {
    unsigned seen = 0;
    dispatchGroupSize(size, [&](auto g) { seen = decltype(g)::value; });
    EXPECT_EQ(seen, size);
  }
}

TEST(CudaGraphKey, DependsOnEveryValueAndItsPosition) {
  EXPECT_EQ(hashKey({1, 2, 3}), hashKey({1, 2, 3}));
  EXPECT_NE(hashKey({1, 2, 3}), hashKey({1, 2, 4}));
  EXPECT_NE(hashKey({1, 2, 3}), hashKey({3, 2, 1}));
  EXPECT_NE(hashKey({0}), hashKey({0, 0}));
}

TEST(CudaSettings, GraphAndWavefrontAndGrid) {
  unsetenv("POLYC_CUDA_GRAPH");
  EXPECT_TRUE(useCudaGraph());
  setenv("POLYC_CUDA_GRAPH", "0", 1);
  EXPECT_FALSE(useCudaGraph());
  setenv("POLYC_CUDA_GRAPH", "1", 1);
  EXPECT_TRUE(useCudaGraph());
  unsetenv("POLYC_CUDA_GRAPH");

  unsetenv("POLYC_CUDA_GRID");
  EXPECT_FALSE(gridOverride().has_value());
  setenv("POLYC_CUDA_GRID", "528", 1);
  EXPECT_EQ(gridOverride().value_or(0), 528);
  unsetenv("POLYC_CUDA_GRID");

  unsetenv("POLYC_CUDA_WAVEFRONT");
  EXPECT_EQ(wavefrontOverride(), WavefrontOverride::Auto);
  setenv("POLYC_CUDA_WAVEFRONT", "fixed", 1);
  EXPECT_EQ(wavefrontOverride(), WavefrontOverride::Fixed);
  setenv("POLYC_CUDA_WAVEFRONT", "flexible", 1);
  EXPECT_EQ(wavefrontOverride(), WavefrontOverride::Flexible);
  unsetenv("POLYC_CUDA_WAVEFRONT");
}

// A malformed setting is an error naming the variable and the accepted values, never a silent default.
TEST(CudaSettings, MalformedValuesAreErrors) {
  auto expectError = [](const char *name, const char *value, auto &&read, const std::string &needle) {
    setenv(name, value, 1);
    try {
      read();
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const CudaError &error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
    unsetenv(name);
  };
  expectError("POLYC_CUDA_GRAPH", "yes", [] { useCudaGraph(); }, "invalid POLYC_CUDA_GRAPH='yes'");
  expectError("POLYC_CUDA_GRAPH", "2", [] { useCudaGraph(); }, "an integer in [0, 1]");
  expectError("POLYC_CUDA_GRID", "0", [] { gridOverride(); }, "invalid POLYC_CUDA_GRID='0'");
  expectError("POLYC_CUDA_GRID", "12abc", [] { gridOverride(); }, "invalid POLYC_CUDA_GRID");
  expectError("POLYC_CUDA_GRID", "99999999999", [] { gridOverride(); }, "invalid POLYC_CUDA_GRID");
  expectError("POLYC_CUDA_WAVEFRONT", "diagonal", [] { wavefrontOverride(); },
              "expected auto, fixed or flexible");
}

TEST(CudaCheck, AFailedCallThrowsWithTheCallFileAndLine) {
  try {
    POLYC_CUDA_CHECK(cudaErrorMemoryAllocation);
    ADD_FAILURE() << "no exception";
  } catch (const CudaError &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("CudaRuntimeTests.cpp:"), std::string::npos) << message;
    EXPECT_NE(message.find("in cudaErrorMemoryAllocation"), std::string::npos) << message;
    EXPECT_NE(message.find("(cudaErrorMemoryAllocation)"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(POLYC_CUDA_CHECK(cudaSuccess));
}

// The flexible wavefront's lanes per point: the smallest power of two covering the loop the lanes
// share, from 4 to 32; POLYC_CUDA_LANES overrides it with 4, 8, 16 or 32 only.
TEST(CudaFlexibleShape, LanesFromTheWindowLength) {
  unsetenv("POLYC_CUDA_LANES");
  EXPECT_EQ(lanesFor(0), 4u);
  EXPECT_EQ(lanesFor(1), 4u);
  EXPECT_EQ(lanesFor(3), 4u);
  EXPECT_EQ(lanesFor(4), 4u);
  EXPECT_EQ(lanesFor(5), 8u);
  EXPECT_EQ(lanesFor(9), 16u);
  EXPECT_EQ(lanesFor(16), 16u);
  EXPECT_EQ(lanesFor(17), 32u);
  EXPECT_EQ(lanesFor(31), 32u);
  EXPECT_EQ(lanesFor(1000), 32u);
  setenv("POLYC_CUDA_LANES", "8", 1);
  EXPECT_EQ(lanesFor(31), 8u);
  unsetenv("POLYC_CUDA_LANES");
  for (const char *bad : {"12", "2", "64", "eight"}) {
    setenv("POLYC_CUDA_LANES", bad, 1);
    EXPECT_THROW(lanesFor(3), CudaError) << bad;
  }
  unsetenv("POLYC_CUDA_LANES");
}

// Strips get narrower as points get more lanes: 64 columns up to 8 lanes, 32 at 16, 16 at 32.
TEST(CudaFlexibleShape, StripWidthFollowsTheLanes) {
  static_assert(stripWidthFor(4) == 64 && stripWidthFor(8) == 64);
  static_assert(stripWidthFor(16) == 32 && stripWidthFor(32) == 16);
  for (unsigned lanes : {4u, 8u, 16u, 32u})
    EXPECT_LE(stripWidthFor(lanes) * lanes, 512u) << lanes;
}

TEST(CudaFlexibleShape, WithLanesPassesTheLanesAsACompileTimeConstantAndReturnsTheResult) {
  for (unsigned lanes : {4u, 8u, 16u, 32u}) {
    const unsigned seen = withLanes(lanes, [](auto g) { return unsigned(decltype(g)::value); });
    EXPECT_EQ(seen, lanes);
  }
  EXPECT_FALSE(withLanes(8, [](auto) { return false; }));
}

TEST(CudaFlexibleShape, ParamsFitInIntOrTheFixedWavefrontRuns) {
  EXPECT_TRUE(fitInInt({}));
  EXPECT_TRUE(fitInInt({0, 2048, INT32_MAX, INT32_MIN}));
  EXPECT_FALSE(fitInInt({3, int64_t(INT32_MAX) + 1}));
  EXPECT_FALSE(fitInInt({int64_t(INT32_MIN) - 1}));
}

TEST(CudaSettings, PublishIntervalOverride) {
  unsetenv("POLYC_CUDA_PUBLISH");
  EXPECT_FALSE(publishOverride().has_value());
  setenv("POLYC_CUDA_PUBLISH", "3", 1);
  EXPECT_EQ(publishOverride().value_or(0), 3);
  setenv("POLYC_CUDA_PUBLISH", "0", 1);
  EXPECT_THROW(publishOverride(), CudaError);
  unsetenv("POLYC_CUDA_PUBLISH");
}
