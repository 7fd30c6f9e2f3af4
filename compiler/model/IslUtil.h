// Small helpers over isl's C++ bindings for the middle end (model, analysis, schedule, allocate): the few
// operations the bindings lack, wrapped once around the C API, and readable printing of affine
// expressions ("H + W - 1") for polyc explain and the generated code's comments.
#pragma once

#include <isl/cpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace polyc::islutil {

// A set space `Name[d0, ..., dn-1]` over the parameters of `params`, with named dimensions.
isl::space namedSetSpace(const isl::space &params, const std::string &name,
                         const std::vector<std::string> &dims);
// An unnamed set space with n dimensions over the parameters of `params`.
isl::space anonymousSetSpace(const isl::space &params, unsigned n);
// The map space domain -> range (both set spaces with the same parameters).
isl::space mapSpace(const isl::space &domain, const isl::space &range);
std::string dimName(const isl::set &set, unsigned pos);
// The number of dimensions of a set space (the output dimensions of a map space).
unsigned tupleDims(const isl::space &space);
// { x -> y : x in domain, y in range }.
isl::map crossProduct(const isl::set &domain, const isl::set &range);

isl::set projectOutDims(const isl::set &set, unsigned first, unsigned n);
// The same set or map without tuple names, to compare or combine ones of different statements or arrays.
isl::set anonymousSet(const isl::set &set);
isl::map anonymousMap(const isl::map &map);
isl::map projectOutInputs(const isl::map &map, unsigned first, unsigned n);
isl::map projectOutOutputs(const isl::map &map, unsigned first, unsigned n);
// { [x -> y] -> y } for a map x -> y.
isl::map rangeMap(const isl::map &map);
// Appends n output dimensions fixed to zero.
isl::map padOutputs(const isl::map &map, unsigned n);

// { x -> y : x >=lex y } and { x -> y : x <lex y } on a set space.
isl::map lexGe(const isl::space &setSpace);
isl::map lexLt(const isl::space &setSpace);

bool isBounded(const isl::set &set);
// Whether the set is the product of its projections on each dimension (a rectangle, a box): no bound of
// one dimension depends on another.
bool isBox(const isl::set &set);
// The maximum / minimum of dimension pos as a function of the parameters.
isl::pw_aff dimMax(const isl::set &set, unsigned pos);
isl::pw_aff dimMin(const isl::set &set, unsigned pos);
// The number of points of a bounded parameter-free set (nullopt if unbounded or too many to count).
std::optional<int64_t> countPoints(const isl::set &set);

// Schedule trees built bottom up.
isl::schedule sequence(const isl::schedule &first, const isl::schedule &second);
isl::schedule insertBand(const isl::schedule &schedule, const isl::multi_union_pw_aff &partial,
                         const std::vector<bool> &coincident, bool permutable);

// A schedule tree in isl's block YAML notation (one node per line), or on one line.
std::string scheduleToString(const isl::schedule &schedule, bool block);

// The value of a pw_aff when it is the same integer constant everywhere.
std::optional<int64_t> constantValue(const isl::pw_aff &value);
// An affine expression as C-like text over the names of its parameters and dimensions: "H + W - 1".
std::string affToString(const isl::aff &aff);
// A piecewise affine expression of the params as a C expression over their names (for the generated
// code's run-time tests and polyc explain): the single piece after gisting with `context` ("H + W - 1"),
// else conditionals that select the piece ("D >= 2 ? 2 : D").
std::string pwAffToC(const isl::pw_aff &value, const isl::set &context);
// The coefficients of the dimensions and the constant of an integral affine expression.
struct AffCoefficients {
  std::vector<int64_t> dims;
  std::vector<int64_t> params;
  int64_t constant = 0;
  bool integral = true; // false when the expression has a denominator or local (div) terms
};
AffCoefficients coefficients(const isl::aff &aff);

// The distances a[arrayDim] - x[statementDim] over the pairs of `access` (S[x] -> A[a]) in `context`,
// when they are constants: [least, greatest] ([0, 0] when the access is empty).
std::optional<std::pair<int64_t, int64_t>> indexDistances(const isl::map &access, unsigned statementDim,
                                                          unsigned arrayDim, const isl::set &context);

// Parameter values fixed by a context set ({ : M = 3 }), by parameter position.
std::vector<std::optional<int64_t>> fixedParams(const isl::set &context);

} // namespace polyc::islutil
