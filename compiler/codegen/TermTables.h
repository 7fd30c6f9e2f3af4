// Which window sums the GPU targets compute in a form of their own, the AST tests behind the code
// generators' choices, kept apart from the printing:
//   - a flexible wavefront's sums from term tables (a list of (coefficient, offset) pairs built once per
//     block or work-group: polyc::rt::cuda::Term on CUDA, polyc_term_* on OpenCL);
//   - a data-parallel statement's sums that slide along a point dimension, computed for several points
//     of that dimension at once (polyc::rt::cuda::SlidingSum on CUDA);
//   - a recurrence over a full box window of its own array, which the CUDA flexible wavefront's decoupled
//     step computes.
#pragma once

#include "dsl/AST.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace polyc::codegen {

// The reductions of `expr` that are not inside another reduction, in the order they are printed.
std::vector<const ast::Reduction *> outerReductions(const ast::Expr &expr);

// If `red` can be computed from a table of (coefficient, offset) pairs built once, the name of the
// windowed array its terms read: a sum over independent ranges whose bounds and `where` condition are
// the same at every point, with a body that is one read of a windowed array times factors that are
// the same at every point (literals, params, constants, reduction variables, builtins, and reads of
// `staged` arrays at such indices). `pointVars` are the statement's index variables.
std::optional<std::string> termTableWindow(const ast::Reduction &red,
                                           const std::vector<const ast::IndexVar *> &pointVars,
                                           const std::set<std::string> &windowed, const std::set<std::string> &staged);

// A sum whose terms read an array at p - s along one of its dimensions, for a point variable p and a
// variable s of the sum: for consecutive points along p, the cell that term s reads for point p + 1 is
// the one that term s - 1 read for point p.
struct SlidingWindow {
  const ast::ArrayRead *read = nullptr;    // the one read of the windowed array in the sum's body
  const ast::IndexVar *variable = nullptr; // s
};

// Whether `red` slides along `along` (one of `pointVars`): a sum whose terms are one read of an array
// times factors that are the same at every point (as for termTableWindow, with `invariant` the arrays
// that do not change while the statement runs, read at such indices); the read's index along one
// dimension is `along` - s + (terms without `along` or s), and `along` and s occur in no other index or
// factor. The sum's bounds and `where` condition must be the same at every point.
std::optional<SlidingWindow> slidingWindow(const ast::Reduction &red,
                                           const std::vector<const ast::IndexVar *> &pointVars,
                                           const ast::IndexVar *along, const std::set<std::string> &invariant,
                                           const ast::Program &program);

// A 2D recurrence over a full box window (the decoupled step of the CUDA flexible wavefront,
// runtime/include/polyc/cuda/DecoupledWindow.cuh):
//   Y[i, j] = E + sum(k1, k2 in 0..X where (k1, k2) != (0, 0)) C[k1, k2] * Y[i - k1, j - k2]
struct BoxRecurrence {
  const ast::Reduction *sum = nullptr;          // the sum
  const ast::Expr *pointPart = nullptr;         // E, the other operand of the top-level +
  const ast::ArrayRead *coefficients = nullptr; // C[k1, k2]
  const ast::Expr *extent = nullptr;            // X, the upper bound (exclusive) of both ranges
};

// Whether `rhs`, the right-hand side of an equation that writes array `target` at `pointVars` = {i, j}
// (i indexes its dimension 0, j its dimension 1), is exactly that form: C one of the `staged` arrays, X
// the same at every point and in both ranges, and E not reading `target` (the step reads Y through the
// window only). Any other form, however close, is not one.
std::optional<BoxRecurrence> boxRecurrence(const ast::Expr &rhs, const std::string &target,
                                           const std::vector<const ast::IndexVar *> &pointVars,
                                           const std::set<std::string> &staged);

} // namespace polyc::codegen
