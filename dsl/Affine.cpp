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

int64_t polyc::dsl::floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t polyc::dsl::floorMod(int64_t a, int64_t b) { return a - b * floorDiv(a, b); }

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
    for (auto &[d, c] : b.divs) {
      int64_t s;
      if (__builtin_mul_overflow(c, sign, &s) || !addTerm(a.divs, d, s))
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
    for (auto &[d, c] : a.divs)
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
        if (!r->isConstant())
          return fail(b.rhs->range, Twine(what) + " is not affine: '" + spelling(b.op) +
                                        "' needs an integer constant on its right");
        if (r->constant == 0)
          return fail(b.rhs->range, Twine("division by zero in ") + what);
        if (l->isConstant()) {
          if (l->constant == INT64_MIN && r->constant == -1)
            return fail(e.range, "integer overflow in " + Twine(what));
          AffineExpr a;
          a.constant =
              b.op == BinaryOp::Div ? floorDiv(l->constant, r->constant) : floorMod(l->constant, r->constant);
          return a;
        }
        if (r->constant < 0)
          return fail(b.rhs->range, Twine("the divisor of '") + spelling(b.op) + "' in " + what +
                                        " must be positive, not " + Twine(r->constant));
        if (r->constant == 1)
          return b.op == BinaryOp::Div ? std::move(l) : std::optional<AffineExpr>(AffineExpr{});
        // floor(l / d), and l % d = l - d * floor(l / d).
        AffineExpr quotient;
        quotient.divs.emplace_back(std::make_shared<const FloorDiv>(FloorDiv{*l, r->constant}), 1);
        if (b.op == BinaryOp::Div)
          return quotient;
        std::optional<AffineExpr> scaled = scale(std::move(quotient), r->constant, e.range);
        if (!scaled)
          return std::nullopt;
        return combine(std::move(*l), *scaled, -1, e.range);
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

std::optional<ExtentForm> polyc::dsl::extentForm(const AffineExpr &extent) {
  if (extent.isStrictlyAffine())
    return extent.vars.empty() ? std::optional<ExtentForm>(ExtentForm{extent, 1}) : std::nullopt;
  if (!extent.params.empty() || !extent.vars.empty() || extent.constant != 0 || extent.divs.size() != 1 ||
      extent.divs[0].second != 1)
    return std::nullopt;
  const FloorDiv &div = *extent.divs[0].first;
  if (!div.numerator.isStrictlyAffine() || !div.numerator.vars.empty())
    return std::nullopt;
  return ExtentForm{div.numerator, div.denominator};
}

bool polyc::dsl::isIntegerConstant(const Expr &e) {
  switch (e.kind()) {
  case Expr::Kind::IntLit:
    return true;
  case Expr::Kind::VarRef: {
    auto *c = std::get_if<const ConstDecl *>(&cast<VarRef>(e).binding);
    return c && std::holds_alternative<int64_t>((*c)->value);
  }
  case Expr::Kind::Unary: {
    const auto &u = cast<Unary>(e);
    return u.op == UnaryOp::Neg && isIntegerConstant(*u.operand);
  }
  case Expr::Kind::Binary: {
    const auto &b = cast<Binary>(e);
    bool arithmetic = b.op == BinaryOp::Add || b.op == BinaryOp::Sub || b.op == BinaryOp::Mul ||
                      b.op == BinaryOp::Div || b.op == BinaryOp::Mod;
    return arithmetic && isIntegerConstant(*b.lhs) && isIntegerConstant(*b.rhs);
  }
  default:
    return false;
  }
}

std::optional<int64_t> polyc::dsl::positiveDivisor(const Binary &b) {
  if (b.op != BinaryOp::Div && b.op != BinaryOp::Mod)
    return std::nullopt;
  std::optional<AffineExpr> d = isIntegerConstant(*b.rhs) ? toAffine(*b.rhs, "a divisor") : std::nullopt;
  if (!d || d->constant <= 0)
    return std::nullopt;
  return d->constant;
}

bool polyc::dsl::isIntegerExpr(const Expr &e) {
  switch (e.kind()) {
  case Expr::Kind::IntLit:
    return true;
  case Expr::Kind::VarRef: {
    const auto &b = cast<VarRef>(e).binding;
    if (std::holds_alternative<const ParamDecl *>(b) || std::holds_alternative<IndexVarRef>(b))
      return true;
    if (auto *c = std::get_if<const ConstDecl *>(&b))
      return std::holds_alternative<int64_t>((*c)->value);
    return false;
  }
  case Expr::Kind::ArrayRead: {
    const ArrayDecl *array = cast<ArrayRead>(e).array;
    return array && array->elemType == ElemType::I32;
  }
  case Expr::Kind::Unary: {
    const auto &u = cast<Unary>(e);
    return u.op == UnaryOp::Neg && isIntegerExpr(*u.operand);
  }
  case Expr::Kind::Binary: {
    const auto &b = cast<Binary>(e);
    if (b.op == BinaryOp::Add || b.op == BinaryOp::Sub || b.op == BinaryOp::Mul)
      return isIntegerExpr(*b.lhs) && isIntegerExpr(*b.rhs);
    return isIntegerConstant(e) || (positiveDivisor(b) && isIntegerExpr(*b.lhs));
  }
  default:
    return false;
  }
}
