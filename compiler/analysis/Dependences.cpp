// Dependence analysis: flow, anti and output dependences between statement instances, their distance
// sets over the dimensions two statements share, and their class (uniform / affine / non-uniform).
// Reports dependences that no schedule can order (a value defined in terms of itself).
#include "compiler/analysis/DependenceGraph.h"

#include "compiler/model/IslUtil.h"
#include "compiler/support/SourceError.h"

#include <isl/map.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace polyc::analysis {

using model::Access;
using model::Model;
using model::Statement;

namespace {

// Dependences are gathered per (kind, source, target, array) and merged into one edge each.
using EdgeKey = std::tuple<int, unsigned, unsigned, std::string>;

struct ArrayUse {
  std::vector<std::pair<unsigned, const Access *>> writes, reads;
  bool hasUpdates = false;
};

// isl operations the cycle check may take (checkOrderable); the PolyBench kernels and the examples take
// far fewer.
constexpr unsigned long CycleCheckOperations = 2'000'000;
// The longest cycle through instances of one statement that the check looks for step by step, where
// isl's transitive closure is not exact.
constexpr unsigned ShortCycle = 4;

class Analysis {
public:
  explicit Analysis(const Model &model) : model_(model) {}
  llvm::Expected<DependenceGraph> run();

private:
  void assignmentArray(const ArrayUse &use);
  void updatedArray(const std::string &array, const ArrayUse &use);
  void add(DependenceKind kind, unsigned source, unsigned target, const std::string &array, const isl::map &rel);
  llvm::Error checkOrderable(const DependenceGraph &graph);
  std::optional<unsigned> statementOnCycle(const isl::union_map &all, size_t longest) const;
  std::optional<std::pair<unsigned, isl::set>> instancesOnOwnCycle(const DependenceGraph &graph) const;
  void describe(Dependence &dep);
  unsigned statementIndex(const std::string &name) const;

  const Model &model_;
  std::map<EdgeKey, isl::map> edges_;
};

} // namespace

// { X[x] -> Y[y] : y0 <= x0 } (orEqual) or y0 > x0, on the leading (repeat) dimension.
static isl::map repeatOrder(const isl::space &from, const isl::space &to, bool laterOnly) {
  isl::space mapSpace = polyc::islutil::mapSpace(from, to);
  isl::set pairs = isl::set::universe(mapSpace.wrap());
  isl::multi_aff toX = mapSpace.domain_map_multi_aff(), toY = mapSpace.range_map_multi_aff();
  isl::aff xe = toX.at(0), ye = toY.at(0);
  pairs = laterOnly ? pairs.intersect(ye.gt_set(xe)) : pairs.intersect(ye.le_set(xe));
  return pairs.unwrap();
}

// The writer of each element a read sees, when the array is only defined by `=` equations: the one
// writer of the element, or, for an array redefined in every iteration of a repeat block, the
// latest iteration not after the reader's (the same iteration inside the block, the last one after it).
void Analysis::assignmentArray(const ArrayUse &use) {
  for (auto [w, write] : use.writes) {
    const Statement &writer = model_.statements[w];
    for (auto [r, read] : use.reads) {
      const Statement &reader = model_.statements[r];
      isl::map candidates = polyc::islutil::rangeMap(read->relation).apply_range(write->relation.reverse()); // [R -> A] -> W
      if (candidates.is_empty())
        continue;
      if (writer.repeatBlock >= 0) {
        if (reader.repeatBlock == writer.repeatBlock)
          candidates = candidates.curry()
                           .intersect_range_factor_range(
                               repeatOrder(reader.domain.space(), writer.domain.space(), false))
                           .uncurry();
        candidates = candidates.lexmax();
      }
      isl::map flow = candidates.domain_factor_domain().reverse();
      add(DependenceKind::Flow, w, r, write->array, flow);

      // In a repeat block the next iteration's definition overwrites what this read saw.
      if (writer.repeatBlock >= 0 && reader.repeatBlock == writer.repeatBlock) {
        isl::map next = polyc::islutil::rangeMap(read->relation).apply_range(write->relation.reverse());
        next = next.curry()
                   .intersect_range_factor_range(repeatOrder(reader.domain.space(), writer.domain.space(), true))
                   .uncurry()
                   .lexmin();
        add(DependenceKind::Anti, r, w, write->array, next.domain_factor_domain());
      }
    }
    for (auto [w2, write2] : use.writes) {
      const Statement &writer2 = model_.statements[w2];
      if (writer.repeatBlock < 0 || writer2.repeatBlock != writer.repeatBlock)
        continue;
      isl::map next = polyc::islutil::rangeMap(write->relation).apply_range(write2->relation.reverse());
      next = next.curry()
                 .intersect_range_factor_range(repeatOrder(writer.domain.space(), writer2.domain.space(), true))
                 .uncurry()
                 .lexmin();
      add(DependenceKind::Output, w, w2, write->array, next.domain_factor_domain());
    }
  }
}

