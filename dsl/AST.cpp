// Spellings of the AST's enumerations and the Program's lookups.
#include "dsl/AST.h"

#include <algorithm>

using namespace polyc::ast;

const char *polyc::ast::spelling(ElemType t) {
  switch (t) {
  case ElemType::F32: return "f32";
  case ElemType::F64: return "f64";
  case ElemType::I32: return "i32";
  }
  return "?";
}

const char *polyc::ast::spelling(Boundary b) {
  switch (b) {
  case Boundary::Zero: return "zero";
  case Boundary::Clamp: return "clamp";
  case Boundary::Mirror: return "mirror";
  }
  return "?";
}

const char *polyc::ast::spelling(ArrayKind k) {
  switch (k) {
  case ArrayKind::Input: return "input";
  case ArrayKind::Output: return "output";
  case ArrayKind::InOut: return "inout";
  case ArrayKind::Local: return "local";
  }
  return "?";
}

const char *polyc::ast::spelling(AssignOp op) {
  switch (op) {
  case AssignOp::Assign: return "=";
  case AssignOp::AddAssign: return "+=";
  case AssignOp::SubAssign: return "-=";
  }
  return "?";
}

const char *polyc::ast::spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Not: return "!";
  }
  return "?";
}

const char *polyc::ast::spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  }
  return "?";
}

const char *polyc::ast::spelling(ReductionOp op) {
  switch (op) {
  case ReductionOp::Sum: return "sum";
  case ReductionOp::Max: return "max";
  case ReductionOp::Min: return "min";
  }
  return "?";
}

const char *polyc::ast::spelling(Builtin b) {
  switch (b) {
  case Builtin::Exp: return "exp";
  case Builtin::Log: return "log";
  case Builtin::Sqrt: return "sqrt";
  case Builtin::Abs: return "abs";
  case Builtin::Tanh: return "tanh";
  case Builtin::Min: return "min";
  case Builtin::Max: return "max";
  case Builtin::Pow: return "pow";
  case Builtin::Select: return "select";
  }
  return "?";
}

const ArrayDecl *Program::findArray(const std::string &name) const {
  for (const auto &a : arrays)
    if (a->name == name)
      return a.get();
  return nullptr;
}

const ParamDecl *Program::findParam(const std::string &name) const {
  for (const auto &p : params)
    if (p->name == name)
      return p.get();
  return nullptr;
}

void polyc::ast::forEachChild(const Expr &e, const std::function<void(const Expr &)> &visit) {
  switch (e.kind()) {
  case Expr::Kind::ArrayRead:
    for (const ExprPtr &index : llvm::cast<ArrayRead>(e).indices)
      visit(*index);
    return;
  case Expr::Kind::Unary:
    return visit(*llvm::cast<Unary>(e).operand);
  case Expr::Kind::Binary:
    visit(*llvm::cast<Binary>(e).lhs);
    return visit(*llvm::cast<Binary>(e).rhs);
  case Expr::Kind::Call:
    for (const ExprPtr &arg : llvm::cast<Call>(e).args)
      visit(*arg);
    return;
  case Expr::Kind::Reduction: {
    const auto &red = llvm::cast<Reduction>(e);
    for (const RangeBinding &binding : red.bindings) {
      visit(*binding.lo);
      visit(*binding.hi);
    }
    if (red.where)
      visit(*red.where);
    return visit(*red.body);
  }
  case Expr::Kind::Tuple:
    for (const ExprPtr &element : llvm::cast<Tuple>(e).elements)
      visit(*element);
    return;
  default:
    return;
  }
}

bool polyc::ast::holdsReduction(const Expr &e) {
  if (e.kind() == Expr::Kind::Reduction)
    return true;
  bool holds = false;
  forEachChild(e, [&](const Expr &child) { holds = holds || holdsReduction(child); });
  return holds;
}

std::vector<polyc::ast::RowArrayUse> polyc::ast::rowArrays(const Program &program) {
  std::vector<RowArrayUse> uses;
  std::function<void(const Expr &)> visit = [&](const Expr &e) {
    if (const auto *red = llvm::dyn_cast<Reduction>(&e))
      for (const RangeBinding &binding : red->bindings) {
        if (!binding.rowArray)
          continue;
        auto use = std::find_if(uses.begin(), uses.end(),
                                [&](const RowArrayUse &u) { return u.row == binding.rowArray; });
        if (use == uses.end())
          use = uses.insert(uses.end(), RowArrayUse{binding.rowArray, {}});
        use->targets.insert(use->targets.end(), binding.rowTargets.begin(), binding.rowTargets.end());
      }
    forEachChild(e, visit);
  };
  for (const auto &eq : program.equations)
    visit(*eq->rhs);
  for (const auto &block : program.repeats)
    for (const auto &eq : block->body)
      visit(*eq->rhs);
  return uses;
}

bool polyc::ast::mentionsAny(const Expr &expr, const std::vector<const IndexVar *> &vars) {
  if (auto *ref = llvm::dyn_cast<VarRef>(&expr)) {
    if (auto *v = std::get_if<IndexVarRef>(&ref->binding))
      return std::find(vars.begin(), vars.end(), v->var) != vars.end();
    return false;
  }
  if (auto *u = llvm::dyn_cast<Unary>(&expr))
    return mentionsAny(*u->operand, vars);
  if (auto *b = llvm::dyn_cast<Binary>(&expr))
    return mentionsAny(*b->lhs, vars) || mentionsAny(*b->rhs, vars);
  auto anyOf = [&](const std::vector<ExprPtr> &list) {
    return std::any_of(list.begin(), list.end(), [&](const ExprPtr &a) { return mentionsAny(*a, vars); });
  };
  if (auto *c = llvm::dyn_cast<Call>(&expr))
    return anyOf(c->args);
  if (auto *r = llvm::dyn_cast<ArrayRead>(&expr))
    return anyOf(r->indices);
  if (auto *r = llvm::dyn_cast<Reduction>(&expr))
    return mentionsAny(*r->body, vars) || (r->where && mentionsAny(*r->where, vars)) ||
           std::any_of(r->bindings.begin(), r->bindings.end(), [&](const RangeBinding &b) {
             return mentionsAny(*b.lo, vars) || mentionsAny(*b.hi, vars);
           });
  if (expr.kind() == Expr::Kind::IntLit || expr.kind() == Expr::Kind::FloatLit)
    return false;
  return true; // anything else: assume it may
}
