// The schedule's independent legality checks. verifySchedule: for every dependence, the source
// instance must run before the target on every target: their time vectors first differ at a sequential
// dimension, where the source's is smaller (a parallel loop's points run at once). verifyStorage: no folded
// slot is overwritten while the value in it is still to be read. They share nothing with the scheduler's and
// the folding's reasoning, so a bug there shows up as an error here rather than as wrong results.
#include "compiler/schedule/Schedule.h"

#include "compiler/model/IslUtil.h"
#include "compiler/support/SourceError.h"

#include <isl/map.h>
#include <isl/schedule_node.h>

#include <map>
#include <optional>
#include <sstream>

namespace polyc::schedule {

// ---- Shared: which dimensions order instances for certain

namespace {

// For each leaf of the tree, the instances that reach it and which dimensions of their flat time vectors
// (flatScheduleMap) order them for certain on every target: a band's sequential members and a
// sequence's positions. The points of a parallel (coincident) member run in no order, and a set node's
// children in any order. A statement's instances may reach several leaves, split by filters (time
// tiling's two forms, on a param), each leaf with its own ordered dimensions.
struct LeafOrder {
  isl::union_set instances;
  std::vector<bool> ordered;
};
using OrderedDims = std::vector<LeafOrder>;

void collectOrderedDims(const isl::schedule_node &node, std::vector<bool> &path, OrderedDims &result) {
  size_t depth = path.size();
  if (node.isa<isl::schedule_node_band>()) {
    auto band = node.as<isl::schedule_node_band>();
    for (int m = 0; m < int(band.n_member()); ++m)
      path.push_back(!band.member_get_coincident(m));
  } else if (node.isa<isl::schedule_node_sequence>() || node.isa<isl::schedule_node_set>()) {
    path.push_back(node.isa<isl::schedule_node_sequence>());
  } else if (node.isa<isl::schedule_node_leaf>()) {
    // Without the statements' own domains, which the time map has already: what is left is the split
    // between leaves (often nothing), and the maps built from it stay as simple as the time map.
    isl::union_set instances = isl::manage(isl_schedule_node_get_domain(node.get()));
    result.push_back({instances.gist(node.root().as<isl::schedule_node_domain>().domain()), path});
  }
  // A sequence's or set's children are filters: each adds its position's dimension once, above.
  for (int c = 0; c < int(node.n_children()); ++c)
    collectOrderedDims(node.child(c), path, result);
  path.resize(depth);
}

// { t -> u : t and u first differ at an ordered dimension, where t is smaller } over time vectors of
// `depth` dimensions, the dimensions marked in both `a` and `b` being the ordered ones.
isl::map certainlyBefore(const isl::space &timeSpace, const std::vector<bool> &a,
                         const std::vector<bool> &b) {
  isl::space space = islutil::mapSpace(timeSpace, timeSpace);
  isl::map result = isl::map::empty(space);
  unsigned depth = islutil::tupleDims(timeSpace);
  for (unsigned k = 0; k < depth && k < a.size() && k < b.size(); ++k) {
    if (!a[k] || !b[k])
      continue;
    isl_map *first = isl_map_universe(space.copy());
    for (unsigned j = 0; j < k; ++j)
      first = isl_map_equate(first, isl_dim_in, j, isl_dim_out, j);
    first = isl_map_order_lt(first, isl_dim_in, k, isl_dim_out, k);
    result = result.unite(isl::manage(first));
  }
  return result;
}

// { A[a] -> A[a'] : a' != a, stored in the same slot when dimension `dim` of A's `rank` is folded
// modulo `window` } (built unnamed, then given A's tuple: an array's name need not parse in isl's
// notation).
isl::map sameSlot(const isl::id &array, unsigned rank, unsigned dim, int64_t window, isl::ctx ctx) {
  std::string a, b, constraints;
  for (unsigned k = 0; k < rank; ++k) {
    std::string ak = "a" + std::to_string(k), bk = "b" + std::to_string(k);
    a += (k ? ", " : "") + ak;
    b += (k ? ", " : "") + bk;
    if (k == dim)
      constraints += std::string(constraints.empty() ? "" : " and ") + "exists (q : " + bk + " = " + ak +
                     " + " + std::to_string(window) + "q and (q < 0 or q > 0))";
    else
      constraints += std::string(constraints.empty() ? "" : " and ") + bk + " = " + ak;
  }
  isl::map slot(ctx, "{ [" + a + "] -> [" + b + "] : " + constraints + " }");
  return slot.set_domain_tuple(array).set_range_tuple(array);
}

} // namespace

// { [x -> y] -> x } for a map x -> y.
static isl::map domainMap(const isl::map &map) { return isl::manage(isl_map_domain_map(map.copy())); }

// The instances of `from` that run before those of `to` on every target: S[x] -> T[y].
static isl::map runsBefore(const isl::union_map &time, const OrderedDims &ordered,
                           const isl::space &timeSpace, const isl::space &from, const isl::space &to) {
  auto at = [](const LeafOrder &leaf, const isl::space &stmt) {
    return leaf.instances.intersect(isl::union_set(isl::set::universe(stmt)));
  };
  isl::union_map result = isl::union_map::empty(time.ctx());
  for (const LeafOrder &a : ordered) {
    isl::union_set fromHere = at(a, from);
    if (fromHere.is_empty())
      continue;
    for (const LeafOrder &b : ordered) {
      isl::union_set toHere = at(b, to);
      if (toHere.is_empty())
        continue;
      isl::union_map before(certainlyBefore(timeSpace, a.ordered, b.ordered));
      result = result.unite(time.intersect_domain(fromHere).apply_range(before).apply_range(
          time.intersect_domain(toHere).reverse()));
    }
  }
  isl::map empty = isl::map::empty(islutil::mapSpace(from, to));
  return result.is_empty() ? empty : isl::map(result.as_map()).unite(empty);
}

// The schedule's time space (the range of its flat map); null when it schedules nothing.
static isl::space timeSpaceOf(const isl::union_map &time) {
  isl::space space;
  time.foreach_map([&](isl::map m) { space = m.range().space(); });
  return space;
}

llvm::Error verifySchedule(const model::Model &model, const analysis::DependenceGraph &deps,
                           const Schedule &schedule) {
  try {
    isl::union_map time = flatScheduleMap(schedule.tree);
    isl::union_set missing = model.domains().subtract(schedule.tree.domain());
    if (!missing.is_empty()) {
      std::ostringstream os;
      os << missing;
      return makeError("the schedule leaves statement instances out: " + os.str());
    }
    isl::space timeSpace = timeSpaceOf(time);
    if (timeSpace.is_null())
      return llvm::Error::success();
    OrderedDims ordered;
    std::vector<bool> path;
    collectOrderedDims(schedule.tree.root(), path, ordered);
    for (const analysis::Dependence &dep : deps.edges) {
      const model::Statement &src = model.statements[dep.source], &tgt = model.statements[dep.target];
      isl::map bad =
          dep.relation.subtract(runsBefore(time, ordered, timeSpace, src.domain.space(), tgt.domain.space()));
      if (bad.is_empty())
        continue;
      // Name one pair of instances that the schedule runs in the wrong order, or at once.
      isl::union_map lexOrdered =
          time.apply_range(isl::union_map(islutil::lexLt(timeSpace))).apply_range(time.reverse());
      bool inParallel = isl::union_map(bad).is_subset(lexOrdered);
      std::ostringstream os;
      os << "the schedule violates the " << analysis::spelling(dep.kind) << " dependence " << src.name
         << " -> " << tgt.name << " through '" << dep.array << "': " << bad.wrap().sample_point()
         << (inParallel ? " runs in one parallel loop" : " is not ordered");
      return makeError(os.str());
    }
    return llvm::Error::success();
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in the legality check (isl): ") + e.what());
  }
}

// ---- verifyStorage

namespace {

// The time vectors of one statement's instances at each leaf as quasi-affine functions, and the order of
// two leaves' time vectors as sets: the storage check substitutes the functions into the order (a
// preimage) rather than compose relations through the time space and subtract them, which took 107 to
// 124 s on heat-3d's time-tiled tree (the tiles' floor divisions in every time map), against 63 s for
// its whole compile so (jacobi-1d's check got slower: 0.7 to 5 s).
class LeafTimes {
public:
  LeafTimes(const isl::union_map &time, const OrderedDims &ordered, const isl::space &timeSpace)
      : time_(time), ordered_(ordered), timeSpace_(timeSpace) {}

