// The changed flag of a repeat loop that stops early (`until unchanged(...)`, docs/language.md) on the
// CUDA target: the generated program's `__device__ int polyc_changed`, which the watched updates set.
// The host clears it before the loop; after each iteration a one-thread kernel records it in a ring and
// clears it, and the host reads the ring back every `checkEvery` iterations (1: after each, in order;
// more where iterations after the one that changed nothing change nothing either, so that the host
// need not wait for every iteration before it launches the next).
#pragma once

#include "polyc/cuda/Check.h"

#include <cstdint>

#include <cuda_runtime.h>

namespace polyc::rt::cuda {

template <int = 0> __global__ void recordChanged(int *flag, int *ring, int slot) {
  ring[slot] = *flag;
  *flag = 0;
}

// How the ranks' records combine: alone, or (--mpi) polyc::rt::mpi::largestOverRanks, so that every
// rank stops after the same iteration: one where no rank changed an element.
inline void onThisRank(int *, int) {}

class ChangedFlag {
public:
  static constexpr int RingSize = 64;

  template <typename Flag> explicit ChangedFlag(const Flag &symbol) {
    POLYC_CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void **>(&flag_), symbol));
    POLYC_CUDA_CHECK(cudaMalloc(&ring_, RingSize * sizeof(int)));
    POLYC_CUDA_CHECK(cudaMallocHost(&host_, RingSize * sizeof(int)));
  }
  ChangedFlag(const ChangedFlag &) = delete;
  ChangedFlag &operator=(const ChangedFlag &) = delete;
  // The ring and the pinned copy are left to the process's end: the context may be gone before a
  // destructor of this (static) object would run.

  void start(cudaStream_t stream) const { POLYC_CUDA_CHECK(cudaMemsetAsync(flag_, 0, sizeof(int), stream)); }

  // After iteration `done` (from 0): whether the loop stops now, because one of the iterations read back
  // at this call changed nothing. `combine(records, count)` merges the ranks' records.
  template <typename Combine>
  bool stopAfter(int64_t done, int checkEvery, cudaStream_t stream, Combine combine) const {
    const int slot = int(done % checkEvery);
    recordChanged<<<1, 1, 0, stream>>>(flag_, ring_, slot);
    POLYC_CUDA_CHECK_LAUNCH("polyc::rt::cuda::recordChanged");
    if (slot != checkEvery - 1)
      return false;
    POLYC_CUDA_CHECK(cudaMemcpyAsync(host_, ring_, checkEvery * sizeof(int), cudaMemcpyDeviceToHost, stream));
    POLYC_CUDA_CHECK(cudaStreamSynchronize(stream));
    combine(host_, checkEvery);
    for (int k = 0; k < checkEvery; ++k)
      if (host_[k] == 0)
        return true;
    return false;
  }

private:
  int *flag_ = nullptr;
  int *ring_ = nullptr;
  int *host_ = nullptr;
};

} // namespace polyc::rt::cuda
