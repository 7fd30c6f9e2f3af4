// Streamed arrays (see Streaming.h). The step of an instance is its first schedule dimension; an access is
// streamable when its first index minus the step is a bounded constant range, measured by isl over every
// instance and every value of the params.
#include "compiler/schedule/Streaming.h"

#include "compiler/model/IslUtil.h"
#include "compiler/support/SourceError.h"

#include <isl/map.h>
#include <isl/set.h>
#include <isl/space.h>

#include <variant>

namespace polyc::schedule {

namespace iu = polyc::islutil;

namespace {

// The sets of a union with one shape (every statement's steps, every write's elements) as one set.
isl::set anonymousUnion(const isl::union_set &sets) {
  std::optional<isl::set> all;
  sets.foreach_set(
      [&](isl::set set) { all = all ? all->unite(iu::anonymousSet(set)) : iu::anonymousSet(set); });
  return all ? *all : isl::manage(isl_set_empty(isl_space_set_alloc(sets.ctx().get(), 0, 1)));
}

// The statements' steps: S[x] -> [t], the first dimension of the flat schedule.
isl::union_map stepsOf(const Schedule &schedule) {
  isl::union_map steps = isl::union_map::empty(schedule.scheduleMap.ctx());
  schedule.scheduleMap.foreach_map([&](isl::map time) {
    steps = steps.unite(iu::projectOutOutputs(time, 1, unsigned(time.range_tuple_dim()) - 1));
  });
  return steps;
}

// { [first index - step] } over the instances of `access`: [0, 0] for a write at the step, [-lag, 0] for
// reads of the last lag + 1 slices.
isl::set offsets(const isl::union_map &steps, const isl::map &access) {
  isl::union_map stepToIndex = isl::union_map(access).apply_domain(steps); // [t] -> A[a]; empty: no instance
  isl::union_set all = isl::union_set::empty(access.ctx());
  stepToIndex.foreach_map([&](isl::map map) {
    unsigned rank = unsigned(map.range_tuple_dim());
    all = all.unite(isl::union_set(iu::anonymousMap(iu::projectOutOutputs(map, 1, rank - 1)).deltas()));
  });
  return anonymousUnion(all);
}

struct Range {
  int64_t low = 0, high = 0;
};

// The constant range of `values` (a one-dimensional set) over every value of the params; nullopt when it
// is not bounded by constants. An empty set is [0, 0].
std::optional<Range> constantRange(const isl::set &values) {
  isl::set all = values.project_out_all_params();
  if (all.is_empty())
    return Range{};
  if (!iu::isBounded(all))
    return std::nullopt;
  std::optional<int64_t> low = iu::constantValue(iu::dimMin(all, 0)),
                         high = iu::constantValue(iu::dimMax(all, 0));
  if (!low || !high)
    return std::nullopt;
  return Range{*low, *high};
}

// Whether the steps run exactly over the first dimension's indices 0 .. extent - 1: the slice of step t is
// slice t of the file, for every value of the params.
bool stepsCoverFirstDimension(const isl::set &stepSet, const model::ArrayInfo &array) {
  unsigned rank = unsigned(array.extent.tuple_dim());
  isl::set first = iu::anonymousSet(iu::projectOutDims(array.extent, 1, rank - 1));
  return stepSet.is_subset(first) && first.is_subset(stepSet);
}

class Planner {
public:
  Planner(const model::Model &model, const Schedule &schedule)
      : model_(model), steps_(stepsOf(schedule)), stepSet_(anonymousUnion(steps_.range())) {}

