// Schedule choice: repeat loops outermost and sequential; inside a region, a shared outer dimension
// streamed when that lets storage be folded or orders a cycle of statements; otherwise statements in
// dependence order, each with its identity loop nest, a Lamport hyperplane for a uniform recurrence
// that would have no parallel loop, or isl's scheduler; then fusion and storage folding.
#include "compiler/schedule/Schedule.h"

#include "compiler/model/IslUtil.h"
#include "compiler/schedule/Fusion.h"
#include "compiler/schedule/StorageFolding.h"
#include "compiler/support/SourceError.h"

#include <isl/options.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace polyc::schedule {

using analysis::Dependence;
using analysis::DependenceClass;
using analysis::DependenceGraph;
using model::Model;
using model::Statement;
namespace iu = polyc::islutil;

namespace {

struct Hyperplane {
  std::vector<int64_t> pi;
  std::string count;
  std::string expr; // pi . x as text, to recognise the band in the tree
};

class Scheduler {
public:
  Scheduler(const Model &model, const DependenceGraph &deps, const ScheduleOptions &options)
      : model_(model), deps_(deps), options_(options) {}
  llvm::Expected<Schedule> run();

private:
  llvm::Expected<isl::schedule> scheduleRegion(const std::vector<unsigned> &stmts, unsigned fixed,
                                               const isl::union_map &deps);
  llvm::Expected<isl::schedule> scheduleStatement(unsigned s, unsigned fixed, const isl::union_map &deps);
  llvm::Expected<isl::schedule> scheduleWithIsl(const std::vector<unsigned> &stmts, const isl::union_map &deps);
  std::optional<Hyperplane> findHyperplane(unsigned s, unsigned fixed, const isl::set &distances);
  bool shouldStream(const std::vector<unsigned> &stmts, unsigned fixed, const isl::union_map &deps,
                    bool hasCycle);
  std::optional<std::pair<size_t, size_t>> streamedRun(const std::vector<std::vector<unsigned>> &components,
                                                       unsigned fixed, const isl::union_map &deps);
  isl::multi_union_pw_aff identityPartial(unsigned s, unsigned from, unsigned to) const;
  isl::multi_union_pw_aff hyperplanePartial(unsigned s, unsigned fixed, const std::vector<int64_t> &pi) const;
  isl::pw_aff hyperplaneCount(const std::vector<unsigned> &stmts, unsigned fixed,
                              const std::vector<int64_t> &pi) const;
  std::optional<std::pair<isl::schedule, std::vector<size_t>>>
  hyperplaneWithPieces(const std::vector<std::vector<unsigned>> &components, size_t at, unsigned fixed,
                       const isl::union_map &deps, const std::function<bool(size_t)> &mayTake);
  void collectBands(Schedule &result) const;

  const Model &model_;
  const DependenceGraph &deps_;
  const ScheduleOptions &options_;
  std::map<unsigned, Hyperplane> hyperplanes_; // per statement scheduled by a hyperplane
  std::vector<FusionGroup> fusion_;
};

} // namespace

// --- Small isl helpers -------------------------------------------------------------------------------

// R restricted to pairs that agree on the first `fixed` dimensions (those of the enclosing bands).
static isl::map sameLeading(const isl::map &relation, unsigned fixed) {
  if (fixed == 0)
    return relation;
  // A statement with fewer dimensions (a scalar read by a time loop) is in no band of the others: no
  // pair of instances agrees on dimensions it does not have.
  if (unsigned(relation.domain_tuple_dim()) < fixed || unsigned(relation.range_tuple_dim()) < fixed)
    return isl::map::empty(relation.space());
  isl::space space = relation.space();
  isl::set pairs = isl::set::universe(space.wrap());
  isl::multi_aff toX = space.domain_map_multi_aff(), toY = space.range_map_multi_aff();
  for (unsigned k = 0; k < fixed; ++k)
    pairs = pairs.intersect(toX.at(static_cast<int>(k)).eq_set(toY.at(static_cast<int>(k))));
  return relation.intersect(pairs.unwrap());
}

static isl::union_map sameLeading(const isl::union_map &relations, unsigned fixed) {
  isl::union_map result = isl::union_map::empty(relations.ctx());
  relations.foreach_map([&](isl::map m) { result = result.unite(isl::union_map(sameLeading(m, fixed))); });
  return result;
}

static isl::union_set domainsOf(const Model &model, const std::vector<unsigned> &stmts) {
  isl::union_set domain = isl::union_set::empty(model.ctx);
  for (unsigned s : stmts)
    domain = domain.unite(isl::union_set(model.statements[s].domain));
  return domain;
}

static isl::map relationBetween(const Model &model, const isl::union_map &deps, unsigned a, unsigned b) {
  return deps.extract_map(
      iu::mapSpace(model.statements[a].domain.space(), model.statements[b].domain.space()));
}

// The distances of a statement's self-dependences over its dimensions from `fixed` on.
static isl::set localDistances(const Model &model, const isl::union_map &deps, unsigned s, unsigned fixed) {
  isl::map self = relationBetween(model, deps, s, s);
  isl::map plain = isl::manage(isl_map_reset_tuple_id(isl_map_reset_tuple_id(self.copy(), isl_dim_in), isl_dim_out));
  isl::set d = plain.deltas();
  return iu::projectOutDims(d, 0, fixed).coalesce();
}

isl::multi_union_pw_aff Scheduler::identityPartial(unsigned s, unsigned from, unsigned to) const {
  const Statement &stmt = model_.statements[s];
  isl::space space = stmt.domain.space();
  isl::multi_aff id = space.identity_multi_aff_on_domain();
  isl::aff_list list(model_.ctx, static_cast<int>(to - from));
  for (unsigned i = from; i < to; ++i)
    list = list.add(id.at(static_cast<int>(i)));
  return iu::mapSpace(space, iu::anonymousSetSpace(space, to - from)).multi_aff(list).to_multi_union_pw_aff();
}