// Arrays updated in place (`+=`, `-=`) are ordered by the text: a statement's reads come before its
// writes (a simultaneous update), statements in textual order, repeat iterations in order. isl's
// dataflow analysis on that order gives the last writer of each read (flow), and for each write the
// previous write (output) and the reads since then (anti).
void Analysis::updatedArray(const std::string &array, const ArrayUse &use) {
  unsigned depth = 4;
  auto phaseTime = [&](unsigned s, bool write) {
    const Statement &stmt = model_.statements[s];
    isl::space space = stmt.domain.space();
    isl::multi_aff id = space.identity_multi_aff_on_domain();
    isl::aff zero = space.zero_aff_on_domain();
    isl::aff_list list(model_.ctx, static_cast<int>(depth));
    list = list.add(zero.add_constant(stmt.topPosition));
    list = list.add(stmt.repeatBlock >= 0 ? id.at(0) : zero);
    list = list.add(zero.add_constant(stmt.blockPosition));
    list = list.add(zero.add_constant(write ? 1 : 0));
    isl::space range = polyc::islutil::anonymousSetSpace(space, depth);
    std::string tag = stmt.name + (write ? "__w" : "__r");
    return polyc::islutil::mapSpace(space, range).multi_aff(list).as_map().intersect_domain(stmt.domain).set_domain_tuple(tag);
  };
  // A scatter's writes are not kills: its points add to elements that other points add to as well.
  isl::union_map reads = isl::union_map::empty(model_.ctx), writes = reads, scatterWrites = reads,
                 schedule = reads;
  std::set<unsigned> readers, writers;
  for (auto [r, read] : use.reads) {
    reads = reads.unite(isl::union_map(read->relation.set_domain_tuple(model_.statements[r].name + "__r")));
    readers.insert(r);
  }
  for (auto [w, write] : use.writes) {
    isl::union_map tagged(write->relation.set_domain_tuple(model_.statements[w].name + "__w"));
    (model_.statements[w].scatter ? scatterWrites : writes) = (model_.statements[w].scatter ? scatterWrites : writes).unite(tagged);
    writers.insert(w);
  }
  for (unsigned r : readers)
    schedule = schedule.unite(isl::union_map(phaseTime(r, false)));
  for (unsigned w : writers)
    schedule = schedule.unite(isl::union_map(phaseTime(w, true)));

  auto untag = [&](DependenceKind kind, const isl::union_map &deps) {
    deps.foreach_map([&](isl::map dep) {
      std::string from = dep.get_domain_tuple_id().name(), to = dep.get_range_tuple_id().name();
      std::string fromName = from.substr(0, from.size() - 3), toName = to.substr(0, to.size() - 3);
      DependenceKind edgeKind = kind;
      if (kind == DependenceKind::Anti && from.substr(from.size() - 3) != "__r")
        edgeKind = DependenceKind::Output; // from a scatter's write, a may-source
      unsigned s = statementIndex(fromName), t = statementIndex(toName);
      if (s == t && model_.statements[s].scatter) // a scatter's points add in any order
        return;
      isl::map plain = dep.set_domain_tuple(fromName).set_range_tuple(toName);
      if (s == t) // within one instance the reads come first: not an ordering constraint
        plain = plain.subtract(isl::map(model_.statements[s].domain.identity()));
      add(edgeKind, s, t, array, plain);
    });
  };
  isl::union_flow flow = isl::union_access_info(reads)
                             .set_must_source(writes)
                             .set_may_source(scatterWrites)
                             .set_schedule_map(schedule)
                             .compute_flow();
  untag(DependenceKind::Flow, flow.must_dependence().unite(flow.may_dependence()));
  isl::union_flow overwrite = isl::union_access_info(writes.unite(scatterWrites))
                                  .set_must_source(writes)
                                  .set_may_source(reads.unite(scatterWrites))
                                  .set_schedule_map(schedule)
                                  .compute_flow();
  untag(DependenceKind::Output, overwrite.must_dependence());
  untag(DependenceKind::Anti, overwrite.may_dependence());
}

unsigned Analysis::statementIndex(const std::string &name) const {
  for (unsigned i = 0; i < model_.statements.size(); ++i)
    if (model_.statements[i].name == name)
      return i;
  return 0;
}

