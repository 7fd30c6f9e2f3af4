// Spellings of the AST's enumerations and the Program's lookups.
#include "dsl/AST.h"

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

bool polyc::ast::holdsReduction(const Expr &e) {
  switch (e.kind()) {
  case Expr::Kind::Reduction:
    return true;
  case Expr::Kind::Unary:
    return holdsReduction(*llvm::cast<Unary>(e).operand);
  case Expr::Kind::Binary:
    return holdsReduction(*llvm::cast<Binary>(e).lhs) || holdsReduction(*llvm::cast<Binary>(e).rhs);
  case Expr::Kind::Call:
    for (const ExprPtr &arg : llvm::cast<Call>(e).args)
      if (holdsReduction(*arg))
        return true;
    return false;
  case Expr::Kind::Tuple:
    for (const ExprPtr &element : llvm::cast<Tuple>(e).elements)
      if (holdsReduction(*element))
        return true;
    return false;
  default:
    return false;
  }
}
