// The MPI layer of a CPU program built with `polyc build --mpi` (docs/running.md, "MPI"): every rank holds
// every array (replicated), runs each distributed band on its block of the band's outermost parallel
// dimension, and then shares the rows it wrote with the other ranks, so that all copies are equal again
// before the next band reads them. Rank 0 alone writes the outputs and prints; a failure on any rank ends
// the whole job (MPI_Abort with the failure's exit status), never a hang.
#pragma once

#include "polyc/Runtime.h"

#include <cstddef>
#include <cstdint>

namespace polyc::rt::mpi {

// A block of a band's outermost parallel dimension: [first, end).
struct Block {
  int64_t first = 0, end = 0;
};

// Rank `rank` of `ranks`'s block of the `extent` values from `first`: contiguous blocks in rank order,
// their sizes differing by at most one (the first extent % ranks blocks one larger).
Block blockOf(int rank, int ranks, int64_t first, int64_t extent);
// This process's block (MPI_COMM_WORLD).
Block rankBlock(int64_t first, int64_t extent);

// After a distributed band: the array of `elementBytes`-sized elements at `data` is `prefixCount` runs of
// `dimExtent` rows of `rowElements` elements (the array's dimensions before the one the band's rows
// index, that one, and those after it, in storage order); each rank wrote within rows [block.first +
// shift, block.end + shift) of every run, its block of [first, first + extent). Copies every rank's rows
// to every other rank (one broadcast a rank). Rows no rank wrote in were equal on all ranks before.
void shareRowBlocks(void *data, size_t elementBytes, int64_t prefixCount, int64_t dimExtent,
                    int64_t rowElements, int64_t first, int64_t extent, int64_t shift);

// runMain (Runtime.h) under MPI: initialises MPI, runs the program on every rank with the outputs and the
// report on rank 0 only, and turns a failure on any rank into MPI_Abort with its exit status.
int runMainMpi(int argc, char **argv, const ProgramInfo &info, Compute &compute);

} // namespace polyc::rt::mpi
