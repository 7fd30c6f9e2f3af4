// OpenCL ranks of a program built with `polyc build --target=opencl --mpi` (docs/running.md, "MPI"): each
// rank holds every array in its device's buffers; the rows other ranks read go through host memory with
// the MPI layer (polyc/mpi/Mpi.h), read from and written to the buffers as rectangles (one per block of
// rows, a row of the rectangle a run of the dimensions before the row dimension).
#pragma once

#include "polyc/mpi/Mpi.h"
#include "polyc/opencl/OpenCLRuntime.h"

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace polyc::rt::ocl {

// Rows of a buffer (RowLayout::data is its cl_mem) copied to and from a packed host buffer: blocking
// commands on the device's in-order queue, so after the kernels enqueued before them.
class BufferRowCopies final : public mpi::RowCopies {
public:
  explicit BufferRowCopies(const Device &device) : device_(device) {}

  void toHost(const mpi::RowLayout &layout, mpi::Rows rows, void *packed) override { copy(layout, rows, packed, true); }
  void fromHost(const mpi::RowLayout &layout, mpi::Rows rows, const void *packed) override {
    copy(layout, rows, const_cast<void *>(packed), false);
  }

private:
  void copy(const mpi::RowLayout &layout, mpi::Rows rows, void *packed, bool read) {
    const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
    const size_t width = size_t(rows.end - rows.begin) * rowBytes, pitch = size_t(layout.dimExtent) * rowBytes;
    if (width == 0 || layout.prefixCount <= 0)
      return;
    const size_t bufferOrigin[3] = {size_t(rows.begin) * rowBytes, 0, 0}, hostOrigin[3] = {0, 0, 0};
    const size_t region[3] = {width, size_t(layout.prefixCount), 1};
    cl_mem buffer = static_cast<cl_mem>(layout.data);
    if (read)
      check(clEnqueueReadBufferRect(device_.queue(), buffer, CL_TRUE, bufferOrigin, hostOrigin, region, pitch, 0,
                                    width, 0, packed, 0, nullptr, nullptr),
            "clEnqueueReadBufferRect");
    else
      check(clEnqueueWriteBufferRect(device_.queue(), buffer, CL_TRUE, bufferOrigin, hostOrigin, region, pitch, 0,
                                     width, 0, packed, 0, nullptr, nullptr),
            "clEnqueueWriteBufferRect");
  }

  const Device &device_;
};

// The exchanges of an OpenCL rank's run, which generated code calls after the bands the ranks share.
class RankRows {
public:
  explicit RankRows(const Device &device) : device_(device), copies_(device), halos_(&copies_) {}
  void exchangeHalo(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks, int64_t lo, int64_t hi) {
    mpi::exchangeHalo(layout, blocks, lo, hi, &copies_);
  }
  // exchangeHalo begun apart from its finish (the rows sent read from the buffers now, after the kernels
  // enqueued so far; the received ones written at finishHalos, after the kernels enqueued since), so that
  // the messages travel while the device runs a block's interior.
  void beginHalo(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks, int64_t lo, int64_t hi) {
    halos_.begin(layout, blocks, lo, hi);
  }
  void finishHalos() { halos_.finish(); }
  void shareRowBlocks(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks) {
    mpi::shareRowBlocks(layout, blocks, &copies_);
  }
  // A reduction split by its terms (docs/running.md): the first `count` partial values of `buffer`, of
  // element type T, combined element by element with every rank's, in place (read, MPI_Allreduce,
  // written back; blocking commands on the in-order queue, so after the kernels that computed them).
  template <typename T> void combineValues(const Buffer &buffer, int64_t count, mpi::Combine op) {
    if (count <= 0)
      return;
    const size_t bytes = size_t(count) * sizeof(T);
    host_.resize((bytes + sizeof(double) - 1) / sizeof(double));
    check(clEnqueueReadBuffer(device_.queue(), buffer.get(), CL_TRUE, 0, bytes, host_.data(), 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer");
    mpi::combineValues(reinterpret_cast<T *>(host_.data()), count, op);
    check(clEnqueueWriteBuffer(device_.queue(), buffer.get(), CL_TRUE, 0, bytes, host_.data(), 0, nullptr,
                               nullptr),
          "clEnqueueWriteBuffer");
  }

private:
  const Device &device_;
  BufferRowCopies copies_;
  mpi::HaloExchanges halos_; // beginHalo's messages under way
  std::vector<double> host_; // the partial values on the host (doubles: aligned for every element type)
};

// Runs `prepare` (which builds the OpenCL program) on rank 0, then on the other ranks together: ranks
// that share a compiler cache (PoCL's, POCL_CACHE_DIR) then read the binary rank 0 wrote, instead of all
// writing it at once (4 PoCL ranks building one program together failed now and then, in the fuzzer).
template <typename F> void prepareInRankOrder(F &&prepare) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    prepare();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0)
    prepare();
}

} // namespace polyc::rt::ocl
