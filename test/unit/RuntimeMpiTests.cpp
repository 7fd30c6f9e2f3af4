// The MPI layer's blocks (polyc/mpi/Mpi.h): every value in exactly one block, in rank order, sizes
// differing by at most one; empty blocks where there are more ranks than values.
#include "polyc/mpi/Mpi.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <vector>

using polyc::rt::mpi::Block;
using polyc::rt::mpi::blockOf;

TEST(MpiBlocks, CoverTheRangeInRankOrder) {
  for (int64_t extent : {0, 1, 2, 3, 7, 40, 1000}) {
    for (int ranks : {1, 2, 3, 4, 7}) {
      int64_t next = 5, smallest = extent, largest = 0;
      for (int rank = 0; rank < ranks; ++rank) {
        Block block = blockOf(rank, ranks, 5, extent);
        EXPECT_EQ(block.first, next) << extent << " over " << ranks;
        EXPECT_LE(block.first, block.end);
        smallest = std::min(smallest, block.end - block.first);
        largest = std::max(largest, block.end - block.first);
        next = block.end;
      }
      EXPECT_EQ(next, 5 + extent) << extent << " over " << ranks;
      EXPECT_LE(largest - smallest, 1) << extent << " over " << ranks;
    }
  }
}

TEST(MpiBlocks, TheFirstRanksTakeTheRemainder) {
  EXPECT_EQ(blockOf(0, 3, 0, 7).end, 3);
  EXPECT_EQ(blockOf(1, 3, 0, 7).first, 3);
  EXPECT_EQ(blockOf(1, 3, 0, 7).end, 5);
  EXPECT_EQ(blockOf(2, 3, 0, 7).end, 7);
  EXPECT_EQ(blockOf(3, 4, 0, 2).first, 2); // more ranks than values: empty blocks at the end
  EXPECT_EQ(blockOf(3, 4, 0, 2).end, 2);
}

// A halo: rank `to` receives from each other rank the rows of that rank's block that its own block reads,
// [block.first + lo, block.end + hi), within the array; and nothing from itself.
TEST(MpiChunks, EveryValueLiesInExactlyOneChunkOfOneRank) {
  for (int64_t extent : {0, 1, 5, 8, 37, 1000})
    for (int ranks : {1, 2, 3, 4})
      for (int64_t chunks : {1, 2, 3, 4}) {
        std::vector<int> owners(size_t(extent), -1);
        for (int rank = 0; rank < ranks; ++rank) {
          std::vector<Block> mine = polyc::rt::mpi::chunksOf(rank, ranks, 3, extent, chunks);
          EXPECT_EQ(int64_t(mine.size()), chunks);
          for (const Block &chunk : mine)
            for (int64_t v = chunk.first; v < chunk.end; ++v) {
              ASSERT_GE(v, 3);
              ASSERT_LT(v, 3 + extent);
              EXPECT_EQ(owners[size_t(v - 3)], -1) << "value " << v << " twice";
              owners[size_t(v - 3)] = rank;
            }
        }
        for (int64_t v = 0; v < extent; ++v)
          EXPECT_GE(owners[size_t(v)], 0) << "value " << v << " of " << extent << " on no rank";
      }
}

TEST(MpiChunks, OneChunkIsTheRanksBlock) {
  for (int rank = 0; rank < 3; ++rank) {
    std::vector<Block> mine = polyc::rt::mpi::chunksOf(rank, 3, 0, 10, 1);
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_EQ(mine[0].first, blockOf(rank, 3, 0, 10).first);
    EXPECT_EQ(mine[0].end, blockOf(rank, 3, 0, 10).end);
  }
}