// --- Statements ----------------------------------------------------------------------------------------

// The hyperplane band's members after t = pi . x: every dimension but the first whose coefficient is
// +-1, so that (t, rest) is unimodular; this is the one left out (pi.size() when there is none).
static unsigned droppedDim(const std::vector<int64_t> &pi) {
  unsigned dropped = 0;
  while (dropped < pi.size() && pi[dropped] != 1 && pi[dropped] != -1)
    ++dropped;
  return dropped;
}

// pi . x over a statement's dimensions from `fixed` on.
static isl::aff hyperplaneTime(const isl::space &space, unsigned fixed, const std::vector<int64_t> &pi) {
  isl::multi_aff xId = space.identity_multi_aff_on_domain();
  isl::aff time = space.zero_aff_on_domain();
  for (unsigned k = 0; k < pi.size(); ++k)
    time = time.add(xId.at(static_cast<int>(fixed + k)).scale(pi[k]));
  return time;
}

// The number of hyperplanes pi . x that the statements' instances lie on (dimensions from `fixed` on).
isl::pw_aff Scheduler::hyperplaneCount(const std::vector<unsigned> &stmts, unsigned fixed,
                                       const std::vector<int64_t> &pi) const {
  isl::set image;
  for (unsigned s : stmts) {
    isl::set local = iu::projectOutDims(model_.statements[s].domain, 0, fixed);
    isl::set times = local.apply(hyperplaneTime(local.space(), 0, pi).as_map());
    image = image.is_null() ? times : image.unite(times);
  }
  return iu::dimMax(image, 0)
      .sub(iu::dimMin(image, 0))
      .add(isl::pw_aff(image.params().space().zero_aff_on_domain()).add_constant(1));
}

// The Lamport hyperplane pi (pi . d >= 1 for every distance d) with the fewest hyperplanes over the
// domain, among small integer vectors. Counts are compared at the given --param values, with 100
// for a param left free.
std::optional<Hyperplane> Scheduler::findHyperplane(unsigned s, unsigned fixed, const isl::set &distances) {
  const Statement &stmt = model_.statements[s];
  unsigned n = static_cast<unsigned>(stmt.dimNames.size()) - fixed;
  int lo = n <= 3 ? -2 : (n == 4 ? -1 : 0), hi = n <= 3 ? 4 : (n == 4 ? 2 : 1);
  isl::set reference = model_.context;
  auto fixedValues = iu::fixedParams(model_.context);
  for (unsigned p = 0; p < model_.params.size(); ++p)
    if (!fixedValues[p]) {
      isl::aff v = reference.space().param_aff_on_domain(model_.params[p]);
      reference = reference.intersect(v.eq_set(v.zero_on_domain(reference.space()).add_constant(100)));
    }
  isl::multi_aff dId = distances.space().identity_multi_aff_on_domain();

  std::optional<Hyperplane> best;
  int64_t bestCount = 0, bestNorm = 0;
  std::vector<int64_t> pi(n, lo);
  while (true) {
    int64_t norm = 0;
    bool any = false;
    for (int64_t c : pi) {
      norm += c < 0 ? -c : c;
      any |= c != 0;
    }
    if (any) {
      isl::aff dot = distances.space().zero_aff_on_domain();
      for (unsigned k = 0; k < n; ++k)
        dot = dot.add(dId.at(static_cast<int>(k)).scale(pi[k]));
      isl::set bad = distances.intersect(dot.le_set(distances.space().zero_aff_on_domain())).intersect_params(model_.context);
      if (bad.is_empty()) {
        isl::pw_aff count = hyperplaneCount({s}, fixed, pi);
        auto value = iu::constantValue(count.intersect_params(reference));
        int64_t c = value ? *value : INT64_MAX;
        if (!best || c < bestCount || (c == bestCount && norm < bestNorm)) {
          best = Hyperplane{pi, iu::pwAffToC(count, model_.context), ""};
          bestCount = c;
          bestNorm = norm;
        }
      }
    }
    unsigned k = 0;
    while (k < n && pi[k] == hi)
      pi[k++] = lo;
    if (k == n)
      break;
    ++pi[k];
  }
  return best;
}

// Statement s's members of a hyperplane band: t = pi . x, then its dimensions but droppedDim(pi).
isl::multi_union_pw_aff Scheduler::hyperplanePartial(unsigned s, unsigned fixed,
                                                     const std::vector<int64_t> &pi) const {
  isl::space space = model_.statements[s].domain.space();
  isl::multi_aff xId = space.identity_multi_aff_on_domain();
  unsigned local = static_cast<unsigned>(pi.size()), dropped = droppedDim(pi);
  isl::aff_list list(model_.ctx, static_cast<int>(local));
  list = list.add(hyperplaneTime(space, fixed, pi));
  for (unsigned k = 0; k < local; ++k)
    if (k != dropped || dropped == local)
      list = list.add(xId.at(static_cast<int>(fixed + k)));
  unsigned members = static_cast<unsigned>(list.size());
  return iu::mapSpace(space, iu::anonymousSetSpace(space, members)).multi_aff(list).to_multi_union_pw_aff();
}