  size_t leaves() const { return ordered_.size(); }

  // For each leaf, the time vector of the instance of `stmt` that `pick` takes from a point of its
  // domain (a triple), where that instance reaches the leaf.
  std::vector<std::optional<isl::pw_multi_aff>> at(const isl::pw_multi_aff &pick,
                                                   const model::Statement &stmt) const {
    std::vector<std::optional<isl::pw_multi_aff>> result;
    for (const LeafOrder &leaf : ordered_) {
      isl::union_map times = time_.intersect_domain(
          leaf.instances.intersect(isl::union_set(isl::set::universe(stmt.domain.space()))));
      if (times.is_empty())
        result.push_back(std::nullopt);
      else
        result.push_back(isl::map(times.as_map()).as_pw_multi_aff().pullback(pick));
    }
    return result;
  }

  // { [x -> y] : x is not certainly before y }, x at leaf a, y at leaf b (a set over pairs of time
  // vectors: no division in it).
  isl::set notBefore(size_t a, size_t b) const {
    isl::map before = certainlyBefore(timeSpace_, ordered_[a].ordered, ordered_[b].ordered);
    return isl::map::universe(before.space()).subtract(before).wrap();
  }

private:
  const isl::union_map &time_;
  const OrderedDims &ordered_;
  isl::space timeSpace_;
};

// The triples [[w -> r] -> w2] of `candidates` (wrapped) at which w2 may overwrite the slot of the value w
// wrote before r reads it: w2 is not certainly before w, nor r certainly before w2, nor w2 r itself (which
// reads before it writes).
isl::set mayClobber(const LeafTimes &times, const isl::map &candidates, const isl::map &pair,
                    const model::Statement &source, const model::Statement &reader,
                    const model::Statement &other) {
  isl::pw_multi_aff toPair = domainMap(candidates).as_pw_multi_aff();
  isl::pw_multi_aff toW = domainMap(pair).as_pw_multi_aff().pullback(toPair);
  isl::pw_multi_aff toR = islutil::rangeMap(pair).as_pw_multi_aff().pullback(toPair);
  isl::pw_multi_aff toW2 = islutil::rangeMap(candidates).as_pw_multi_aff();
  auto wTime = times.at(toW, source), rTime = times.at(toR, reader), w2Time = times.at(toW2, other);
  isl::set triples = candidates.wrap();
  isl::set result = isl::set::empty(triples.space());
  // The points of the triples where time vector x (a function of them) is not certainly before y.
  auto notBefore = [&](size_t a, const isl::pw_multi_aff &x, size_t b, const isl::pw_multi_aff &y) {
    isl::pw_multi_aff both = x.range_product(y);
    // (isl's preimage under a function of no pieces keeps the set's own space.)
    return both.n_piece() == 0 ? isl::set::empty(triples.space()) : times.notBefore(a, b).preimage(both);
  };
  for (size_t a = 0; a < times.leaves(); ++a) {
    if (!w2Time[a])
      continue;
    for (size_t b = 0; b < times.leaves(); ++b) {
      if (!wTime[b])
        continue;
      isl::set w2NotBeforeW = notBefore(a, *w2Time[a], b, *wTime[b]);
      if (w2NotBeforeW.is_empty())
        continue;
      for (size_t c = 0; c < times.leaves(); ++c)
        if (rTime[c])
          result = result.unite(w2NotBeforeW.intersect(notBefore(c, *rTime[c], a, *w2Time[a])));
    }
  }
  result = result.intersect(triples);
  if (&other == &reader)
    result = result.subtract(toR.as_map().intersect(toW2.as_map()).domain());
  return result;
}

} // namespace

llvm::Error verifyStorage(const model::Model &model, const analysis::DependenceGraph &deps,
                          const Schedule &schedule) {
  if (schedule.folded.empty())
    return llvm::Error::success();
  try {
    isl::union_map time = flatScheduleMap(schedule.tree);
    OrderedDims ordered;
    std::vector<bool> path;
    collectOrderedDims(schedule.tree.root(), path, ordered);
    LeafTimes times(time, ordered, timeSpaceOf(time));
    for (const FoldedStorage &fold : schedule.folded) {
      if (fold.windowValue < 1)
        return makeError("internal error: the storage of '" + fold.array +
                         "' is folded by a window that is not a constant (" + fold.window +
                         "), which the storage check cannot check");
      std::vector<const model::Statement *> writers;
      for (const model::Statement &stmt : model.statements)
        if (stmt.write.array == fold.array)
          writers.push_back(&stmt);
      if (writers.empty())
        continue;
      isl::id arrayId = writers.front()->write.relation.get_range_tuple_id();
      unsigned rank = writers.front()->write.relation.range_tuple_dim();
      isl::map slot = sameSlot(arrayId, rank, fold.dim, fold.windowValue, model.ctx);
      for (const analysis::Dependence &flow : deps.edges) {
        if (flow.kind != analysis::DependenceKind::Flow || flow.array != fold.array)
          continue;
        const model::Statement &source = model.statements[flow.source],
                               &reader = model.statements[flow.target];
        // [w -> r] -> w2: a write w2 of another element of w's slot, for each value w wrote that r reads.
        isl::map pair = flow.relation;
        isl::map clobbers = domainMap(pair).apply_range(source.write.relation).apply_range(slot);
        for (const model::Statement *other : writers) {
          isl::map candidates = clobbers.apply_range(other->write.relation.reverse());
          if (candidates.is_empty())
            continue;
          isl::set bad = mayClobber(times, candidates, pair, source, reader, *other);
          if (bad.is_empty())
            continue;
          std::ostringstream os;
          os << "internal error: storage folding of '" << fold.array << "' along dimension " << fold.dim
             << " modulo " << fold.window << " is not safe under the schedule: " << other->name
             << " may overwrite the slot of a value " << source.name << " wrote before " << reader.name
             << " reads it (" << bad.sample_point() << ")";
          return makeError(os.str());
        }
      }
    }
    return llvm::Error::success();
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in the storage check (isl): ") + e.what());
  }
}

} // namespace polyc::schedule
