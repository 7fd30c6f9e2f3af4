// The host side of the matrix products of Product.cuh: the tile shapes, the choice among them and the
// split of the terms over blocks. Plain C++ (the unit tests check it without a GPU).
#pragma once

#include "polyc/cuda/Device.h"

#include <algorithm>
#include <cstdint>

namespace polyc::rt::cuda {

// The product's index ranges: a in [rowFirst, rowFirst + rows), b likewise, c in [termFirst, termFirst +
// terms).
struct ProductShape {
  int64_t rowFirst = 0, rows = 0, columnFirst = 0, columns = 0, termFirst = 0, terms = 0;
};

// A block computes BM x BN outputs with (BM / TM) x (BN / TN) threads, TM x TN each, taking BK terms a step.
// A thread's rows are runs of V = min(TM, 4) consecutive ones, BM * V / TM apart (columns likewise): each
// run is one 16-byte shared-memory read, and neighbouring threads store neighbouring runs.
template <int BM_, int BN_, int BK_, int TM_, int TN_, int Blocks_ = 2> struct ProductTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int Threads = (BM / TM) * (BN / TN);
  static constexpr int VM = TM < 4 ? TM : 4, VN = TN < 4 ? TN : 4;
  // The loads of a factor's tile that each thread makes a step.
  static constexpr int RowLoads = BM * BK / Threads, ColumnLoads = BN * BK / Threads;
  // Padding keeps a step's rows on different banks when the threads fill them along the terms.
  static constexpr int Pad = 4;
  // Blocks a multiprocessor holds (the kernel's launch bounds; the split of the terms counts on them).
  static constexpr int BlocksPerMultiprocessor = Blocks_;
  static_assert(BM * BK % Threads == 0 && BN * BK % Threads == 0, "whole loads a thread");
  static __device__ __forceinline__ int row(int threadRow, int i) {
    return i / VM * (BM * VM / TM) + threadRow * VM + i % VM;
  }
  static __device__ __forceinline__ int column(int threadColumn, int j) {
    return j / VN * (BN * VN / TN) + threadColumn * VN + j % VN;
  }
};

// The shapes: square tiles for wide products (8 x 8 outputs a thread, the ratio of arithmetic to
// shared-memory reads that approaches the FP32 peak), thin ones for a layer of few outputs or a gradient
// of few weights, small ones when both extents are small.
using SquareProductTile = ProductTile<128, 128, 8, 8, 8>;
using TallProductTile = ProductTile<128, 32, 16, 4, 4>;
using WideProductTile = ProductTile<32, 128, 16, 4, 4>;
using SmallProductTile = ProductTile<32, 32, 32, 2, 2>;

// The largest tile whose padding of the outputs (rows and columns rounded up to whole tiles) is within a
// quarter of the least padding's (an eighth between the thin tiles): 32,561 x 64 outputs take 128 x 32
// tiles (none padded), not 128 x 128 ones (half padded); 800 x 900 take 128 x 128 tiles (24% more padded
// outputs than 32 x 32 ones, but 8 x 8 sums a thread for each pair of shared-memory reads, not 2 x 2).
template <typename Body> void withProductTile(int64_t rows, int64_t columns, Body &&body) {
  auto padded = [&](int64_t bm, int64_t bn) {
    return (rows + bm - 1) / bm * bm * ((columns + bn - 1) / bn * bn);
  };
  const int64_t square = padded(128, 128), tall = padded(128, 32), wide = padded(32, 128),
                small = padded(32, 32);
  const int64_t least = std::min({square, tall, wide, small}), within = least + least / 8;
  if (square <= least + least / 4)
    body(SquareProductTile{});
  else if (tall <= within && tall <= wide)
    body(TallProductTile{});
  else if (wide <= within)
    body(WideProductTile{});
  else
    body(SmallProductTile{});
}