llvm::Expected<isl::schedule> Scheduler::scheduleStatement(unsigned s, unsigned fixed, const isl::union_map &deps) {
  const Statement &stmt = model_.statements[s];
  unsigned n = static_cast<unsigned>(stmt.dimNames.size());
  isl::schedule leaf = isl::schedule::from_domain(stmt.domain);
  if (n <= fixed)
    return leaf;
  unsigned local = n - fixed;
  isl::set delta = localDistances(model_, deps, s, fixed);
  if (delta.is_empty())
    return iu::insertBand(leaf, identityPartial(s, fixed, n), std::vector<bool>(local, true), true);

  // The identity order: dimension k carries the distances whose first non-zero component is k.
  isl::multi_aff id = delta.space().identity_multi_aff_on_domain();
  isl::aff zero = delta.space().zero_aff_on_domain();
  auto component = [&](unsigned k) { return id.at(static_cast<int>(k)); };
  bool legal = true;
  std::vector<bool> coincident(local);
  std::vector<unsigned> bandStarts{0};
  isl::set remaining = delta, bandRemaining = delta;
  for (unsigned k = 0; k < local; ++k) {
    if (!remaining.intersect(component(k).lt_set(zero)).is_empty())
      legal = false;
    if (k > 0 && !bandRemaining.intersect(component(k).lt_set(zero)).is_empty()) {
      bandStarts.push_back(k);
      bandRemaining = remaining;
    }
    coincident[k] = remaining.intersect(component(k).ne_set(zero)).is_empty();
    remaining = remaining.intersect(component(k).eq_set(zero));
  }
  if (!remaining.is_empty())
    legal = false; // a zero distance: the analysis reports those, but stay safe
  bool anyParallel = std::find(coincident.begin(), coincident.end(), true) != coincident.end();
  bool uniform = true;
  for (const Dependence &dep : deps_.edges)
    if (dep.source == s && dep.target == s && dep.depClass != DependenceClass::Uniform)
      uniform = false;

  // A skew only helps when it leaves a dimension to run in parallel (two or more dimensions), or
  // when the original order is not legal at all.
  if (legal && (anyParallel || !uniform || local == 1)) {
    isl::schedule result = leaf;
    for (size_t b = bandStarts.size(); b-- > 0;) {
      unsigned from = bandStarts[b], to = b + 1 < bandStarts.size() ? bandStarts[b + 1] : local;
      std::vector<bool> flags(coincident.begin() + from, coincident.begin() + to);
      result = iu::insertBand(result, identityPartial(s, fixed + from, fixed + to), flags, true);
    }
    return result;
  }
  if (uniform) {
    if (auto h = findHyperplane(s, fixed, delta)) {
      unsigned dropped = droppedDim(h->pi);
      isl::multi_union_pw_aff partial = hyperplanePartial(s, fixed, h->pi);
      std::vector<bool> flags(partial.size(), true);
      flags[0] = false;
      // Permutable when no distance is negative in any member of the band.
      bool permutable = true;
      for (unsigned k = 0; k < local; ++k)
        if (k != dropped && !delta.intersect(component(k).lt_set(zero)).is_empty())
          permutable = false;
      h->expr = iu::affToString(hyperplaneTime(stmt.domain.space(), fixed, h->pi));
      hyperplanes_[s] = *h;
      return iu::insertBand(leaf, partial, flags, permutable);
    }
  }
  return scheduleWithIsl({s}, deps);
}

// How finely splitDistances cuts a statement's dependences on itself.
enum class DistanceSplit {
  Signs,  // pieces on which every distance component keeps one sign (negative, zero or positive)
  Values, // and where a component takes at most kMaxSplitValues values (whatever the params), one value
};
constexpr int64_t kMaxSplitValues = 8;

// The regions of `rel`'s wrapped space (a statement's dependence on itself) over which the distance
// along dimension k keeps one sign, or one value (DistanceSplit::Values, when it takes few values).
static std::vector<isl::set> distanceRegions(const isl::map &rel, unsigned k, DistanceSplit how) {
  isl::space space = rel.space();
  isl::aff from = space.domain_map_multi_aff().at(static_cast<int>(k));
  isl::aff to = space.range_map_multi_aff().at(static_cast<int>(k));
  if (how == DistanceSplit::Values) {
    isl::set distances = rel.deltas();
    isl::val least = distances.dim_min_val(static_cast<int>(k)),
             greatest = distances.dim_max_val(static_cast<int>(k));
    if (least.is_int() && greatest.is_int() && greatest.sub(least).lt(isl::val(rel.ctx(), kMaxSplitValues))) {
      std::vector<isl::set> regions;
      for (int64_t v = least.get_num_si(); v <= greatest.get_num_si(); ++v)
        regions.push_back(to.eq_set(from.add_constant(isl::val(rel.ctx(), v))));
      return regions;
    }
  }
  return {to.lt_set(from), to.eq_set(from), to.gt_set(from)};
}

// A statement's dependences on itself cut as `how` says, into basic relations; dependences between
// different statements are kept as they are.
static isl::union_map splitDistances(const isl::union_map &deps, DistanceSplit how) {
  isl::union_map result = isl::union_map::empty(deps.ctx());
  deps.foreach_map([&](isl::map rel) {
    isl::space space = rel.space();
    std::vector<isl::map> pieces{rel};
    if (space.domain().is_equal(space.range()))
      for (unsigned k = 0; k < iu::tupleDims(space.domain()); ++k) {
        std::vector<isl::map> split;
        for (const isl::set &region : distanceRegions(rel, k, how))
          for (const isl::map &piece : pieces)
            if (isl::map part = piece.intersect(region.unwrap()); !part.is_empty())
              split.push_back(part);
        pieces = std::move(split);
      }
    for (const isl::map &piece : pieces)
      piece.foreach_basic_map([&](isl::basic_map basic) { result = result.unite(isl::union_map(isl::map(basic))); });
  });
  return result;
}

