// The MPI layer (polyc/mpi/Mpi.h).
#include "polyc/mpi/Mpi.h"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace polyc::rt::mpi {

Block blockOf(int rank, int ranks, int64_t first, int64_t extent) {
  if (extent <= 0 || ranks <= 0)
    return {first, first};
  const int64_t base = extent / ranks, larger = extent % ranks;
  const int64_t start = int64_t(rank) * base + std::min<int64_t>(rank, larger);
  return {first + start, first + start + base + (rank < larger ? 1 : 0)};
}

static void worldShape(int &rank, int &ranks) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
}

Block rankBlock(int64_t first, int64_t extent) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  return blockOf(rank, ranks, first, extent);
}

void shareRowBlocks(void *data, size_t elementBytes, int64_t prefixCount, int64_t dimExtent,
                    int64_t rowElements, int64_t first, int64_t extent, int64_t shift) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || prefixCount <= 0 || rowElements <= 0)
    return;
  const int64_t rowBytes = rowElements * int64_t(elementBytes);
  for (int root = 0; root < ranks; ++root) {
    const Block block = blockOf(root, ranks, first, extent);
    const int64_t rows = block.end - block.first;
    if (rows <= 0)
      continue;
    const int64_t blockBytes = rows * rowBytes, stride = dimExtent * rowBytes;
    if (blockBytes > INT_MAX || stride > INT_MAX || prefixCount > INT_MAX)
      throw std::length_error("a block of rows to share exceeds MPI's int counts (" +
                              std::to_string(blockBytes) + " bytes)");
    // The root's rows in every run: `prefixCount` blocks of `blockBytes`, `stride` bytes apart.
    MPI_Datatype rowsType;
    MPI_Type_vector(int(prefixCount), int(blockBytes), int(stride), MPI_BYTE, &rowsType);
    MPI_Type_commit(&rowsType);
    char *start = static_cast<char *>(data) + (block.first + shift) * rowBytes;
    MPI_Bcast(start, 1, rowsType, root, MPI_COMM_WORLD);
    MPI_Type_free(&rowsType);
  }
}

int runMainMpi(int argc, char **argv, const ProgramInfo &info, Compute &compute) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  RunOptions options;
  options.reports = rank == 0;
  int status = runMain(argc, argv, info, compute, options);
  if (status != 0) {
    // Another rank may wait in a collective for this one: end them all.
    if (ranks > 1)
      std::fprintf(stderr, "%s: rank %d of %d failed (exit status %d); ending the job\n", info.name.c_str(),
                   rank, ranks, status);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  MPI_Finalize();
  return 0;
}

} // namespace polyc::rt::mpi
