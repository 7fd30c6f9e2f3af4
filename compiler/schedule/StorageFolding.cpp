// Storage folding: for each local array and dimension, the largest spread along that dimension of the
// elements live at once (written, and still to be read) under the schedule. When that window is a
// constant smaller than the extent, the dimension is stored modulo the window: two buffers for r[t - 1],
// L frames for a convolution over the last L frames.
#include "compiler/schedule/StorageFolding.h"

#include "compiler/model/IslUtil.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>

namespace polyc::schedule {

using model::Model;
namespace iu = polyc::islutil;

// The window of dimension d: the largest max - min + 1 of a_d over the elements a that are live when
// some element b is written and that agree with b in every other dimension.
static std::optional<int64_t> windowOf(const isl::map &writtenWithLive, unsigned d, unsigned rank) {
  isl::space space = writtenWithLive.space();
  isl::set pairs = writtenWithLive.wrap();
  isl::multi_aff toB = space.domain_map_multi_aff(), toA = space.range_map_multi_aff();
  for (unsigned k = 0; k < rank; ++k)
    if (k != d)
      pairs = pairs.intersect(toB.at(static_cast<int>(k)).eq_set(toA.at(static_cast<int>(k))));
  if (pairs.is_empty())
    return 1;
  // { b -> [a_d] }, then the spread of a_d per b.
  isl::aff_list list(space.ctx(), 1);
  list = list.add(toA.at(static_cast<int>(d)));
  isl::map offsets = pairs.unwrap().apply_range(
      iu::mapSpace(space.range(), iu::anonymousSetSpace(space.range(), 1))
          .multi_aff(isl::aff_list(space.ctx(), 1).add(space.range().identity_multi_aff_on_domain().at(static_cast<int>(d))))
          .as_map());
  isl::pw_aff hi = offsets.lexmax_pw_multi_aff().at(0), lo = offsets.lexmin_pw_multi_aff().at(0);
  isl::pw_aff span = hi.sub(lo).add_constant(1);
  // The window must hold for every value of the params, so take the largest span over all of them.
  isl::set spans = isl::set(span.as_map().range()).project_out_all_params();
  if (!iu::isBounded(spans))
    return std::nullopt;
  return iu::constantValue(iu::dimMax(spans, 0));
}

// `node`'s subtree where every instance below a band's first parallel (coincident) member shares one
// time: that member and the ones after it are replaced by 0, and the band's children are cut. Threads
// run the points of a parallel member in no order, and the statements and loops below it in order only
// within one point: S1 at d = 1 and S2 at d = 3 below a parallel d are not ordered although S1 comes
// first in the sequence (fuzz seed 2600752: b9 folded modulo 2 along d, and the GPU's S1 overwrote S2's
// live value).
static isl::schedule_node withoutParallelMembers(isl::schedule_node node) {
  if (node.isa<isl::schedule_node_band>()) {
    auto band = node.as<isl::schedule_node_band>();
    isl::multi_union_pw_aff partial = band.partial_schedule();
    bool any = false;
    for (unsigned m = 0; m < unsigned(band.n_member()); ++m)
      if (any || band.member_get_coincident(static_cast<int>(m))) {
        isl::union_pw_aff member = partial.at(static_cast<int>(m));
        partial = partial.set_at(static_cast<int>(m), member.sub(member)); // 0 on the same domain
        any = true;
      }
    if (any) {
      node = isl::manage(isl_schedule_node_delete(node.release())).insert_partial_schedule(partial);
      return isl::manage(isl_schedule_node_cut(node.child(0).release())).parent();
    }
  }
  for (unsigned c = 0; c < unsigned(node.n_children()); ++c)
    node = withoutParallelMembers(node.child(static_cast<int>(c))).parent();
  return node;
}

// The isl operations the window of one array may take. Boundary rules and gathers can make the
// liveness relation a union of many pieces, and its spreads then take minutes (fuzz seed 2700291: 67 s
// of a CUDA build that timed out; 45 s with this bound): past the bound the array is not folded, which
// is always correct. heat-3d's arrays need between 20 and 40 million (25 s of compile time, the slowest
// of the PolyBench kernels; 20 million left them unfolded): the bound is 60 million.
constexpr unsigned long FoldOperations = 60000000;

// The folded dimension of `array` and its window, if any (see foldStorage).
static std::optional<FoldedStorage> foldArray(const Model &model, const model::ArrayInfo &array,
                                              const isl::union_map &scheduleMap) {
  isl::union_map writes = isl::union_map::empty(model.ctx), reads = writes;
  for (const model::Statement &stmt : model.statements) {
    if (stmt.write.array == array.name && stmt.scatter)
      return std::nullopt; // its points add to elements anywhere along computed indices
    if (stmt.write.array == array.name)
      writes = writes.unite(isl::union_map(stmt.write.relation));
    for (const model::Access &read : stmt.reads)
      if (read.array == array.name)
        reads = reads.unite(isl::union_map(read.relation));
  }
  if (writes.is_empty() || reads.is_empty())
    return std::nullopt;
  isl::map writeTime = writes.reverse().apply_range(scheduleMap).as_map(); // A[a] -> time of its writes
  isl::map readTime = reads.reverse().apply_range(scheduleMap).as_map();   // A[a] -> time of its reads
  isl::map notAfter = iu::lexGe(writeTime.range().space()); // { t -> t' : t >=lex t' }
  isl::map writtenBy = notAfter.apply_range(writeTime.reverse());          // t -> a written at or before t
  isl::map readFrom = notAfter.reverse().apply_range(readTime.reverse());  // t -> a read at or after t
  isl::map liveAt = writtenBy.intersect(readFrom);
  // b -> a live when b is written, and b itself: an element written and never read (q[2] where only
  // q[0..1] are read) still must not land on a live one.
  isl::map writtenWithLive = writeTime.apply_range(liveAt).unite(writeTime.domain().identity()).coalesce();
  unsigned rank = array.decl->rank();
  for (unsigned d = 0; d < rank; ++d) {
    std::optional<int64_t> window = windowOf(writtenWithLive, d, rank);
    if (!window || *window < 1)
      continue;
    std::optional<int64_t> extent = iu::constantValue(iu::dimMax(array.extent, d).add_constant(1));
    if (extent && *window >= *extent)
      continue;
    FoldedStorage fold;
    fold.array = array.name;
    fold.dim = d;
    fold.window = std::to_string(*window);
    fold.windowValue = *window;
    return fold; // folding two dimensions at once would need a joint check; one is enough here
  }
  return std::nullopt;
}

std::vector<FoldedStorage> foldStorage(const Model &model, const isl::schedule &tree) {
  std::vector<FoldedStorage> result;
  const isl::union_map scheduleMap = flatScheduleMap(withoutParallelMembers(tree.root()).schedule());
  isl_ctx *ctx = isl::ctx(model.ctx).get();
  for (const model::ArrayInfo &array : model.arrays) {
    if (!array.decl || array.decl->kind != ast::ArrayKind::Local || array.decl->rank() == 0)
      continue;
    isl_ctx_set_max_operations(ctx, FoldOperations);
    isl_ctx_reset_operations(ctx);
    try {
      if (std::optional<FoldedStorage> fold = foldArray(model, array, scheduleMap))
        result.push_back(std::move(*fold));
    } catch (const isl::exception_quota &) {
      isl_ctx_reset_error(ctx);
    }
    isl_ctx_set_max_operations(ctx, 0);
  }
  return result;
}

} // namespace polyc::schedule
