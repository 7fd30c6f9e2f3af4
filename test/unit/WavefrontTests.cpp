// Unit tests of the CPU flexible-wavefront driver (runtime/include/polyc/cpu/Wavefront.h): a
// hand-written 2D IIR body run through runFlexibleWavefront must equal a plain sequential loop nest,
// every point must run once and only after its dependences, for any thread count and shape.
// Built twice: with OpenMP (WavefrontTests) and with std::thread (WavefrontStdThreadTests).
#include "polyc/cpu/Wavefront.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

using polyc::rt::cpu::runFlexibleWavefront;

namespace {

// y[i, j] = sum_{r1, r2 < M} a[r1, r2] x[i - r1, j - r2] + sum_{(k1, k2) != (0, 0)} b[k1, k2]
// y[i - k1, j - k2], zero outside the image. Rows are i, columns are j: (i, j) reads rows <= i of
// columns <= j, the quarter-plane the driver serves.
struct Iir {
  int64_t height, width, window;
  std::vector<double> x, a, b, y;

  Iir(int64_t height, int64_t width, int64_t window, unsigned seed)
      : height(height), width(width), window(window), x(size_t(height * width)),
        a(size_t(window * window)), b(size_t(window * window)), y(size_t(height * width), 0.0) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (double &value : x)
      value = uniform(random);
    for (double &value : a)
      value = uniform(random);
    // Feedback weights with sum |b| = 0.9 keep the recursion bounded.
    double total = 0;
    for (double &value : b)
      total += std::abs(value = uniform(random));
    b[0] = 0;
    for (double &value : b)
      value *= 0.9 / total;
  }

  // One point; the sum order is fixed (r1, r2 then k1, k2 ascending), so any legal schedule gives
  // bit-identical float64 results and the comparison below can be exact.
  void point(int64_t i, int64_t j) {
    double sum = 0;
    for (int64_t r1 = 0; r1 < window; ++r1)
      for (int64_t r2 = 0; r2 < window; ++r2)
        if (i - r1 >= 0 && j - r2 >= 0)
          sum += a[size_t(r1 * window + r2)] * x[size_t((i - r1) * width + (j - r2))];
    for (int64_t k1 = 0; k1 < window; ++k1)
      for (int64_t k2 = 0; k2 < window; ++k2)
        if ((k1 || k2) && i - k1 >= 0 && j - k2 >= 0)
          sum += b[size_t(k1 * window + k2)] * y[size_t((i - k1) * width + (j - k2))];
    y[size_t(i * width + j)] = sum;
  }
};

std::vector<double> sequential(int64_t height, int64_t width, int64_t window, unsigned seed) {
  Iir iir(height, width, window, seed);
  for (int64_t i = 0; i < height; ++i)
    for (int64_t j = 0; j < width; ++j)
      iir.point(i, j);
  return iir.y;
}

std::vector<double> flexible(int64_t height, int64_t width, int64_t window, unsigned seed,
                             int threads) {
  Iir iir(height, width, window, seed);
  runFlexibleWavefront(height, width, threads, [&](int64_t i, int64_t j) { iir.point(i, j); });
  return iir.y;
}

struct Shape {
  int64_t rows, columns;
};

TEST(FlexibleWavefront, IirEqualsSequentialLoopNest) {
  for (Shape shape : {Shape{1, 1}, Shape{1, 7}, Shape{7, 1}, Shape{97, 131}})
    for (int64_t window : {1, 3, 5}) {
      std::vector<double> expected = sequential(shape.rows, shape.columns, window, 11);
      for (int threads : {1, 2, 3, 8, 33}) {
        std::vector<double> got = flexible(shape.rows, shape.columns, window, 11, threads);
        ASSERT_EQ(got, expected) << shape.rows << "x" << shape.columns << " window " << window
                                 << " threads " << threads;
      }
    }
}

// Records, for every point, that it ran once and that each of its quarter-plane dependences
// (the window's points, and the nearest ones of every earlier row/column) had already finished.
TEST(FlexibleWavefront, EveryPointOnceAndAfterItsDependences) {
  std::mt19937 random(2024);
  for (int trial = 0; trial < 60; ++trial) {
    int64_t rows = 1 + int64_t(random() % 40), columns = 1 + int64_t(random() % 40);
    int threads = 1 + int(random() % 16);
    std::vector<std::atomic<int>> runs(size_t(rows * columns));
    std::atomic<bool> orderViolated{false};
    runFlexibleWavefront(rows, columns, threads, [&](int64_t r, int64_t c) {
      // All points with row' <= r, column' <= c, other than (r, c): checking the three nearest
      // suffices because each of them was itself checked against its own predecessors.
      if ((r > 0 && runs[size_t((r - 1) * columns + c)].load() != 1) ||
          (c > 0 && runs[size_t(r * columns + c - 1)].load() != 1) ||
          (r > 0 && c > 0 && runs[size_t((r - 1) * columns + c - 1)].load() != 1))
        orderViolated = true;
      runs[size_t(r * columns + c)].fetch_add(1);
    });
    EXPECT_FALSE(orderViolated) << rows << "x" << columns << " threads " << threads;
    for (int64_t p = 0; p < rows * columns; ++p)
      ASSERT_EQ(runs[size_t(p)].load(), 1) << "point " << p << " of " << rows << "x" << columns;
  }
}

TEST(FlexibleWavefront, StressRandomSizes) {
  std::mt19937 random(99);
  for (int trial = 0; trial < 40; ++trial) {
    int64_t rows = 1 + int64_t(random() % 64), columns = 1 + int64_t(random() % 64);
    int64_t window = 1 + int64_t(random() % 4);
    int threads = 1 + int(random() % 64);
    unsigned seed = unsigned(random());
    ASSERT_EQ(flexible(rows, columns, window, seed, threads),
              sequential(rows, columns, window, seed))
        << rows << "x" << columns << " window " << window << " threads " << threads;
  }
}

TEST(FlexibleWavefront, ZeroSizesComputeNothing) {
  std::atomic<int> calls{0};
  for (int threads : {0, 1, 4}) {
    runFlexibleWavefront(0, 5, threads, [&](int64_t, int64_t) { ++calls; });
    runFlexibleWavefront(5, 0, threads, [&](int64_t, int64_t) { ++calls; });
    runFlexibleWavefront(0, 0, threads, [&](int64_t, int64_t) { ++calls; });
  }
  EXPECT_EQ(calls.load(), 0);
  // threads <= 0 picks a default and still computes everything.
  runFlexibleWavefront(3, 4, 0, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls.load(), 12);
}

TEST(FlexibleWavefront, ExceptionFromBodyReachesCaller) {
  for (int threads : {1, 4}) {
    std::atomic<int> calls{0};
    EXPECT_THROW(runFlexibleWavefront(50, 50, threads,
                                      [&](int64_t r, int64_t c) {
                                        ++calls;
                                        if (r == 10 && c == 20)
                                          throw std::runtime_error("point failed");
                                      }),
                 std::runtime_error);
    EXPECT_LT(calls.load(), 2500); // the workers stopped early
  }
}

} // namespace
