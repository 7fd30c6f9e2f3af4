// The printer of dsl/Unparse.h. Precedence climbing in reverse: an operand is parenthesised when its
// operator binds more loosely than its position allows. A reduction's body extends as far right as a
// multiplicative expression does, so a reduction is parenthesised wherever a `*` could follow it.
#include "dsl/Unparse.h"

#include "llvm/Support/Casting.h"

#include <charconv>

namespace polyc::dsl {

using namespace ast;
using llvm::cast;

namespace {

// The grammar's levels (docs/language.md), loosest first.
enum Level { Or = 1, And, Compare, Additive, Multiplicative, Prefix, Primary };

Level levelOf(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or:
    return Or;
  case BinaryOp::And:
    return And;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    return Compare;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return Additive;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod:
    return Multiplicative;
  }
  return Primary;
}

std::string list(const std::vector<ExprPtr> &items);

// `e` in a position that needs at least `level`; `closed` when a `*`, `/` or `%` may follow it (a
// reduction there would take the rest of the product into its body; a `+` or a comparison it would not).
std::string print(const Expr &e, Level level, bool closed) {
  auto wrap = [](const std::string &s, bool needed) { return needed ? "(" + s + ")" : s; };
  switch (e.kind()) {
  case Expr::Kind::IntLit:
    return std::to_string(cast<IntLit>(e).value);
  case Expr::Kind::FloatLit:
    return floatLiteral(cast<FloatLit>(e).value);
  case Expr::Kind::VarRef:
    return cast<VarRef>(e).name;
  case Expr::Kind::ArrayRead: {
    const auto &read = cast<ArrayRead>(e);
    if (read.sampled)
      return "sample(" + read.name + (read.indices.empty() ? "" : ", ") + list(read.indices) + ")";
    return read.name + "[" + list(read.indices) + "]";
  }
  case Expr::Kind::Call: {
    const auto &call = cast<Call>(e);
    return call.callee + "(" + list(call.args) + ")";
  }
  case Expr::Kind::Tuple:
    return "(" + list(cast<Tuple>(e).elements) + ")";
  case Expr::Kind::Unary: {
    const auto &u = cast<Unary>(e);
    return wrap(std::string(spelling(u.op)) + print(*u.operand, Prefix, closed), level > Prefix);
  }
  case Expr::Kind::Binary: {
    const auto &b = cast<Binary>(e);
    Level own = levelOf(b.op);
    bool parens = own < level;
    // Left-associative; comparisons do not chain, so their left operand is one level up as well.
    Level left = own == Compare ? Level(own + 1) : own;
    return wrap(print(*b.lhs, left, own == Multiplicative) + " " + spelling(b.op) + " " +
                    print(*b.rhs, Level(own + 1), closed && !parens),
                parens);
  }
  case Expr::Kind::Reduction: {
    const auto &red = cast<Reduction>(e);
    std::string text = std::string(spelling(red.op)) + "(";
    for (size_t i = 0; i < red.bindings.size(); ++i) {
      const RangeBinding &binding = red.bindings[i];
      text += i ? ", " : "";
      for (size_t v = 0; v < binding.vars.size(); ++v)
        text += (v ? ", " : "") + binding.vars[v]->name;
      text += " in " + print(*binding.lo, Additive, true) + ".." + print(*binding.hi, Additive, true);
    }
    if (red.where)
      text += " where " + print(*red.where, Or, true);
    text += ") " + print(*red.body, Multiplicative, false);
    return wrap(text, closed || level > Prefix);
  }
  }
  return "?";
}

std::string list(const std::vector<ExprPtr> &items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i)
    text += (i ? ", " : "") + print(*items[i], Or, false);
  return text;
}

} // namespace

std::string unparse(const Expr &e) { return print(e, Or, false); }

std::string floatLiteral(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

} // namespace polyc::dsl