void Analysis::add(DependenceKind kind, unsigned source, unsigned target, const std::string &array,
                   const isl::map &rel) {
  isl::map relation = rel.coalesce();
  if (relation.is_empty())
    return;
  EdgeKey key{static_cast<int>(kind), source, target, array};
  auto it = edges_.find(key);
  if (it == edges_.end())
    edges_.emplace(key, relation);
  else
    it->second = it->second.unite(relation).coalesce();
}

// The dimensions two statements share: the repeat dimension of a common repeat block, then leading
// dimensions of the same name (a self-dependence shares all of them).
static unsigned sharedDims(const Statement &a, const Statement &b) {
  if (&a == &b)
    return static_cast<unsigned>(a.dimNames.size());
  unsigned k = 0;
  if (a.repeatDims != b.repeatDims || (a.repeatDims && a.repeatBlock != b.repeatBlock))
    return 0;
  while (k < a.dimNames.size() && k < b.dimNames.size() && a.dimNames[k] == b.dimNames[k])
    ++k;
  return k;
}

static isl::map anonymous(const isl::map &map) {
  isl_map *raw = isl_map_reset_tuple_id(map.copy(), isl_dim_in);
  raw = isl_map_reset_tuple_id(raw, isl_dim_out);
  return isl::manage(raw);
}

void Analysis::describe(Dependence &dep) {
  const Statement &src = model_.statements[dep.source], &tgt = model_.statements[dep.target];
  unsigned k = dep.source == dep.target ? static_cast<unsigned>(src.dimNames.size()) : sharedDims(src, tgt);
  dep.sharedDims = k;
  unsigned ns = static_cast<unsigned>(src.dimNames.size()), nt = static_cast<unsigned>(tgt.dimNames.size());
  isl::map shared = polyc::islutil::projectOutInputs(dep.relation, k, ns - k);
  shared = anonymous(polyc::islutil::projectOutOutputs(shared, k, nt - k));
  dep.distances = shared.deltas().coalesce();

  // Uniform: the relation is every translation by a distance in the set, between points where
  // both ends exist, so the distance does not depend on where the source is.
  dep.depClass = DependenceClass::NonUniform;
  if (k == ns && k == nt) {
    isl::map exact = anonymous(dep.relation);
    isl::map translations = dep.distances.translation()
                                .intersect_domain(exact.domain())
                                .intersect_range(exact.range());
    if (translations.is_subset(exact))
      dep.depClass = DependenceClass::Uniform;
  }
  if (dep.depClass != DependenceClass::Uniform &&
      (dep.relation.is_single_valued() || dep.relation.reverse().is_single_valued()))
    dep.depClass = DependenceClass::Affine;

  // Enumerate the distances when there are few, with the params as given.
  if (k > 0) {
    isl::set concrete = dep.distances.intersect_params(model_.context).project_out_all_params();
    if (polyc::islutil::isBounded(concrete)) {
      auto count = polyc::islutil::countPoints(concrete);
      if (count && *count <= 4096) {
        std::vector<std::vector<int64_t>> vectors;
        concrete.foreach_point([&](isl::point p) {
          std::vector<int64_t> v;
          isl::multi_val mv = p.multi_val();
          for (unsigned i = 0; i < mv.size(); ++i)
            v.push_back(mv.at(static_cast<int>(i)).get_num_si());
          vectors.push_back(std::move(v));
        });
        std::sort(vectors.begin(), vectors.end());
        dep.distanceVectors = std::move(vectors);
      }
    }
  }
}

// One point of a statement's domain as "i = 0, j = 2".
static std::string pointText(const isl::set &set, const Statement &stmt) {
  isl::point p = set.sample_point();
  std::ostringstream os;
  isl::multi_val mv = p.multi_val();
  for (unsigned i = 0; i < mv.size(); ++i)
    os << (i ? ", " : "") << (i < stmt.dimNames.size() ? stmt.dimNames[i] + " = " : "")
       << mv.at(static_cast<int>(i)).get_num_si();
  return os.str();
}

static std::string equationText(const Statement &stmt) {
  std::string text = stmt.write.array + "[";
  for (size_t i = stmt.repeatDims; i < stmt.dimNames.size(); ++i)
    text += (i > stmt.repeatDims ? ", " : "") + stmt.dimNames[i];
  return text + "]";
}

