// Device-side helpers of the persistent form of a host loop (docs/gpu-mapping.md): one cooperative
// kernel runs every iteration, its threads meeting at a barrier after each band inside.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

namespace polyc::rt::cuda {

// A first point past any loop's end: the threads that get no point of a spread member start there (in
// the kernel's index type: past every value that indexFitsInt lets kernels index in int).
template <typename Index> inline constexpr Index NoPoint = Index(1) << (sizeof(Index) * 8 - 2);

// The barrier between the bands of a persistent kernel: the block's when it runs as one block (steps
// too small to pay for a grid barrier, launchPersistent's `oneBlock`), else the grid's. Every thread of
// the grid reaches it, as cooperative_groups::grid_group::sync() requires.
__device__ __forceinline__ void stepBarrier(cooperative_groups::grid_group &grid) {
  if (gridDim.x == 1)
    __syncthreads();
  else
    grid.sync();
}

} // namespace polyc::rt::cuda
