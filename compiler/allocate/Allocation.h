// Processor allocation per band: data-parallel, reduction (pattern-parallel), fixed wavefront (one launch
// per hyperplane) or flexible wavefront (one persistent kernel with column locks), chosen by a documented
// cost model (CostModel.cpp) unless forced. Built by allocate.
#pragma once

#include "compiler/schedule/Schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace polyc::allocate {

enum class AllocationKind { Sequential, DataParallel, Reduction, FixedWavefront, FlexibleWavefront };
const char *spelling(AllocationKind kind);

// For a wavefront: which original dimension is the processor ("column") and which is walked in order
// ("row") by the flexible allocation.
struct WavefrontMapping {
  unsigned rowDim = 0, columnDim = 1; // indices into the statement's dimensions
  std::string window;                 // the dependence window along the columns, e.g. "M"
};

struct BandAllocation {
  unsigned band = 0;
  AllocationKind kind = AllocationKind::Sequential;
  // When the best kind depends on a run-time param, both variants are emitted and
  // `runtimeCondition` (a C expression over params, e.g. "M > 1") picks `kind` if true, else `otherwise`.
  std::string runtimeCondition;
  std::optional<AllocationKind> otherwise;
  std::optional<WavefrontMapping> wavefront;
  int64_t reductionGroupSize = 0; // threads per output for a Reduction band; 0 when chosen at run time
  // The number of terms of the band's longest reduction, as an expression of params ("C", "4500"); when
  // it is not a compile-time constant, the group size is computed at run time by the same rule
  // (next power of two, clamped to [32, 1024]) and `runtimeCondition` is "C >= 32".
  std::string reductionLength;
  // Its outputs, as an expression of params ("N"): a group size chosen at run time is halved while the
  // groups still fill the device (polyc::rt::cuda::groupSizeFor).
  std::string reductionOutputs;
  std::string reason;             // the cost model's numbers, in words, for polyc explain
};

struct Allocation {
  std::vector<BandAllocation> bands; // one per schedule band, same order
};

enum class AllocationChoice { Auto, Fixed, Flexible };
struct AllocationOptions {
  AllocationChoice choice = AllocationChoice::Auto; // --allocation
  int64_t blockSize = 0;                            // --block, 0: the cost model's
};

llvm::Expected<Allocation> allocate(const model::Model &model, const analysis::DependenceGraph &deps,
                                    const schedule::Schedule &schedule, const AllocationOptions &options);

} // namespace polyc::allocate
