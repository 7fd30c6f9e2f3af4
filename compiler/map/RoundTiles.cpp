// Recognises a top-level repeat loop whose rounds can run several a launch on tiles in on-chip memory
// (Mapping.h, RoundTiles): its statements are an update and the copy of its old values, both over the
// whole array at every point, the update reading the copy at offsets isl bounds by constants.
#include "compiler/map/Mapping.h"

#include "compiler/model/IslUtil.h"

#include <isl/map.h>
#include <isl/set.h>

namespace polyc::map {

namespace iu = polyc::islutil;

namespace {

// The owned tile of a block by the array's rank: 1024 points in a row, 32 x 32. (In 3-D a tile that
// fits two buffers in 32 KiB with halos for more than 2 rounds owns too few points to pay for them.)
std::vector<int64_t> ownedTile(unsigned rank) {
  return rank == 1 ? std::vector<int64_t>{1024} : std::vector<int64_t>{32, 32};
}

// At most this many bytes of on-chip memory for a block's two buffers: within CUDA's 48 KiB of static
// shared memory and OpenCL's 32 KiB of local memory that every device offers, with room for two blocks an SM.
constexpr int64_t BufferBytes = 32 * 1024;
constexpr unsigned MostRounds = 8;
// Fewer rounds a launch than this save too little against their halos: the host loop stays.
constexpr unsigned FewestRounds = 2;

int64_t elementBytes(ast::ElemType type) { return type == ast::ElemType::F64 ? 8 : 4; }

// Whether `statement` (in a repeat block) writes every element of `array` once an iteration, each at its
// own point: its domain is the loop's range times the array's box, its write the identity on the box.
bool writesWholeArrayAtPoint(const model::Statement &statement, const model::ArrayInfo &array,
                             const isl::set &context) {
  const unsigned rank = iu::tupleDims(array.extent.space());
  isl::set domain = iu::anonymousSet(statement.domain.intersect_params(context));
  if (statement.repeatDims != 1 || iu::tupleDims(domain.space()) != 1 + rank)
    return false;
  isl::set loop = iu::projectOutDims(domain, 1, rank);
  isl::set box = iu::anonymousSet(array.extent.intersect_params(context));
  if (!domain.is_equal(isl::manage(isl_set_flat_product(loop.release(), box.release()))))
    return false;
  isl::map write = iu::anonymousMap(iu::projectOutInputs(statement.write.relation, 0, 1));
  isl_set *zero = isl_set_universe(write.domain().space().release());
  for (unsigned k = 0; k < rank; ++k)
    zero = isl_set_fix_si(zero, isl_dim_set, k, 0);
  return write.deltas().is_subset(isl::manage(zero));
}

} // namespace

std::optional<RoundTiles> findRoundTiles(const model::Model &model, const schedule::Schedule &schedule,
                                         unsigned band, std::string &why) {
  const schedule::Band &loop = schedule.bands.at(band);
  if (!loop.isSequentialRepeat || loop.statements.size() != 2) {
    why = "not a repeat loop of one update and the copy of its old values";
    return std::nullopt;
  }
  RoundTiles tiles;
  const model::Statement *copy = nullptr, *update = nullptr;
  for (unsigned s : loop.statements) {
    const model::Statement &statement = model.statements[s];
    if (statement.equation->snapshotFor)
      copy = &statement, tiles.copy = s;
    else
      update = &statement, tiles.update = s;
  }
  if (!copy || !update || copy->equation->snapshotFor != update->equation || update->scatter) {
    why = "not a repeat loop of one update and the copy of its old values";
    return std::nullopt;
  }
  if (loop.stopsWhenUnchanged && (!update->signalsChange || model::mentionsRepeatVariable(*copy) ||
                                  model::mentionsRepeatVariable(*update))) {
    why = "it stops early, and a round after one that changed nothing may change something";
    return std::nullopt;
  }
  tiles.array = update->write.array;
  tiles.snapshot = copy->write.array;
  tiles.block = update->equation->enclosingRepeat;
  const model::ArrayInfo &array = *model.findArray(tiles.array);
  const isl::set context = model.context;
  const unsigned rank = iu::tupleDims(array.extent.space());
  if (rank < 1 || rank > 2 || !writesWholeArrayAtPoint(*update, array, context) ||
      !writesWholeArrayAtPoint(*copy, *model.findArray(tiles.snapshot), context)) {
    why = "the update is not over a whole array of 1 or 2 dimensions, each element at its own point";
    return std::nullopt;
  }
  for (const schedule::FoldedStorage &folded : schedule.folded)
    if (folded.array == tiles.array || folded.array == tiles.snapshot) {
      why = "the array is stored folded";
      return std::nullopt;
    }
  tiles.reach.assign(rank, 0);
  for (const model::Access &read : update->reads) {
    if (read.array == tiles.array && read.implicitUpdateRead)
      continue;
    if (read.array != tiles.snapshot)
      continue; // no statement of the loop writes it
    if (read.isMay) {
      why = "the update gathers from the old values";
      return std::nullopt;
    }
    for (unsigned k = 0; k < rank; ++k) {
      auto distances = iu::indexDistances(read.relation, update->repeatDims + k, k, context);
      if (!distances) {
        why = "the update reads the old values at offsets that no constant bounds";
        return std::nullopt;
      }
      tiles.reach[k] = std::max({tiles.reach[k], -distances->first, distances->second});
    }
  }
  tiles.tile = ownedTile(rank);
  const int64_t bytes = elementBytes(array.decl->elemType);
  for (tiles.rounds = MostRounds; tiles.rounds >= FewestRounds; --tiles.rounds) {
    int64_t held = 1;
    for (unsigned k = 0; k < rank; ++k)
      held *= tiles.held(k);
    if (2 * held * bytes <= BufferBytes)
      return tiles;
  }
  why = "two buffers of a tile and its halo for " + std::to_string(FewestRounds) + " rounds exceed " +
        std::to_string(BufferBytes) + " bytes";
  return std::nullopt;
}

} // namespace polyc::map
