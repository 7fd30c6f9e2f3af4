// Unit tests of the host side of the runtime's CUDA part (polyc/cuda/Device.h, Check.h): nothing here
// touches a GPU, so they run in CI. The device side is checked on a GPU by scripts/gpu-check.sh.
#include "polyc/cuda/Check.h"
#include "polyc/cuda/Device.h"
#include "polyc/cuda/ProductPlan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>

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

TEST(CudaGrid, TilesAreWarpsWideAndUpToTileYRowsHigh) {
  Tile tile = tileFor(120, 120, 120); // heat-3d at N = 120
  EXPECT_EQ(tile.block.x, 32u);
  EXPECT_EQ(tile.block.y, 8u);
  EXPECT_EQ(tile.grid.x, 4u);
  EXPECT_EQ(tile.grid.y, 15u);
  EXPECT_EQ(tile.grid.z, 120u);
  for (int64_t rows : {0, 1, 2, 3, 5, 8, 1000}) {
    tile = tileFor(1300, rows);
    EXPECT_EQ(tile.block.x * tile.block.y, 256u) << rows; // the kernels' __launch_bounds__
    EXPECT_GE(tile.block.x, 32u) << rows;
    EXPECT_GE(int64_t(tile.grid.y) * tile.block.y, std::min<int64_t>(std::max<int64_t>(rows, 1), 65535 * 8));
  }
  EXPECT_EQ(tileFor(1300, 1).block.y, 1u); // one row: 256 x 1 blocks, no idle rows
  EXPECT_EQ(tileFor(1300, 3).block.y, 4u);
  tile = tileFor(33, int64_t(1) << 40); // y clamped: the grid-stride loop covers the rest
  EXPECT_EQ(tile.grid.x, 2u);
  EXPECT_EQ(tile.grid.y, 65535u);
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
  // Few outputs: the groups never fill the device, so the length alone decides.
  EXPECT_EQ(reductionGroupSize(0, 1, 1 << 20), 32u);
  EXPECT_EQ(reductionGroupSize(32, 1, 1 << 20), 32u);
  EXPECT_EQ(reductionGroupSize(33, 1, 1 << 20), 64u);
  EXPECT_EQ(reductionGroupSize(100, 1, 1 << 20), 128u);
  EXPECT_EQ(reductionGroupSize(1024, 1, 1 << 20), 1024u);
  EXPECT_EQ(reductionGroupSize(4500, 100, 1 << 20), 1024u);
}

