// Processor allocation per schedule band: repeat loops and bands without a parallel dimension run in
// order; parallel bands map their coincident dimensions to the grid, as block reductions when their
// statements reduce over enough terms; hyperplane bands become fixed or flexible wavefronts, chosen by
// the cost model (CostModel.cpp), statically or, when the window is a run-time param, at run time.
#include "compiler/allocate/Allocation.h"

#include "compiler/allocate/CostModel.h"
#include "compiler/model/IslUtil.h"
#include "compiler/support/SourceError.h"

#include "llvm/ADT/StringExtras.h"

#include <isl/map.h>
#include <algorithm>
#include <isl/set.h>

namespace polyc::allocate {

using model::Model;
using model::Statement;
namespace iu = polyc::islutil;

const char *spelling(AllocationKind kind) {
  switch (kind) {
  case AllocationKind::Sequential:
    return "sequential";
  case AllocationKind::DataParallel:
    return "data-parallel";
  case AllocationKind::Reduction:
    return "reduction";
  case AllocationKind::FixedWavefront:
    return "fixed-wavefront";
  case AllocationKind::FlexibleWavefront:
    return "flexible-wavefront";
  }
  return "?";
}

namespace {

// A length or window: its value when known at compile time (a constant or fixed by --param),
// and its expression over the params.
struct Extent {
  std::optional<int64_t> value;
  std::string text;
};

class Allocator {
public:
  Allocator(const Model &model, const analysis::DependenceGraph &deps, const schedule::Schedule &schedule,
            const AllocationOptions &options)
      : model_(model), deps_(deps), schedule_(schedule), options_(options) {}
  Allocation run();

private:
  BandAllocation wavefront(unsigned index, const schedule::Band &band);
  BandAllocation parallel(unsigned index, const schedule::Band &band);
  std::optional<Extent> reductionLength(unsigned s);
  bool readsRowPerOutput(unsigned s) const;
  Extent meanRowLength(const Extent &all, const ast::ArrayDecl &row, const Statement &stmt);
  Extent outputCount(unsigned s, unsigned bandDims);
  Extent boxSize(const isl::set &set, unsigned first, const Statement &stmt);
  isl::set assumeLargeDomain(const Statement &stmt) const;

