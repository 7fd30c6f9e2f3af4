// The MPI layer's blocks (polyc/mpi/Mpi.h): every value in exactly one block, in rank order, sizes
// differing by at most one; empty blocks where there are more ranks than values.
#include "polyc/mpi/Mpi.h"

#include <gtest/gtest.h>

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