TEST(CudaGroupSize, HalvedWhileTheGroupsStillFillTheDevice) {
  // 1,000 outputs and 1,024 terms: 512 threads an output fill 512,000 threads, 256 do not.
  EXPECT_EQ(reductionGroupSize(1024, 1000, 512000), 512u);
  EXPECT_EQ(reductionGroupSize(1024, 1000, 512001), 1024u);
  // The rate network at 80,000 neurons: a warp an output is plenty.
  EXPECT_EQ(reductionGroupSize(8192, 80000, 2 * 132 * 2048), 32u);
  // Never below a warp, never above the length's power of two.
  EXPECT_EQ(reductionGroupSize(8192, int64_t(1) << 40, 1), 32u);
  EXPECT_EQ(reductionGroupSize(40, 0, 1 << 20), 64u);
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

TEST(CudaFlexibleShape, WithLaneShapePassesTheShapeAtCompileTimeAndReturnsTheResult) {
  for (unsigned lanes : {4u, 8u, 16u, 32u}) {
    const auto [seenLanes, seenWidth, seenHeld] = withLaneShape(lanes, [](auto shape) {
      using Shape = decltype(shape);
      return std::tuple(Shape::Lanes, Shape::Width, Shape::Held);
    });
    EXPECT_EQ(seenLanes, lanes);
    EXPECT_EQ(seenWidth, stripWidthFor(lanes));
    EXPECT_EQ(seenHeld, 0);
  }
  EXPECT_FALSE(withLaneShape(8, [](auto) { return false; }));
}

// The term tables' capacity of a square window M x M is M^2 (the tables hold M^2 - 1 terms when the
// window skips its centre, as the IIR's feedback does).
static TermTableShape tableShapeFor(int64_t capacity, std::optional<int64_t> forcedLanes = std::nullopt) {
  return TermTableShapes[termTableShapeIndex(capacity, forcedLanes)];
}

TEST(CudaFlexibleShape, TermTableShapesByTheTermsPerPoint) {
  auto expectShape = [](int64_t capacity, unsigned lanes, int width, int held) {
    const TermTableShape shape = tableShapeFor(capacity);
    EXPECT_EQ(shape.lanes, lanes) << capacity;
    EXPECT_EQ(shape.width, width) << capacity;
    EXPECT_EQ(shape.held, held) << capacity;
  };
  expectShape(0, 4, 64, 2);
  expectShape(9, 4, 64, 2);    // M = 3: 8 terms, 2 a lane
  expectShape(25, 4, 64, 6);   // M = 5: 24 terms, 6 a lane
  expectShape(49, 8, 32, 6);   // M = 7: 48 terms, 6 a lane
  expectShape(81, 8, 32, 10);  // M = 9: 80 terms, 10 a lane
  expectShape(289, 16, 16, 18); // M = 17: 288 terms, 18 a lane
  expectShape(290, 32, 16, 16);
  expectShape(961, 32, 16, 16); // M = 31: 16 a lane held, 14 from the table
  expectShape(termCapacity({int64_t(1) << 40, int64_t(1) << 40}), 32, 16, 16);
}

TEST(CudaFlexibleShape, EveryTermTableShapeHoldsTheSquareWindowsItServesAndFitsABlock) {
  for (int index = 0; index < TermTableShapeCount; ++index) {
    const TermTableShape &shape = TermTableShapes[index];
    EXPECT_LE(shape.lanes * unsigned(shape.width), 512u) << index;
    EXPECT_EQ(shape.lanes & (shape.lanes - 1), 0u) << index; // a power of two: groups within a warp
    EXPECT_LE(shape.lanes, 32u) << index;
    if (shape.upTo != INT64_MAX) {
      // The largest square window served, less its centre, is held in registers.
      int64_t side = 1;
      while ((side + 1) * (side + 1) <= shape.upTo)
        ++side;
      EXPECT_LE(side * side - 1, int64_t(shape.held) * shape.lanes) << index;
    }
  }
  // The shapes chosen by capacity serve growing capacities, the last all of them.
  for (int index = 0; index + 1 < TermTableShapesByCapacity; ++index)
    EXPECT_LT(TermTableShapes[index].upTo, TermTableShapes[index + 1].upTo) << index;
  EXPECT_EQ(TermTableShapes[TermTableShapesByCapacity - 1].upTo, INT64_MAX);
}

TEST(CudaFlexibleShape, TheWideShapeTakesOverWhereTheNarrowStripsWouldNotAllBeResident) {
  const TermTableShape &wide = TermTableShapes[WideTermTableShape];
  EXPECT_EQ(wide.lanes, 8u);
  EXPECT_EQ(wide.width, 32);
  EXPECT_EQ(wide.held, 36);
  auto shapeFor = [](int64_t capacity, int64_t columns, std::optional<int64_t> lanes = std::nullopt) {
    return TermTableShapes[termTableShapeIndex(capacity, lanes, columns, 132)];
  };
  // 16 x 16 strips, two blocks an SM: 264 resident on 132 SMs, so 4224 columns at most.
  EXPECT_EQ(shapeFor(289, 2048).width, 16);  // 128 strips
  EXPECT_EQ(shapeFor(289, 4224).width, 16);  // 264
  EXPECT_EQ(shapeFor(289, 4225).width, 32);  // 265
  EXPECT_EQ(shapeFor(289, 8192).held, 36);   // 512
  EXPECT_EQ(shapeFor(169, 8192).held, 36);   // M = 13
  // Other capacities have no alternative; forced lanes and an unknown device keep the capacity's shape.
  EXPECT_EQ(shapeFor(81, 100000).held, 10);
  EXPECT_EQ(shapeFor(290, 100000).lanes, 32u);
  EXPECT_EQ(shapeFor(289, 8192, 16).width, 16);
  EXPECT_EQ(TermTableShapes[termTableShapeIndex(289, std::nullopt, 8192, 0)].width, 16);
}

TEST(CudaFlexibleShape, TheDecoupledStepIsBuiltForWindowsOf2To32) {
  EXPECT_TRUE(decoupledStepBuiltFor(2));
  EXPECT_TRUE(decoupledStepBuiltFor(3));
  EXPECT_TRUE(decoupledStepBuiltFor(17));
  EXPECT_TRUE(decoupledStepBuiltFor(32));
  // Outside the windows it is built for (the halo in one warp), never.
  EXPECT_FALSE(decoupledStepBuiltFor(1));
  EXPECT_FALSE(decoupledStepBuiltFor(33));
}

TEST(CudaSlidingRun, LengthsUpTo32PickTheKernelBuiltForThemAndOthersTheLoop) {
  auto picked = [](int64_t length) {
    int run = -1, calls = 0;
    withSlidingRun(length, [&](auto built) {
      run = decltype(built)::value;
      ++calls;
    });
    EXPECT_EQ(calls, 1) << "length " << length;
    return run;
  };
  EXPECT_EQ(picked(1), 1);
  EXPECT_EQ(picked(3), 3);
  EXPECT_EQ(picked(17), 17);
  EXPECT_EQ(picked(32), 32);
  // The kernel that loops over the run's steps: longer runs, and none (a sum over an empty range).
  EXPECT_EQ(picked(33), 0);
  EXPECT_EQ(picked(int64_t(1) << 40), 0);
  EXPECT_EQ(picked(0), 0);
  EXPECT_EQ(picked(-4), 0);
}

TEST(CudaFlexibleShape, EveryShapesBlockWithItsCoordinatorFitsItsBlocksAnSm) {
  // An H100 SM: 2048 threads, 65536 registers; a block: 1024 threads. The window sums of the 256-thread
  // strips took up to 113 registers and the 512-thread one 76 without spilling.
  for (int index = 0; index < TermTableShapeCount; ++index) {
    const int compute = int(TermTableShapes[index].lanes) * TermTableShapes[index].width;
    const int held = TermTableShapes[index].held;
    const int threads = flexibleBlockThreads(compute), blocks = flexibleMinBlocks(compute, held);
    EXPECT_EQ(threads, compute + 32) << index; // one coordinator warp
    EXPECT_LE(threads, 1024) << index;
    EXPECT_LE(blocks * threads, 2048) << index;
    EXPECT_GE(65536 / (blocks * threads), compute > 256 ? 76 : held > 18 ? 167 : 113) << index;
  }
  EXPECT_EQ(flexibleMinBlocks(256), 2);
  EXPECT_EQ(flexibleMinBlocks(256, 18), 2);
  EXPECT_EQ(flexibleMinBlocks(256, 36), 1);
  EXPECT_EQ(flexibleMinBlocks(512), 1);
}

TEST(CudaFlexibleShape, ForcedLanesPickTheShapeOfThoseLanesThatServesTheCapacity) {
  EXPECT_EQ(tableShapeFor(9, 8).held, 6);
  EXPECT_EQ(tableShapeFor(81, 8).held, 10);
  EXPECT_EQ(tableShapeFor(1000, 8).held, 10); // the largest of 8 lanes; the rest from the table
  EXPECT_EQ(tableShapeFor(9, 32).lanes, 32u);
  EXPECT_EQ(tableShapeFor(961, 4).held, 6);
  for (int64_t lanes : {4, 8, 16, 32})
    for (int64_t capacity : {1, 9, 81, 289, 961})
      EXPECT_EQ(int64_t(tableShapeFor(capacity, lanes).lanes), lanes) << capacity;
}

TEST(CudaFlexibleShape, WithTableShapeAtPassesThatShape) {
  for (int index = 0; index < TermTableShapeCount; ++index) {
    const TermTableShape &expected = TermTableShapes[index];
    const auto [lanes, width, held] = withTableShapeAt(index, [](auto shape) {
      using Shape = decltype(shape);
      return std::tuple(Shape::Lanes, Shape::Width, Shape::Held);
    });
    EXPECT_EQ(lanes, expected.lanes) << index;
    EXPECT_EQ(width, expected.width) << index;
    EXPECT_EQ(held, expected.held) << index;
  }
  setenv("POLYC_CUDA_LANES", "16", 1);
  EXPECT_EQ(TermTableShapes[termTableShapeIndex(9, lanesOverride())].lanes, 16u);
  unsetenv("POLYC_CUDA_LANES");
}

TEST(CudaFlexibleShape, TermCapacityIsTheProductOfTheExtentsCapped) {
  EXPECT_EQ(termCapacity({17, 17}), 289);
  EXPECT_EQ(termCapacity({}), 1);
  EXPECT_EQ(termCapacity({5, 0, 7}), 0);
  EXPECT_EQ(termCapacity({-3, 4}), 0);
  EXPECT_EQ(termCapacity({int64_t(1) << 30, int64_t(1) << 30}), int64_t(1) << 24);
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

// The tile of a matrix product: the largest whose padding is within an eighth of the least.
static std::tuple<int, int> productTileFor(int64_t rows, int64_t columns) {
  std::tuple<int, int> shape;
  withProductTile(rows, columns, [&](auto tile) { shape = {decltype(tile)::BM, decltype(tile)::BN}; });
  return shape;
}

TEST(CudaProduct, TheTileFollowsTheOutputs) {
  using Shape = std::tuple<int, int>;
  EXPECT_EQ(productTileFor(32561, 1024), Shape(128, 128)); // the wide MLP's hidden layer
  EXPECT_EQ(productTileFor(1024, 784), Shape(128, 128));   // its input gradient (896 columns padded)
  EXPECT_EQ(productTileFor(800, 900), Shape(128, 128));    // 2mm: 24% more padded than 32 x 32 tiles
  EXPECT_EQ(productTileFor(32561, 64), Shape(128, 32));    // the adult-sized MLP's hidden layer
  EXPECT_EQ(productTileFor(32561, 1), Shape(128, 32));     // one output
  EXPECT_EQ(productTileFor(10, 1024), Shape(32, 128));     // few rows
  EXPECT_EQ(productTileFor(64, 15), Shape(32, 32));        // a small gradient
  EXPECT_EQ(productTileFor(1, 1), Shape(32, 32));
}

TEST(CudaProduct, EnoughTilesTakeTheTermsWhole) {
  ProductShape shape{0, 32561, 0, 1024, 0, 784};
  ProductSplit split = productSplit<SquareProductTile>(shape, 132);
  EXPECT_EQ(split.splits, 1);
  EXPECT_GE(split.chunk, 784);
}

TEST(CudaProduct, FewTilesSplitTheTermsToFillTheWaves) {
  for (auto [rows, columns, terms] : {std::tuple<int64_t, int64_t, int64_t>{1024, 784, 32561},
                                      {64, 15, 32561},
                                      {1, 64, 32561},
                                      {300, 200, 5000},
                                      {5, 7, 3},
                                      {2, 3, 0},
                                      {1, 1, 1}}) {
    ProductShape shape{0, rows, 0, columns, 0, terms};
    withProductTile(rows, columns, [&](auto tile) {
      using Tile = decltype(tile);
      ProductSplit split = productSplit<Tile>(shape, 132);
      // Whole steps a split, every term in exactly one split, no empty split.
      EXPECT_EQ(split.chunk % Tile::BK, 0) << rows << "x" << columns;
      EXPECT_GE(split.splits * split.chunk, terms);
      EXPECT_LT((split.splits - 1) * split.chunk, std::max<int64_t>(terms, 1));
      if (terms >= 4 * Tile::BK * 2) {
        EXPECT_GT(split.splits, 1) << rows << "x" << columns; // fewer tiles than the device holds
      }
    });
  }
  // The input gradient of the wide MLP: 56 tiles; 14 splits fill 3 waves of 264 blocks to 99%.
  EXPECT_EQ(productSplit<SquareProductTile>(ProductShape{0, 1024, 0, 784, 0, 32561}, 132).splits, 14);
  // gemm at PolyBench's large size: 72 tiles; 3 splits (one wave), not 11 (three fuller waves, but 4x
  // the partial sums): measured 1.3x faster on the H100.
  EXPECT_EQ(productSplit<SquareProductTile>(ProductShape{0, 1000, 0, 1100, 0, 1200}, 132).splits, 3);
  // The adult-sized MLP's input gradient: 2 small tiles over 32,561 cases; splits of a few steps each,
  // whose partial sums are small (31 splits of 33 steps measured 1.5x slower than 132 of 8).
  ProductSplit gradient = productSplit<SmallProductTile>(ProductShape{0, 64, 0, 15, 0, 32561}, 132);
  EXPECT_GE(gradient.splits, 100);
  EXPECT_LE(gradient.chunk, 8 * SmallProductTile::BK);
}
