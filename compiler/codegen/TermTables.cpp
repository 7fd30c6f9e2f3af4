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

// Whether `expr` is a reference to index variable `var`. Sema bound each reference to its variable, so
// the pointer says which one it is, whatever its name.
static bool refersTo(const ast::Expr *expr, const ast::IndexVar *var) {
  auto *ref = llvm::dyn_cast_or_null<ast::VarRef>(expr);
  auto *bound = ref ? std::get_if<ast::IndexVarRef>(&ref->binding) : nullptr;
  return bound && bound->var == var;
}

// Whether `expr` is the integer literal 0.
static bool isZero(const ast::Expr *expr) {
  auto *lit = llvm::dyn_cast_or_null<ast::IntLit>(expr);
  return lit && lit->value == 0;
}

// Whether `a` and `b` are written the same way. Reduction bounds are affine (Sema checks), so literals,
// names and arithmetic are enough; anything else counts as different.
static bool sameExpr(const ast::Expr *a, const ast::Expr *b) {
  if (!a || !b || a->kind() != b->kind())
    return false;
  if (auto *x = llvm::dyn_cast<ast::IntLit>(a))
    return x->value == llvm::cast<ast::IntLit>(b)->value;
  if (auto *x = llvm::dyn_cast<ast::FloatLit>(a))
    return x->value == llvm::cast<ast::FloatLit>(b)->value;
  if (auto *x = llvm::dyn_cast<ast::VarRef>(a)) {
    // The same name with the same kind of binding is the same param or const; index variables compare
    // by pointer, as a nested scope may bind a name again.
    auto *y = llvm::cast<ast::VarRef>(b);
    if (x->name != y->name || x->binding.index() != y->binding.index())
      return false;
    auto *v = std::get_if<ast::IndexVarRef>(&x->binding);
    return !v || v->var == std::get<ast::IndexVarRef>(y->binding).var;
  }
  if (auto *x = llvm::dyn_cast<ast::Unary>(a)) {
    auto *y = llvm::cast<ast::Unary>(b);
    return x->op == y->op && sameExpr(x->operand.get(), y->operand.get());
  }
  if (auto *x = llvm::dyn_cast<ast::Binary>(a)) {
    auto *y = llvm::cast<ast::Binary>(b);
    return x->op == y->op && sameExpr(x->lhs.get(), y->lhs.get()) && sameExpr(x->rhs.get(), y->rhs.get());
  }
  return false;
}

// Whether `where` is (k1, k2) != (0, 0), either side first: the sum skips only the point itself.
static bool skipsOnlyThePoint(const ast::Expr *where, const ast::IndexVar *k1, const ast::IndexVar *k2) {
  auto *ne = llvm::dyn_cast_or_null<ast::Binary>(where);
  if (!ne || ne->op != ast::BinaryOp::Ne)
    return false;
  auto isVars = [&](const ast::Expr *e) {
    auto *t = llvm::dyn_cast_or_null<ast::Tuple>(e);
    return t && t->elements.size() == 2 && refersTo(t->elements[0].get(), k1) &&
           refersTo(t->elements[1].get(), k2);
  };
  auto isOrigin = [](const ast::Expr *e) {
    auto *t = llvm::dyn_cast_or_null<ast::Tuple>(e);
    return t && t->elements.size() == 2 && isZero(t->elements[0].get()) && isZero(t->elements[1].get());
  };
  const ast::Expr *l = ne->lhs.get(), *r = ne->rhs.get();
  return (isVars(l) && isOrigin(r)) || (isOrigin(l) && isVars(r));
}

// `expr` if it is a read with two indices, neither a gather.
static const ast::ArrayRead *plainRead2(const ast::Expr *expr) {
  auto *read = llvm::dyn_cast_or_null<ast::ArrayRead>(expr);
  return read && read->indices.size() == 2 && !llvm::is_contained(read->isGather, true) ? read : nullptr;
}