TEST(MpiChunks, SnakeOrderBalancesWorkThatGrowsWithTheValue) {
  // A triangle's rows: row v costs v + 1. Plain blocks give 2 ranks 1/4 and 3/4 of the work.
  const int64_t extent = 1024;
  auto work = [](const std::vector<Block> &blocks) {
    int64_t total = 0;
    for (const Block &b : blocks)
      for (int64_t v = b.first; v < b.end; ++v)
        total += v + 1;
    return total;
  };
  for (int ranks : {2, 3, 4}) {
    int64_t least = INT64_MAX, most = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      int64_t w = work(polyc::rt::mpi::chunksOf(rank, ranks, 0, extent, 4));
      least = std::min(least, w);
      most = std::max(most, w);
    }
    EXPECT_LE(double(most) / double(least), 1.01) << ranks << " ranks";
  }
  EXPECT_GT(double(work({blockOf(1, 2, 0, extent)})) / double(work({blockOf(0, 2, 0, extent)})), 2.9);
}

TEST(MpiHalo, EachRankReceivesTheRowsItsBlockReadsFromTheirOwners) {
  using polyc::rt::mpi::haloRows;
  using polyc::rt::mpi::RowBlocks;
  using polyc::rt::mpi::Rows;
  for (int64_t extent : {0, 1, 2, 5, 13}) {
    for (int ranks : {1, 2, 3, 4}) {
      for (auto [lo, hi] : {std::pair<int64_t, int64_t>{-1, 1}, {-2, 1}, {0, 0}, {0, 3}}) {
        const RowBlocks blocks{1, extent, 0}; // rows 1 .. extent of an array of extent + 2
        const int64_t dimExtent = extent + 2;
        for (int to = 0; to < ranks; ++to) {
          Block own = blockOf(to, ranks, 1, extent);
          std::vector<int> received(size_t(dimExtent), 0);
          for (int from = 0; from < ranks; ++from) {
            Rows rows = haloRows(from, to, ranks, blocks, lo, hi, dimExtent);
            Block theirs = blockOf(from, ranks, 1, extent);
            for (int64_t r = rows.begin; r < rows.end; ++r) {
              EXPECT_TRUE(r >= theirs.first && r < theirs.end)
                  << "row " << r << " is not rank " << from << "'s";
              ++received[size_t(r)];
            }
          }
          for (int64_t r = 0; r < dimExtent; ++r) {
            bool read = own.end > own.first && r >= own.first + lo && r < own.end + hi;
            bool written = r >= 1 && r <= extent;
            bool ownRow = r >= own.first && r < own.end;
            EXPECT_EQ(received[size_t(r)], read && written && !ownRow ? 1 : 0)
                << "row " << r << " for rank " << to << " of " << ranks << ", extent " << extent;
          }
        }
      }
    }
  }
}

TEST(MpiHalo, ShiftedBlocksSendTheirShiftedRows) {
  using polyc::rt::mpi::haloRows;
  // Two ranks, blocks [0, 3) and [3, 6) writing rows shifted by 1: [1, 4) and [4, 7); rank 1 reads
  // [3 - 1, 6 + 0) = [2, 6), of which rank 0 wrote [2, 4).
  polyc::rt::mpi::Rows rows = haloRows(0, 1, 2, {0, 6, 1}, -1, 0, 10);
  EXPECT_EQ(rows.begin, 2);
  EXPECT_EQ(rows.end, 4);
  EXPECT_TRUE(haloRows(1, 1, 2, {0, 6, 1}, -1, 0, 10).empty());
}

// The packed messages of host staging: rows [1, 3) of each of the 2 runs of a [2, 4, 3] array are the
// elements 3..8 and 15..20, run after run; unpacking them into another array puts them back there only.
TEST(MpiPacked, RowsOfEveryRunArePackedRunAfterRunAndUnpackedInPlace) {
  using polyc::rt::mpi::RowLayout;
  std::vector<int32_t> array(24), copy(24, -1);
  for (size_t k = 0; k < array.size(); ++k)
    array[k] = int32_t(k);
  const RowLayout layout{array.data(), sizeof(int32_t), 2, 4, 3};
  const polyc::rt::mpi::Rows rows{1, 3};
  ASSERT_EQ(polyc::rt::mpi::packedBytes(layout, rows), 12 * sizeof(int32_t));
  std::vector<int32_t> packed(12);
  polyc::rt::mpi::HostRowCopies copies;
  copies.toHost(layout, rows, packed.data());
  EXPECT_EQ(packed, (std::vector<int32_t>{3, 4, 5, 6, 7, 8, 15, 16, 17, 18, 19, 20}));
  copies.fromHost({copy.data(), sizeof(int32_t), 2, 4, 3}, rows, packed.data());
  for (size_t k = 0; k < copy.size(); ++k) {
    const size_t row = (k / 3) % 4;
    EXPECT_EQ(copy[k], row >= 1 && row < 3 ? int32_t(k) : -1) << "element " << k;
  }
  EXPECT_EQ(polyc::rt::mpi::packedBytes(layout, {2, 2}), 0u);
  EXPECT_EQ(polyc::rt::mpi::packedBytes({array.data(), sizeof(int32_t), 0, 4, 3}, rows), 0u);
}