llvm::Expected<isl::schedule> Scheduler::scheduleWithIsl(const std::vector<unsigned> &stmts,
                                                         const isl::union_map &deps) {
  isl::union_set domain = domainsOf(model_, stmts);
  isl::union_map validity = deps.intersect_domain(domain).intersect_range(domain);
  isl::union_map proximity = deps_.flow().intersect_domain(domain).intersect_range(domain);
  // Each band's outermost member coincident where one can be: a time loop carrying the dependences
  // becomes a band of its own, and the statements inside each step get parallel bands (PPCG's choice
  // for GPUs; the CPU's OpenMP loops gain it too) instead of one skewed band with no parallel member.
  isl::ctx ctx = model_.ctx;
  isl_options_set_schedule_outer_coincidence(ctx.get(), 1);
  auto compute = [&](const isl::union_map &valid, const isl::union_map &near) {
    return isl::schedule_constraints::on_domain(domain)
        .set_context(model_.context)
        .set_validity(valid)
        .set_proximity(near)
        .set_coincidence(valid)
        .compute_schedule();
  };
  // isl's scheduler carries dependences one basic relation at a time, so a relation whose distances
  // point in several directions may never be carried whole by one row ("unable to carry dependences")
  // though a schedule exists (fuzz seed 111608). The same dependences, split so that every piece keeps
  // the sign of each distance, let each piece be carried on its own. isl can fail on one-signed pieces
  // too: distances (-2, 2), (-1, 3), (0, 4) in one basic relation beside a dependence (2, 1), though the
  // second dimension carries all four (fuzz seed 36500327); cut into uniform pieces, they schedule.
  auto computeSplit = [&](DistanceSplit how) {
    return compute(splitDistances(validity, how), splitDistances(proximity, how));
  };
  isl::schedule result;
  try {
    result = compute(validity, proximity);
  } catch (const isl::exception &) {
    try {
      result = computeSplit(DistanceSplit::Signs);
    } catch (const isl::exception &) {
      result = computeSplit(DistanceSplit::Values);
    }
  }
  if (result.is_null()) {
    std::string names;
    for (unsigned s : stmts)
      names += (names.empty() ? "" : ", ") + model_.statements[s].write.array;
    return makeSourceError(model_.statements[stmts.front()].range,
                           "no legal schedule found for the equations of " + names);
  }
  return result;
}

// --- Regions ------------------------------------------------------------------------------------------

// Stream a region along its first free dimension (one outer sequential loop over it for all its
// statements) when every statement has that dimension with the same extent, no dependence goes
// backwards along it, and doing so either orders a cycle of statements, lets a local array
// written in the region be kept only over a bounded window of it, or is what --stream asks for.
bool Scheduler::shouldStream(const std::vector<unsigned> &stmts, unsigned fixed, const isl::union_map &deps,
                             bool hasCycle) {
  if (stmts.size() < 2)
    return false;
  const Statement &first = model_.statements[stmts.front()];
  if (first.dimNames.size() <= fixed)
    return false;
  // The extents are compared where every statement has instances: a boundary piece exists from N >= 1,
  // the interior from N >= 3, and over the same steps.
  isl::set together = isl::set::universe(model_.context.space());
  for (unsigned s : stmts)
    together = together.intersect(model_.statements[s].domain.params());
  auto extentOf = [&](const Statement &stmt) {
    isl::set d = iu::projectOutDims(stmt.domain, fixed + 1, static_cast<unsigned>(stmt.dimNames.size()) - fixed - 1);
    d = iu::projectOutDims(d, 0, fixed);
    return isl::manage(isl_set_reset_tuple_id(d.release())).intersect_params(together);
  };
  isl::set extent = extentOf(first);
  // The dimensions are matched by name (the equations' `t`), or for --stream by position alone.
  bool byPosition = options_.streamSteps && fixed == 0;
  for (unsigned s : stmts) {
    const Statement &stmt = model_.statements[s];
    if (stmt.dimNames.size() <= fixed || (!byPosition && stmt.dimNames[fixed] != first.dimNames[fixed]) ||
        !extentOf(stmt).is_equal(extent))
      return false;
  }
  // A streamed build (--stream) moves its arrays a slice per step of the outermost loop: it takes that
  // loop wherever it is legal.
  bool pays = hasCycle || (options_.streamSteps && fixed == 0);
  for (unsigned a : stmts)
    for (unsigned b : stmts) {
      isl::map rel = relationBetween(model_, deps, a, b);
      if (rel.is_empty())
        continue;
      isl::space space = rel.space();
      isl::aff xa = space.domain_map_multi_aff().at(static_cast<int>(fixed));
      isl::aff yb = space.range_map_multi_aff().at(static_cast<int>(fixed));
      isl::map backwards = rel.intersect(isl::set::universe(space.wrap()).intersect(yb.lt_set(xa)).unwrap());
      if (!backwards.is_empty())
        return false;
      if (a == b || pays)
        continue;
      const model::ArrayInfo *array = model_.findArray(model_.statements[a].write.array);
      if (!array || array->decl->kind != ast::ArrayKind::Local)
        continue;
      // The copy of an update's old values (SnapshotUpdates) is there so that the update runs in
      // parallel; streaming it with its update would run both in order again.
      if (model_.statements[a].equation && model_.statements[a].equation->snapshotFor)
        continue;
      isl::map forward = rel.intersect(isl::set::universe(space.wrap()).intersect(yb.gt_set(xa)).unwrap());
      if (forward.is_empty())
        continue;
      // A bounded look-back: the largest distance along the dimension does not grow with the params.
      isl::set distances = forward.wrap().apply(yb.sub(xa).as_map()).project_out_all_params();
      if (iu::isBounded(distances))
        pays = true;
    }
  return pays;
}

