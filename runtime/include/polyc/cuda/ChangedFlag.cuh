// The changed flags of a repeat loop that stops early (`until unchanged(...)`, docs/language.md) on the
// CUDA target: the generated program's `__device__ int polyc_changed[3]`, a ring of flags that the
// watched updates of iteration k set at slot changedSlot(k). On the host, a loop clears the ring before
// it starts; after each iteration a one-thread kernel records the iteration's slot in a record ring and
// clears it, and the host reads the records back every `checkEvery` iterations (1: after each, in
// order; more where iterations after the one that changed nothing change nothing either, so that the
// host need not wait for every iteration before it launches the next). A persistent kernel (or one
// thread running the whole loop) tests and clears the slots itself.
#pragma once

#include "polyc/cuda/Check.h"

#include <cstdint>

#include <cuda_runtime.h>

namespace polyc::rt::cuda {

inline constexpr int ChangedSlots = 3;
__host__ __device__ inline int changedSlot(int64_t iteration) {
  return int(((iteration % ChangedSlots) + ChangedSlots) % ChangedSlots);
}
// A flag read from memory, past the SM's L1 cache (another block may have set it before the barrier).
__device__ inline int loadFlag(const int &flag) { return *static_cast<const volatile int *>(&flag); }

template <int = 0> __global__ void recordChanged(int *flags, int flagSlot, int *records, int recordSlot) {
  records[recordSlot] = flags[flagSlot];
  flags[flagSlot] = 0;
}

// How the ranks' records combine: alone, or (--mpi) polyc::rt::mpi::largestOverRanks, so that every
// rank stops after the same iteration: one where no rank changed an element.
inline void onThisRank(int *, int) {}

class ChangedFlag {
public:
  static constexpr int RecordsSize = 64;

  template <typename Flags> explicit ChangedFlag(const Flags &symbol) {
    POLYC_CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void **>(&flags_), symbol));
    POLYC_CUDA_CHECK(cudaMalloc(&records_, RecordsSize * sizeof(int)));
    POLYC_CUDA_CHECK(cudaMallocHost(&host_, RecordsSize * sizeof(int)));
  }
  ChangedFlag(const ChangedFlag &) = delete;
  ChangedFlag &operator=(const ChangedFlag &) = delete;
  // The records and the pinned copy are left to the process's end: the context may be gone before a
  // destructor of this (static) object would run.

  void start(cudaStream_t stream) const {
    POLYC_CUDA_CHECK(cudaMemsetAsync(flags_, 0, ChangedSlots * sizeof(int), stream));
  }

  // After iteration `iteration`, the loop's `done`-th (from 0): whether the loop stops now, because one
  // of the iterations read back at this call changed nothing. `combine(records, count)` merges the
  // ranks' records.
  template <typename Combine>
  bool stopAfter(int64_t iteration, int64_t done, int checkEvery, cudaStream_t stream,
                 Combine combine) const {
    const int recordSlot = int(done % checkEvery);
    recordChanged<<<1, 1, 0, stream>>>(flags_, changedSlot(iteration), records_, recordSlot);
    POLYC_CUDA_CHECK_LAUNCH("polyc::rt::cuda::recordChanged");
    if (recordSlot != checkEvery - 1)
      return false;
    POLYC_CUDA_CHECK(
        cudaMemcpyAsync(host_, records_, checkEvery * sizeof(int), cudaMemcpyDeviceToHost, stream));
    POLYC_CUDA_CHECK(cudaStreamSynchronize(stream));
    combine(host_, checkEvery);
    for (int k = 0; k < checkEvery; ++k)
      if (host_[k] == 0)
        return true;
    return false;
  }

private:
  int *flags_ = nullptr;
  int *records_ = nullptr;
  int *host_ = nullptr;
};

} // namespace polyc::rt::cuda