// How the terms are split over blocks: `splits` ranges of `chunk` terms (a multiple of BK), the last
// shorter. Only when the tiles are fewer than the device holds at once; then the split with the least
// estimated time: the waves of blocks times the steps of a split, each step the tile's FLOPs at a block's
// share of the FP32 rate but no less than a load's latency, plus the partial sums' traffic (written once,
// read once by the second kernel). Measured on the H100 (docs/performance.md at 506c944): gemm at
// 1000 x 1100 x 1200 ran 1.3x faster in 3 splits than in 11 (their partial sums cost more than the
// fuller waves gained), and the MLP's gradients of 64 x 15 weights over 32,561 cases 1.5x slower in 31
// splits than in 132 (a split of 1,000 terms is 33 dependent steps).
struct ProductSplit {
  int64_t splits = 1, chunk = 0;
};

// The H100's figures behind the estimate: a block's share of the FP32 rate (about 55% of 67 TFLOP/s over
// 264 resident blocks), the least time of a step (its loads' latency) and the copy bandwidth.
inline constexpr double ProductBlockFlopsPerUs = 140e3, ProductStepUsMin = 0.6, ProductBytesPerUs = 3e6;

template <class Tile> double productSplitTime(const ProductShape &shape, int64_t tiles, int64_t resident, int64_t s) {
  const int64_t terms = std::max<int64_t>(shape.terms, 0);
  const int64_t steps = ((terms + s - 1) / s + Tile::BK - 1) / Tile::BK;
  const int64_t waves = (tiles * s + resident - 1) / resident;
  const double step = std::max(2.0 * Tile::BM * Tile::BN * Tile::BK / ProductBlockFlopsPerUs, ProductStepUsMin);
  const double partials = s > 1 ? double(s) * double(shape.rows) * double(shape.columns) * 8 / ProductBytesPerUs : 0;
  return double(waves * steps) * step + partials;
}

template <class Tile> ProductSplit productSplit(const ProductShape &shape, int multiprocessors) {
  const int64_t tiles = std::max<int64_t>(1, ((shape.rows + Tile::BM - 1) / Tile::BM) *
                                                 ((shape.columns + Tile::BN - 1) / Tile::BN));
  const int64_t resident = int64_t(Tile::BlocksPerMultiprocessor) * multiprocessors;
  const int64_t terms = std::max<int64_t>(shape.terms, 0);
  int64_t splits = 1;
  if (tiles < resident) {
    const int64_t most = std::max<int64_t>(1, std::min(terms / Tile::BK, 4 * ((resident + tiles - 1) / tiles)));
    double best = productSplitTime<Tile>(shape, tiles, resident, 1);
    for (int64_t s = 2; s <= most; ++s)
      if (double time = productSplitTime<Tile>(shape, tiles, resident, s); time < best) {
        best = time;
        splits = s;
      }
  }
  ProductSplit split;
  const int64_t perSplit = (terms + splits - 1) / splits;
  split.chunk = std::max<int64_t>(Tile::BK, (perSplit + Tile::BK - 1) / Tile::BK * Tile::BK);
  split.splits = std::max<int64_t>(1, (terms + split.chunk - 1) / split.chunk);
  return split;
}

// MPI: the shape's rows, or its terms, within [first, end) (a rank's block of them; none when they miss).
inline ProductShape rowsWithin(ProductShape shape, int64_t first, int64_t end) {
  const int64_t lo = std::max(shape.rowFirst, first), hi = std::min(shape.rowFirst + shape.rows, end);
  shape.rowFirst = lo;
  shape.rows = std::max<int64_t>(0, hi - lo);
  return shape;
}
inline ProductShape termsWithin(ProductShape shape, int64_t first, int64_t end) {
  const int64_t lo = std::max(shape.termFirst, first), hi = std::min(shape.termFirst + shape.terms, end);
  shape.termFirst = lo;
  shape.terms = std::max<int64_t>(0, hi - lo);
  return shape;
}

// The elements of partial sums a product of this shape needs (0 when its terms are not split): the
// generated code allocates them before any launch, outside a captured graph.
inline int64_t productPartialElements(const ProductShape &shape) {
  if (shape.rows <= 0 || shape.columns <= 0)
    return 0;
  int64_t elements = 0;
  withProductTile(shape.rows, shape.columns, [&](auto tile) {
    ProductSplit split = productSplit<decltype(tile)>(shape, deviceProperties().multiProcessorCount);
    elements = split.splits > 1 ? split.splits * shape.rows * shape.columns : 0;
  });
  return elements;
}

} // namespace polyc::rt::cuda