// A statement instance that must run before itself: a self-dependence at distance zero, or a cycle
// of dependences between statements that returns to the same instance.
llvm::Error Analysis::checkOrderable(const DependenceGraph &graph) {
  for (const Dependence &dep : graph.edges) {
    if (dep.source != dep.target)
      continue;
    const Statement &stmt = model_.statements[dep.source];
    isl::map self = dep.relation.intersect(isl::map(stmt.domain.identity()));
    if (!self.is_empty()) {
      isl::set at = self.domain().intersect_params(model_.context);
      std::string where = stmt.dimNames.empty() ? "" : " (" + pointText(at.is_empty() ? self.domain() : at, stmt) + ")";
      return makeSourceError(stmt.range, "the equation for '" + equationText(stmt) +
                                             "' reads the value it defines at the same point" + where +
                                             "; no order of evaluation can compute it");
    }
  }
  if (std::optional<std::pair<unsigned, isl::set>> cycle = instancesOnOwnCycle(graph)) {
    const Statement &stmt = model_.statements[cycle->first];
    return makeSourceError(stmt.range,
                           "the equation for '" + equationText(stmt) +
                               "' depends on its own value at the same point through other points "
                               "of it (" +
                               pointText(cycle->second, stmt) + "); no order of evaluation can compute it");
  }
  // A cycle through other statements can only lie within a strongly connected group of statements.
  size_t n = model_.statements.size();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (const Dependence &dep : graph.edges)
    reach[dep.source][dep.target] = true;
  for (size_t k = 0; k < n; ++k)
    for (size_t i = 0; i < n; ++i)
      if (reach[i][k])
        for (size_t j = 0; j < n; ++j)
          if (reach[k][j])
            reach[i][j] = true;
  std::vector<size_t> groupSize(n, 1);
  size_t longest = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j)
      if (i != j && reach[i][j] && reach[j][i])
        ++groupSize[i];
    if (groupSize[i] > 1)
      longest = std::max(longest, groupSize[i]);
  }
  if (longest == 0)
    return llvm::Error::success();
  isl::union_map all = isl::union_map::empty(model_.ctx);
  for (const Dependence &dep : graph.edges)
    if (reach[dep.source][dep.target] && reach[dep.target][dep.source] && groupSize[dep.source] > 1)
      all = all.unite(isl::union_map(dep.relation));
  // Composing the relations can take minutes where gathers make them unions of many pieces (fuzz seed
  // 110262): past a bound on isl's operations the check gives up, and what remains is the schedule's
  // legality check, which verifies every dependence.
  isl_ctx *ctx = isl::ctx(model_.ctx).get();
  isl_ctx_set_max_operations(ctx, CycleCheckOperations);
  isl_ctx_reset_operations(ctx);
  std::optional<unsigned> cyclic;
  try {
    cyclic = statementOnCycle(all, longest);
  } catch (const isl::exception_quota &) {
    isl_ctx_reset_error(ctx);
  }
  isl_ctx_set_max_operations(ctx, 0);
  if (!cyclic)
    return llvm::Error::success();
  const Statement &stmt = model_.statements[*cyclic];
  std::string others;
  for (const Dependence &dep : graph.edges)
    if (dep.source == *cyclic && dep.target != *cyclic)
      others += (others.empty() ? "" : ", ") + equationText(model_.statements[dep.target]);
  return makeSourceError(stmt.range, "the equation for '" + equationText(stmt) +
                                         "' depends on its own value at the same point through " +
                                         (others.empty() ? std::string("other equations") : others) +
                                         "; no order of evaluation can compute it");
}

// A statement with instances that depend on themselves through other instances of it (x[i] from
// x[i - 1] and x[i + 1], or scratch[0, p] from scratch[1, p] from scratch[0, p], fuzz seed 8002393;
// isl's scheduler then stopped with "unable to carry dependences"), and those instances: the transitive
// closure of its dependences on itself meets the identity. Only where isl computes the closure exactly
// and within CycleCheckOperations; otherwise the scheduler and the legality check still stop such a
// program, with a less precise message.
std::optional<std::pair<unsigned, isl::set>>
Analysis::instancesOnOwnCycle(const DependenceGraph &graph) const {
  isl_ctx *ctx = isl::ctx(model_.ctx).get();
  for (unsigned s = 0; s < model_.statements.size(); ++s) {
    const Statement &stmt = model_.statements[s];
    isl::map self = isl::map::empty(polyc::islutil::mapSpace(stmt.domain.space(), stmt.domain.space()));
    for (const Dependence &dep : graph.edges)
      if (dep.source == s && dep.target == s)
        self = self.unite(dep.relation);
    if (self.is_empty())
      continue;
    isl_ctx_set_max_operations(ctx, CycleCheckOperations);
    isl_ctx_reset_operations(ctx);
    isl::map identity(stmt.domain.identity());
    std::optional<isl::set> onCycle;
    auto found = [&](const isl::map &paths) {
      isl::set back = paths.intersect(identity).domain();
      if (!back.is_empty()) {
        isl::set inContext = back.intersect_params(model_.context);
        onCycle = inContext.is_empty() ? back : inContext;
      }
      return onCycle.has_value();
    };
    isl_bool exact = isl_bool_false;
    isl_map *closure = isl_map_transitive_closure(self.copy(), &exact);
    if (closure && exact == isl_bool_true) {
      found(isl::manage(closure));
    } else {
      isl_map_free(closure);
      isl_ctx_reset_error(ctx);
      // Where the closure is not exact, the short cycles: paths of up to ShortCycle steps.
      try {
        isl::map paths = self;
        for (unsigned step = 2;
             step <= ShortCycle && !paths.is_empty() && !found(paths = paths.apply_range(self)); ++step)
          paths = paths.coalesce();
      } catch (const isl::exception &) {
      }
    }
    isl_ctx_reset_error(ctx);
    isl_ctx_set_max_operations(ctx, 0);
    if (onCycle)
      return std::make_pair(s, *onCycle);
  }
  return std::nullopt;
}

