// The work below which polyc's CPU target runs a parallel loop on one thread. For a loop whose body is
// statement calls only, generated code tests `accesses >= polyc::rt::cpu::MinParallelAccesses`, where
// `accesses` counts the array elements the loop reads and writes (its iterations times its statements'
// accesses), and runs the loop under `#pragma omp parallel for` or as a plain loop. OpenMP's fork and
// join cost a few microseconds, what some ten thousand cached accesses take on one core: below that a
// parallel loop is slower than a plain one (jacobi-1d's steps of 400 points, durbin's updates of k
// points, each step). A top-level OpenMP reduction over one loop is printed twice behind the same test.
#pragma once

#include <cstdint>

namespace polyc::rt::cpu {

inline constexpr int64_t MinParallelAccesses = 16384;

} // namespace polyc::rt::cpu