  // The array's ring, or the reason it stays whole.
  std::variant<StreamedArray, std::string> plan(const model::ArrayInfo &array) const {
    bool input = array.decl->kind == ast::ArrayKind::Input;
    if (array.decl->rank() == 0)
      return std::string("a scalar");
    if (!stepsCoverFirstDimension(stepSet_, array))
      return std::string("its first dimension is not the steps' range");
    StreamedArray streamed;
    streamed.array = array.name;
    streamed.isInput = input;
    isl::union_map writes = isl::union_map::empty(model_.ctx);
    for (const model::Statement &stmt : model_.statements) {
      if (stmt.write.array == array.name && stmt.scatter)
        return stmt.name + " scatters into it";
      if (stmt.write.array == array.name) {
        std::optional<Range> at = constantRange(offsets(steps_, stmt.write.relation));
        if (!at || at->low != 0 || at->high != 0)
          return stmt.name + " writes it at other steps than the one of its first index";
        writes = writes.unite(isl::union_map(stmt.write.relation));
      }
      for (const model::Access &read : stmt.reads) {
        if (read.array != array.name)
          continue;
        std::optional<Range> at = constantRange(offsets(steps_, read.relation));
        if (!at || at->high > 0)
          return stmt.name + " reads slices of later steps" + (at ? "" : " or slices at no fixed distance");
        streamed.lag = std::max(streamed.lag, -at->low);
      }
    }
    // A slot is reused every `slots` steps: a slice written in part would show an older step's values.
    if (!input && !anonymousUnion(writes.range()).is_equal(iu::anonymousSet(array.extent)))
      return std::string("its statements do not write every element");
    streamed.slots = streamed.lag + 2;
    return streamed;
  }

private:
  const model::Model &model_;
  isl::union_map steps_;
  isl::set stepSet_;
};

// The band of the outer loop, when it is a sequential band over every statement at the top of the tree.
std::optional<std::string> outerLoopProblem(const model::Model &model, const Schedule &schedule) {
  isl::schedule_node top = schedule.tree.root();
  if (top.n_children() != 1 || !top.child(0).isa<isl::schedule_node_band>() || schedule.bands.empty())
    return "the schedule's outermost node is not a loop over every statement";
  const Band &outer = schedule.bands.front();
  if (outer.statements.size() != model.statements.size())
    return "the outer loop does not run every statement";
  if (outer.coincident.empty() || outer.coincident.front())
    return "the outer loop's steps are independent (it is parallel), so there is no order to stream in";
  return std::nullopt;
}

} // namespace

llvm::Expected<Streaming> planStreaming(const model::Model &model, const Schedule &schedule) {
  if (std::optional<std::string> problem = outerLoopProblem(model, schedule))
    return makeError("--stream: " + *problem +
                     "; streaming needs a sequential outer loop (frames, time steps)");
  Streaming streaming;
  streaming.stepName = schedule.bands.front().dimNames.front();
  Planner planner(model, schedule);
  bool anyInput = false;
  for (const model::ArrayInfo &array : model.arrays) {
    if (!array.decl ||
        (array.decl->kind != ast::ArrayKind::Input && array.decl->kind != ast::ArrayKind::Output))
      continue;
    std::variant<StreamedArray, std::string> planned = planner.plan(array);
    if (auto *reason = std::get_if<std::string>(&planned)) {
      streaming.wholeArrays.push_back(array.name + ": " + *reason);
      continue;
    }
    anyInput = anyInput || std::get<StreamedArray>(planned).isInput;
    streaming.arrays.push_back(std::get<StreamedArray>(std::move(planned)));
  }
  if (!anyInput) {
    std::string why;
    for (const std::string &whole : streaming.wholeArrays)
      why += (why.empty() ? "" : "; ") + whole;
    return makeError("--stream: no input is read one slice per step of the outer loop '" +
                     streaming.stepName + "' (" + (why.empty() ? "the program has no input" : why) + ")");
  }
  return streaming;
}

void applyStreaming(Schedule &schedule, Streaming streaming) {
  for (const StreamedArray &array : streaming.arrays) {
    FoldedStorage fold;
    fold.array = array.array;
    fold.dim = 0;
    fold.window = std::to_string(array.slots);
    fold.windowValue = array.slots;
    schedule.folded.push_back(std::move(fold));
  }
  schedule.bands.front().tileSizes.clear(); // a tile would run several steps before their slices moved
  schedule.streaming = std::move(streaming);
}

} // namespace polyc::schedule
