// The MPI layer (polyc/mpi/Mpi.h).
#include "polyc/mpi/Mpi.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
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

std::vector<Block> chunksOf(int rank, int ranks, int64_t first, int64_t extent, int64_t chunks) {
  if (chunks <= 1)
    return {blockOf(rank, ranks, first, extent)};
  std::vector<Block> mine;
  const int64_t count = int64_t(ranks) * chunks;
  for (int64_t round = 0; round < chunks; ++round) {
    const int64_t position = round % 2 == 0 ? rank : ranks - 1 - rank;
    const Block chunk = blockOf(int(round * ranks + position), int(count), first, extent);
    mine.push_back(chunk);
  }
  return mine;
}

std::vector<Block> rankChunks(int64_t first, int64_t extent, int64_t chunks) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  return chunksOf(rank, ranks, first, extent, chunks);
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

// A packed message's size as MPI's int count of bytes.
int byteCount(size_t bytes) {
  if (bytes > size_t(INT_MAX))
    throw std::length_error("a message of rows exceeds MPI's int counts (" + std::to_string(bytes) + " bytes)");
  return int(bytes);
}

// The copies to stage through: the caller's, else the host packing when POLYC_MPI_PACKED=1, else none
// (MPI datatypes over the array in place).
RowCopies *stagingFor(RowCopies *copies) {
  static HostRowCopies host;
  static const bool packed = [] {
    const char *set = std::getenv("POLYC_MPI_PACKED");
    const std::string value = set ? set : "";
    if (value != "" && value != "0" && value != "1")
      throw std::runtime_error("POLYC_MPI_PACKED: expected 0 or 1, got '" + value + "'");
    return value == "1";
  }();
  return copies ? copies : packed ? &host : nullptr;
}

// Sends and receives the messages all at once, then waits for all of them: every rank posts the same
// pairs in the same order, so the messages between two ranks match in order. With copies, each message
// is a packed host buffer: sent rows are copied to it before the send, received ones from it after the
// wait.
class Messages {
public:
  explicit Messages(RowCopies *copies) : copies_(stagingFor(copies)) {}
  void receive(const RowLayout &layout, Rows rows, int from) { post(layout, rows, from, true); }
  void send(const RowLayout &layout, Rows rows, int to) { post(layout, rows, to, false); }
  void wait() {
    MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    for (MPI_Datatype &type : types_)
      MPI_Type_free(&type);
    for (Packed &message : packed_)
      if (message.in)
        copies_->fromHost(message.layout, message.rows, message.bytes.data());
  }

private:
  struct Packed {
    RowLayout layout;
    Rows rows;
    bool in = false;
    std::vector<unsigned char> bytes;
  };

  void post(const RowLayout &layout, Rows rows, int peer, bool in) {
    if (rows.empty())
      return;
    MPI_Request request;
    if (copies_) {
      Packed &message = packed_.emplace_back(Packed{layout, rows, in, {}});
      message.bytes.resize(packedBytes(layout, rows));
      if (in) {
        MPI_Irecv(message.bytes.data(), byteCount(message.bytes.size()), MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                  &request);
      } else {
        copies_->toHost(layout, rows, message.bytes.data());
        MPI_Isend(message.bytes.data(), byteCount(message.bytes.size()), MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                  &request);
      }
    } else {
      auto [start, type] = rowsType(layout, rows);
      if (in)
        MPI_Irecv(start, 1, type, peer, 0, MPI_COMM_WORLD, &request);
      else
        MPI_Isend(start, 1, type, peer, 0, MPI_COMM_WORLD, &request);
      types_.push_back(type);
    }
    requests_.push_back(request);
  }

  RowCopies *copies_;
  std::vector<MPI_Request> requests_;
  std::vector<MPI_Datatype> types_;
  std::deque<Packed> packed_; // a deque: the buffers stay where MPI was told they are
};

// Broadcasts `rows` of `layout` from `root`, in place or through a packed buffer.
void broadcastRows(const RowLayout &layout, Rows rows, int root, int rank, RowCopies *copies) {
  if (!copies) {
    auto [start, type] = rowsType(layout, rows);
    MPI_Bcast(start, 1, type, root, MPI_COMM_WORLD);
    MPI_Type_free(&type);
    return;
  }
  std::vector<unsigned char> packed(packedBytes(layout, rows));
  if (rank == root)
    copies->toHost(layout, rows, packed.data());
  MPI_Bcast(packed.data(), byteCount(packed.size()), MPI_BYTE, root, MPI_COMM_WORLD);
  if (rank != root)
    copies->fromHost(layout, rows, packed.data());
}

} // namespace

// Calls f(run, byte offset of the rows in the array, bytes) for every run of `layout`.
template <typename F> static void forEachRun(const RowLayout &layout, Rows rows, F &&f) {
  const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
  const size_t bytes = size_t(rows.end - rows.begin) * rowBytes;
  for (int64_t run = 0; run < layout.prefixCount; ++run)
    f(size_t(run), (size_t(run) * size_t(layout.dimExtent) + size_t(rows.begin)) * rowBytes, bytes);
}

