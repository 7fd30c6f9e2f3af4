// Tile sizes for the CPU target (see Tiling.h).
#include "compiler/schedule/Tiling.h"

#include "compiler/model/IslUtil.h"

#include "llvm/ADT/STLExtras.h"

#include <isl/map.h>
#include <isl/set.h>

#include <optional>

namespace polyc::schedule {

std::vector<int64_t> defaultTileSizes(unsigned members) {
  std::vector<int64_t> sizes(members, 32);
  if (members > 0)
    sizes.back() = 64;
  return sizes;
}

// For each member of `band` (a tree band node), the dimension of `statement` it is, when every member
// is one of the statement's dimensions (coefficient 1, nothing else); none otherwise (a skewed band).
static std::optional<std::vector<unsigned>> memberDims(const isl::schedule_node_band &band,
                                                       const model::Statement &statement) {
  std::vector<unsigned> dims;
  isl::multi_union_pw_aff partial = band.partial_schedule();
  for (unsigned m = 0; m < band.n_member(); ++m) {
    isl::pw_multi_aff_list pieces = partial.at(static_cast<int>(m)).pw_multi_aff_list();
    std::optional<unsigned> dim;
    bool found = false;
    for (unsigned p = 0; p < pieces.size(); ++p) {
      isl::pw_multi_aff piece = pieces.at(static_cast<int>(p));
      const char *name = isl_set_get_tuple_name(piece.domain().get());
      if (!name || statement.name != name)
        continue;
      found = true;
      if (piece.n_piece() != 1)
        return std::nullopt;
      islutil::AffCoefficients aff = islutil::coefficients(piece.as_multi_aff().at(0));
      if (!aff.integral || aff.constant != 0 || llvm::any_of(aff.params, [](int64_t c) { return c != 0; }))
        return std::nullopt;
      for (unsigned d = 0; d < aff.dims.size(); ++d) {
        if (aff.dims[d] == 0)
          continue;
        if (aff.dims[d] != 1 || dim)
          return std::nullopt;
        dim = d;
      }
    }
    if (!found || !dim)
      return std::nullopt;
    dims.push_back(*dim);
  }
  return dims;
}

// Whether the statement's domain fixes dimension `dim` (j == 0, i == N - 1): there is no reuse along
// a dimension that has one value.
static bool fixesDim(const isl::set &domain, unsigned dim) {
  isl::set params = domain.params();
  return params.is_subset(islutil::dimMin(domain, dim).eq_set(islutil::dimMax(domain, dim)));
}

// Whether tiles of `band` reuse data: some reduction operand of one of its statements (a read of many
// elements a point, gemm's A[i, k] over k) does not involve the dimension of one member while it involves
// another's, so the points of a tile along the first share a block that a row of points would read again
// from memory. A single element that does not follow a member (floyd-warshall's path[k, k, j], the same
// for every i) is one row, which stays in the cache without tiles: measured 15% slower tiled.
static bool tilesReuse(const isl::schedule_node_band &band, const Band &info, const model::Model &model) {
  for (unsigned s : info.statements) {
    const model::Statement &statement = model.statements[s];
    std::optional<std::vector<unsigned>> dims = memberDims(band, statement);
    if (!dims)
      return false;
    for (const model::Access &read : statement.reads) {
      if (read.relation.is_null() || read.relation.range_tuple_dim() == 0 || read.relation.is_single_valued())
        continue;
      // Without the statement's domain, which involves every dimension.
      isl::map element = read.relation.gist_domain(statement.domain);
      bool involvesSome = false, missesSome = false;
      for (unsigned d : *dims) {
        if (fixesDim(statement.domain, d))
          continue;
        isl_bool involves = isl_map_involves_dims(element.get(), isl_dim_in, d, 1);
        (involves == isl_bool_true ? involvesSome : missesSome) = true;
      }
      if (involvesSome && missesSome)
        return true;
    }
  }
  return false;
}

static bool mayTile(const isl::schedule_node_band &node, const Band &band) {
  if (band.isSequentialRepeat || !band.hyperplane.empty() || node.n_member() < 2 || !node.permutable() ||
      band.coincident.size() != node.n_member())
    return false;
  for (bool parallel : band.coincident)
    if (!parallel)
      return false;
  return true;
}

void chooseTiles(const model::Model &model, Schedule &schedule, const TilingOptions &options) {
  for (Band &band : schedule.bands)
    band.tileSizes.clear();
  if (!options.enabled || schedule.tree.is_null())
    return;
  // Band nodes in pre-order are Schedule::bands in order (Schedule.h).
  unsigned index = 0;
  schedule.tree.root().foreach_descendant_top_down([&](const isl::schedule_node &node) {
    if (!node.isa<isl::schedule_node_band>())
      return true;
    unsigned k = index++;
    if (k >= schedule.bands.size())
      return false;
    auto bandNode = node.as<isl::schedule_node_band>();
    Band &band = schedule.bands[k];
    if (!mayTile(bandNode, band) || !tilesReuse(bandNode, band, model))
      return true;
    std::vector<int64_t> sizes = defaultTileSizes(bandNode.n_member());
    for (size_t m = 0; m < sizes.size() && !options.sizes.empty(); ++m)
      sizes[m] = options.sizes[std::min(m, options.sizes.size() - 1)];
    band.tileSizes = sizes;
    return true;
  });
}

} // namespace polyc::schedule
