// The body of a round-tile kernel (map::RoundTiles), shared by the CUDA and OpenCL printers: the block's
// tile and halo of the array loaded into the first of two buffers in on-chip memory, up to polyc_rounds
// rounds of the update from one buffer into the other, each over the points held less (round + 1) x
// reach on every side where the array goes on past them (so that no point reads one the block does not
// hold or has not computed in the round before), then the tile's own points stored to the target array.
#pragma once

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/ExprPrinter.h"
#include "compiler/map/Mapping.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace polyc::codegen {

// What differs between the targets.
struct RoundTileDialect {
  std::string index;              // the type of array indices ("polyc_index", "int")
  std::string buffers;            // the declaration of the buffers before their name ("__shared__ float")
  std::string bufferPointer;      // a pointer into them, before `*` ("float", "__local float")
  std::string item, items, group; // the thread's index in its block, the block's threads, the block's index
  std::string barrier;            // "__syncthreads();"
  std::string source, target;     // the arrays' names in the kernel
  // Prints the update at the point `indices` (the array's indices), round polyc_first + polyc_j, setting
  // the bool polyc_delta to whether it changed the element; where the C condition `inside` holds, the
  // point's reads of the array are inside it (RoundTileStorage::interior: no boundary rule to apply).
  std::function<void(CodeWriter &, const std::vector<std::string> &indices, const std::string &inside)>
      update;
  // After the rounds, where the loop stops early: tells the host that the last round changed an own
  // point of some block (polyc_moved in this one).
  std::string reportChange;
};

// The round tile's buffers as the update's reads and store see them (ExprPrinter::roundTile).
ExprPrinter::RoundTileStorage roundTileStorage(const map::RoundTiles &tiles);

// The launches a loop that stops early runs ahead of the host's test of their changed flags: about 32
// rounds (a launch after the one whose last round changed nothing costs a whole launch, where a round
// of the host loop's costs a few microseconds).
inline int launchesAhead(const map::RoundTiles &tiles) { return std::max(1, 32 / int(tiles.rounds)); }

// The host's number of blocks, one a tile, as a C expression of the params.
std::string roundTileBlocks(const map::RoundTiles &tiles, const ExprPrinter &exprs);
// The kernel in words, for its comment: "a block holds up to 48 x 48 points of E (32 x 32 its own, ...".
std::string describeRoundTileKernel(const map::RoundTiles &tiles, const std::string &block,
                                    const std::string &memory);

// Prints the kernel's body (its parameters: the params, polyc_source, polyc_target, polyc_first,
// polyc_rounds) into `w`.
void printRoundTileBody(const map::RoundTiles &tiles, const ExprPrinter &exprs,
                        const RoundTileDialect &dialect, CodeWriter &w);

} // namespace polyc::codegen
