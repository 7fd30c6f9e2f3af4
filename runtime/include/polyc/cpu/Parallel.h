// The work below which polyc's CPU target runs a parallel loop on one thread. Generated code prints
// `#pragma omp parallel for if(accesses >= polyc::rt::cpu::MinParallelAccesses)` on a loop whose body
// is statement calls only, where `accesses` counts the array elements the loop reads and writes (its
// iterations times its statements' accesses). OpenMP's fork and join cost a few microseconds on 2 to 16
// cores, what some ten thousand cached accesses take on one: below that a parallel loop is slower
// than a plain one (jacobi-1d's steps of 400 points, durbin's updates of k points, each step).
#pragma once

#include <cstdint>

namespace polyc::rt::cpu {

inline constexpr int64_t MinParallelAccesses = 16384;

} // namespace polyc::rt::cpu