// Tarjan's strongly connected components over the statement graph of a region, returned in a
// topological order that keeps textual order wherever dependences allow.
static std::vector<std::vector<unsigned>> orderedComponents(const std::vector<unsigned> &stmts,
                                                            const std::function<bool(unsigned, unsigned)> &edge) {
  unsigned n = static_cast<unsigned>(stmts.size());
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1);
  std::vector<bool> onStack(n, false);
  std::vector<unsigned> stack;
  int counter = 0, components = 0;
  std::function<void(unsigned)> visit = [&](unsigned v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    onStack[v] = true;
    for (unsigned w = 0; w < n; ++w) {
      if (w == v || !edge(stmts[v], stmts[w]))
        continue;
      if (index[w] < 0) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (onStack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] == index[v]) {
      while (true) {
        unsigned w = stack.back();
        stack.pop_back();
        onStack[w] = false;
        comp[w] = components;
        if (w == v)
          break;
      }
      ++components;
    }
  };
  for (unsigned v = 0; v < n; ++v)
    if (index[v] < 0)
      visit(v);
  std::vector<std::vector<unsigned>> members(components);
  for (unsigned v = 0; v < n; ++v)
    members[comp[v]].push_back(v);
  // Kahn's algorithm over components, taking the ready component with the earliest statement first.
  std::vector<std::set<int>> succ(components);
  std::vector<int> preds(components, 0);
  for (unsigned v = 0; v < n; ++v)
    for (unsigned w = 0; w < n; ++w)
      if (comp[v] != comp[w] && edge(stmts[v], stmts[w]) && succ[comp[v]].insert(comp[w]).second)
        ++preds[comp[w]];
  std::vector<std::vector<unsigned>> order;
  std::vector<bool> done(components, false);
  for (int step = 0; step < components; ++step) {
    int next = -1;
    for (int c = 0; c < components; ++c)
      if (!done[c] && preds[c] == 0 && (next < 0 || members[c].front() < members[next].front()))
        next = c;
    done[next] = true;
    for (int c : succ[next])
      --preds[c];
    std::vector<unsigned> group;
    for (unsigned v : members[next])
      group.push_back(stmts[v]);
    order.push_back(group);
  }
  return order;
}

// The longest run of consecutive components (in their dependence order) that streams on its own: a
// time loop's statements between the statements before it (its first step, `u[0, i] = ...`) and after
// it (the result, `y[i] = u[T - 1, i]`), which have no such dimension. Since every dependence goes from
// an earlier component to a later one, running the run as one streamed loop between the two keeps
// them all. Not a statement that depends on itself within a step (an in-place sweep, Gauss-Seidel):
// streamed, its steps would run one after the other, where a wavefront across steps runs them together
// (PolyBench's seidel-2d ran 40x slower on the GPU).
std::optional<std::pair<size_t, size_t>>
Scheduler::streamedRun(const std::vector<std::vector<unsigned>> &components, unsigned fixed,
                       const isl::union_map &deps) {
  auto sweepsInPlace = [&](unsigned s) {
    return model_.statements[s].dimNames.size() > fixed &&
           !sameLeading(relationBetween(model_, deps, s, s), fixed + 1).is_empty();
  };
  std::optional<std::pair<size_t, size_t>> best;
  for (size_t first = 0; first < components.size(); ++first)
    for (size_t end = components.size(); end > first + 1; --end) {
      if ((first == 0 && end == components.size()) || (best && end - first <= best->second - best->first))
        continue;
      std::vector<unsigned> run;
      bool hasCycle = false;
      for (size_t c = first; c < end; ++c) {
        run.insert(run.end(), components[c].begin(), components[c].end());
        hasCycle |= components[c].size() > 1;
      }
      if (llvm::none_of(run, sweepsInPlace) && shouldStream(run, fixed, deps, hasCycle))
        best = {first, end};
    }
  return best;
}

// Whether f(y) - f(x) >= atLeast for every pair x -> y of `relation`, with f = pi . x over each
// statement's dimensions from `fixed` on.
static bool advances(const isl::map &relation, unsigned fixed, const std::vector<int64_t> &pi,
                     int64_t atLeast) {
  isl::space space = relation.space();
  isl::multi_aff toX = space.domain_map_multi_aff(), toY = space.range_map_multi_aff();
  isl::aff zero = space.wrap().zero_aff_on_domain(), step = zero;
  for (unsigned k = 0; k < pi.size(); ++k)
    step =
        step.add(toY.at(static_cast<int>(fixed + k)).sub(toX.at(static_cast<int>(fixed + k))).scale(pi[k]));
  return relation.wrap().intersect(step.lt_set(zero.add_constant(atLeast))).is_empty();
}

// The band of an in-place sweep scheduled by a hyperplane (components[at], one statement), with the
// other pieces of its array's definition that can share it: its boundary copies (seidel-2d's
// `u[t, i, j] = u[t - 1, i, j] where i == 0 || ...`). Scheduled apart, before the sweep, those wrote the
// boundary of every step before the sweep's first step read any, so all of them stayed live and the
// array's step dimension could not be folded (seidel-2d took (T + 1) N^2 elements). A piece joins when
// it has the sweep's dimensions, no reduction and a dependence on itself (it carries values from step
// to step; a piece without one stays a parallel band of its own), when no component between it and the
// sweep depends on it or it on them (it moves to the sweep's place), and when every dependence between
// the band's statements advances pi . x. The sweep's band must have members after pi . x, which the
// pieces run in parallel. Returns the band and the components it took (among those mayTake allows),
// or nothing.
std::optional<std::pair<isl::schedule, std::vector<size_t>>>
Scheduler::hyperplaneWithPieces(const std::vector<std::vector<unsigned>> &components, size_t at,
                                unsigned fixed, const isl::union_map &deps,
                                const std::function<bool(size_t)> &mayTake) {
  unsigned s = components[at].front();
  auto sweep = hyperplanes_.find(s);
  const Statement &stmt = model_.statements[s];
  // A band of one member runs its points in order: a piece taken in would lose its parallel loops.
  if (sweep == hyperplanes_.end() || sweep->second.pi.size() < 2 || !stmt.reductions.empty())
    return std::nullopt;
  const std::vector<int64_t> pi = sweep->second.pi;
  auto edge = [&](size_t a, size_t b) {
    for (unsigned x : components[a])
      for (unsigned y : components[b])
        if (!relationBetween(model_, deps, x, y).is_empty())
          return true;
    return false;
  };
  std::vector<size_t> taken;
  std::vector<unsigned> group{s};
  for (size_t c = 0; c < components.size(); ++c) {
    if (c == at || components[c].size() != 1 || !mayTake(c))
      continue;
    unsigned p = components[c].front();
    const Statement &piece = model_.statements[p];
    if (piece.write.array != stmt.write.array || piece.dimNames.size() != stmt.dimNames.size() ||
        piece.isUpdate() || !piece.reductions.empty() || relationBetween(model_, deps, p, p).is_empty())
      continue;
    bool movable = true;
    for (size_t m = std::min(c, at) + 1; m < std::max(c, at) && movable; ++m)
      movable = c < at ? !edge(c, m) : !edge(m, c);
    if (movable) {
      taken.push_back(c);
      group.push_back(components[c].front());
    }
  }
  if (taken.empty())
    return std::nullopt;
  // Legal when pi . x advances along every dependence; permutable when no other member goes back.
  bool permutable = true;
  unsigned dropped = droppedDim(pi);
  for (unsigned a : group)
    for (unsigned b : group) {
      isl::map relation = relationBetween(model_, deps, a, b);
      if (relation.is_empty())
        continue;
      if (!advances(relation, fixed, pi, 1))
        return std::nullopt;
      for (unsigned k = 0; k < pi.size(); ++k) {
        std::vector<int64_t> unit(pi.size(), 0);
        unit[k] = 1;
        if (k != dropped && !advances(relation, fixed, unit, 0))
          permutable = false;
      }
    }
  isl::union_set domain = domainsOf(model_, group);
  isl::multi_union_pw_aff partial = hyperplanePartial(s, fixed, pi);
  for (size_t g = 1; g < group.size(); ++g)
    partial = partial.union_add(hyperplanePartial(group[g], fixed, pi));
  std::string count = iu::pwAffToC(hyperplaneCount(group, fixed, pi), model_.context);
  for (unsigned g : group)
    hyperplanes_[g] = Hyperplane{
        pi, count, iu::affToString(hyperplaneTime(model_.statements[g].domain.space(), fixed, pi))};
  std::vector<bool> flags(partial.size(), true);
  flags[0] = false;
  return std::make_pair(iu::insertBand(isl::schedule::from_domain(domain), partial, flags, permutable),
                        taken);
}

