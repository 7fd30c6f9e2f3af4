// Host timing for generated programs: a steady-clock stopwatch for the compute region and the
// median/min/max summary that `--repeat K` prints.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace polyc::rt {

// Measures wall-clock seconds on the steady (monotonic) clock, so clock adjustments never make a
// time negative.
class Timer {
public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

private:
  std::chrono::steady_clock::time_point start_;
};

// The median of `values` (the mean of the two middle values for an even count); 0 when empty.
inline double median(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = values[middle];
  if (values.size() % 2 == 1)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2.0;
}

} // namespace polyc::rt
