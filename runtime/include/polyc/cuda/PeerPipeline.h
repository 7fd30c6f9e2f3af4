// A pipeline across GPU ranks of one host (compiler/map/Decompose.h, Pipeline; docs/running.md, "MPI")
// run as one kernel a rank: each rank's decoupled step over its block of rows hands the rows later
// ranks read straight into their copies of the array, strip by strip, and they wait strip by strip for
// them (PipelineLinks). The arrays and flags of the other ranks are mapped with CUDA IPC, so every rank
// must have a GPU of its own on one host, with peer access between them (NVLink or PCIe P2P), and the
// array must be a device allocation of its own (a program's array or local array is). Where they are
// not, or with POLYC_MPI_PEER=0, connect() says so on every rank and the generated code runs the strips
// one launch each with messages between them (mpi::PipelineStrips).
#pragma once

#include "polyc/cuda/Check.h"
#include "polyc/cuda/Device.h"
#include "polyc/cuda/MpiRows.h"
#include "polyc/cuda/PipelineLinks.h"
#include "polyc/mpi/Mpi.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace polyc::rt::cuda {

class PeerPipeline {
public:
  PeerPipeline() = default;
  ~PeerPipeline() { release(); }
  PeerPipeline(const PeerPipeline &) = delete;
  PeerPipeline &operator=(const PeerPipeline &) = delete;

  // launchDecoupled's `connect` for this rank's block of `blocks` of the pipeline over `layout`'s array
  // (two-dimensional, rows along dimension 0), whose blocks read the `depth` rows before them.
  auto connector(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks, int64_t depth,
                 cudaStream_t stream) {
    return [this, layout, blocks, depth, stream](int strips, PipelineLinks &links) {
      return connect(layout, blocks, depth, strips, stream, links);
    };
  }

  // Collective. Fills `links` for `strips` strips and returns true, or returns false on every rank when
  // the ranks cannot reach each other's memory. The links are made on the first call and again when the
  // array, the blocks or the strips change; every call then waits for this rank's stream and for every
  // rank (no rank's kernel writes into another's array while that one still runs earlier work on it).
  bool connect(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks, int64_t depth, int strips,
               cudaStream_t stream, PipelineLinks &links) {
    const mpi::World world = mpi::world();
    if (world.ranks == 1) {
      links = PipelineLinks{};
      return true;
    }
    const Key key{
        layout.data, layout.dimExtent, layout.rowElements, blocks.first, blocks.extent, blocks.shift, depth,
        strips};
    if (!mpi::onEveryRank(key_ && *key_ == key)) {
      release();
      key_ = key;
      direct_ = setUp(layout, blocks, depth, strips, world);
    }
    if (!direct_)
      return false;
    POLYC_CUDA_CHECK(cudaStreamSynchronize(stream));
    mpi::barrier();
    links = links_;
    links.generation = ++generation_;
    return true;
  }

private:
  struct Key {
    void *data;
    int64_t dimExtent, rowElements, first, extent, shift, depth;
    int strips;
    bool operator==(const Key &o) const {
      return data == o.data && dimExtent == o.dimExtent && rowElements == o.rowElements && first == o.first &&
             extent == o.extent && shift == o.shift && depth == o.depth && strips == o.strips;
    }
  };
  // What a rank tells the others: its array and flags as IPC handles, and its GPU.
  struct Handles {
    cudaIpcMemHandle_t array, flags;
    char busId[32];
  };

