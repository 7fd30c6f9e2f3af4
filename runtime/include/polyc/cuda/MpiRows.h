// GPU ranks of a CUDA program built with `polyc build --target=cuda --mpi` (docs/running.md, "MPI"): one
// rank a GPU, every array whole in each rank's device memory. After a band the ranks share, the rows other
// ranks read go from GPU to GPU through NCCL (point to point, or gathered by every rank), enqueued on
// the program's stream like a kernel; without NCCL (a build without it, POLYC_MPI_NCCL=0, or a
// communicator that could not be made) through host memory, with the MPI layer (polyc/mpi/Mpi.h): Open
// MPI on the GPU machines is not CUDA-aware. POLYC_CUDA_VERBOSE=1 says which on each rank.
#pragma once

#include "polyc/cuda/Check.h"
#include "polyc/cuda/Device.h"
#include "polyc/mpi/Mpi.h"

#include <cuda_runtime.h>
#ifdef POLYC_WITH_NCCL
#include <mpi.h>
#include <nccl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace polyc::rt::cuda {

// Rows of a device array (RowLayout::data is the device pointer) copied to and from a packed host
// buffer on the program's stream, through a pinned buffer of its own (a copy from pageable memory is
// staged by the driver at a fraction of the bandwidth): each copy waits for the kernels enqueued before
// it, and is done when the call returns, before its message is posted or after it arrived.
class DeviceRowCopies final : public mpi::RowCopies {
public:
  explicit DeviceRowCopies(cudaStream_t stream) : stream_(stream) {}
  ~DeviceRowCopies() override {
    if (pinned_)
      cudaFreeHost(pinned_);
  }
  DeviceRowCopies(const DeviceRowCopies &) = delete;
  DeviceRowCopies &operator=(const DeviceRowCopies &) = delete;

  void toHost(const mpi::RowLayout &layout, mpi::Rows rows, void *packed) override {
    const size_t bytes = mpi::packedBytes(layout, rows);
    if (bytes == 0)
      return;
    copy(layout, rows, cudaMemcpyDeviceToHost);
    std::memcpy(packed, pinned_, bytes);
  }
  void fromHost(const mpi::RowLayout &layout, mpi::Rows rows, const void *packed) override {
    const size_t bytes = mpi::packedBytes(layout, rows);
    if (bytes == 0)
      return;
    std::memcpy(staging(bytes), packed, bytes);
    copy(layout, rows, cudaMemcpyHostToDevice);
  }

  // The pinned buffer, grown to at least `bytes` (its earlier contents are lost when it grows).
  void *staging(size_t bytes) {
    if (bytes > capacity_) {
      if (pinned_)
        POLYC_CUDA_CHECK(cudaFreeHost(pinned_));
      pinned_ = nullptr;
      POLYC_CUDA_CHECK(cudaMallocHost(&pinned_, bytes));
      capacity_ = bytes;
    }
    return pinned_;
  }

  // The block of rows is one 2-D copy between the array and the pinned buffer: a row of the copy is one
  // run's block, the pitch a run.
  void copy(const mpi::RowLayout &layout, mpi::Rows rows, cudaMemcpyKind kind) {
    const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
    const size_t width = size_t(rows.end - rows.begin) * rowBytes, pitch = size_t(layout.dimExtent) * rowBytes;
    void *host = staging(width * size_t(layout.prefixCount));
    char *device = static_cast<char *>(layout.data) + size_t(rows.begin) * rowBytes;
    if (kind == cudaMemcpyDeviceToHost)
      POLYC_CUDA_CHECK(cudaMemcpy2DAsync(host, width, device, pitch, width, size_t(layout.prefixCount), kind, stream_));
    else
      POLYC_CUDA_CHECK(cudaMemcpy2DAsync(device, pitch, host, width, width, size_t(layout.prefixCount), kind, stream_));
    POLYC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  cudaStream_t stream_;
  void *pinned_ = nullptr;
  size_t capacity_ = 0;
};

// Whether another rank on this host has this rank's GPU too (more ranks than GPUs): NCCL takes one rank
// a GPU, so the rows then go through host memory. Set by selectRankDevice.
inline bool &rankSharesGpu() {
  static bool shares = false;
  return shares;
}

// Gives this rank its GPU, before any other CUDA call: the rank's number on its host (as mpirun sets it
// in OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or SLURM_LOCALID) modulo the GPUs there. With
// POLYC_CUDA_VERBOSE=1 each rank says which GPU it takes.
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
  rankSharesGpu() = localRank >= devices;
  POLYC_CUDA_CHECK(cudaSetDevice(device));
  if (verbose())
    std::fprintf(stderr, "polyc: local rank %d on GPU %d of %d\n", localRank, device, devices);
}