void HostRowCopies::toHost(const RowLayout &layout, Rows rows, void *packed) {
  forEachRun(layout, rows, [&](size_t run, size_t offset, size_t bytes) {
    std::memcpy(static_cast<char *>(packed) + run * bytes, static_cast<const char *>(layout.data) + offset, bytes);
  });
}

void HostRowCopies::fromHost(const RowLayout &layout, Rows rows, const void *packed) {
  forEachRun(layout, rows, [&](size_t run, size_t offset, size_t bytes) {
    std::memcpy(static_cast<char *>(layout.data) + offset, static_cast<const char *>(packed) + run * bytes, bytes);
  });
}

size_t packedBytes(const RowLayout &layout, Rows rows) {
  if (rows.empty() || holdsNothing(layout))
    return 0;
  return size_t(layout.prefixCount) * size_t(rows.end - rows.begin) * size_t(layout.rowElements) *
         layout.elementBytes;
}

namespace {

MPI_Op combineOp(Combine op) { return op == Combine::Sum ? MPI_SUM : op == Combine::Max ? MPI_MAX : MPI_MIN; }

// MPI_Allreduce in place, in pieces of at most INT_MAX elements (MPI's counts are int).
template <typename T> void combineInPlace(T *values, int64_t count, MPI_Datatype type, Combine op) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks == 1)
    return;
  for (int64_t done = 0; done < count;) {
    const int piece = int(std::min<int64_t>(count - done, INT_MAX));
    MPI_Allreduce(MPI_IN_PLACE, values + done, piece, type, combineOp(op), MPI_COMM_WORLD);
    done += piece;
  }
}

} // namespace

void combineValues(float *values, int64_t count, Combine op) { combineInPlace(values, count, MPI_FLOAT, op); }
void combineValues(double *values, int64_t count, Combine op) { combineInPlace(values, count, MPI_DOUBLE, op); }
void combineValues(int32_t *values, int64_t count, Combine op) { combineInPlace(values, count, MPI_INT32_T, op); }

void shareRowBlocks(const RowLayout &layout, const RowBlocks &blocks, RowCopies *copies) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || holdsNothing(layout))
    return;
  copies = stagingFor(copies);
  for (int root = 0; root < ranks; ++root)
    for (const Block &block : chunksOf(root, ranks, blocks.first, blocks.extent, blocks.chunks))
      if (block.first < block.end)
        broadcastRows(layout, {block.first + blocks.shift, block.end + blocks.shift}, root, rank, copies);
}

Rows pipelineRows(int from, int to, int ranks, const RowBlocks &blocks, int64_t depth, int64_t dimExtent) {
  if (from >= to)
    return {};
  const Block source = blockOf(from, ranks, blocks.first, blocks.extent);
  const Block target = blockOf(to, ranks, blocks.first, blocks.extent);
  if (source.end <= source.first || target.end <= target.first)
    return {};
  const int64_t begin = std::max<int64_t>(std::max(source.first, target.first - depth) + blocks.shift, 0);
  const int64_t end = std::min(std::min(source.end, target.first) + blocks.shift, dimExtent);
  return {begin, std::max(begin, end)};
}

PipelinePeers pipelinePeers(int rank, int ranks, const RowBlocks &blocks, int64_t depth, int64_t dimExtent) {
  const int64_t firstRow = blockOf(rank, ranks, blocks.first, blocks.extent).first + blocks.shift;
  PipelinePeers peers;
  for (int peer = 0; peer < ranks; ++peer) {
    const Rows in = pipelineRows(peer, rank, ranks, blocks, depth, dimExtent);
    const Rows out = pipelineRows(rank, peer, ranks, blocks, depth, dimExtent);
    if (!in.empty()) {
      peers.sources.push_back(peer);
      peers.rowsBefore = std::max(peers.rowsBefore, firstRow - in.begin);
    }
    if (!out.empty())
      peers.targets.push_back({peer, out.begin - firstRow, out.end - firstRow});
  }
  return peers;
}

RowLayout columnsOfRows(const RowLayout &layout, Rows rows) {
  if (layout.prefixCount != 1)
    throw std::logic_error("a pipeline's array is not two-dimensional with its rows along dimension 0");
  const size_t rowBytes = size_t(layout.rowElements) * layout.elementBytes;
  return {static_cast<char *>(layout.data) + size_t(rows.begin) * rowBytes, layout.elementBytes,
          rows.end - rows.begin, layout.rowElements, 1};
}

void PipelineStrips::receive(Rows columns) const { exchange(columns, true); }
void PipelineStrips::send(Rows columns) const { exchange(columns, false); }

