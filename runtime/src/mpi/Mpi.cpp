// The MPI layer (polyc/mpi/Mpi.h).
#include "polyc/mpi/Mpi.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

Rows haloRows(int from, int to, int ranks, const RowBlocks &blocks, int64_t lo, int64_t hi,
              int64_t dimExtent) {
  if (from == to)
    return {};
  const Block source = blockOf(from, ranks, blocks.first, blocks.extent);
  const Block target = blockOf(to, ranks, blocks.first, blocks.extent);
  if (source.end <= source.first || target.end <= target.first)
    return {};
  const int64_t begin = std::max({source.first + blocks.shift, target.first + lo, int64_t(0)});
  const int64_t end = std::min({source.end + blocks.shift, target.end + hi, dimExtent});
  return {begin, std::max(begin, end)};
}

namespace {

// `rows` of every run of `layout` as one MPI datatype (a vector of byte blocks) and the address it
// starts at. The type is committed; the caller frees it.
std::pair<char *, MPI_Datatype> rowsType(const RowLayout &layout, Rows rows) {
  const int64_t rowBytes = layout.rowElements * int64_t(layout.elementBytes);
  const int64_t blockBytes = (rows.end - rows.begin) * rowBytes, stride = layout.dimExtent * rowBytes;
  if (blockBytes > INT_MAX || stride > INT_MAX || layout.prefixCount > INT_MAX)
    throw std::length_error("a block of rows to send exceeds MPI's int counts (" +
                            std::to_string(blockBytes) + " bytes)");
  MPI_Datatype type;
  MPI_Type_vector(int(layout.prefixCount), int(blockBytes), int(stride), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  return {static_cast<char *>(layout.data) + rows.begin * rowBytes, type};
}

// Whether the layout holds no element (then nothing is sent).
bool holdsNothing(const RowLayout &layout) { return layout.prefixCount <= 0 || layout.rowElements <= 0; }

// Sends and receives the messages all at once, then waits for all of them: every rank posts the same
// pairs in the same order, so the messages between two ranks match in order.
class Messages {
public:
  void receive(const RowLayout &layout, Rows rows, int from) { post(layout, rows, from, true); }
  void send(const RowLayout &layout, Rows rows, int to) { post(layout, rows, to, false); }
  void wait() {
    MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    for (MPI_Datatype &type : types_)
      MPI_Type_free(&type);
  }

private:
  void post(const RowLayout &layout, Rows rows, int peer, bool in) {
    if (rows.empty())
      return;
    auto [start, type] = rowsType(layout, rows);
    MPI_Request request;
    if (in)
      MPI_Irecv(start, 1, type, peer, 0, MPI_COMM_WORLD, &request);
    else
      MPI_Isend(start, 1, type, peer, 0, MPI_COMM_WORLD, &request);
    requests_.push_back(request);
    types_.push_back(type);
  }

  std::vector<MPI_Request> requests_;
  std::vector<MPI_Datatype> types_;
};

} // namespace

void shareRowBlocks(const RowLayout &layout, const RowBlocks &blocks) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || holdsNothing(layout))
    return;
  for (int root = 0; root < ranks; ++root) {
    const Block block = blockOf(root, ranks, blocks.first, blocks.extent);
    if (block.end <= block.first)
      continue;
    auto [start, type] = rowsType(layout, {block.first + blocks.shift, block.end + blocks.shift});
    MPI_Bcast(start, 1, type, root, MPI_COMM_WORLD);
    MPI_Type_free(&type);
  }
}

void exchangeHalo(const RowLayout &layout, const RowBlocks &blocks, int64_t lo, int64_t hi) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || holdsNothing(layout))
    return;
  Messages messages;
  for (int peer = 0; peer < ranks; ++peer) {
    messages.receive(layout, haloRows(peer, rank, ranks, blocks, lo, hi, layout.dimExtent), peer);
    messages.send(layout, haloRows(rank, peer, ranks, blocks, lo, hi, layout.dimExtent), peer);
  }
  messages.wait();
}

void gatherRowBlocks(const RowLayout &layout, const RowBlocks &blocks) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || holdsNothing(layout))
    return;
  auto rowsOf = [&](int r) {
    const Block block = blockOf(r, ranks, blocks.first, blocks.extent);
    return Rows{std::max<int64_t>(0, block.first + blocks.shift),
                std::min(layout.dimExtent, block.end + blocks.shift)};
  };
  Messages messages;
  if (rank == 0)
    for (int peer = 1; peer < ranks; ++peer)
      messages.receive(layout, rowsOf(peer), peer);
  else
    messages.send(layout, rowsOf(rank), 0);
  messages.wait();
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