#ifdef POLYC_WITH_NCCL
// The ranks' NCCL communicator, made once (on the first call, from an id rank 0 broadcasts over MPI), or
// null when the rows go through host memory. Compute::prepare calls it, outside the timed region. It is
// never destroyed: the process ends with it.
inline ncclComm_t rankCommunicator() {
  static const ncclComm_t comm = [] {
    const char *wanted = std::getenv("POLYC_MPI_NCCL");
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    ncclComm_t made = nullptr;
    ncclUniqueId id{};
    const bool wantsNccl = !(wanted && std::string(wanted) == "0");
    // Every rank must have a GPU of its own (NCCL's initialisation waits forever otherwise).
    int alone = !rankSharesGpu();
    MPI_Allreduce(MPI_IN_PLACE, &alone, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const bool use = wantsNccl && alone;
    int ok = use && (rank != 0 || ncclGetUniqueId(&id) == ncclSuccess);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (ok) {
      MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD);
      ok = ncclCommInitRank(&made, ranks, id, rank) == ncclSuccess;
      MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (!ok && made)
        ncclCommDestroy(made);
    }
    if (verbose())
      std::fprintf(stderr, "polyc: rank %d of %d: rows exchanged %s\n", rank, ranks,
                   ok          ? "GPU to GPU (NCCL)"
                   : use       ? "through host memory (MPI; NCCL could not start)"
                   : wantsNccl ? "through host memory (MPI; more ranks than GPUs, which NCCL does not take)"
                               : "through host memory (MPI; POLYC_MPI_NCCL=0)");
    return ok ? made : nullptr;
  }();
  return comm;
}
#else
inline void *rankCommunicator() { return nullptr; }
#endif

// The exchanges of a GPU rank's run (generated code calls these after the bands the ranks share): NCCL
// when there is a communicator, else host staging (DeviceRowCopies and the MPI layer). With NCCL, rows
// of a layout with runs before the row dimension are packed into a device buffer first, and unpacked
// after, by 2-D copies on the stream.
class RankRows {
public:
  explicit RankRows(cudaStream_t stream) : stream_(stream), hostCopies_(stream), hostHalos_(&hostCopies_) {}
  ~RankRows() {
    if (scratch_)
      cudaFree(scratch_);
    if (side_) {
      cudaStreamDestroy(side_);
      cudaEventDestroy(edgesDone_);
      cudaEventDestroy(halosDone_);
    }
  }
  RankRows(const RankRows &) = delete;
  RankRows &operator=(const RankRows &) = delete;

  void exchangeHalo(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks, int64_t lo, int64_t hi) {
#ifdef POLYC_WITH_NCCL
    if (ncclComm_t comm = rankCommunicator()) {
      int rank = 0, ranks = 1;
      shape(comm, rank, ranks);
      std::vector<Message> messages;
      for (int peer = 0; peer < ranks; ++peer) {
        messages.push_back({mpi::haloRows(peer, rank, ranks, blocks, lo, hi, layout.dimExtent), peer, true});
        messages.push_back({mpi::haloRows(rank, peer, ranks, blocks, lo, hi, layout.dimExtent), peer, false});
      }
      return transfer(comm, layout, messages);
    }
#endif
    mpi::exchangeHalo(layout, blocks, lo, hi, &hostCopies_);
  }

