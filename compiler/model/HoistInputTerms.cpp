// Hoists the input-only leading terms of a recurrence's right-hand side into an equation of their own
// (see HoistInputTerms.h): a rewrite of the checked AST before buildModel, so that every later stage sees
// a plain data-parallel statement ahead of a smaller recurrence and needs no special case for it.
#include "compiler/model/HoistInputTerms.h"

#include "compiler/model/AstRewrite.h"

#include "llvm/Support/Casting.h"

#include <functional>
#include <set>
#include <string>

namespace polyc::model {

using llvm::cast;
using llvm::dyn_cast;
using namespace ast;

// Calls `fn` on `e` and every expression below it, reduction bounds and conditions included.
void walk(Expr &e, const std::function<void(Expr &)> &fn) {
  fn(e);
  switch (e.kind()) {
  case Expr::Kind::IntLit:
  case Expr::Kind::FloatLit:
  case Expr::Kind::VarRef:
    break;
  case Expr::Kind::ArrayRead:
    for (ExprPtr &index : cast<ArrayRead>(e).indices)
      walk(*index, fn);
    break;
  case Expr::Kind::Unary:
    walk(*cast<Unary>(e).operand, fn);
    break;
  case Expr::Kind::Binary:
    walk(*cast<Binary>(e).lhs, fn);
    walk(*cast<Binary>(e).rhs, fn);
    break;
  case Expr::Kind::Call:
    for (ExprPtr &arg : cast<Call>(e).args)
      walk(*arg, fn);
    break;
  case Expr::Kind::Reduction: {
    auto &red = cast<Reduction>(e);
    for (RangeBinding &binding : red.bindings) {
      walk(*binding.lo, fn);
      walk(*binding.hi, fn);
    }
    if (red.where)
      walk(*red.where, fn);
    walk(*red.body, fn);
    break;
  }
  case Expr::Kind::Tuple:
    for (ExprPtr &element : cast<Tuple>(e).elements)
      walk(*element, fn);
    break;
  }
}

// The array an expression node reads, if it reads one (an indexed read or a scalar array's name).
static const ArrayDecl *arrayReadBy(const Expr &e) {
  if (auto *read = dyn_cast<ArrayRead>(&e))
    return read->array;
  if (auto *ref = dyn_cast<VarRef>(&e))
    if (auto *array = std::get_if<const ArrayDecl *>(&ref->binding))
      return *array;
  return nullptr;
}

static bool readsAny(Expr &e, const std::set<const ArrayDecl *> &arrays) {
  bool found = false;
  walk(e, [&](Expr &node) {
    if (const ArrayDecl *a = arrayReadBy(node); a && arrays.count(a))
      found = true;
  });
  return found;
}

// A copy of a shape extent (affine in params and integer constants, so literals, names and arithmetic
// only); null for anything else, and the equation is then left alone.
ExprPtr cloneExtent(const Expr &e) {
  switch (e.kind()) {
  case Expr::Kind::IntLit:
    return std::make_unique<IntLit>(cast<IntLit>(e).value, e.range);
  case Expr::Kind::VarRef: {
    auto &ref = cast<VarRef>(e);
    auto copy = std::make_unique<VarRef>(ref.name, ref.range);
    copy->binding = ref.binding;
    return copy;
  }
  case Expr::Kind::Unary: {
    auto &u = cast<Unary>(e);
    ExprPtr operand = cloneExtent(*u.operand);
    return operand ? std::make_unique<Unary>(u.op, std::move(operand), u.range) : nullptr;
  }
  case Expr::Kind::Binary: {
    auto &b = cast<Binary>(e);
    ExprPtr lhs = cloneExtent(*b.lhs), rhs = cloneExtent(*b.rhs);
    return lhs && rhs ? std::make_unique<Binary>(b.op, std::move(lhs), std::move(rhs), b.range) : nullptr;
  }
  default:
    return nullptr;
  }
}

// Every name the program declares or binds, so that the new array's name clashes with none of them.
std::set<std::string> namesInUse(Program &program) {
  std::set<std::string> names;
  for (auto &p : program.params)
    names.insert(p->name);
  for (auto &c : program.consts)
    names.insert(c->name);
  for (auto &f : program.funcs) {
    names.insert(f->name);
    names.insert(f->params.begin(), f->params.end());
  }
  for (auto &a : program.arrays)
    names.insert(a->name);
  auto addEquation = [&](Equation &eq) {
    for (auto &var : eq.indexVars)
      if (var)
        names.insert(var->name);
    walk(*eq.rhs, [&](Expr &node) {
      if (auto *red = dyn_cast<Reduction>(&node))
        for (RangeBinding &binding : red->bindings)
          for (auto &var : binding.vars)
            names.insert(var->name);
    });
  };
  for (auto &eq : program.equations)
    addEquation(*eq);
  for (auto &block : program.repeats) {
    names.insert(block->var->name);
    for (auto &eq : block->body)
      addEquation(*eq);
  }
  return names;
}

std::string freshName(const std::string &base, std::set<std::string> &names) {
  std::string name = base;
  for (unsigned n = 2; names.count(name); ++n)
    name = base + std::to_string(n);
  names.insert(name);
  return name;
}

// The hoist of one equation, when it applies (see HoistInputTerms.h); returns whether it did.
static bool hoistEquation(Program &program, Equation &eq, const std::set<const ArrayDecl *> &defined,
                          std::set<std::string> &names) {
  const ArrayDecl *y = eq.array;
  // The flexible wavefront's condition too: Y over its whole shape, one index variable per position.
  if (!y || eq.op != AssignOp::Assign || eq.where || eq.enclosingRepeat || y->rank() == 0 ||
      eq.indexVars.size() != y->rank())
    return false;
  for (auto &var : eq.indexVars)
    if (!var)
      return false;

  // The chain ((t1 + t2) + t3) ...: spine[0] is the root, spine.back() is (t1 + t2).
  std::vector<Binary *> spine;
  Expr *leftmost = eq.rhs.get();
  while (auto *b = dyn_cast<Binary>(leftmost)) {
    if (b->op != BinaryOp::Add)
      break;
    spine.push_back(b);
    leftmost = b->lhs.get();
  }
  if (spine.empty())
    return false;
  std::vector<Expr *> terms{leftmost};
  for (auto it = spine.rbegin(); it != spine.rend(); ++it)
    terms.push_back((*it)->rhs.get());

  size_t k = 0;
  while (k < terms.size() && !readsAny(*terms[k], defined))
    ++k;
  if (k == 0 || k == terms.size())
    return false;
  bool reduction = false, recurrent = false;
  for (size_t t = 0; t < k; ++t)
    reduction |= holdsReduction(*terms[t]);
  for (size_t t = k; t < terms.size(); ++t)
    recurrent |= readsAny(*terms[t], {y});
  if (!reduction || !recurrent)
    return false;

  std::vector<ExprPtr> shape;
  for (const ExprPtr &extent : y->shape) {
    shape.push_back(cloneExtent(*extent));
    if (!shape.back())
      return false;
  }

  // The operand that holds t1 + ... + tk: the left side of the spine node k levels up from t1.
  ExprPtr &slot = spine[spine.size() - k]->lhs;
  llvm::SMRange termsRange = slot->range;

  auto decl = std::make_unique<ArrayDecl>();
  decl->name = freshName(y->name + "_in", names);
  decl->kind = ArrayKind::Local;
  decl->elemType = y->elemType;
  decl->shape = std::move(shape);
  // Only its own points are ever read, so the rule never applies; Y's keeps the two alike anyway.
  decl->boundary = y->effectiveBoundary;
  decl->effectiveBoundary = y->effectiveBoundary;
  decl->range = termsRange;

  auto added = std::make_unique<Equation>();
  added->target = decl->name;
  added->array = decl.get();
  added->op = AssignOp::Assign;
  added->range = termsRange;
  added->lhsRange = termsRange;
  for (auto &var : eq.indexVars) {
    added->indexVars.push_back(std::make_unique<IndexVar>(IndexVar{var->name, var->range}));
    auto ref = std::make_unique<VarRef>(var->name, var->range);
    ref->binding = IndexVarRef{added->indexVars.back().get()};
    added->lhsIndices.push_back(std::move(ref));
  }
  added->rhs = std::move(slot);
  // The moved terms now belong to the new equation: their index variables become its own.
  walk(*added->rhs, [&](Expr &node) {
    auto *ref = dyn_cast<VarRef>(&node);
    auto *var = ref ? std::get_if<IndexVarRef>(&ref->binding) : nullptr;
    if (!var)
      return;
    for (size_t d = 0; d < eq.indexVars.size(); ++d)
      if (var->var == eq.indexVars[d].get())
        ref->binding = IndexVarRef{added->indexVars[d].get()};
  });

  std::vector<ExprPtr> indices;
  for (auto &var : eq.indexVars) {
    auto ref = std::make_unique<VarRef>(var->name, termsRange);
    ref->binding = IndexVarRef{var.get()};
    indices.push_back(std::move(ref));
  }
  auto read = std::make_unique<ArrayRead>(decl->name, std::move(indices), termsRange);
  read->array = decl.get();
  read->isGather.assign(y->rank(), false);
  slot = std::move(read);

  added->hoistedFrom = &eq;
  eq.hoistedInto = added.get();
  // Appended, so the existing equations keep their statement names; dependences order it first.
  program.statements.push_back(added.get());
  program.equations.push_back(std::move(added));
  program.arrays.push_back(std::move(decl));
  return true;
}

unsigned hoistInputTerms(Program &program) {
  std::set<const ArrayDecl *> defined;
  for (auto &eq : program.equations)
    defined.insert(eq->array);
  for (auto &block : program.repeats)
    for (auto &eq : block->body)
      defined.insert(eq->array);
  std::set<std::string> names = namesInUse(program);
  unsigned split = 0;
  // Only the program's own equations: the added ones read inputs only and never qualify.
  size_t count = program.equations.size();
  for (size_t e = 0; e < count; ++e)
    split += hoistEquation(program, *program.equations[e], defined, names);
  return split;
}

} // namespace polyc::model