// A block computed edges first (HaloExchanges overlapping its interior): the three parts cover the block
// once, in order first rows, last rows, interior; edges wider than the block take it all, the first first.
TEST(MpiHalo, EdgesFirstCoverTheBlockOnceWithTheEdgesBeforeTheInterior) {
  using polyc::rt::mpi::edgesFirst;
  for (int64_t size : {0, 1, 2, 3, 7}) {
    for (int64_t firstRows : {0, 1, 2, 9}) {
      for (int64_t lastRows : {0, 1, 3}) {
        const Block block{5, 5 + size};
        const std::array<Block, 3> parts = edgesFirst(block, firstRows, lastRows);
        std::vector<int> covered(size_t(size), 0);
        for (const Block &part : parts)
          for (int64_t r = part.first; r < part.end; ++r)
            ++covered[size_t(r - 5)];
        EXPECT_EQ(covered, std::vector<int>(size_t(size), 1)) << size << " " << firstRows << " " << lastRows;
        EXPECT_EQ(parts[0].first, block.first);
        EXPECT_EQ(parts[0].end - parts[0].first, std::min(size, firstRows));
        EXPECT_EQ(parts[1].end, block.end);
        EXPECT_EQ(parts[1].end - parts[1].first, std::min(size - std::min(size, firstRows), lastRows));
      }
    }
  }
}

// A pipeline (PipelineStrips): rank `to` receives the `depth` rows before its block, each from the
// earlier rank that wrote it, whichever rank's block holds it (a block may be shorter than the depth),
// and nothing from itself or a later rank.
TEST(MpiPipeline, EachRankReceivesTheDepthRowsBeforeItsBlockFromTheirWriters) {
  using polyc::rt::mpi::pipelineRows;
  using polyc::rt::mpi::RowBlocks;
  using polyc::rt::mpi::Rows;
  for (int64_t extent : {0, 1, 2, 5, 13}) {
    for (int ranks : {1, 2, 3, 4, 6}) {
      for (int64_t depth : {0, 1, 2, 4, 30}) {
        for (int64_t shift : {0, 1}) {
          const RowBlocks blocks{2, extent, shift}; // rows 2 .. extent + 1 of the statement
          const int64_t dimExtent = extent + 2 + shift;
          for (int to = 0; to < ranks; ++to) {
            Block own = blockOf(to, ranks, 2, extent);
            std::vector<int> received(size_t(dimExtent), 0);
            for (int from = 0; from < ranks; ++from) {
              Rows rows = pipelineRows(from, to, ranks, blocks, depth, dimExtent);
              Block theirs = blockOf(from, ranks, 2, extent);
              if (from >= to) {
                EXPECT_TRUE(rows.empty()) << from << " to " << to;
              }
              for (int64_t r = rows.begin; r < rows.end; ++r) {
                EXPECT_TRUE(r - shift >= theirs.first && r - shift < theirs.end)
                    << "row " << r << " is not rank " << from << "'s";
                ++received[size_t(r)];
              }
            }
            for (int64_t r = 0; r < dimExtent; ++r) {
              const int64_t statementRow = r - shift;
              bool wanted = own.end > own.first && statementRow >= own.first - depth &&
                            statementRow < own.first && statementRow >= 2;
              EXPECT_EQ(received[size_t(r)], wanted ? 1 : 0)
                  << "row " << r << " for rank " << to << " of " << ranks << ", extent " << extent
                  << ", depth " << depth;
            }
          }
        }
      }
    }
  }
}

