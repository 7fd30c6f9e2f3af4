// Unit tests of the runtime's timing helpers (runtime/include/polyc/Timer.h): the median that
// `--repeat K` reports and the steady-clock stopwatch.
#include "polyc/Timer.h"

#include <gtest/gtest.h>

#include <thread>

using polyc::rt::median;
using polyc::rt::Timer;

TEST(RuntimeTimer, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({4.0}), 4.0);
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({5.0, 1.0, 4.0, 2.0}), 3.0);
  EXPECT_EQ(median({7.0, 7.0, 1.0, 9.0, 7.0}), 7.0);
  EXPECT_EQ(median({2.0, 1.0}), 1.5);
}

TEST(RuntimeTimer, MeasuresElapsedTime) {
  Timer timer;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  double first = timer.seconds();
  EXPECT_GE(first, 0.019);
  EXPECT_LT(first, 5.0);
  EXPECT_GE(timer.seconds(), first); // steady: never goes back
  timer.restart();
  EXPECT_LT(timer.seconds(), first);
}
