// The MPI decomposition (Decompose.h): a walk of the schedule tree that finds the bands whose outermost
// parallel member the ranks can split, and the row exchanges that make the replicated arrays equal again.
#include "compiler/map/Decompose.h"
#include "compiler/map/Mapping.h"

#include "compiler/model/IslUtil.h"

#include "llvm/ADT/STLExtras.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace polyc::map {

namespace iu = polyc::islutil;

namespace {

// The first index of `write` (S[x] -> A[...]) that is x_dim + c, with c.
std::optional<std::pair<unsigned, int64_t>> rowIndex(const isl::map &write, unsigned dim) {
  isl::pw_multi_aff function = isl::manage(isl_pw_multi_aff_from_map(write.copy()));
  std::vector<isl::multi_aff> each;
  function.foreach_piece([&](isl::set, isl::multi_aff piece) { each.push_back(piece); });
  if (each.size() != 1)
    return std::nullopt;
  const isl::multi_aff &pieces = each.front();
  for (unsigned k = 0; k < unsigned(pieces.size()); ++k) {
    iu::AffCoefficients c = iu::coefficients(pieces.at(int(k)));
    bool row = c.integral && dim < c.dims.size() && c.dims[dim] == 1;
    for (size_t d = 0; row && d < c.dims.size(); ++d)
      row = d == dim || c.dims[d] == 0;
    for (int64_t p : c.params)
      row = row && p == 0;
    if (row)
      return std::make_pair(k, c.constant);
  }
  return std::nullopt;
}

} // namespace

Decomposition decompose(const model::Model &model, const schedule::Schedule &schedule,
                        const allocate::Allocation &allocation) {
  std::vector<BandNode> nodes = bandNodes(schedule.tree);
  Decomposition result;
  if (nodes.size() != schedule.bands.size())
    return result;
  std::vector<bool> parallelOrShared(nodes.size(), false); // a band whose loops are parallel or distributed
  for (unsigned b = 0; b < nodes.size(); ++b) {
    const schedule::Band &band = schedule.bands[b];
    BandDecomposition d;
    d.band = b;
    auto refuse = [&](const std::string &why) {
      d.reason = why;
      parallelOrShared[b] = llvm::is_contained(band.coincident, true);
      result.bands.push_back(d);
    };
    bool nested = false;
    for (int a = nodes[b].parent; a >= 0; a = nodes[a].parent)
      nested = nested || parallelOrShared[a];
    if (nested) {
      refuse("inside a parallel or distributed band");
      continue;
    }
    allocate::AllocationKind kind = allocation.bands[b].kind;
    if (band.coincident.empty() || !band.coincident[0] || band.isSequentialRepeat ||
        (kind != allocate::AllocationKind::DataParallel && kind != allocate::AllocationKind::Reduction)) {
      refuse("its first member is not parallel");
      continue;
    }
    std::string why;
    for (unsigned s : band.statements) {
      const model::Statement &statement = model.statements[s];
      isl::set points = isl::manage(
          isl_union_set_extract_set(nodes[b].domain.copy(), statement.domain.get_space().release()));
      std::optional<unsigned> dim = memberDim(points, nodes[b].partial, 0);
      std::optional<std::pair<unsigned, int64_t>> row =
          dim ? rowIndex(statement.write.relation, *dim) : std::nullopt;
      if (!row) {
        why =
            statement.name + " writes " + statement.write.array + " at no index equal to " + band.dimNames[0];
        break;
      }
      if (llvm::any_of(schedule.folded, [&](const schedule::FoldedStorage &f) {
            return f.array == statement.write.array && f.dim == row->first;
          })) {
        why = statement.write.array + "'s dimension " + std::to_string(row->first) + " is folded";
        break;
      }
      auto same =
          llvm::find_if(d.exchanges, [&](const RowExchange &e) { return e.array == statement.write.array; });
      if (same == d.exchanges.end())
        d.exchanges.push_back({statement.write.array, row->first, row->second});
      else if (same->dim != row->first || same->shift != row->second) {
        why = statement.write.array + " is written along two different rows";
        break;
      }
    }
    if (!why.empty()) {
      refuse(why);
      continue;
    }
    isl::union_set range = nodes[b].domain.apply(isl::union_map::from(nodes[b].partial));
    isl::set points = isl::manage(isl_set_from_union_set(range.release())).intersect_params(model.context);
    if (points.is_empty()) {
      refuse("no instance");
      continue;
    }
    isl::pw_aff lo = iu::dimMin(points, 0), hi = iu::dimMax(points, 0);
    isl::pw_aff none =
        isl::manage(isl_pw_aff_val_on_domain(model.context.copy(), isl_val_zero(model.context.ctx().get())));
    d.first = iu::pwAffToC(lo.gist_params(model.context), model.context);
    d.extent =
        iu::pwAffToC(isl::manage(isl_pw_aff_union_max(hi.sub(lo).add_constant(1).release(), none.release()))
                         .gist_params(model.context),
                     model.context);
    d.distributed = true;
    d.reason = "the ranks take blocks of " + band.dimNames[0];
    parallelOrShared[b] = true;
    result.bands.push_back(d);
  }
  return result;
}

} // namespace polyc::map
