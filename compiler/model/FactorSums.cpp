// Factoring of separable sums (see FactorSums.h).
#include "compiler/model/FactorSums.h"

#include "compiler/model/AstRewrite.h"

#include "llvm/Support/Casting.h"

#include <set>
#include <string>
#include <vector>

namespace polyc::model {

using llvm::cast;
using llvm::dyn_cast;
using namespace ast;

namespace {

using VarSet = std::set<const IndexVar *>;

// The variables of `of` that `e` reads.
VarSet varsRead(Expr &e, const VarSet &of) {
  VarSet found;
  walk(e, [&](Expr &node) {
    if (auto *ref = dyn_cast<VarRef>(&node))
      if (auto *var = std::get_if<IndexVarRef>(&ref->binding); var && of.count(var->var))
        found.insert(var->var);
  });
  return found;
}

// The operands of a chain of `*`, left to right.
void collectFactors(Expr &e, std::vector<Expr *> &factors) {
  if (auto *b = dyn_cast<Binary>(&e); b && b->op == BinaryOp::Mul) {
    collectFactors(*b->lhs, factors);
    collectFactors(*b->rhs, factors);
    return;
  }
  factors.push_back(&e);
}

void takeFactors(ExprPtr e, std::vector<ExprPtr> &factors) {
  if (auto *b = dyn_cast<Binary>(e.get()); b && b->op == BinaryOp::Mul) {
    takeFactors(std::move(b->lhs), factors);
    takeFactors(std::move(b->rhs), factors);
    return;
  }
  factors.push_back(std::move(e));
}

ExprPtr productOf(std::vector<ExprPtr> factors, llvm::SMRange range) {
  ExprPtr result = std::move(factors.front());
  for (size_t f = 1; f < factors.size(); ++f)
    result = std::make_unique<Binary>(BinaryOp::Mul, std::move(result), std::move(factors[f]), range);
  return result;
}

// One sum of the nest: its variables, the factors (indices into the body's chain) that read only them,
// and, innermost, the factors that read several of the sum's variables.
struct Level {
  std::vector<const IndexVar *> vars;
  std::vector<size_t> factors;
  std::vector<size_t> joint;
};

// The nest for a sum over `vars` (in binding order) of the product of factors reading `reads`: outermost
// first. Fewer than two levels when nothing splits.
std::vector<Level> planLevels(std::vector<const IndexVar *> vars, const std::vector<VarSet> &reads) {
  std::vector<Level> levels;
  std::vector<bool> placed(reads.size(), false);
  for (bool split = true; split && !vars.empty();) {
    split = false;
    for (size_t v = 0; v < vars.size() && !split; ++v) {
      Level level{{vars[v]}, {}, {}};
      for (size_t f = 0; f < reads.size(); ++f)
        if (!placed[f] && reads[f] == VarSet{vars[v]})
          level.factors.push_back(f);
      if (level.factors.empty())
        continue;
      if (levels.empty()) { // factors that read none of the variables: once, outermost
        std::vector<size_t> constant;
        for (size_t f = 0; f < reads.size(); ++f)
          if (reads[f].empty())
            constant.push_back(f);
        level.factors.insert(level.factors.begin(), constant.begin(), constant.end());
      }
      for (size_t f : level.factors)
        placed[f] = true;
      levels.push_back(std::move(level));
      vars.erase(vars.begin() + v);
      split = true;
    }
  }
  if (levels.empty())
    return levels;
  // The factors that read several variables, innermost: over the variables left, or in the last level.
  Level inner{vars, {}, {}};
  for (size_t f = 0; f < reads.size(); ++f)
    if (!placed[f])
      inner.joint.push_back(f);
  if (inner.vars.empty()) {
    levels.back().joint = std::move(inner.joint);
  } else {
    if (inner.joint.empty()) // a sum of 1 over the rest: rare, and not worth a literal of the right type
      return {};
    levels.push_back(std::move(inner));
  }
  return levels;
}

std::string planText(const std::vector<Level> &levels) {
  std::string text;
  for (size_t l = 0; l < levels.size(); ++l) {
    std::string names;
    for (size_t v = 0; v < levels[l].vars.size(); ++v)
      names += (v ? ", " : "") + levels[l].vars[v]->name;
    text += (l ? ", then " : "") + (levels[l].vars.size() > 1 ? "(" + names + ")" : names);
  }
  return text;
}

// Rewrites the sum in `slot` when it splits; returns the note for the equation, or "".
std::string factorSum(ExprPtr &slot) {
  auto *red = dyn_cast<Reduction>(slot.get());
  if (!red || red->op != ReductionOp::Sum || red->where)
    return "";
  std::vector<const IndexVar *> vars;
  for (RangeBinding &binding : red->bindings)
    for (auto &var : binding.vars)
      vars.push_back(var.get());
  VarSet all(vars.begin(), vars.end());
  if (vars.size() < 2)
    return "";
  for (RangeBinding &binding : red->bindings)
    if (!varsRead(*binding.lo, all).empty() || !varsRead(*binding.hi, all).empty())
      return "";
  std::vector<Expr *> chain;
  collectFactors(*red->body, chain);
  std::vector<VarSet> reads;
  for (Expr *factor : chain)
    reads.push_back(varsRead(*factor, all));
  std::vector<Level> levels = planLevels(vars, reads);
  if (levels.size() < 2)
    return "";

  // Each variable keeps its IndexVar (every read of it stays bound) and gets a copy of its bounds.
  struct Bounds {
    std::unique_ptr<IndexVar> *var;
    const Expr *lo, *hi;
  };
  std::vector<Bounds> bounds;
  for (RangeBinding &binding : red->bindings)
    for (auto &var : binding.vars)
      bounds.push_back({&var, binding.lo.get(), binding.hi.get()});
  auto bindingOf = [&](const IndexVar *var) {
    for (Bounds &b : bounds)
      if (b.var->get() == var) {
        RangeBinding binding;
        binding.vars.push_back(std::move(*b.var));
        binding.lo = cloneExtent(*b.lo);
        binding.hi = cloneExtent(*b.hi);
        return binding;
      }
    return RangeBinding{};
  };
  for (Bounds &b : bounds)
    if (!cloneExtent(*b.lo) || !cloneExtent(*b.hi))
      return "";

  std::string note = "sum factored: " + planText(levels);
  std::vector<ExprPtr> factors;
  takeFactors(std::move(red->body), factors);
  llvm::SMRange range = red->range;
  ExprPtr nest;
  for (size_t l = levels.size(); l-- > 0;) {
    std::vector<ExprPtr> operands, joint;
    for (size_t f : levels[l].factors)
      operands.push_back(std::move(factors[f]));
    // Kept together as one operand, so that PointTerms can compute their product once per point.
    for (size_t f : levels[l].joint)
      joint.push_back(std::move(factors[f]));
    if (!joint.empty())
      operands.push_back(productOf(std::move(joint), range));
    if (nest)
      operands.push_back(std::move(nest));
    auto sum = std::make_unique<Reduction>(ReductionOp::Sum, range);
    for (const IndexVar *var : levels[l].vars)
      sum->bindings.push_back(bindingOf(var));
    sum->body = productOf(std::move(operands), range);
    nest = std::move(sum);
  }
  slot = std::move(nest);
  return note;
}

// Factors the sums below `slot`, innermost first.
unsigned factorBelow(ExprPtr &slot, Equation &eq) {
  unsigned count = 0;
  switch (slot->kind()) {
  case Expr::Kind::ArrayRead:
    for (ExprPtr &index : cast<ArrayRead>(*slot).indices)
      count += factorBelow(index, eq);
    break;
  case Expr::Kind::Unary:
    count += factorBelow(cast<Unary>(*slot).operand, eq);
    break;
  case Expr::Kind::Binary:
    count += factorBelow(cast<Binary>(*slot).lhs, eq);
    count += factorBelow(cast<Binary>(*slot).rhs, eq);
    break;
  case Expr::Kind::Call:
    for (ExprPtr &arg : cast<Call>(*slot).args)
      count += factorBelow(arg, eq);
    break;
  case Expr::Kind::Reduction:
    count += factorBelow(cast<Reduction>(*slot).body, eq);
    break;
  default:
    break;
  }
  std::string note = factorSum(slot);
  if (note.empty())
    return count;
  eq.rewrites.push_back(note);
  return count + 1;
}

} // namespace

unsigned factorSeparableSums(Program &program) {
  unsigned count = 0;
  for (auto &eq : program.equations)
    count += factorBelow(eq->rhs, *eq);
  for (auto &block : program.repeats)
    for (auto &eq : block->body)
      count += factorBelow(eq->rhs, *eq);
  return count;
}

} // namespace polyc::model
