// Which statements of a fusion group are computed as one package (see Packages.h).
#include "compiler/codegen/Packages.h"

#include "llvm/Support/Casting.h"

#include <set>
#include <type_traits>
#include <variant>

namespace polyc::codegen {

using llvm::cast;
using ast::holdsReduction;

namespace {

// Whether `a` and `b` have the same shape, reads of different arrays at the same indices allowed.
bool sameShape(const ast::Expr &a, const ast::Expr &b) {
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case ast::Expr::Kind::IntLit:
    return cast<ast::IntLit>(a).value == cast<ast::IntLit>(b).value;
  case ast::Expr::Kind::FloatLit:
    return cast<ast::FloatLit>(a).value == cast<ast::FloatLit>(b).value;
  case ast::Expr::Kind::VarRef: {
    auto &x = cast<ast::VarRef>(a), &y = cast<ast::VarRef>(b);
    if (x.binding.index() != y.binding.index())
      return false;
    if (auto *u = std::get_if<ast::IndexVarRef>(&x.binding))
      return u->var->name == std::get<ast::IndexVarRef>(y.binding).var->name;
    if (auto *u = std::get_if<ast::FuncArgRef>(&x.binding))
      return u->func == std::get<ast::FuncArgRef>(y.binding).func &&
             u->position == std::get<ast::FuncArgRef>(y.binding).position;
    auto pointer = [](const ast::Binding &b) -> const void * {
      return std::visit(
          [](auto &&alt) -> const void * {
            if constexpr (std::is_pointer_v<std::decay_t<decltype(alt)>>)
              return alt;
            return nullptr;
          },
          b);
    };
    return pointer(x.binding) == pointer(y.binding);
  }
  case ast::Expr::Kind::ArrayRead: {
    auto &x = cast<ast::ArrayRead>(a), &y = cast<ast::ArrayRead>(b);
    if (x.indices.size() != y.indices.size() || x.isGather != y.isGather || x.sampled != y.sampled)
      return false;
    for (size_t k = 0; k < x.indices.size(); ++k)
      if (!sameShape(*x.indices[k], *y.indices[k]))
        return false;
    return true;
  }
  case ast::Expr::Kind::Unary:
    return cast<ast::Unary>(a).op == cast<ast::Unary>(b).op &&
           sameShape(*cast<ast::Unary>(a).operand, *cast<ast::Unary>(b).operand);
  case ast::Expr::Kind::Binary: {
    auto &x = cast<ast::Binary>(a), &y = cast<ast::Binary>(b);
    return x.op == y.op && sameShape(*x.lhs, *y.lhs) && sameShape(*x.rhs, *y.rhs);
  }
  case ast::Expr::Kind::Call: {
    auto &x = cast<ast::Call>(a), &y = cast<ast::Call>(b);
    if (x.callee != y.callee || x.args.size() != y.args.size())
      return false;
    for (size_t k = 0; k < x.args.size(); ++k)
      if (!sameShape(*x.args[k], *y.args[k]))
        return false;
    return true;
  }
  case ast::Expr::Kind::Reduction: {
    auto &x = cast<ast::Reduction>(a), &y = cast<ast::Reduction>(b);
    if (x.op != y.op || x.where || y.where || x.bindings.size() != y.bindings.size())
      return false;
    for (size_t k = 0; k < x.bindings.size(); ++k) {
      const ast::RangeBinding &p = x.bindings[k], &q = y.bindings[k];
      if (p.vars.size() != q.vars.size() || !sameShape(*p.lo, *q.lo) || !sameShape(*p.hi, *q.hi))
        return false;
      for (size_t v = 0; v < p.vars.size(); ++v)
        if (p.vars[v]->name != q.vars[v]->name)
          return false;
    }
    return sameShape(*x.body, *y.body);
  }
  case ast::Expr::Kind::Tuple: {
    auto &x = cast<ast::Tuple>(a), &y = cast<ast::Tuple>(b);
    if (x.elements.size() != y.elements.size())
      return false;
    for (size_t k = 0; k < x.elements.size(); ++k)
      if (!sameShape(*x.elements[k], *y.elements[k]))
        return false;
    return true;
  }
  }
  return false;
}

// Whether every sum of `e` sits under what the package printer combines: +, -, *, negation, a sum's body.
bool combinable(const ast::Expr &e) {
  if (!holdsReduction(e))
    return true;
  switch (e.kind()) {
  case ast::Expr::Kind::Reduction:
    return combinable(*cast<ast::Reduction>(e).body);
  case ast::Expr::Kind::Unary:
    return cast<ast::Unary>(e).op == ast::UnaryOp::Neg && combinable(*cast<ast::Unary>(e).operand);
  case ast::Expr::Kind::Binary: {
    auto &b = cast<ast::Binary>(e);
    bool arithmetic = b.op == ast::BinaryOp::Add || b.op == ast::BinaryOp::Sub || b.op == ast::BinaryOp::Mul;
    return arithmetic && combinable(*b.lhs) && combinable(*b.rhs);
  }
  default:
    return false;
  }
}

bool candidate(const model::Statement &s) {
  const ast::Equation *eq = s.equation;
  if (!eq || eq->op != ast::AssignOp::Assign || eq->where || !holdsReduction(*eq->rhs) ||
      !combinable(*eq->rhs))
    return false;
  for (auto &var : eq->indexVars)
    if (!var)
      return false;
  return eq->indexVars.size() == eq->lhsIndices.size();
}

std::set<std::string> arraysRead(const model::Statement &s) {
  std::set<std::string> names;
  for (const model::Access &read : s.reads)
    names.insert(read.array);
  return names;
}

bool joins(const model::Model &model, const Package &package, unsigned next) {
  const model::Statement &head = model.statements[package.statements.front()];
  const model::Statement &s = model.statements[next];
  if (!candidate(s) || s.dimNames != head.dimNames ||
      s.equation->array->elemType != head.equation->array->elemType ||
      !sameShape(*head.equation->rhs, *s.equation->rhs))
    return false;
  std::set<std::string> written{s.write.array}, read = arraysRead(s);
  for (unsigned m : package.statements) {
    written.insert(model.statements[m].write.array);
    std::set<std::string> more = arraysRead(model.statements[m]);
    read.insert(more.begin(), more.end());
  }
  for (const std::string &name : written)
    if (read.count(name))
      return false;
  return true;
}

} // namespace

std::vector<Package> findPackages(const model::Model &model, const schedule::Schedule &schedule) {
  std::vector<Package> packages;
  for (const schedule::FusionGroup &group : schedule.fusionGroups) {
    Package current;
    auto close = [&] {
      if (current.statements.size() >= 2)
        packages.push_back(current);
      current.statements.clear();
    };
    for (unsigned s : group.statements) {
      if (!current.statements.empty() && joins(model, current, s)) {
        current.statements.push_back(s);
        continue;
      }
      close();
      if (candidate(model.statements[s]))
        current.statements.push_back(s);
    }
    close();
  }
  return packages;
}

} // namespace polyc::codegen
