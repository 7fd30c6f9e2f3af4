// A GCC 12.2 bug (Debian 12's g++ 12.2.0-14), found by the fuzzer (seed 91001466, 2026-11-29, the cpu target):
// at -O3, loop distribution (-ftree-loop-distribution) reorders this nest so that w[4][1] = 1 + w[2][2]
// reads w[2][2] before it is written: the read is of a row two iterations of the outer loop back, at a
// stride-2 column, under a guard. -O2, -O3 -fno-tree-loop-distribution and clang-19 -O3 give 2; g++ -O3
// gives 1. polyc build passes -fno-tree-loop-distribution to GCC (compiler/driver/BuildCommand.cpp);
// test/fuzz-programs/regressions/gcc-loop-distribution.poly is the program.
//
//   g++ -O3 gcc-loop-distribution.cpp -o t && ./t                              (exit 1: wrong)
//   g++ -O3 -fno-tree-loop-distribution gcc-loop-distribution.cpp -o t && ./t  (exit 0)
#include <cstdint>
#include <cstdio>

__attribute__((noinline)) void run(float *w, const float *one, int64_t rows) {
  for (int64_t k = 0; k < rows; ++k)
    for (int64_t m = 0; m <= 3; ++m)
      w[k * 4 + m] = one[k * 4 + m] + (k - 2 >= 0 && 2 * m < 4 ? w[(k - 2) * 4 + 2 * m] : 0.0f);
}

int main() {
  float w[20] = {}, one[20];
  for (float &x : one)
    x = 1.0f;
  run(w, one, 5);
  std::printf("w[4][1] = %g (expected 2)\n", w[4 * 4 + 1]);
  return w[4 * 4 + 1] == 2.0f ? 0 : 1;
}