// A statement whose instance depends on itself through paths of up to `longest` steps of `all` (every
// cycle through distinct statements of a group), if there is one.
std::optional<unsigned> Analysis::statementOnCycle(const isl::union_map &all, size_t longest) const {
  isl::union_map path = all;
  for (size_t step = 1; step < longest && !path.is_empty(); ++step) {
    path = path.apply_range(all).coalesce();
    for (unsigned s = 0; s < model_.statements.size(); ++s) {
      const Statement &stmt = model_.statements[s];
      isl::map back = path.extract_map(polyc::islutil::mapSpace(stmt.domain.space(), stmt.domain.space()));
      if (!back.intersect(isl::map(stmt.domain.identity())).is_empty())
        return s;
    }
  }
  return std::nullopt;
}

llvm::Expected<DependenceGraph> Analysis::run() {
  std::map<std::string, ArrayUse> uses;
  for (unsigned s = 0; s < model_.statements.size(); ++s) {
    const Statement &stmt = model_.statements[s];
    ArrayUse &w = uses[stmt.write.array];
    w.writes.push_back({s, &stmt.write});
    w.hasUpdates |= stmt.isUpdate();
    for (const Access &read : stmt.reads)
      uses[read.array].reads.push_back({s, &read});
  }
  for (const auto &[array, use] : uses) {
    if (use.writes.empty())
      continue;
    if (use.hasUpdates)
      updatedArray(array, use);
    else
      assignmentArray(use);
  }
  DependenceGraph graph;
  graph.ctx = model_.ctx;
  for (auto &[key, relation] : edges_) {
    Dependence dep;
    dep.kind = static_cast<DependenceKind>(std::get<0>(key));
    dep.source = std::get<1>(key);
    dep.target = std::get<2>(key);
    dep.array = std::get<3>(key);
    dep.relation = relation;
    describe(dep);
    graph.edges.push_back(std::move(dep));
  }
  // Edges in a stable, readable order: by kind, then source, target and array.
  std::stable_sort(graph.edges.begin(), graph.edges.end(), [](const Dependence &a, const Dependence &b) {
    return std::tie(a.kind, a.source, a.target, a.array) < std::tie(b.kind, b.source, b.target, b.array);
  });
  if (auto err = checkOrderable(graph))
    return err;
  return graph;
}

llvm::Expected<DependenceGraph> computeDependences(const Model &model) {
  try {
    Analysis analysis(model);
    return analysis.run();
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in dependence analysis (isl): ") + e.what());
  }
}

isl::union_map DependenceGraph::flow() const {
  isl::union_map result = isl::union_map::empty(ctx);
  for (const Dependence &dep : edges)
    if (dep.kind == DependenceKind::Flow)
      result = result.unite(isl::union_map(dep.relation));
  return result;
}

isl::union_map DependenceGraph::validity() const {
  isl::union_map result = isl::union_map::empty(ctx);
  for (const Dependence &dep : edges)
    result = result.unite(isl::union_map(dep.relation));
  return result;
}

const char *spelling(DependenceKind kind) {
  switch (kind) {
  case DependenceKind::Flow:
    return "flow";
  case DependenceKind::Anti:
    return "anti";
  case DependenceKind::Output:
    return "output";
  }
  return "?";
}

const char *spelling(DependenceClass depClass) {
  switch (depClass) {
  case DependenceClass::Uniform:
    return "uniform";
  case DependenceClass::Affine:
    return "affine";
  case DependenceClass::NonUniform:
    return "non-uniform";
  }
  return "?";
}

} // namespace polyc::analysis