llvm::Expected<isl::schedule> Scheduler::scheduleRegion(const std::vector<unsigned> &stmts, unsigned fixed,
                                                        const isl::union_map &deps) {
  auto edge = [&](unsigned a, unsigned b) { return !relationBetween(model_, deps, a, b).is_empty(); };
  std::vector<std::vector<unsigned>> components = orderedComponents(stmts, edge);
  bool hasCycle = false;
  for (const auto &c : components)
    hasCycle |= c.size() > 1;

  bool streams = shouldStream(stmts, fixed, deps, hasCycle);
  if (!streams) {
    if (std::optional<std::pair<size_t, size_t>> run = streamedRun(components, fixed, deps)) {
      // Before the run, the run streamed, after it: each a region of its own, in sequence.
      std::vector<isl::schedule> parts;
      for (auto [from, to] : {std::pair<size_t, size_t>{0, run->first}, *run, {run->second, components.size()}}) {
        std::vector<unsigned> part;
        for (size_t c = from; c < to; ++c)
          part.insert(part.end(), components[c].begin(), components[c].end());
        if (part.empty())
          continue;
        auto scheduled = scheduleRegion(part, fixed, deps);
        if (!scheduled)
          return scheduled.takeError();
        parts.push_back(*scheduled);
      }
      isl::schedule result = parts.front();
      for (size_t i = 1; i < parts.size(); ++i)
        result = iu::sequence(result, parts[i]);
      return result;
    }
  }

  if (streams) {
    auto inner = scheduleRegion(stmts, fixed + 1, sameLeading(deps, fixed + 1));
    if (!inner)
      return inner.takeError();
    isl::multi_union_pw_aff partial = identityPartial(stmts.front(), fixed, fixed + 1);
    bool carries = false;
    for (unsigned s : stmts) {
      if (s != stmts.front())
        partial = partial.union_add(identityPartial(s, fixed, fixed + 1));
      for (unsigned t : stmts)
        if (!relationBetween(model_, deps, s, t).subtract(sameLeading(relationBetween(model_, deps, s, t), fixed + 1)).is_empty())
          carries = true;
    }
    return iu::insertBand(*inner, partial, {!carries}, true);
  }

  std::vector<FusionGroup> pieceGroups, groups;
  if (options_.fuse) {
    PieceMerge merged = mergeDefinitionPieces(model_, components, fixed, deps);
    if (options_.fuseSiblings)
      merged = fuseSiblingDefinitions(model_, std::move(merged), fixed, deps);
    components = std::move(merged.components);
    pieceGroups = std::move(merged.groups);
    std::vector<unsigned> order;
    for (const auto &c : components)
      order.insert(order.end(), c.begin(), c.end());
    // Package execution over statements that are components of their own: not pieces, and not members
    // of a cycle of statements (a component of several), which is scheduled as one.
    std::set<unsigned> alone;
    for (const std::vector<unsigned> &c : components)
      if (c.size() == 1)
        alone.insert(c.front());
    for (FusionGroup &group : findFusionGroups(model_, order, fixed, deps))
      if (llvm::all_of(group.statements, [&](unsigned s) {
            return alone.count(s) && llvm::none_of(pieceGroups, [&](const FusionGroup &g) {
                     return llvm::is_contained(g.statements, s);
                   });
          }))
        groups.push_back(std::move(group));
  }

  // One loop nest for a group: a band over all of them (every member parallel: no dependence joins
  // two instances), the statements in order inside.
  auto fusedBand = [&](const FusionGroup &group) {
    isl::schedule body;
    isl::multi_union_pw_aff partial;
    for (unsigned s : group.statements) {
      isl::schedule one = isl::schedule::from_domain(model_.statements[s].domain);
      isl::multi_union_pw_aff own =
          identityPartial(s, fixed, static_cast<unsigned>(model_.statements[s].dimNames.size()));
      body = body.is_null() ? one : iu::sequence(body, one);
      partial = partial.is_null() ? own : partial.union_add(own);
    }
    unsigned members = static_cast<unsigned>(model_.statements[group.statements.front()].dimNames.size()) - fixed;
    fusion_.push_back(group);
    return members > 0 ? iu::insertBand(body, partial, std::vector<bool>(members, true), true) : body;
  };

  // Hyperplane sweeps, scheduled first so that the pieces of their arrays can join their bands.
  std::set<unsigned> inGroups;
  for (const std::vector<FusionGroup> *list : {&pieceGroups, &groups})
    for (const FusionGroup &group : *list)
      inGroups.insert(group.statements.begin(), group.statements.end());
  std::map<size_t, isl::schedule> sweeps; // by component: scheduled alone, or a band with pieces
  std::set<size_t> withPieces, joined;
  for (size_t i = 0; i < components.size(); ++i) {
    unsigned s = components[i].front();
    if (components[i].size() != 1 || inGroups.count(s) || joined.count(i) ||
        relationBetween(model_, deps, s, s).is_empty())
      continue;
    llvm::Expected<isl::schedule> alone = scheduleStatement(s, fixed, deps);
    if (!alone)
      return alone.takeError();
    sweeps[i] = *alone;
    auto band = hyperplaneWithPieces(components, i, fixed, deps, [&](size_t c) {
      return !inGroups.count(components[c].front()) && !withPieces.count(c) && !joined.count(c);
    });
    if (!band)
      continue;
    sweeps[i] = band->first;
    withPieces.insert(i);
    for (size_t c : band->second) {
      sweeps.erase(c);
      joined.insert(c);
    }
  }

  std::vector<isl::schedule> parts;
  for (size_t i = 0; i < components.size(); ++i) {
    const auto &component = components[i];
    if (joined.count(i))
      continue;
    if (auto sweep = sweeps.find(i); sweep != sweeps.end()) {
      parts.push_back(sweep->second);
      continue;
    }
    auto startsWith = [&](const FusionGroup &g) { return g.statements.front() == component.front(); };
    if (auto pieces = llvm::find_if(pieceGroups, startsWith); pieces != pieceGroups.end()) {
      parts.push_back(fusedBand(*pieces));
      continue;
    }
    if (auto group = llvm::find_if(groups, startsWith); group != groups.end()) {
      parts.push_back(fusedBand(*group));
      i += group->statements.size() - 1; // its statements are consecutive components of their own
      continue;
    }
    llvm::Expected<isl::schedule> part =
        component.size() == 1 ? scheduleStatement(component.front(), fixed, deps) : scheduleWithIsl(component, deps);
    if (!part)
      return part.takeError();
    parts.push_back(*part);
  }
  isl::schedule result = parts.front();
  for (size_t i = 1; i < parts.size(); ++i)
    result = iu::sequence(result, parts[i]);
  return result;
}

