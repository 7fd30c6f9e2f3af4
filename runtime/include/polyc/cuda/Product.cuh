// Matrix products on the GPU: a kernel band whose one statement is out[a, b] = f(sum(c) A(a, c) * B(b, c))
// (map::ProductForm) runs as tiles of outputs through shared memory, each thread holding a small block of
// them in registers (the mapping of PPCG and of the classic SGEMM kernels). The generated code gives the
// factors and the store through an Operands object:
//
//   struct Operands {
//     __device__ T row(Index a, Index c) const;              // A(a, c)
//     __device__ T column(Index b, Index c) const;           // B(b, c)
//     __device__ void store(Index a, Index b, T sum) const;  // the statement at (a, b) from its sum
//   };
//
// and whether each factor's memory runs along the terms (its last index is c: X[p, i] summed over i) or
// along the outputs (d1[p, j] summed over p), so that the tiles load in whole rows. When the outputs are too
// few to fill the device (a gradient's 64 x 15 weights summed over 32,561 cases), the terms are split over
// the blocks (z of the grid): each writes its partial sums, and a second kernel adds them in a fixed order
// and stores (a two-level reduction: block, then grid).
#pragma once

#include "polyc/cuda/Check.h"
#include "polyc/cuda/Device.h"
#include "polyc/cuda/ProductPlan.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace polyc::rt::cuda {

// One tile of outputs over one split's terms. Index is the generated code's index type. Each step's
// factors are read from global memory into registers while the step before is computed from shared
// memory, so that the loads' latency overlaps the arithmetic.
template <class Tile, bool RowAlongTerms, bool ColumnAlongTerms, typename T, typename Index, class Operands>
__global__ void __launch_bounds__(Tile::Threads, Tile::BlocksPerMultiprocessor)
    productTiles(const Operands operands, const Index rowFirst, const Index rows, const Index columnFirst,
                 const Index columns, const Index termFirst, const Index terms, const Index chunk,
                 T *partials) {
  constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, TM = Tile::TM, TN = Tile::TN;
  constexpr int ThreadColumns = BN / TN;
  __shared__ __align__(16) T rowTile[BK][BM + Tile::Pad];
  __shared__ __align__(16) T columnTile[BK][BN + Tile::Pad];
  const int thread = int(threadIdx.x);
  const int threadRow = thread / ThreadColumns, threadColumn = thread % ThreadColumns;
  const Index tileRow = Index(blockIdx.x) * BM;
  const Index begin = Index(blockIdx.z) * chunk;
  const Index end = begin + chunk < terms ? begin + chunk : terms;
  // The element of a factor's tile that load `l` of this thread fills: along the terms or the outputs.
  auto rowSlot = [&](int l, int &r, int &k) {
    const int e = thread + l * Tile::Threads;
    r = RowAlongTerms ? e / BK : e % BM;
    k = RowAlongTerms ? e % BK : e / BM;
  };
  auto columnSlot = [&](int l, int &r, int &k) {
    const int e = thread + l * Tile::Threads;
    r = ColumnAlongTerms ? e / BK : e % BN;
    k = ColumnAlongTerms ? e % BK : e / BN;
  };
  // Column tiles beyond the grid's y limit (65,535) are the next rounds of the blocks.
  for (Index tileColumn = Index(blockIdx.y) * BN; tileColumn < columns; tileColumn += Index(gridDim.y) * BN) {
    T rowNext[Tile::RowLoads], columnNext[Tile::ColumnLoads];
    auto load = [&](Index step) {
#pragma unroll
      for (int l = 0; l < Tile::RowLoads; ++l) {
        int r, k;
        rowSlot(l, r, k);
        const Index a = tileRow + r, c = step + k;
        rowNext[l] = a < rows && c < end ? operands.row(rowFirst + a, termFirst + c) : T(0);
      }
#pragma unroll
      for (int l = 0; l < Tile::ColumnLoads; ++l) {
        int r, k;
        columnSlot(l, r, k);
        const Index b = tileColumn + r, c = step + k;
        columnNext[l] = b < columns && c < end ? operands.column(columnFirst + b, termFirst + c) : T(0);
      }
    };
    T sums[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j)
        sums[i][j] = T(0);
    if (begin < end)
      load(begin);
    for (Index step = begin; step < end; step += BK) {
#pragma unroll
      for (int l = 0; l < Tile::RowLoads; ++l) {
        int r, k;
        rowSlot(l, r, k);
        rowTile[k][r] = rowNext[l];
      }
#pragma unroll
      for (int l = 0; l < Tile::ColumnLoads; ++l) {
        int r, k;
        columnSlot(l, r, k);
        columnTile[k][r] = columnNext[l];
      }
      __syncthreads();
      if (step + BK < end)
        load(step + BK);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        T a[TM], b[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
          a[i] = rowTile[k][Tile::row(threadRow, i)];
#pragma unroll
        for (int j = 0; j < TN; ++j)
          b[j] = columnTile[k][Tile::column(threadColumn, j)];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j)
            sums[i][j] += a[i] * b[j];
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const Index a = tileRow + Tile::row(threadRow, i);
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const Index b = tileColumn + Tile::column(threadColumn, j);
        if (a >= rows || b >= columns)
          continue;
        if (partials)
          partials[(int64_t(blockIdx.z) * rows + a) * columns + b] = sums[i][j];
        else
          operands.store(rowFirst + a, columnFirst + b, sums[i][j]);
      }
    }
  }
}

