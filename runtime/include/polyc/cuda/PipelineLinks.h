// What the decoupled step's kernel (polyc/cuda/DecoupledWindow.cuh) needs to run a rank's block of rows
// of a pipeline across GPU ranks (compiler/map/Decompose.h, Pipeline): the rows before the block, which
// earlier ranks compute, arrive strip by strip in this rank's copy of the array, each strip's with a flag;
// the rows later ranks read go, strip by strip, straight into their copies, each strip's followed by its
// flag. polyc/cuda/PeerPipeline.h makes the links; without them (one GPU, or no pipeline) every count is 0.
#pragma once

#include <cstddef>

namespace polyc::rt::cuda {

struct PipelineLinks {
  static constexpr int Max = 8; // ranks a rank's rows go to, or come from
  // The rows before row 0 that hold earlier ranks' values (then received), not the zero boundary.
  int rowsBefore = 0;
  // The run's number: a flag holds the run in which its strip's rows arrived.
  unsigned generation = 0;
  // From earlier ranks: arrived[k][strip] reaches `generation` once sender k's rows of the strip are here.
  int receives = 0;
  const unsigned *arrived[Max] = {};
  // To later ranks: rows [sendFirst[k], sendEnd[k]) of every strip (rows of this rank's block, from its row
  // 0), at `peerOffset[k]` bytes from the same cell of this rank's array (the later rank's copy, mapped
  // into this process), then `generation` into peerArrived[k][strip].
  int sends = 0;
  std::ptrdiff_t peerOffset[Max] = {};
  unsigned *peerArrived[Max] = {};
  int sendFirst[Max] = {}, sendEnd[Max] = {};
};

// launchDecoupled's connection when the rows are not a pipeline's: no links.
struct NoPipeline {
  bool operator()(int /*strips*/, PipelineLinks & /*links*/) const { return true; }
};

} // namespace polyc::rt::cuda
