// The isl C calls that the C++ bindings (isl 0.25) lack, wrapped once for the code generators (which
// use the middle end's headers but not its libraries, so compiler/model/IslUtil is not theirs to call).
#pragma once

#include <isl/cpp.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include <vector>

namespace polyc::codegen {

inline isl::pw_aff dimMin(const isl::set &set, unsigned pos) { return isl::manage(isl_set_dim_min(set.copy(), pos)); }
inline isl::pw_aff dimMax(const isl::set &set, unsigned pos) { return isl::manage(isl_set_dim_max(set.copy(), pos)); }
inline isl::set projectOutDim(const isl::set &set, unsigned pos) {
  return isl::manage(isl_set_project_out(set.copy(), isl_dim_set, pos, 1));
}
inline isl::set flatProduct(const isl::set &a, const isl::set &b) {
  return isl::manage(isl_set_flat_product(a.copy(), b.copy()));
}
// The set, or the map, with its tuple names removed (so that differently named spaces compare).
inline isl::set resetTupleId(const isl::set &set) { return isl::manage(isl_set_reset_tuple_id(set.copy())); }
inline isl::map resetTupleIds(const isl::map &map) {
  return isl::manage(isl_map_reset_tuple_id(isl_map_reset_tuple_id(map.copy(), isl_dim_in), isl_dim_out));
}
inline isl::set setFromUnion(const isl::union_set &set) { return isl::manage(isl_set_from_union_set(set.copy())); }
// The map with the constraints on its range that `context` implies removed.
inline isl::map gistRange(const isl::map &map, const isl::set &context) {
  return isl::manage(isl_map_gist_range(map.copy(), context.copy()));
}
inline bool isBounded(const isl::set &set) { return isl_set_is_bounded(set.get()) == isl_bool_true; }
// The extent (max - min + 1) of each dimension of the set's bounding box, as functions of the params;
// isl throws (isl::exception) where a dimension is unbounded.
inline std::vector<isl::pw_aff> boxExtents(const isl::set &set) {
  std::vector<isl::pw_aff> extents;
  for (unsigned d = 0; d < unsigned(set.tuple_dim()); ++d)
    extents.push_back(dimMax(set, d).sub(dimMin(set, d)).add_constant(isl::val(set.ctx(), 1)));
  return extents;
}

} // namespace polyc::codegen
