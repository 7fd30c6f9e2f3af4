// Which window sums suit a term table or slide along a point dimension (see TermTables.h): structural
// walks of the reduction's AST.
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

// Bounds that mention the point or the reduction's own variables (a triangle) are not one table, nor one
// run of a sliding sum.
static bool hasPointInvariantBox(const ast::Reduction &red,
                                 const std::vector<const ast::IndexVar *> &pointVars) {
  std::vector<const ast::IndexVar *> boundVars = pointVars;
  for (const ast::RangeBinding &binding : red.bindings)
    for (const auto &var : binding.vars)
      boundVars.push_back(var.get());
  return llvm::none_of(red.bindings, [&](const ast::RangeBinding &binding) {
    return codegen::mentionsAny(*binding.lo, boundVars) || codegen::mentionsAny(*binding.hi, boundVars);
  });
}

std::optional<std::string> polyc::codegen::termTableWindow(const ast::Reduction &red,
                                                           const std::vector<const ast::IndexVar *> &pointVars,
                                                           const std::set<std::string> &windowed,
                                                           const std::set<std::string> &staged) {
  if (red.op != ast::ReductionOp::Sum || !red.body)
    return std::nullopt;
  if (!hasPointInvariantBox(red, pointVars))
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

// Whether `expr` reads `array` anywhere.
static bool readsArray(const ast::Expr &expr, const std::string &array) {
  auto reads = [&](const ast::ExprPtr &e) { return e && readsArray(*e, array); };
  if (auto *read = llvm::dyn_cast<ast::ArrayRead>(&expr))
    return read->name == array || llvm::any_of(read->indices, reads);
  if (auto *u = llvm::dyn_cast<ast::Unary>(&expr))
    return reads(u->operand);
  if (auto *b = llvm::dyn_cast<ast::Binary>(&expr))
    return reads(b->lhs) || reads(b->rhs);
  if (auto *c = llvm::dyn_cast<ast::Call>(&expr))
    return llvm::any_of(c->args, reads);
  if (auto *t = llvm::dyn_cast<ast::Tuple>(&expr))
    return llvm::any_of(t->elements, reads);
  if (auto *r = llvm::dyn_cast<ast::Reduction>(&expr))
    return reads(r->body) || reads(r->where);
  return false;
}

// The variable of `red` that `index` subtracts from `along` (coefficients 1 and -1), if any.
static const ast::IndexVar *subtractedVariable(const ast::Expr &index, const ast::Reduction &red,
                                               const ast::IndexVar *along, const ast::Program &program) {
  if (codegen::coefficientOf(index, along, program) != 1)
    return nullptr;
  for (const ast::RangeBinding &binding : red.bindings)
    for (const auto &var : binding.vars)
      if (codegen::coefficientOf(index, var.get(), program) == -1)
        return var.get();
  return nullptr;
}

std::optional<polyc::codegen::SlidingWindow>
polyc::codegen::slidingWindow(const ast::Reduction &red, const std::vector<const ast::IndexVar *> &pointVars,
                              const ast::IndexVar *along, const std::set<std::string> &invariant,
                              const ast::Program &program) {
  if (red.op != ast::ReductionOp::Sum || !red.body || !hasPointInvariantBox(red, pointVars))
    return std::nullopt;
  if (red.where && !isPointInvariant(*red.where, pointVars, invariant))
    return std::nullopt;
  std::vector<const ast::Expr *> factors;
  collectFactors(*red.body, factors);
  std::optional<SlidingWindow> window;
  for (const ast::Expr *factor : factors) {
    if (isPointInvariant(*factor, pointVars, invariant))
      continue;
    auto *read = llvm::dyn_cast<ast::ArrayRead>(factor);
    if (!read || window)
      return std::nullopt; // not a coefficient times one cell
    for (const ast::ExprPtr &index : read->indices) {
      if (!mentionsAny(*index, {along}))
        continue;
      const ast::IndexVar *s = subtractedVariable(*index, red, along, program);
      if (!s || window)
        return std::nullopt; // `along` in two indices, or not as along - s
      window = SlidingWindow{read, s};
    }
    if (!window)
      return std::nullopt;
  }
  if (!window)
    return std::nullopt;
  // s moves the cell along one dimension only, and the coefficients do not read the window's array
  // (the printer reads that array's cell once a step, and the coefficient with the cell taken as 1).
  unsigned uses = 0;
  for (const ast::ExprPtr &index : window->read->indices)
    uses += mentionsAny(*index, {window->variable});
  if (uses != 1)
    return std::nullopt;
  for (const ast::Expr *factor : factors)
    if (factor != window->read && readsArray(*factor, window->read->name))
      return std::nullopt;
  return window;
}