// Whether `expr` is exactly p - k.
static bool isDifference(const ast::Expr *expr, const ast::IndexVar *p, const ast::IndexVar *k) {
  auto *sub = llvm::dyn_cast_or_null<ast::Binary>(expr);
  return sub && sub->op == ast::BinaryOp::Sub && refersTo(sub->lhs.get(), p) && refersTo(sub->rhs.get(), k);
}

// The box recurrence whose sum is `red`, if it is one; `pointPart` is E.
static std::optional<codegen::BoxRecurrence> boxSum(const ast::Reduction &red, const ast::Expr &pointPart,
                                                    const std::string &target, const ast::IndexVar *i,
                                                    const ast::IndexVar *j,
                                                    const std::set<std::string> &staged) {
  if (red.op != ast::ReductionOp::Sum || red.bindings.empty())
    return std::nullopt;
  // Two variables from 0 to the same extent, in one binding or two; the extent is the same at every
  // point and for every term.
  std::vector<const ast::IndexVar *> vars;
  for (const ast::RangeBinding &binding : red.bindings) {
    if (!isZero(binding.lo.get()) || !sameExpr(binding.hi.get(), red.bindings.front().hi.get()))
      return std::nullopt;
    for (const auto &var : binding.vars)
      vars.push_back(var.get());
  }
  if (vars.size() != 2)
    return std::nullopt;
  const ast::IndexVar *k1 = vars[0], *k2 = vars[1];
  const ast::Expr &extent = *red.bindings.front().hi;
  if (codegen::mentionsAny(extent, {i, j, k1, k2}))
    return std::nullopt;
  // Without the condition the (0, 0) term would read the point being computed.
  if (!skipsOnlyThePoint(red.where.get(), k1, k2))
    return std::nullopt;
  auto *product = llvm::dyn_cast_or_null<ast::Binary>(red.body.get());
  if (!product || product->op != ast::BinaryOp::Mul)
    return std::nullopt;
  // C[k1, k2] and Y[i - k1, j - k2], either first.
  auto coefficients = [&](const ast::Expr *e) -> const ast::ArrayRead * {
    auto *read = plainRead2(e);
    bool ok = read && staged.count(read->name) && refersTo(read->indices[0].get(), k1) &&
              refersTo(read->indices[1].get(), k2);
    return ok ? read : nullptr;
  };
  auto window = [&](const ast::Expr *e) {
    auto *read = plainRead2(e);
    return read && read->name == target && isDifference(read->indices[0].get(), i, k1) &&
           isDifference(read->indices[1].get(), j, k2);
  };
  const ast::Expr *l = product->lhs.get(), *r = product->rhs.get();
  const ast::ArrayRead *c = window(r) ? coefficients(l) : window(l) ? coefficients(r) : nullptr;
  if (!c)
    return std::nullopt;
  return codegen::BoxRecurrence{&red, &pointPart, c, &extent};
}

std::optional<polyc::codegen::BoxRecurrence>
polyc::codegen::boxRecurrence(const ast::Expr &rhs, const std::string &target,
                              const std::vector<const ast::IndexVar *> &pointVars,
                              const std::set<std::string> &staged) {
  if (pointVars.size() != 2 || !pointVars[0] || !pointVars[1] || pointVars[0] == pointVars[1])
    return std::nullopt;
  auto *add = llvm::dyn_cast<ast::Binary>(&rhs);
  if (!add || add->op != ast::BinaryOp::Add || !add->lhs || !add->rhs)
    return std::nullopt;
  // The sum may come first or second. E must not read `target`, in a second sum over Y or otherwise:
  // the step reads Y through the window only.
  const ast::Expr *l = add->lhs.get(), *r = add->rhs.get();
  for (auto [sum, pointPart] : {std::pair(r, l), std::pair(l, r)}) {
    auto *red = llvm::dyn_cast<ast::Reduction>(sum);
    if (!red || readsArray(*pointPart, target))
      continue;
    if (auto box = boxSum(*red, *pointPart, target, pointVars[0], pointVars[1], staged))
      return box;
  }
  return std::nullopt;
}
