// Questions about index expressions that the GPU targets' flexible wavefronts and group reductions ask
// of the AST: the coefficient of a variable, whether variables occur (see IndexExprs.h).
#include "compiler/codegen/IndexExprs.h"

#include "compiler/codegen/ProgramInterface.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

namespace polyc::codegen {

std::optional<int64_t> coefficientOf(const ast::Expr &expr, const ast::IndexVar *var, const ast::Program &program) {
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
    return 0;
  case ast::Expr::Kind::VarRef: {
    auto &ref = llvm::cast<ast::VarRef>(expr);
    if (auto *v = std::get_if<ast::IndexVarRef>(&ref.binding))
      return v->var == var ? 1 : 0;
    if (std::holds_alternative<const ast::ParamDecl *>(ref.binding))
      return 0;
    if (auto *c = std::get_if<const ast::ConstDecl *>(&ref.binding))
      return std::holds_alternative<int64_t>((*c)->value) ? std::optional<int64_t>(0) : std::nullopt;
    return std::nullopt;
  }
  case ast::Expr::Kind::Unary: {
    auto &u = llvm::cast<ast::Unary>(expr);
    auto c = coefficientOf(*u.operand, var, program);
    if (u.op != ast::UnaryOp::Neg || !c)
      return std::nullopt;
    return -*c;
  }
  case ast::Expr::Kind::Binary: {
    auto &b = llvm::cast<ast::Binary>(expr);
    auto l = coefficientOf(*b.lhs, var, program), r = coefficientOf(*b.rhs, var, program);
    if (!l || !r)
      return std::nullopt;
    if (b.op == ast::BinaryOp::Add)
      return *l + *r;
    if (b.op == ast::BinaryOp::Sub)
      return *l - *r;
    if (b.op == ast::BinaryOp::Mul) {
      // A product is affine in `var` only when one side does not involve it; the other side must then
      // be a constant for the coefficient to be known.
      auto lc = affineForm(*b.lhs, program), rc = affineForm(*b.rhs, program);
      if (*l == 0 && *r == 0)
        return 0;
      if (*l == 0 && lc && lc->terms.empty())
        return lc->constant * *r;
      if (*r == 0 && rc && rc->terms.empty())
        return rc->constant * *l;
    }
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

} // namespace polyc::codegen