// The second level of a split product: each output's partial sums added in split order, then stored.
template <typename T, typename Index, class Operands>
__global__ void __launch_bounds__(256)
    productSplitSums(const Operands operands, const Index rowFirst, const Index rows, const Index columnFirst,
                     const Index columns, const Index splits, const T *partials) {
  const Index outputs = rows * columns;
  for (Index o = Index(blockIdx.x) * blockDim.x + threadIdx.x; o < outputs;
       o += Index(gridDim.x) * blockDim.x) {
    T sum = T(0);
    for (Index s = 0; s < splits; ++s)
      sum += partials[int64_t(s) * outputs + o];
    operands.store(rowFirst + o / columns, columnFirst + o % columns, sum);
  }
}

// Enqueues the product on `stream`: nothing when it has no outputs; `partials` holds
// productPartialElements(shape) elements.
template <bool RowAlongTerms, bool ColumnAlongTerms, typename T, typename Index, class Operands>
void enqueueProduct(const Operands &operands, const ProductShape &shape, T *partials, cudaStream_t stream) {
  if (shape.rows <= 0 || shape.columns <= 0)
    return;
  const int64_t terms = std::max<int64_t>(shape.terms, 0);
  withProductTile(shape.rows, shape.columns, [&](auto tile) {
    using Tile = decltype(tile);
    ProductSplit split = productSplit<Tile>(shape, deviceProperties().multiProcessorCount);
    const int64_t columnTiles = (shape.columns + Tile::BN - 1) / Tile::BN;
    const dim3 grid(unsigned((shape.rows + Tile::BM - 1) / Tile::BM),
                    unsigned(std::min<int64_t>(columnTiles, 65535)), unsigned(split.splits));
    T *splitSums = split.splits > 1 ? partials : nullptr;
    productTiles<Tile, RowAlongTerms, ColumnAlongTerms, T, Index><<<grid, Tile::Threads, 0, stream>>>(
        operands, Index(shape.rowFirst), Index(shape.rows), Index(shape.columnFirst), Index(shape.columns),
        Index(shape.termFirst), Index(terms), Index(split.chunk), splitSums);
    POLYC_CUDA_CHECK_LAUNCH("productTiles");
    if (!splitSums)
      return;
    const int64_t outputs = shape.rows * shape.columns;
    const unsigned blocks = unsigned(
        std::min<int64_t>((outputs + 255) / 256, 8 * int64_t(deviceProperties().multiProcessorCount)));
    productSplitSums<T, Index><<<blocks, 256, 0, stream>>>(operands, Index(shape.rowFirst), Index(shape.rows),
                                                           Index(shape.columnFirst), Index(shape.columns),
                                                           Index(split.splits), splitSums);
    POLYC_CUDA_CHECK_LAUNCH("productSplitSums");
  });
}

} // namespace polyc::rt::cuda