  const Model &model_;
  const analysis::DependenceGraph &deps_;
  const schedule::Schedule &schedule_;
  const AllocationOptions &options_;
};

} // namespace

// The params that bound a statement's domain (H, W) are assumed at least as large as the others
// (M): the window of a filter is then its own size, not clipped by a tiny image. Only the text of
// run-time conditions relies on this; values fixed by --param are exact.
isl::set Allocator::assumeLargeDomain(const Statement &stmt) const {
  isl::set context = model_.context;
  isl::space space = context.space();
  std::vector<bool> inDomain(model_.params.size());
  isl::set domain = stmt.domain.gist_params(model_.context);
  for (unsigned p = 0; p < model_.params.size(); ++p)
    inDomain[p] = isl_set_involves_dims(domain.get(), isl_dim_param, p, 1) == isl_bool_true;
  for (unsigned p = 0; p < model_.params.size(); ++p)
    for (unsigned q = 0; q < model_.params.size(); ++q)
      if (inDomain[p] && !inDomain[q]) {
        isl::aff big = space.param_aff_on_domain(model_.params[p]);
        isl::aff small = space.param_aff_on_domain(model_.params[q]);
        context = context.intersect(big.ge_set(small));
      }
  // Params fixed to a small domain contradict the assumption: then only the context holds.
  return context.is_empty() ? model_.context : context;
}

// The larger of two extents: a value when both are known, else a C expression that picks the larger at
// run time (two reductions of params-dependent lengths in one band: the longer decides the group size).
static Extent longer(const Extent &a, const Extent &b) {
  if (a.value && b.value)
    return *a.value >= *b.value ? a : b;
  if (a.value && *a.value <= 0)
    return b;
  if (b.value && *b.value <= 0)
    return a;
  if (a.text == b.text)
    return a;
  auto operand = [](const std::string &text) {
    return text.find(' ') == std::string::npos ? text : "(" + text + ")";
  };
  std::string x = operand(a.text), y = operand(b.text);
  return Extent{std::nullopt, "(" + x + " > " + y + " ? " + x + " : " + y + ")"};
}

static std::optional<Extent> extentOf(const isl::pw_aff &value, const isl::set &context, const isl::set &assumed) {
  Extent e;
  (void)context;
  e.value = iu::constantValue(value.gist_params(assumed).intersect_params(assumed));
  if (e.value)
    e.text = std::to_string(*e.value);
  else
    e.text = iu::pwAffToC(value, assumed);
  return e;
}

BandAllocation Allocator::wavefront(unsigned index, const schedule::Band &band) {
  BandAllocation result;
  result.band = index;
  const Statement &stmt = model_.statements[band.statements.front()];
  unsigned local = static_cast<unsigned>(stmt.dimNames.size()) - stmt.repeatDims;
  std::string hyper = band.dimNames[0] + " = " + band.hyperplaneExpr + ", " + band.hyperplaneCount + " hyperplanes";

  // The flexible allocation walks rows within a column and needs every dependence to come from the
  // same or an earlier row and column (a quarter-plane recurrence, seed 004).
  std::string notApplicable;
  std::optional<Extent> window;
  if (local != 2) {
    notApplicable = "the flexible allocation maps a 2D recurrence to rows and columns; this band has " +
                    std::to_string(local) + " dimensions";
  } else if (!iu::isBox(model_.context.is_null() ? stmt.domain : stmt.domain.intersect_params(model_.context))) {
    // Workers walk whole columns of a rectangle: the printers take its extents from the projections.
    notApplicable = "the domain is not a rectangle";
  } else {
    // A worker walks down a column row after row, so rows are the contiguous (last) dimension and
    // columns the other (the runtime's wavefront drivers are written for that mapping).
    unsigned column = stmt.repeatDims, row = stmt.repeatDims + 1;
    isl::set distances;
    for (const analysis::Dependence &dep : deps_.edges)
      if (dep.source == band.statements.front() && dep.target == dep.source)
        distances = distances.is_null() ? dep.distances : distances.unite(dep.distances);
    isl::multi_aff id = distances.space().identity_multi_aff_on_domain();
    isl::aff zero = distances.space().zero_aff_on_domain();
    if (!distances.intersect(id.at(static_cast<int>(row)).lt_set(zero)).is_empty() ||
        !distances.intersect(id.at(static_cast<int>(column)).lt_set(zero)).is_empty()) {
      notApplicable = "a dependence comes from a later row or column (not a quarter-plane recurrence)";
    } else {
      isl::pw_aff extent = iu::dimMax(distances, column).sub(iu::dimMin(distances, column)).add_constant(1);
      window = extentOf(extent, model_.context, assumeLargeDomain(stmt));
      WavefrontMapping mapping;
      mapping.rowDim = row;
      mapping.columnDim = column;
      mapping.window = window->text;
      result.wavefront = mapping;
    }
  }

  int64_t threshold = flexibleThreshold();
  std::string rule = threshold < 0 ? std::string("the flexible allocation never wins under the cost constants")
                                   : "flexible wins when m > " + std::to_string(threshold) + " (seed 004, eq. 12)";
  std::string costs;
  if (window) {
    costs = "window m = " + window->text + " along columns " + stmt.dimNames[result.wavefront->columnDim];
    if (window->value)
      costs += "; " + describeWavefrontCost(static_cast<double>(*window->value));
    costs += "; " + rule;
  }

  if (options_.choice == AllocationChoice::Fixed) {
    result.kind = AllocationKind::FixedWavefront;
    result.reason = "wavefront over " + hyper + "; fixed allocation forced by --allocation=fixed" +
                    (costs.empty() ? "" : "; " + costs);
    return result;
  }
  if (!notApplicable.empty()) {
    result.kind = AllocationKind::FixedWavefront;
    result.reason = "wavefront over " + hyper + "; fixed allocation: flexible is not applicable: " + notApplicable +
                    (options_.choice == AllocationChoice::Flexible ? " (--allocation=flexible ignored)" : "");
    return result;
  }
  if (options_.choice == AllocationChoice::Flexible) {
    result.kind = AllocationKind::FlexibleWavefront;
    result.reason = "wavefront over " + hyper + "; flexible allocation forced by --allocation=flexible; " + costs;
    return result;
  }
  if (window->value) {
    bool flexible = threshold >= 0 && *window->value > threshold;
    result.kind = flexible ? AllocationKind::FlexibleWavefront : AllocationKind::FixedWavefront;
    result.reason = "wavefront over " + hyper + "; " + costs + " -> " + (flexible ? "flexible" : "fixed");
    return result;
  }
  if (threshold < 0) {
    result.kind = AllocationKind::FixedWavefront;
    result.reason = "wavefront over " + hyper + "; " + costs + " -> fixed";
    return result;
  }
  result.kind = AllocationKind::FlexibleWavefront;
  result.otherwise = AllocationKind::FixedWavefront;
  result.runtimeCondition = window->text + " > " + std::to_string(threshold);
  result.reason = "wavefront over " + hyper + "; " + costs + " -> decided at run time: flexible if " +
                  result.runtimeCondition + ", fixed otherwise";
  return result;
}

// The number of points of `set`'s bounding box over its dimensions first.., as a value when the
// params fix it, else as text ("M * M", "(T - 1) * N").
Extent Allocator::boxSize(const isl::set &set, unsigned first, const Statement &stmt) {
  // An empty set (a reduction whose `where` excludes its whole range, as the IIR's feedback sum at
  // M = 1) has no extremes to subtract: its box is empty.
  if (set.intersect_params(model_.context).is_empty())
    return Extent{0, "0"};
  Extent size{1, ""};
  for (unsigned k = first; k < unsigned(set.tuple_dim()); ++k) {
    isl::pw_aff extent = iu::dimMax(set, k).sub(iu::dimMin(set, k)).add_constant(1);
    auto e = extentOf(extent, model_.context, assumeLargeDomain(stmt));
    if (size.value && e->value)
      size.value = *size.value * *e->value;
    else
      size.value.reset();
    std::string term = e->text.find(' ') != std::string::npos ? "(" + e->text + ")" : e->text;
    size.text += (k > first ? " * " : "") + term;
  }
  if (size.value)
    size.text = std::to_string(*size.value);
  return size;
}

// The outputs one run of a parallel band computes: the bounding box of the statement's innermost
// `bandDims` dimensions (the band's; outer bands and the repeat loop run it again and again).
Extent Allocator::outputCount(unsigned s, unsigned bandDims) {
  const Statement &stmt = model_.statements[s];
  isl::set domain = stmt.domain.intersect_params(model_.context);
  const unsigned dims = unsigned(domain.tuple_dim());
  return boxSize(domain, std::max(stmt.repeatDims, dims > bandDims ? dims - bandDims : 0u), stmt);
}

// The number of terms of a statement's longest reduction: the bounding box of its range. The box of the
// range's convex hull: a `where` condition can leave holes that make the range's extremes piecewise
// (k in 1..K where k != 2), which a run-time condition cannot print.
std::optional<Extent> Allocator::reductionLength(unsigned s) {
  const Statement &stmt = model_.statements[s];
  std::optional<Extent> longest;
  for (const model::ReductionInfo &red : stmt.reductions) {
    Extent length = boxSize(isl::set(red.range.range().polyhedral_hull()), 0, stmt);
    if (red.reduction) // null in models built by hand (unit tests)
      for (const ast::RangeBinding &binding : red.reduction->bindings)
        if (binding.rowArray)
          length = meanRowLength(length, *binding.rowArray, stmt);
    longest = longest ? longer(*longest, length) : length;
  }
  return longest;
}

// A row range's length is data: its mean, what the range may index (`all`) over the rows, the row array's
// extent (seed 001 sizes a neuron's group from its fan-in; E / (N + 1) for CSR's row[N + 1] over col[E]).
Extent Allocator::meanRowLength(const Extent &all, const ast::ArrayDecl &row, const Statement &stmt) {
  const model::ArrayInfo *info = model_.findArray(row.name);
  Extent rows = boxSize(info->extent, 0, stmt);
  Extent mean;
  if (all.value && rows.value)
    mean.value = *rows.value ? *all.value / *rows.value : 0;
  auto operand = [](const std::string &text) {
    return text.find(' ') == std::string::npos || text.front() == '(' ? text : "(" + text + ")";
  };
  mean.text = mean.value ? std::to_string(*mean.value) : operand(all.text) + " / " + operand(rows.text);
  return mean;
}

// Whether statement s reads a row per output along its reduction's terms (w[j, c] for output j, terms c):
// an index of the array other than the last at a constant distance from the statement's innermost
// dimension, and the last index walking with the terms. One thread per output then reads a row of its
// own, neighbouring threads a whole row apart; a group per output reads its row together, coalesced,
// however many outputs there are (the rate network at 80,000 neurons, docs/performance.md).
bool Allocator::readsRowPerOutput(unsigned s) const {
  const Statement &stmt = model_.statements[s];
  const unsigned dims = unsigned(stmt.domain.tuple_dim());
  if (dims == 0)
    return false;
  for (const model::Access &read : stmt.reads) {
    isl::map access = read.relation.intersect_domain(stmt.domain).intersect_params(model_.context);
    const unsigned indices = iu::tupleDims(access.range().space());
    if (indices < 2 || iu::projectOutOutputs(access, 0, indices - 1).is_single_valued())
      continue;
    for (unsigned d = 0; d + 1 < indices; ++d) {
      auto distance = iu::indexDistances(access, dims - 1, d, model_.context);
      if (distance && distance->first == distance->second)
        return true;
    }
  }
  return false;
}

BandAllocation Allocator::parallel(unsigned index, const schedule::Band &band) {
  BandAllocation result;
  result.band = index;
  std::string parallelDims, sequentialDims;
  for (unsigned m = 0; m < band.coincident.size(); ++m)
    (band.coincident[m] ? parallelDims : sequentialDims) += (band.coincident[m] ? (parallelDims.empty() ? "" : ", ")
                                                                               : (sequentialDims.empty() ? "" : ", ")) +
                                                          band.dimNames[m];
  if (parallelDims.empty()) {
    result.kind = AllocationKind::Sequential;
    result.reason = "every dimension (" + sequentialDims + ") carries a dependence: run in order";
    return result;
  }
  std::string where = "parallel over " + parallelDims + (sequentialDims.empty() ? "" : ", in order over " + sequentialDims);

  // Reductions of the statements whose innermost band this is become pattern-parallel.
  std::optional<Extent> length, outputs;
  bool rowPerOutput = false;
  for (unsigned s : band.statements) {
    bool innermost = true;
    for (unsigned later = index + 1; later < schedule_.bands.size(); ++later)
      for (unsigned t : schedule_.bands[later].statements)
        innermost &= t != s;
    if (!innermost)
      continue;
    auto l = reductionLength(s);
    if (!l)
      continue;
    Extent count = outputCount(s, unsigned(band.coincident.size()));
    length = length ? longer(*length, *l) : *l;
    outputs = outputs ? longer(*outputs, count) : count;
    rowPerOutput |= readsRowPerOutput(s);
  }
  result.kind = AllocationKind::DataParallel;
  if (!length) {
    result.reason = where + ": one thread per point";
    return result;
  }
  const CostConstants &c = costConstants();
  std::string rule = "threads per output: the next power of two of the length, clamped to [" +
                     std::to_string(c.minReductionGroup) + ", " + std::to_string(c.maxReductionGroup) +
                     "], one thread per output below " + std::to_string(c.minReductionGroup) + " (seed 001)";
  // The number of outputs limits the groups unless each output reads a row of its own.
  const bool outputsLimitGroups = !rowPerOutput;
  rule += outputsLimitGroups ? "; groups only below " + std::to_string(c.groupOutputsLimit) + " outputs"
                             : "; groups for any number of outputs, each reading a row of its own along the terms";
  result.reductionLength = length->text;
  result.reductionOutputs = outputs->text;
  const std::string terms = where + "; reductions of " + length->text + " terms over " + outputs->text + " outputs: ";
  bool manyOutputs = outputsLimitGroups && outputs->value && *outputs->value >= c.groupOutputsLimit;
  if (manyOutputs || (length->value && reductionGroupSize(*length->value) == 0)) {
    result.reason = terms + "one thread per output (" + rule + ")";
    return result;
  }
  if (length->value && (outputs->value || !outputsLimitGroups)) {
    int64_t group = reductionGroupSize(*length->value);
    result.kind = AllocationKind::Reduction;
    result.reductionGroupSize = group;
    result.reason = terms + std::to_string(group) + " threads per output (" + rule + ")";
    return result;
  }
  result.kind = AllocationKind::Reduction;
  result.otherwise = AllocationKind::DataParallel;
  std::vector<std::string> conditions;
  if (!length->value)
    conditions.push_back(length->text + " >= " + std::to_string(c.minReductionGroup));
  if (!outputs->value && outputsLimitGroups)
    conditions.push_back(outputs->text + " < " + std::to_string(c.groupOutputsLimit));
  result.runtimeCondition = llvm::join(conditions, " && ");
  result.reason = terms + "group size chosen at run time (" + rule + ")";
  return result;
}

Allocation Allocator::run() {
  Allocation allocation;
  for (unsigned b = 0; b < schedule_.bands.size(); ++b) {
    const schedule::Band &band = schedule_.bands[b];
    if (band.isSequentialRepeat) {
      BandAllocation a;
      a.band = b;
      a.kind = AllocationKind::Sequential;
      a.reason = "repeat loop over " + band.dimNames.front() + ": iterations run in order";
      allocation.bands.push_back(std::move(a));
    } else if (!band.hyperplane.empty() && band.coincident.size() > 1) {
      allocation.bands.push_back(wavefront(b, band));
    } else {
      allocation.bands.push_back(parallel(b, band));
    }
  }
  return allocation;
}

llvm::Expected<Allocation> allocate(const Model &model, const analysis::DependenceGraph &deps,
                                    const schedule::Schedule &schedule, const AllocationOptions &options) {
  try {
    Allocator allocator(model, deps, schedule, options);
    return allocator.run();
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in allocation (isl): ") + e.what());
  }
}

} // namespace polyc::allocate
