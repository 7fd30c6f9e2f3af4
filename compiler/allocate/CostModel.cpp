// The allocation cost model: seed 004's count of global-memory operations for fixed and flexible
// wavefronts, and seed 001's choice of threads per output for reductions.
#include "compiler/allocate/CostModel.h"

#include <cmath>
#include <cstdio>

namespace polyc::allocate {

const CostConstants &costConstants() {
  static const CostConstants constants;
  return constants;
}

WavefrontCost wavefrontCost(double window) {
  const CostConstants &c = costConstants();
  WavefrontCost cost;
  cost.fixedOps = window;
  cost.flexibleOps = c.flexibleBaseOps * (1 - c.switchProbability) + c.switchProbability * c.switchColumns * window;
  // d = m - b - p1 (c1 m - b) > 0 (seed 004, eq. 12, with b = flexibleBaseOps; the seed's b is 5)
  cost.flexibleWins = cost.fixedOps - cost.flexibleOps > 0;
  return cost;
}

int64_t flexibleThreshold() {
  const CostConstants &c = costConstants();
  // m (1 - p1 c1) > b (1 - p1): flexible wins for every integer m above floor(b (1 - p1) / (1 - p1 c1)).
  double slope = 1 - c.switchProbability * c.switchColumns;
  if (slope <= 0)
    return -1;
  return static_cast<int64_t>(std::floor(c.flexibleBaseOps * (1 - c.switchProbability) / slope));
}

int64_t reductionGroupSize(int64_t length) {
  const CostConstants &c = costConstants();
  if (length < c.minReductionGroup)
    return 0;
  int64_t group = 1;
  while (group < length && group < c.maxReductionGroup)
    group *= 2;
  return group < c.minReductionGroup ? c.minReductionGroup : group;
}

static std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::string describeWavefrontCost(double window) {
  const CostConstants &c = costConstants();
  WavefrontCost cost = wavefrontCost(window);
  return "fixed: about m = " + number(cost.fixedOps) +
         " global-memory operations per block and step (the m x m window's rows read by the block's "
         "threads) plus one launch per hyperplane; flexible: about b (1 - p1) + p1 c1 m = " +
         number(cost.flexibleOps) + " (b = " + number(c.flexibleBaseOps) + ", p1 = " + number(c.switchProbability) +
         ", c1 = " + number(c.switchColumns) + ")";
}

} // namespace polyc::allocate