// A pipeline as one kernel a rank (PeerPipeline): the sources are the ranks pipelineRows gives rows from,
// in rank order; the targets the ranks it gives rows to, with those rows from the rank's first row; the
// rows before the block reach back to the first row received. Blocks of 2 and 3 rows with depth 4: rank
// 2 (rows 5 .. 6) reads rows 1 .. 4, from ranks 0 and 1.
TEST(MpiPipeline, PeersOfARankAreTheWritersOfTheRowsItReadsAndTheReadersOfItsOwn) {
  using polyc::rt::mpi::pipelinePeers;
  using polyc::rt::mpi::PipelinePeers;
  using polyc::rt::mpi::RowBlocks;
  const RowBlocks blocks{0, 8, 0}; // 3 ranks: rows 0 .. 2, 3 .. 5, 6 .. 7
  const PipelinePeers first = pipelinePeers(0, 3, blocks, 4, 8);
  EXPECT_TRUE(first.sources.empty());
  EXPECT_EQ(first.rowsBefore, 0);
  ASSERT_EQ(first.targets.size(), 2u);
  EXPECT_EQ(first.targets[0].rank, 1);
  EXPECT_EQ(first.targets[0].first, 0); // rows 0 .. 2, all of rank 0's
  EXPECT_EQ(first.targets[0].end, 3);
  EXPECT_EQ(first.targets[1].rank, 2);
  EXPECT_EQ(first.targets[1].first, 2); // row 2: rank 2 reads rows 2 .. 5
  EXPECT_EQ(first.targets[1].end, 3);
  const PipelinePeers last = pipelinePeers(2, 3, blocks, 4, 8);
  EXPECT_EQ(last.sources, (std::vector<int>{0, 1}));
  EXPECT_EQ(last.rowsBefore, 4);
  EXPECT_TRUE(last.targets.empty());
  // Shifted rows (the array's row = the statement's + 1) count from the block's first array row too.
  const PipelinePeers shifted = pipelinePeers(0, 2, RowBlocks{0, 8, 1}, 2, 9);
  ASSERT_EQ(shifted.targets.size(), 1u);
  EXPECT_EQ(shifted.targets[0].first, 2);
  EXPECT_EQ(shifted.targets[0].end, 4);
  EXPECT_EQ(pipelinePeers(1, 2, RowBlocks{0, 8, 1}, 2, 9).rowsBefore, 2);
  // One rank, or no depth: no peers.
  EXPECT_TRUE(pipelinePeers(0, 1, blocks, 4, 8).targets.empty());
  EXPECT_TRUE(pipelinePeers(1, 3, blocks, 0, 8).sources.empty());
}

// A strip's messages: rows [1, 3) of a 4 x 5 array in columns [2, 4) are the elements 7, 8, 12, 13,
// packed row after row as rows [2, 4) of a layout whose runs are the array's rows 1 and 2.
TEST(MpiPipeline, AStripOfRowsIsABlockOfRowsOfItsColumnsLayout) {
  using polyc::rt::mpi::RowLayout;
  std::vector<float> array(20);
  for (size_t k = 0; k < array.size(); ++k)
    array[k] = float(k);
  const RowLayout strip = polyc::rt::mpi::columnsOfRows({array.data(), sizeof(float), 1, 4, 5}, {1, 3});
  EXPECT_EQ(strip.prefixCount, 2);
  EXPECT_EQ(strip.dimExtent, 5);
  EXPECT_EQ(strip.rowElements, 1);
  std::vector<float> packed(4);
  ASSERT_EQ(polyc::rt::mpi::packedBytes(strip, {2, 4}), packed.size() * sizeof(float));
  polyc::rt::mpi::HostRowCopies().toHost(strip, {2, 4}, packed.data());
  EXPECT_EQ(packed, (std::vector<float>{7, 8, 12, 13}));
  EXPECT_THROW(polyc::rt::mpi::columnsOfRows({array.data(), sizeof(float), 2, 2, 5}, {0, 1}),
               std::logic_error);
}
