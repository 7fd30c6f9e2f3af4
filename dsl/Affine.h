// Affine forms of Sema-resolved expressions: shapes, indices, ranges and conditions are integer linear
// combinations of params and index variables plus a constant, with integer constants folded in.
// Sema uses this to check affinity; later stages (compiler/model) use it to build isl objects.
#pragma once

#include "dsl/AST.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace polyc::dsl {

struct AffineExpr {
  llvm::SmallVector<std::pair<const ast::ParamDecl *, int64_t>, 4> params; // nonzero coefficients
  llvm::SmallVector<std::pair<const ast::IndexVar *, int64_t>, 4> vars;    // nonzero coefficients
  int64_t constant = 0;

  bool isConstant() const { return params.empty() && vars.empty(); }
  int64_t coefficient(const ast::IndexVar *var) const;
  int64_t coefficient(const ast::ParamDecl *param) const;
};

// Why an expression is not affine. An empty message means the cause was already diagnosed
// (an integer const whose evaluation failed).
struct AffineError {
  llvm::SMRange range;
  std::string message;
};

// The affine form of `e`, which Sema has resolved, or nullopt with the reason in `*error`.
// `what` names the position for messages ("index", "shape extent", "range bound").
std::optional<AffineExpr> toAffine(const ast::Expr &e, const char *what, AffineError *error = nullptr);

} // namespace polyc::dsl
