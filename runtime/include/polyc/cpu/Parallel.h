// The work below which polyc's CPU target runs a parallel loop on one thread. For a loop whose body is
// statement calls only, generated code tests `accesses >= polyc::rt::cpu::MinParallelAccesses`, where
// `accesses` counts the array elements the loop reads and writes (its iterations times its statements'
// accesses), and runs the loop under `#pragma omp parallel for` or as a plain loop. OpenMP's fork and
// join cost a few microseconds, what some ten thousand cached accesses take on one core: below that a
// parallel loop is slower than a plain one (jacobi-1d's steps of 400 points, durbin's updates of k
// points, each step). A top-level OpenMP reduction over one loop is printed twice behind the same test.
//
// An iterated stencil that polyc time-tiles (compiler/schedule/TimeTiling.h) is emitted in both forms,
// step by step and in time tiles, and runs time-tiled when a step has at least MinTimeTiledStepPoints
// points (docs/performance.md, "Time tiling"): smaller steps keep their arrays in the caches from one
// step to the next, and the wavefront of tiles only adds its start and end. POLYC_TIME_TILE=0 or 1
// forces either form.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace polyc::rt::cpu {

inline constexpr int64_t MinParallelAccesses = 16384;

inline constexpr double MinTimeTiledStepPoints = 1 << 20;

// A sum over a row read from an index array (CSR's `c in row[j]..row[j + 1]`) of fewer terms than this
// runs as a plain loop, longer ones as SIMD lanes: the vector loop's entry and remainder, whose lengths
// change from row to row, cost more than they save on short rows (the rate network, 40,000 neurons on 2
// cores of an AMD EPYC with AVX-512: 16 terms a row 0.36 ms a step plain, 0.42-0.53 ms SIMD; 256 terms
// 3.96 and 3.93-4.04 ms; docs/performance.md, "Rate network").
inline constexpr int64_t MinSimdRowTerms = 32;

// Whether an iterated stencil whose steps have `stepPoints` points runs time-tiled.
inline bool timeTiled(double stepPoints) {
  if (const char *force = std::getenv("POLYC_TIME_TILE"); force && *force)
    return std::strcmp(force, "0") != 0;
  return stepPoints >= MinTimeTiledStepPoints;
}

} // namespace polyc::rt::cpu
