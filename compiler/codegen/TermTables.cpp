// Which window sums suit a term table (see TermTables.h): a structural walk of the reduction's AST.
#include "compiler/codegen/TermTables.h"

#include "compiler/codegen/IndexExprs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

using namespace polyc;

static void collectOuterReductions(const ast::Expr &expr, std::vector<const ast::Reduction *> &out) {
  if (auto *red = llvm::dyn_cast<ast::Reduction>(&expr)) {
    out.push_back(red);
    return;
  }
  auto visit = [&](const ast::ExprPtr &child) {
    if (child)
      collectOuterReductions(*child, out);
  };
  if (auto *u = llvm::dyn_cast<ast::Unary>(&expr))
    visit(u->operand);
  else if (auto *b = llvm::dyn_cast<ast::Binary>(&expr)) {
    visit(b->lhs);
    visit(b->rhs);
  } else if (auto *c = llvm::dyn_cast<ast::Call>(&expr))
    for (const ast::ExprPtr &arg : c->args)
      visit(arg);
  else if (auto *r = llvm::dyn_cast<ast::ArrayRead>(&expr))
    for (const ast::ExprPtr &index : r->indices)
      visit(index);
  else if (auto *t = llvm::dyn_cast<ast::Tuple>(&expr))
    for (const ast::ExprPtr &element : t->elements)
      visit(element);
}

std::vector<const ast::Reduction *> polyc::codegen::outerReductions(const ast::Expr &expr) {
  std::vector<const ast::Reduction *> out;
  collectOuterReductions(expr, out);
  return out;
}

// Whether `expr` has the same value at every point of the statement.
static bool isPointInvariant(const ast::Expr &expr, const std::vector<const ast::IndexVar *> &pointVars,
                             const std::set<std::string> &staged) {
  auto invariant = [&](const ast::ExprPtr &e) { return isPointInvariant(*e, pointVars, staged); };
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
    return true;
  case ast::Expr::Kind::VarRef: {
    // A scalar array's value lives in global memory; params, constants and index variables do not.
    auto &ref = llvm::cast<ast::VarRef>(expr);
    return !std::holds_alternative<const ast::ArrayDecl *>(ref.binding) &&
           !std::holds_alternative<ast::FuncArgRef>(ref.binding) && !codegen::mentionsAny(expr, pointVars);
  }
  case ast::Expr::Kind::ArrayRead: {
    auto &read = llvm::cast<ast::ArrayRead>(expr);
    return staged.count(read.name) && llvm::all_of(read.indices, invariant);
  }
  case ast::Expr::Kind::Unary:
    return invariant(llvm::cast<ast::Unary>(expr).operand);
  case ast::Expr::Kind::Binary: {
    auto &b = llvm::cast<ast::Binary>(expr);
    return invariant(b.lhs) && invariant(b.rhs);
  }
  case ast::Expr::Kind::Call: {
    auto &call = llvm::cast<ast::Call>(expr);
    return call.builtin && llvm::all_of(call.args, invariant);
  }
  case ast::Expr::Kind::Tuple: // in a comparison: (k1, k2) != (0, 0)
    return llvm::all_of(llvm::cast<ast::Tuple>(expr).elements, invariant);
  case ast::Expr::Kind::Reduction:
    return false;
  }
  return false;
}

static void collectFactors(const ast::Expr &expr, std::vector<const ast::Expr *> &factors) {
  if (auto *b = llvm::dyn_cast<ast::Binary>(&expr); b && b->op == ast::BinaryOp::Mul) {
    collectFactors(*b->lhs, factors);
    collectFactors(*b->rhs, factors);
    return;
  }
  factors.push_back(&expr);
}

std::optional<std::string> polyc::codegen::termTableWindow(const ast::Reduction &red,
                                                           const std::vector<const ast::IndexVar *> &pointVars,
                                                           const std::set<std::string> &windowed,
                                                           const std::set<std::string> &staged) {
  if (red.op != ast::ReductionOp::Sum || !red.body)
    return std::nullopt;
  // Bounds that mention the point or the reduction's own variables (a triangle) are not one table.
  std::vector<const ast::IndexVar *> boundVars = pointVars;
  for (const ast::RangeBinding &binding : red.bindings)
    for (const auto &var : binding.vars)
      boundVars.push_back(var.get());
  for (const ast::RangeBinding &binding : red.bindings)
    if (mentionsAny(*binding.lo, boundVars) || mentionsAny(*binding.hi, boundVars))
      return std::nullopt;
  if (red.where && !isPointInvariant(*red.where, pointVars, staged))
    return std::nullopt;
  std::vector<const ast::Expr *> factors;
  collectFactors(*red.body, factors);
  std::optional<std::string> window;
  for (const ast::Expr *factor : factors) {
    auto *read = llvm::dyn_cast<ast::ArrayRead>(factor);
    if (read && windowed.count(read->name)) {
      if (window)
        return std::nullopt; // two window reads per term: not a coefficient times a cell
      window = read->name;
    } else if (!isPointInvariant(*factor, pointVars, staged)) {
      return std::nullopt;
    }
  }
  return window;
}