  // exchangeHalo begun apart from its finish, so that the kernels enqueued between (a block's interior)
  // run beside the messages: with NCCL on a stream of its own after the work enqueued so far (the
  // block's edges), the program's stream waiting for it at finishHalos(); through host memory, the
  // messages posted now (the edges' rows copied out first) and the received rows copied in at finishHalos.
  void beginHalo(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks, int64_t lo, int64_t hi) {
#ifdef POLYC_WITH_NCCL
    if (rankCommunicator()) {
      if (!side_) {
        POLYC_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
        POLYC_CUDA_CHECK(cudaEventCreateWithFlags(&edgesDone_, cudaEventDisableTiming));
        POLYC_CUDA_CHECK(cudaEventCreateWithFlags(&halosDone_, cudaEventDisableTiming));
      }
      POLYC_CUDA_CHECK(cudaEventRecord(edgesDone_, stream_));
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(side_, edgesDone_, 0));
      const cudaStream_t program = std::exchange(stream_, side_);
      exchangeHalo(layout, blocks, lo, hi);
      stream_ = program;
      halosUnderWay_ = true;
      return;
    }
#endif
    hostHalos_.begin(layout, blocks, lo, hi);
  }
  void finishHalos() {
    if (halosUnderWay_) {
      POLYC_CUDA_CHECK(cudaEventRecord(halosDone_, side_));
      POLYC_CUDA_CHECK(cudaStreamWaitEvent(stream_, halosDone_, 0));
      halosUnderWay_ = false;
    }
    hostHalos_.finish();
  }
  void shareRowBlocks(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks) {
#ifdef POLYC_WITH_NCCL
    if (ncclComm_t comm = rankCommunicator()) {
      int rank = 0, ranks = 1;
      shape(comm, rank, ranks);
      // One all-gather a round of chunks (mpi::chunksOf): each rank's k-th chunk in the k-th.
      std::vector<std::vector<mpi::Block>> chunks;
      for (int root = 0; root < ranks; ++root)
        chunks.push_back(mpi::chunksOf(root, ranks, blocks.first, blocks.extent, blocks.chunks));
      for (size_t round = 0; round < chunks.front().size(); ++round) {
        std::vector<mpi::Rows> rowsOf;
        for (const std::vector<mpi::Block> &mine : chunks)
          rowsOf.push_back({mine[round].first + blocks.shift, mine[round].end + blocks.shift});
        allGather(comm, layout, rowsOf, rank);
      }
      return;
    }
#endif
    mpi::shareRowBlocks(layout, blocks, &hostCopies_);
  }

  // The copies a pipeline's messages stage through when its strips run a launch each
  // (mpi::PipelineStrips; polyc/cuda/PeerPipeline.h hands them GPU to GPU where it can).
  mpi::RowCopies *hostCopies() { return &hostCopies_; }
  // A reduction split by its terms (docs/running.md): the `count` partial values at `values` (device
  // memory) of every rank combined element by element, in place, so that every rank holds the combined
  // ones: one ncclAllReduce on the stream, else through a pinned host buffer and mpi::combineValues.
  template <typename T> void combineValues(T *values, int64_t count, mpi::Combine op) {
    if (count <= 0)
      return;
#ifdef POLYC_WITH_NCCL
    if (ncclComm_t comm = rankCommunicator()) {
      const ncclRedOp_t reduce = op == mpi::Combine::Sum ? ncclSum : op == mpi::Combine::Max ? ncclMax : ncclMin;
      check(ncclAllReduce(values, values, size_t(count), ncclType<T>(), reduce, comm, stream_), "ncclAllReduce");
      return;
    }
#endif
    const size_t bytes = size_t(count) * sizeof(T);
    T *host = static_cast<T *>(hostCopies_.staging(bytes));
    POLYC_CUDA_CHECK(cudaMemcpyAsync(host, values, bytes, cudaMemcpyDeviceToHost, stream_));
    POLYC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    mpi::combineValues(host, count, op);
    POLYC_CUDA_CHECK(cudaMemcpyAsync(values, host, bytes, cudaMemcpyHostToDevice, stream_));
    POLYC_CUDA_CHECK(cudaStreamSynchronize(stream_)); // the pinned buffer is free again when this returns
  }

