// Affine forms of Sema-resolved expressions: shapes, indices, ranges and conditions are integer linear
// combinations of params and index variables plus a constant, with integer constants folded in, and
// (quasi-affine) of floor divisions of such combinations by positive integer constants (`y / 2`;
// `i % 2` is `i - 2 * floor(i / 2)`). Sema uses this to check affinity; later stages use it to build
// isl objects and to evaluate indices.
#pragma once

#include "dsl/AST.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <string>

namespace polyc::dsl {

struct FloorDiv;

struct AffineExpr {
  llvm::SmallVector<std::pair<const ast::ParamDecl *, int64_t>, 4> params; // nonzero coefficients
  llvm::SmallVector<std::pair<const ast::IndexVar *, int64_t>, 4> vars;    // nonzero coefficients
  llvm::SmallVector<std::pair<std::shared_ptr<const FloorDiv>, int64_t>, 1> divs; // nonzero coefficients
  int64_t constant = 0;

  bool isConstant() const { return params.empty() && vars.empty() && divs.empty(); }
  // Whether it is affine in the strict sense: no floor division of a non-constant.
  bool isStrictlyAffine() const { return divs.empty(); }
  int64_t coefficient(const ast::IndexVar *var) const;
  int64_t coefficient(const ast::ParamDecl *param) const;
};

// floor(numerator / denominator), with a denominator of at least 2 and a numerator that is not constant.
struct FloorDiv {
  AffineExpr numerator;
  int64_t denominator = 2;
};

// floor(a / b) and the remainder a - b * floor(a / b) (never negative), for b > 0: index arithmetic as
// isl defines it.
int64_t floorDiv(int64_t a, int64_t b);
int64_t floorMod(int64_t a, int64_t b);

// Why an expression is not affine. An empty message means the cause was already diagnosed
// (an integer const whose evaluation failed).
struct AffineError {
  llvm::SMRange range;
  std::string message;
};

// The affine form of `e`, which Sema has resolved, or nullopt with the reason in `*error`.
// `what` names the position for messages ("index", "shape extent", "range bound").
std::optional<AffineExpr> toAffine(const ast::Expr &e, const char *what, AffineError *error = nullptr);

// A shape extent's form: an affine expression of params and integer constants, or its floor division by
// a positive constant, `(H + 1) / 2` (numerator H + 1, divisor 2); nullopt for any other form.
struct ExtentForm {
  AffineExpr numerator;
  int64_t divisor = 1;
};
std::optional<ExtentForm> extentForm(const AffineExpr &extent);

// Literals and integer constants joined by + - * / % (the front end's integer constant expressions).
bool isIntegerConstant(const ast::Expr &e);

// The divisor of `a / d` or `a % d` when it is a positive integer constant: such a division is a floor
// division wherever it computes an index or an integer comparison.
std::optional<int64_t> positiveDivisor(const ast::Binary &b);

// An expression whose value is an exact integer in any type: literals, params, integer constants, index
// variables, i32 reads, + - * of those, and their floor divisions by positive integer constants (i / 2,
// i % 2). A comparison of two of them compares integers, whatever the equation's type (docs/language.md);
// `polyc run` and the code generators agree on it through this one definition.
bool isIntegerExpr(const ast::Expr &e);

} // namespace polyc::dsl