  // Collective: the flags, the handles exchanged, the later ranks' arrays and flags opened.
  bool setUp(const mpi::RowLayout &layout, const mpi::RowBlocks &blocks, int64_t depth, int strips,
             const mpi::World &world) {
    const char *wanted = std::getenv("POLYC_MPI_PEER");
    const bool oneHost = mpi::oneHost();
    const char *why = wanted && std::string(wanted) == "0" ? "POLYC_MPI_PEER=0"
                      : rankSharesGpu()                    ? "more ranks than GPUs"
                      : !oneHost                           ? "ranks on more than one host"
                                                           : nullptr;
    if (!mpi::onEveryRank(why == nullptr))
      return report(false, world, why ? why : "another rank cannot");
    const mpi::PipelinePeers peers =
        mpi::pipelinePeers(world.rank, world.ranks, blocks, depth, layout.dimExtent);
    bool ok = strips > 0 && peers.sources.size() <= size_t(PipelineLinks::Max) &&
              peers.targets.size() <= size_t(PipelineLinks::Max);
    links_.rowsBefore = int(peers.rowsBefore);
    links_.receives = ok ? int(peers.sources.size()) : 0;
    links_.sends = ok ? int(peers.targets.size()) : 0;
    int device = 0;
    Handles mine{};
    ok = ok && cudaGetDevice(&device) == cudaSuccess &&
         cudaMalloc(&flags_, sizeof(unsigned) * size_t(world.ranks) * size_t(strips)) == cudaSuccess &&
         cudaMemset(flags_, 0, sizeof(unsigned) * size_t(world.ranks) * size_t(strips)) == cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess &&
         cudaIpcGetMemHandle(&mine.array, layout.data) == cudaSuccess &&
         cudaIpcGetMemHandle(&mine.flags, flags_) == cudaSuccess &&
         cudaDeviceGetPCIBusId(mine.busId, int(sizeof mine.busId), device) == cudaSuccess;
    std::vector<Handles> all(size_t(world.ranks));
    mpi::allGatherBytes(&mine, sizeof mine, all.data());
    for (size_t k = 0; k < size_t(links_.receives); ++k)
      links_.arrived[k] = flags_ + size_t(peers.sources[k]) * size_t(strips);
    for (size_t k = 0; k < size_t(links_.sends) && ok; ++k) {
      const mpi::PipelinePeers::Target &target = peers.targets[k];
      const Handles &peer = all[size_t(target.rank)];
      int peerDevice = -1, reachable = 0;
      void *array = nullptr, *flags = nullptr;
      ok = cudaDeviceGetByPCIBusId(&peerDevice, peer.busId) == cudaSuccess &&
           cudaDeviceCanAccessPeer(&reachable, device, peerDevice) == cudaSuccess && reachable &&
           open(peer.array, array) && open(peer.flags, flags);
      if (!ok)
        break;
      links_.peerOffset[k] = static_cast<char *>(array) - static_cast<char *>(layout.data);
      links_.peerArrived[k] = static_cast<unsigned *>(flags) + size_t(world.rank) * size_t(strips);
      links_.sendFirst[k] = int(target.first);
      links_.sendEnd[k] = int(target.end);
    }
    cudaGetLastError(); // a failed IPC call leaves its error; the fallback must not see it
    if (!mpi::onEveryRank(ok)) {
      release();
      return report(false, world,
                    ok ? "another rank's GPU cannot reach its peers" : "this GPU cannot reach its peers");
    }
    return report(true, world, nullptr);
  }

  bool open(const cudaIpcMemHandle_t &handle, void *&pointer) {
    if (cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess)
      return false;
    opened_.push_back(pointer);
    return true;
  }

  static bool report(bool direct, const mpi::World &world, const char *why) {
    if (verbose())
      std::fprintf(stderr, "polyc: rank %d of %d: pipeline rows handed %s%s%s\n", world.rank, world.ranks,
                   direct ? "GPU to GPU (peer memory)" : "in messages, a launch a strip", why ? ": " : "",
                   why ? why : "");
    return direct;
  }

  void release() {
    for (void *pointer : opened_)
      cudaIpcCloseMemHandle(pointer);
    opened_.clear();
    if (flags_)
      cudaFree(flags_);
    flags_ = nullptr;
    links_ = PipelineLinks{};
    direct_ = false;
    generation_ = 0;
  }

  std::optional<Key> key_;
  bool direct_ = false;
  unsigned *flags_ = nullptr; // flags_[sender * strips + strip]
  std::vector<void *> opened_;
  PipelineLinks links_;
  unsigned generation_ = 0;
};

} // namespace polyc::rt::cuda
