// The cost model behind the allocation choice, with its constants in one place so that they can be
// recalibrated from measurements (docs/scheduling.md explains each one and where it comes from).
#pragma once

#include <cstdint>
#include <string>

namespace polyc::allocate {

struct CostConstants {
  // Seed 004, eq. (12): global-memory operations per block and step of the flexible kernel when a
  // block keeps its column. The seed counts 5 (an image read, the locks and the progress counters), so
  // the fixed allocation won up to m = 5. polyc's flexible kernels stage rows ahead and keep the
  // counters off the compute threads' path. At m = 2 and 3 they measured 3.6-7x faster than the
  // fixed ones on both GPU targets, and within 4% of them or faster on the CPU (docs/performance.md,
  // "The allocation cost model, recalibrated"). Calibrated to that: 1, so flexible wins for m > 1.
  double flexibleBaseOps = 1.0;
  // p1: the probability that a block switches columns, and c1: the columns it then moves. The seed
  // leaves both to measurement; with p1 = 0 the model reduces to "flexible wins for m > flexibleBaseOps".
  double switchProbability = 0.0;
  double switchColumns = 1.0;
  // Pattern-parallel reductions (seed 001): a group of threads per output, sized from the length.
  int64_t minReductionGroup = 32;
  int64_t maxReductionGroup = 1024;
  // ... but only for fewer outputs than this: with more, a thread per output already fills a GPU
  // (an H100 holds 132 x 2048 threads), and groups only multiply the threads and the reduction's
  // shuffles (measured on the H100: a 2048 x 2048 convolution with M = 31, docs/performance.md).
  // Not when each output reads a row of its own along the terms (the rate network's w[j, c]): one
  // thread per output then reads memory a row apart from its neighbours (measured on the H200 at 80,000
  // neurons), and the groups are what make the reads coalesced.
  int64_t groupOutputsLimit = 65536;
};

const CostConstants &costConstants();

// Seed 004's per-block, per-step global-memory operations for a window of m columns.
struct WavefrontCost {
  double fixedOps = 0;    // m: the window's rows are read by the block's threads in m operations
  double flexibleOps = 0; // b (1 - p1) + p1 c1 m, b = flexibleBaseOps
  bool flexibleWins = false;
};
WavefrontCost wavefrontCost(double window);

// The largest window for which the fixed allocation still wins (flexible when m > threshold), or -1
// when the flexible allocation never wins under the constants.
int64_t flexibleThreshold();

// Threads per output for a reduction of `length` terms: the next power of two, clamped to
// [minReductionGroup, maxReductionGroup]; 0 when the reduction is shorter than the smallest group
// (then one thread per output computes it alone).
int64_t reductionGroupSize(int64_t length);

// The formulas above as text, for polyc explain.
std::string describeWavefrontCost(double window);

} // namespace polyc::allocate