// The strip's messages from the ranks before this one (`receiving`) or to the ranks after it, all posted
// at once and waited for.
void PipelineStrips::exchange(Rows columns, bool receiving) const {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || holdsNothing(layout_) || columns.empty())
    return;
  Messages messages(copies_);
  for (int peer = receiving ? 0 : rank + 1; peer < (receiving ? rank : ranks); ++peer) {
    const int from = receiving ? peer : rank, to = receiving ? rank : peer;
    const Rows rows = pipelineRows(from, to, ranks, blocks_, depth_, layout_.dimExtent);
    if (rows.empty())
      continue;
    if (receiving)
      messages.receive(columnsOfRows(layout_, rows), columns, peer);
    else
      messages.send(columnsOfRows(layout_, rows), columns, peer);
  }
  messages.wait();
}

int64_t PipelineStrips::stripWidth(int64_t columns) {
  if (const char *value = std::getenv("POLYC_MPI_STRIP"); value && *value) {
    char *end = nullptr;
    const long long width = std::strtoll(value, &end, 10);
    if (*end != '\0' || width <= 0)
      throw std::runtime_error(std::string("POLYC_MPI_STRIP: expected a positive count of columns, got '") +
                               value + "'");
    return width;
  }
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1)
    return std::max<int64_t>(1, columns); // nothing to wait for: one strip, the wavefront started once
  const int64_t strips = 16 * int64_t(ranks);
  return std::max<int64_t>(1, (columns + strips - 1) / strips);
}

struct HaloExchanges::Pending {
  Messages messages;
};

HaloExchanges::HaloExchanges(RowCopies *copies) : copies_(copies) {}
HaloExchanges::~HaloExchanges() { finish(); }

void HaloExchanges::begin(const RowLayout &layout, const RowBlocks &blocks, int64_t lo, int64_t hi) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || holdsNothing(layout))
    return;
  if (!pending_)
    pending_ = std::make_unique<Pending>(Pending{Messages(copies_)});
  for (int peer = 0; peer < ranks; ++peer) {
    pending_->messages.receive(layout, haloRows(peer, rank, ranks, blocks, lo, hi, layout.dimExtent), peer);
    pending_->messages.send(layout, haloRows(rank, peer, ranks, blocks, lo, hi, layout.dimExtent), peer);
  }
}

void HaloExchanges::finish() {
  if (pending_)
    pending_->messages.wait();
  pending_.reset();
}

std::array<Block, 3> edgesFirst(Block block, int64_t firstRows, int64_t lastRows) {
  const int64_t firstEnd = std::min(block.end, block.first + std::max<int64_t>(firstRows, 0));
  const int64_t lastBegin = std::max(firstEnd, block.end - std::max<int64_t>(lastRows, 0));
  return {Block{block.first, firstEnd}, Block{lastBegin, block.end}, Block{firstEnd, lastBegin}};
}

void exchangeHalo(const RowLayout &layout, const RowBlocks &blocks, int64_t lo, int64_t hi,
                  RowCopies *copies) {
  HaloExchanges exchanges(copies);
  exchanges.begin(layout, blocks, lo, hi);
  exchanges.finish();
}

void gatherRowBlocks(const RowLayout &layout, const RowBlocks &blocks, RowCopies *copies) {
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  if (ranks == 1 || holdsNothing(layout))
    return;
  auto rowsOf = [&](int r) {
    const Block block = blockOf(r, ranks, blocks.first, blocks.extent);
    return Rows{std::max<int64_t>(0, block.first + blocks.shift),
                std::min(layout.dimExtent, block.end + blocks.shift)};
  };
  Messages messages(copies);
  if (rank == 0)
    for (int peer = 1; peer < ranks; ++peer)
      messages.receive(layout, rowsOf(peer), peer);
  else
    messages.send(layout, rowsOf(rank), 0);
  messages.wait();
}

namespace {

// The program's Compute with the ranks meeting after each upload: a timed run starts on all of them at
// once, so rank 0's time does not count another rank still copying its inputs to its GPU.
class RanksTogether final : public Compute {
public:
  explicit RanksTogether(Compute &inner) : inner_(inner) {}
  void upload(RunContext &context) override {
    inner_.upload(context);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double compute(RunContext &context) override { return inner_.compute(context); }
  void download(RunContext &context) override { inner_.download(context); }
  double computeStreamed(RunContext &context, StreamSlices &slices) override {
    return inner_.computeStreamed(context, slices);
  }

private:
  Compute &inner_;
};

} // namespace

World world() {
  World w;
  worldShape(w.rank, w.ranks);
  return w;
}

bool onEveryRank(bool value) {
  int all = value ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

bool onAnyRank(bool value) {
  int any = value ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any == 1;
}

bool oneHost() {
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int onHost = 0, ranks = 0;
  MPI_Comm_size(host, &onHost);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_free(&host);
  return onEveryRank(onHost == ranks);
}

void allGatherBytes(const void *mine, size_t bytes, void *all) {
  MPI_Allgather(mine, byteCount(bytes), MPI_BYTE, all, byteCount(bytes), MPI_BYTE, MPI_COMM_WORLD);
}

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

int runMainMpi(int argc, char **argv, const ProgramInfo &info, Compute &compute) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  worldShape(rank, ranks);
  RunOptions options;
  options.reports = rank == 0;
  RanksTogether together(compute);
  int status = runMain(argc, argv, info, together, options);
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
