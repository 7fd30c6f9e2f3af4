// GPU ranks of a CUDA program built with `polyc build --target=cuda --mpi` (docs/running.md, "MPI"): one
// rank a GPU, every array whole in each rank's device memory. The MPI layer (polyc/mpi/Mpi.h) moves the
// rows between ranks through host memory (host staging): Open MPI on the GPU machines is not CUDA-aware.
#pragma once

#include "polyc/cuda/Check.h"
#include "polyc/cuda/Device.h"
#include "polyc/mpi/Mpi.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace polyc::rt::cuda {

// Rows of a device array (RowLayout::data is the device pointer) copied to and from a packed host
// buffer on the program's stream: each copy waits for the kernels enqueued before it, and is done when
// the call returns, before its message is posted or after it arrived.
class DeviceRowCopies final : public mpi::RowCopies {
public:
  explicit DeviceRowCopies(cudaStream_t stream) : stream_(stream) {}

  void toHost(const mpi::RowLayout &layout, mpi::Rows rows, void *packed) override {
    copy(layout, rows, packed, cudaMemcpyDeviceToHost);
  }
  void fromHost(const mpi::RowLayout &layout, mpi::Rows rows, const void *packed) override {
    copy(layout, rows, const_cast<void *>(packed), cudaMemcpyHostToDevice);
  }

private:
  // The block of rows is one 2-D copy: a row of the copy is one run's block, the pitch a run.
  void copy(const mpi::RowLayout &layout, mpi::Rows rows, void *packed, cudaMemcpyKind kind) {
    const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
    const size_t width = size_t(rows.end - rows.begin) * rowBytes, pitch = size_t(layout.dimExtent) * rowBytes;
    if (width == 0 || layout.prefixCount <= 0)
      return;
    char *device = static_cast<char *>(layout.data) + size_t(rows.begin) * rowBytes;
    if (kind == cudaMemcpyDeviceToHost)
      POLYC_CUDA_CHECK(cudaMemcpy2DAsync(packed, width, device, pitch, width, size_t(layout.prefixCount), kind, stream_));
    else
      POLYC_CUDA_CHECK(cudaMemcpy2DAsync(device, pitch, packed, width, width, size_t(layout.prefixCount), kind, stream_));
    POLYC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  cudaStream_t stream_;
};

// Gives this rank its GPU, before any other CUDA call: the rank's number on its host (as mpirun sets it
// in OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or SLURM_LOCALID) modulo the GPUs there. With
// POLYC_VERBOSE=1 each rank says which GPU and which exchange path it uses.
inline void selectRankDevice() {
  int localRank = 0;
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *value = std::getenv(name)) {
      localRank = std::atoi(value);
      break;
    }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    return; // the first CUDA call of the run reports it
  const int device = localRank % devices;
  POLYC_CUDA_CHECK(cudaSetDevice(device));
  if (verbose())
    std::fprintf(stderr, "polyc: local rank %d on GPU %d of %d; rows exchanged through host memory (MPI)\n",
                 localRank, device, devices);
}

} // namespace polyc::rt::cuda