private:
#ifdef POLYC_WITH_NCCL
  template <typename T> static ncclDataType_t ncclType() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>,
                  "the element types of the language");
    return std::is_same_v<T, float> ? ncclFloat32 : std::is_same_v<T, double> ? ncclFloat64 : ncclInt32;
  }

  struct Message {
    mpi::Rows rows;
    int peer;      // the other rank
    bool in;       // received, else sent
    size_t at = 0; // its bytes in the scratch buffer when packed
  };

  static void shape(ncclComm_t comm, int &rank, int &ranks) {
    ncclCommUserRank(comm, &rank);
    ncclCommCount(comm, &ranks);
  }

  static void check(ncclResult_t result, const char *call) {
    if (result != ncclSuccess)
      throw std::runtime_error(std::string(call) + ": " + ncclGetErrorString(result));
  }

  // Every message in one NCCL group on the stream, sends and receives. A layout of one run is sent in
  // place; otherwise every message is packed into the scratch buffer first.
  void transfer(ncclComm_t comm, const mpi::RowLayout &layout, std::vector<Message> &messages) {
    const bool packed = layout.prefixCount != 1;
    const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
    size_t total = 0;
    for (Message &m : messages) {
      m.at = total;
      total += packed ? mpi::packedBytes(layout, m.rows) : 0;
    }
    char *scratch = packed ? static_cast<char *>(grown(total)) : nullptr;
    auto address = [&](const Message &m) {
      return packed ? scratch + m.at : static_cast<char *>(layout.data) + size_t(m.rows.begin) * rowBytes;
    };
    if (packed)
      for (const Message &m : messages)
        if (!m.in && !m.rows.empty())
          copyRows(layout, m.rows, scratch + m.at, cudaMemcpyDeviceToDevice, true);
    check(ncclGroupStart(), "ncclGroupStart");
    for (const Message &m : messages) {
      const size_t bytes = mpi::packedBytes(layout, m.rows);
      if (bytes == 0)
        continue;
      if (m.in)
        check(ncclRecv(address(m), bytes, ncclChar, m.peer, comm, stream_), "ncclRecv");
      else
        check(ncclSend(address(m), bytes, ncclChar, m.peer, comm, stream_), "ncclSend");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    if (packed)
      for (const Message &m : messages)
        if (m.in && !m.rows.empty())
          copyRows(layout, m.rows, scratch + m.at, cudaMemcpyDeviceToDevice, false);
  }

  // Every rank's block of rows (`rowsOf`, in rank order, each after the one before) to every rank: one
  // ncclAllGather, one collective where a broadcast from each rank is as many (the rate network at its
  // largest size on 4 H200, 2026-11-28: 7.43 ms against 7.98 ms with broadcasts). In place when
  // the layout is one run and the blocks are equally large, in rank order; else through slots of the largest
  // block's bytes in the scratch buffer, this rank's block packed into its slot and the others unpacked
  // after.
  void allGather(ncclComm_t comm, const mpi::RowLayout &layout, const std::vector<mpi::Rows> &rowsOf,
                 int rank) {
    size_t slot = 0;
    for (const mpi::Rows &rows : rowsOf)
      slot = std::max(slot, mpi::packedBytes(layout, rows));
    if (slot == 0)
      return;
    // In place needs the blocks equal and in rank order, each right after the one before (a snake round
    // of chunks, mpi::chunksOf, runs backwards).
    bool inPlace = layout.prefixCount == 1;
    for (size_t root = 0; root < rowsOf.size(); ++root)
      inPlace = inPlace && mpi::packedBytes(layout, rowsOf[root]) == slot &&
                (root == 0 || rowsOf[root].begin == rowsOf[root - 1].end);
    const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
    if (inPlace) {
      char *first = static_cast<char *>(layout.data) + size_t(rowsOf.front().begin) * rowBytes;
      check(ncclAllGather(first + size_t(rank) * slot, first, slot, ncclChar, comm, stream_),
            "ncclAllGather");
      return;
    }
    char *scratch = static_cast<char *>(grown(slot * rowsOf.size()));
    if (!rowsOf[size_t(rank)].empty())
      copyRows(layout, rowsOf[size_t(rank)], scratch + size_t(rank) * slot, cudaMemcpyDeviceToDevice, true);
    check(ncclAllGather(scratch + size_t(rank) * slot, scratch, slot, ncclChar, comm, stream_),
          "ncclAllGather");
    for (size_t root = 0; root < rowsOf.size(); ++root)
      if (int(root) != rank && !rowsOf[root].empty())
        copyRows(layout, rowsOf[root], scratch + root * slot, cudaMemcpyDeviceToDevice, false);
  }

  // Rows of every run between the array and a packed buffer on the device (`out`: array to buffer).
  void copyRows(const mpi::RowLayout &layout, mpi::Rows rows, char *packed, cudaMemcpyKind kind, bool out) {
    const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
    const size_t width = size_t(rows.end - rows.begin) * rowBytes, pitch = size_t(layout.dimExtent) * rowBytes;
    char *array = static_cast<char *>(layout.data) + size_t(rows.begin) * rowBytes;
    if (out)
      POLYC_CUDA_CHECK(cudaMemcpy2DAsync(packed, width, array, pitch, width, size_t(layout.prefixCount), kind, stream_));
    else
      POLYC_CUDA_CHECK(cudaMemcpy2DAsync(array, pitch, packed, width, width, size_t(layout.prefixCount), kind, stream_));
  }

  // The device scratch buffer, grown to at least `bytes` (after the work queued on it is done).
  void *grown(size_t bytes) {
    if (bytes > capacity_) {
      POLYC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (scratch_)
        POLYC_CUDA_CHECK(cudaFree(scratch_));
      scratch_ = nullptr;
      POLYC_CUDA_CHECK(cudaMalloc(&scratch_, bytes));
      capacity_ = bytes;
    }
    return scratch_;
  }
#endif

  cudaStream_t stream_;
  DeviceRowCopies hostCopies_;
  mpi::HaloExchanges hostHalos_;
  cudaStream_t side_ = nullptr; // beginHalo's messages, beside the program's stream
  cudaEvent_t edgesDone_ = nullptr, halosDone_ = nullptr;
  bool halosUnderWay_ = false;
  void *scratch_ = nullptr;
  size_t capacity_ = 0;
};

} // namespace polyc::rt::cuda
