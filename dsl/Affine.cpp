// Affine forms of Sema-resolved expressions (see Affine.h). Arithmetic is checked: an overflowing
// coefficient is reported, never wrapped.
#include "dsl/Affine.h"

#include "llvm/ADT/Twine.h"

using namespace llvm;
using namespace polyc;
using namespace polyc::ast;
using namespace polyc::dsl;

int64_t AffineExpr::coefficient(const IndexVar *var) const {
  for (auto &[v, c] : vars)
    if (v == var)
      return c;
  return 0;
}

int64_t AffineExpr::coefficient(const ParamDecl *param) const {
  for (auto &[p, c] : params)
    if (p == param)
      return c;
  return 0;
}

namespace {

struct Builder {
  const char *what;
  AffineError *error;

  std::nullopt_t fail(SMRange range, const Twine &message) {
    if (error) {
      error->range = range;
      error->message = message.str();
    }
    return std::nullopt;
  }

  template <typename Key>
  static bool addTerm(SmallVectorImpl<std::pair<Key, int64_t>> &terms, Key key, int64_t coeff) {
    for (auto it = terms.begin(); it != terms.end(); ++it) {
      if (it->first != key)
        continue;
      if (__builtin_add_overflow(it->second, coeff, &it->second))
        return false;
      if (it->second == 0)
        terms.erase(it);
      return true;
    }
    if (coeff != 0)
      terms.emplace_back(key, coeff);
    return true;
  }

  // a + sign * b
  std::optional<AffineExpr> combine(AffineExpr a, const AffineExpr &b, int64_t sign, SMRange range) {
    for (auto &[p, c] : b.params) {
      int64_t s;
      if (__builtin_mul_overflow(c, sign, &s) || !addTerm(a.params, p, s))
        return fail(range, "integer overflow in " + Twine(what));
    }
    for (auto &[v, c] : b.vars) {
      int64_t s;
      if (__builtin_mul_overflow(c, sign, &s) || !addTerm(a.vars, v, s))
        return fail(range, "integer overflow in " + Twine(what));
    }
    int64_t s;
    if (__builtin_mul_overflow(b.constant, sign, &s) || __builtin_add_overflow(a.constant, s, &a.constant))
      return fail(range, "integer overflow in " + Twine(what));
    return a;
  }

  std::optional<AffineExpr> scale(AffineExpr a, int64_t factor, SMRange range) {
    if (factor == 0)
      return AffineExpr{};
    for (auto &[p, c] : a.params)
      if (__builtin_mul_overflow(c, factor, &c))
        return fail(range, "integer overflow in " + Twine(what));
    for (auto &[v, c] : a.vars)
      if (__builtin_mul_overflow(c, factor, &c))
        return fail(range, "integer overflow in " + Twine(what));
    if (__builtin_mul_overflow(a.constant, factor, &a.constant))
      return fail(range, "integer overflow in " + Twine(what));
    return a;
  }

  std::optional<AffineExpr> build(const Expr &e) {
    switch (e.kind()) {
    case Expr::Kind::IntLit: {
      AffineExpr a;
      a.constant = cast<IntLit>(e).value;
      return a;
    }
    case Expr::Kind::FloatLit:
      return fail(e.range, Twine("a float literal cannot appear in ") + what + " (it must be an integer affine expression)");
    case Expr::Kind::VarRef: {
      const auto &ref = cast<VarRef>(e);
      AffineExpr a;
      if (auto *param = std::get_if<const ParamDecl *>(&ref.binding)) {
        a.params.emplace_back(*param, 1);
        return a;
      }
      if (auto *iv = std::get_if<IndexVarRef>(&ref.binding)) {
        a.vars.emplace_back(iv->var, 1);
        return a;
      }
      if (auto *c = std::get_if<const ConstDecl *>(&ref.binding)) {
        if (auto *v = std::get_if<int64_t>(&(*c)->value)) {
          a.constant = *v;
          return a;
        }
        if (std::holds_alternative<double>((*c)->value))
          return fail(e.range, "float constant '" + ref.name + "' cannot appear in " + what);
        return fail(e.range, ""); // its evaluation failed and was reported
      }
      if (std::holds_alternative<const ArrayDecl *>(ref.binding))
        return fail(e.range, "array '" + ref.name + "' cannot appear in " + what +
                                 " (it must be affine in index variables, params and integer constants)");
      if (std::holds_alternative<FuncArgRef>(ref.binding))
        return fail(e.range, "function argument '" + ref.name + "' cannot appear in " + what);
      return fail(e.range, ""); // unresolved: already reported
    }
    case Expr::Kind::Unary: {
      const auto &u = cast<Unary>(e);
      if (u.op == UnaryOp::Not)
        return fail(e.range, Twine("'!' cannot appear in ") + what);
      std::optional<AffineExpr> a = build(*u.operand);
      if (!a)
        return std::nullopt;
      return scale(std::move(*a), -1, e.range);
    }
    case Expr::Kind::Binary: {
      const auto &b = cast<Binary>(e);
      switch (b.op) {
      case BinaryOp::Add:
      case BinaryOp::Sub: {
        std::optional<AffineExpr> l = build(*b.lhs);
        if (!l)
          return std::nullopt;
        std::optional<AffineExpr> r = build(*b.rhs);
        if (!r)
          return std::nullopt;
        return combine(std::move(*l), *r, b.op == BinaryOp::Add ? 1 : -1, e.range);
      }
      case BinaryOp::Mul: {
        std::optional<AffineExpr> l = build(*b.lhs);
        if (!l)
          return std::nullopt;
        std::optional<AffineExpr> r = build(*b.rhs);
        if (!r)
          return std::nullopt;
        if (l->isConstant())
          return scale(std::move(*r), l->constant, e.range);
        if (r->isConstant())
          return scale(std::move(*l), r->constant, e.range);
        return fail(e.range, Twine(what) + " is not affine: it multiplies two non-constant terms");
      }
      case BinaryOp::Div:
      case BinaryOp::Mod: {
        std::optional<AffineExpr> l = build(*b.lhs);
        if (!l)
          return std::nullopt;
        std::optional<AffineExpr> r = build(*b.rhs);
        if (!r)
          return std::nullopt;
        if (!l->isConstant() || !r->isConstant())
          return fail(e.range, Twine(what) + " is not affine: '" + spelling(b.op) +
                                   "' is allowed only between integer constants");
        if (r->constant == 0)
          return fail(b.rhs->range, Twine("division by zero in ") + what);
        if (l->constant == INT64_MIN && r->constant == -1)
          return fail(e.range, "integer overflow in " + Twine(what));
        AffineExpr a;
        a.constant = b.op == BinaryOp::Div ? l->constant / r->constant : l->constant % r->constant;
        return a;
      }
      default:
        return fail(e.range, Twine("'") + spelling(b.op) + "' cannot appear in " + what);
      }
    }
    case Expr::Kind::ArrayRead:
      return fail(e.range, Twine(what) + " is not affine: it reads array '" + cast<ArrayRead>(e).name + "'");
    case Expr::Kind::Call:
      return fail(e.range, Twine(what) + " is not affine: it calls '" + cast<Call>(e).callee + "'");
    case Expr::Kind::Reduction:
      return fail(e.range, Twine("a reduction cannot appear in ") + what);
    case Expr::Kind::Tuple:
      return fail(e.range, Twine("a tuple cannot appear in ") + what);
    }
    return fail(e.range, "unexpected expression");
  }
};

} // namespace

std::optional<AffineExpr> polyc::dsl::toAffine(const Expr &e, const char *what, AffineError *error) {
  return Builder{what, error}.build(e);
}