// --- The program ----------------------------------------------------------------------------------------

Band describeBand(const Model &model, const isl::schedule_node_band &band) {
  Band info;
  isl::multi_union_pw_aff partial = band.partial_schedule();
  isl::union_set domain = partial.domain();
  for (unsigned s = 0; s < model.statements.size(); ++s)
    if (!domain.extract_set(model.statements[s].domain.space()).is_empty() ||
        !isl::union_set(model.statements[s].domain).intersect(domain).is_empty())
      info.statements.push_back(s);
  for (unsigned m = 0; m < band.n_member(); ++m) {
    info.coincident.push_back(band.member_get_coincident(static_cast<int>(m)));
    // A member reads as the expression it is for every statement (e.g. "i"), when that agrees.
    std::string name;
    bool agree = true;
    isl::pw_multi_aff_list pieces = partial.at(static_cast<int>(m)).pw_multi_aff_list();
    for (unsigned p = 0; p < pieces.size(); ++p) {
      std::string text;
      pieces.at(static_cast<int>(p)).foreach_piece([&](isl::set, isl::multi_aff piece) {
        text = iu::affToString(piece.at(0));
      });
      if (name.empty())
        name = text;
      else if (name != text)
        agree = false;
    }
    info.dimNames.push_back(agree ? name : "c" + std::to_string(m));
  }
  return info;
}

void Scheduler::collectBands(Schedule &result) const {
  std::function<void(isl::schedule_node, unsigned)> walk = [&](isl::schedule_node node, unsigned outerBands) {
    unsigned nested = outerBands;
    if (node.isa<isl::schedule_node_band>()) {
      Band info = describeBand(model_, node.as<isl::schedule_node_band>());
      unsigned members = static_cast<unsigned>(info.coincident.size());
      // A repeat loop: the outermost band, one member, each statement's repeat dimension.
      if (outerBands == 0 && members == 1) {
        bool repeat = !info.statements.empty();
        for (unsigned s : info.statements) {
          const Statement &stmt = model_.statements[s];
          if (stmt.repeatDims == 0 || info.dimNames[0] != stmt.dimNames[0])
            repeat = false;
        }
        info.isSequentialRepeat = repeat;
        const Statement &first = model_.statements[info.statements.empty() ? 0 : info.statements.front()];
        info.stopsWhenUnchanged = repeat && model_.repeats[first.repeatBlock].stopsWhenUnchanged();
      }
      // A hyperplane band: its first member is the statements' t = pi . x (one statement, or an in-place
      // sweep with the pieces of its array that joined it, all with one pi).
      if (!info.statements.empty() && !info.isSequentialRepeat) {
        auto h = hyperplanes_.find(info.statements.front());
        auto samePi = [&](unsigned s) {
          auto other = hyperplanes_.find(s);
          return other != hyperplanes_.end() && other->second.pi == h->second.pi;
        };
        if (h != hyperplanes_.end() && info.dimNames[0] == h->second.expr &&
            llvm::all_of(info.statements, samePi)) {
          info.hyperplane = h->second.pi;
          info.hyperplaneCount = h->second.count;
          info.hyperplaneExpr = info.dimNames[0];
          // The time dimension is called t, unless the statement already has a t.
          const std::vector<std::string> &own = model_.statements[info.statements.front()].dimNames;
          std::string name = "t";
          for (const char *candidate : {"t", "tau", "theta", "wave"})
            if (std::find(own.begin(), own.end(), candidate) == own.end()) {
              name = candidate;
              break;
            }
          info.dimNames[0] = name;
        }
      }
      result.bands.push_back(std::move(info));
      ++nested;
    }
    for (unsigned c = 0; c < node.n_children(); ++c)
      walk(node.child(static_cast<int>(c)), nested);
  };
  walk(result.tree.root(), 0);
}

llvm::Expected<Schedule> Scheduler::run() {
  isl::union_map deps = deps_.validity();
  // Top-level items in dependence order: runs of top-level equations and repeat blocks.
  std::vector<std::vector<unsigned>> items;
  std::vector<int> itemBlock;
  for (unsigned s = 0; s < model_.statements.size(); ++s) {
    const Statement &stmt = model_.statements[s];
    if (!items.empty() && itemBlock.back() == stmt.repeatBlock && stmt.repeatBlock >= 0) {
      items.back().push_back(s);
      continue;
    }
    items.push_back({s});
    itemBlock.push_back(stmt.repeatBlock);
  }
  // Items in dependence order (a repeat block is one item), textual order where that leaves a choice
  // and for items in a cycle (which the legality check then reports).
  {
    size_t n = items.size();
    std::vector<unsigned> itemOf(model_.statements.size());
    for (size_t i = 0; i < n; ++i)
      for (unsigned s : items[i])
        itemOf[s] = static_cast<unsigned>(i);
    std::vector<std::set<size_t>> preds(n);
    for (const Dependence &dep : deps_.edges)
      if (itemOf[dep.source] != itemOf[dep.target])
        preds[itemOf[dep.target]].insert(itemOf[dep.source]);
    std::vector<bool> placed(n, false);
    std::vector<size_t> order;
    while (order.size() < n) {
      size_t next = n;
      for (size_t i = 0; i < n && next == n; ++i) {
        if (placed[i])
          continue;
        bool ready = true;
        for (size_t p : preds[i])
          ready &= placed[p];
        if (ready)
          next = i;
      }
      if (next == n) // a cycle between items: keep the text's order for the rest
        for (size_t i = 0; i < n && next == n; ++i)
          if (!placed[i])
            next = i;
      placed[next] = true;
      order.push_back(next);
    }
    std::vector<std::vector<unsigned>> sortedItems;
    std::vector<int> sortedBlocks;
    for (size_t i : order) {
      sortedItems.push_back(items[i]);
      sortedBlocks.push_back(itemBlock[i]);
    }
    items = std::move(sortedItems);
    itemBlock = std::move(sortedBlocks);
  }
  std::vector<isl::schedule> parts;
  std::vector<unsigned> run;
  auto flushRun = [&]() -> llvm::Error {
    if (run.empty())
      return llvm::Error::success();
    auto part = scheduleRegion(run, 0, deps);
    if (!part)
      return part.takeError();
    parts.push_back(*part);
    run.clear();
    return llvm::Error::success();
  };
  for (size_t i = 0; i < items.size(); ++i) {
    if (itemBlock[i] < 0) {
      run.push_back(items[i].front());
      continue;
    }
    if (auto err = flushRun())
      return err;
    // Inside the block only dependences between its own statements count, and only within an
    // iteration; those from statements before it are satisfied by the sequence (and may have fewer
    // dimensions than the repeat variable: a scalar).
    isl::union_set block = domainsOf(model_, items[i]);
    auto body = scheduleRegion(items[i], 1, sameLeading(deps.intersect_domain(block).intersect_range(block), 1));
    if (!body)
      return body.takeError();
    isl::multi_union_pw_aff partial = identityPartial(items[i].front(), 0, 1);
    for (size_t m = 1; m < items[i].size(); ++m)
      partial = partial.union_add(identityPartial(items[i][m], 0, 1));
    parts.push_back(iu::insertBand(*body, partial, {false}, true));
  }
  if (auto err = flushRun())
    return err;

  Schedule result;
  if (parts.empty()) {
    result.tree = isl::schedule::from_domain(model_.domains());
  } else {
    result.tree = parts.front();
    for (size_t i = 1; i < parts.size(); ++i)
      result.tree = iu::sequence(result.tree, parts[i]);
  }
  result.scheduleMap = flatScheduleMap(result.tree);
  collectBands(result);
  result.fusionGroups = fusion_;
  result.folded = foldStorage(model_, result.tree);
  return result;
}

isl::union_map flatScheduleMap(const isl::schedule &tree) {
  // Without a band node isl leaves the map unconstrained: keep it to the instances scheduled.
  isl::union_map map = tree.map().intersect_domain(tree.domain());
  unsigned depth = 0;
  map.foreach_map([&](isl::map m) { depth = std::max(depth, m.range_tuple_dim()); });
  isl::union_map padded = isl::union_map::empty(map.ctx());
  map.foreach_map([&](isl::map m) {
    padded = padded.unite(isl::union_map(iu::padOutputs(m, depth - m.range_tuple_dim())));
  });
  return padded;
}

llvm::Expected<Schedule> chooseSchedule(const Model &model, const DependenceGraph &deps,
                                        const ScheduleOptions &options) {
  try {
    Scheduler scheduler(model, deps, options);
    auto result = scheduler.run();
    if (!result)
      return result.takeError();
#ifndef NDEBUG
    // The scheduler's reasoning is checked by an independent test of every dependence.
    if (auto err = verifySchedule(model, deps, *result))
      return std::move(err);
#endif
    return result;
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in scheduling (isl): ") + e.what());
  }
}

} // namespace polyc::schedule
