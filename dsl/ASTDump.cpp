// The AST dump: one node per line, children indented by two spaces, resolved names shown after "->".
// Source locations are left out so that the dump of a program does not change when comments do.
#include "dsl/ASTDump.h"
#include "dsl/Unparse.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace polyc;
using namespace polyc::ast;

namespace {

class Dumper {
public:
  explicit Dumper(raw_ostream &os) : os_(os) {}
  void program(const Program &p);

private:
  raw_ostream &line(unsigned indent) { return os_.indent(2 * indent); }
  void expr(const Expr &e, unsigned indent);
  void equation(const Equation &eq, unsigned indent);
  static std::string number(double v);
  static std::string bindingText(const VarRef &ref);
  static std::string shapeText(const ArrayDecl &a);
  static std::string inlineText(const Expr &e);

  raw_ostream &os_;
};

} // namespace

std::string Dumper::number(double v) { return polyc::dsl::floatLiteral(v); }

std::string Dumper::bindingText(const VarRef &ref) {
  if (std::holds_alternative<const ParamDecl *>(ref.binding))
    return "param";
  if (auto *c = std::get_if<const ConstDecl *>(&ref.binding)) {
    if (auto *i = std::get_if<int64_t>(&(*c)->value))
      return "const " + std::to_string(*i);
    if (auto *d = std::get_if<double>(&(*c)->value))
      return "const " + number(*d);
    return "const";
  }
  if (auto *a = std::get_if<const ArrayDecl *>(&ref.binding))
    return std::string("scalar ") + spelling((*a)->kind) + " " + spelling((*a)->elemType);
  if (auto *iv = std::get_if<IndexVarRef>(&ref.binding))
    return "index " + iv->var->name;
  if (auto *arg = std::get_if<FuncArgRef>(&ref.binding))
    return "arg " + std::to_string(arg->position) + " of " + arg->func->name;
  return "unresolved";
}

// Shapes and bounds are short affine expressions: printed inline, fully parenthesised.
std::string Dumper::inlineText(const Expr &e) {
  switch (e.kind()) {
  case Expr::Kind::IntLit: return std::to_string(cast<IntLit>(e).value);
  case Expr::Kind::FloatLit: return number(cast<FloatLit>(e).value);
  case Expr::Kind::VarRef: return cast<VarRef>(e).name;
  case Expr::Kind::ArrayRead: {
    const auto &r = cast<ArrayRead>(e);
    std::string s = r.name + "[";
    for (size_t i = 0; i < r.indices.size(); ++i)
      s += (i ? ", " : "") + inlineText(*r.indices[i]);
    return s + "]";
  }
  case Expr::Kind::Unary: {
    const auto &u = cast<Unary>(e);
    return std::string(spelling(u.op)) + inlineText(*u.operand);
  }
  case Expr::Kind::Binary: {
    const auto &b = cast<Binary>(e);
    return "(" + inlineText(*b.lhs) + " " + spelling(b.op) + " " + inlineText(*b.rhs) + ")";
  }
  case Expr::Kind::Call: {
    const auto &c = cast<Call>(e);
    std::string s = c.callee + "(";
    for (size_t i = 0; i < c.args.size(); ++i)
      s += (i ? ", " : "") + inlineText(*c.args[i]);
    return s + ")";
  }
  case Expr::Kind::Tuple: {
    const auto &t = cast<Tuple>(e);
    std::string s = "(";
    for (size_t i = 0; i < t.elements.size(); ++i)
      s += (i ? ", " : "") + inlineText(*t.elements[i]);
    return s + ")";
  }
  case Expr::Kind::Reduction:
    return std::string(spelling(cast<Reduction>(e).op)) + "(...)";
  }
  return "?";
}

std::string Dumper::shapeText(const ArrayDecl &a) {
  if (a.shape.empty())
    return "scalar";
  std::string s = "[";
  for (size_t i = 0; i < a.shape.size(); ++i)
    s += (i ? ", " : "") + inlineText(*a.shape[i]);
  return s + "]";
}

void Dumper::expr(const Expr &e, unsigned indent) {
  switch (e.kind()) {
  case Expr::Kind::IntLit:
    line(indent) << "IntLit " << cast<IntLit>(e).value << "\n";
    return;
  case Expr::Kind::FloatLit:
    line(indent) << "FloatLit " << number(cast<FloatLit>(e).value) << "\n";
    return;
  case Expr::Kind::VarRef: {
    const auto &ref = cast<VarRef>(e);
    line(indent) << "VarRef " << ref.name << " -> " << bindingText(ref) << "\n";
    return;
  }
  case Expr::Kind::ArrayRead: {
    const auto &r = cast<ArrayRead>(e);
    line(indent) << (r.sampled ? "ArrayRead (sampled) " : "ArrayRead ") << r.name;
    if (r.array)
      os_ << " -> " << spelling(r.array->kind) << " " << spelling(r.array->elemType);
    os_ << "\n";
    for (size_t i = 0; i < r.indices.size(); ++i) {
      bool gather = i < r.isGather.size() && r.isGather[i];
      line(indent + 1) << "Index " << i << (gather ? (r.sampled ? " interpolated" : " gather") : "") << "\n";
      expr(*r.indices[i], indent + 2);
    }
    return;
  }
  case Expr::Kind::Unary: {
    const auto &u = cast<Unary>(e);
    line(indent) << "Unary " << spelling(u.op) << "\n";
    expr(*u.operand, indent + 1);
    return;
  }
  case Expr::Kind::Binary: {
    const auto &b = cast<Binary>(e);
    line(indent) << "Binary " << spelling(b.op) << "\n";
    expr(*b.lhs, indent + 1);
    expr(*b.rhs, indent + 1);
    return;
  }
  case Expr::Kind::Call: {
    const auto &c = cast<Call>(e);
    line(indent) << "Call " << c.callee << " -> "
                 << (c.builtin ? "builtin" : c.func ? "func" : "unresolved") << "\n";
    for (const auto &a : c.args)
      expr(*a, indent + 1);
    return;
  }
  case Expr::Kind::Reduction: {
    const auto &r = cast<Reduction>(e);
    line(indent) << "Reduction " << spelling(r.op) << "\n";
    for (const RangeBinding &b : r.bindings) {
      line(indent + 1) << "Binding";
      for (size_t i = 0; i < b.vars.size(); ++i)
        os_ << (i ? ", " : " ") << b.vars[i]->name;
      os_ << " in " << inlineText(*b.lo) << ".." << inlineText(*b.hi) << "\n";
    }
    if (r.where) {
      line(indent + 1) << "Where\n";
      expr(*r.where, indent + 2);
    }
    line(indent + 1) << "Body\n";
    expr(*r.body, indent + 2);
    return;
  }
  case Expr::Kind::Tuple: {
    line(indent) << "Tuple\n";
    for (const auto &el : cast<Tuple>(e).elements)
      expr(*el, indent + 1);
    return;
  }
  }
}

void Dumper::equation(const Equation &eq, unsigned indent) {
  line(indent) << "Equation " << eq.target;
  if (!eq.lhsIndices.empty()) {
    os_ << "[";
    for (size_t i = 0; i < eq.lhsIndices.size(); ++i)
      os_ << (i ? ", " : "") << inlineText(*eq.lhsIndices[i]);
    os_ << "]";
  }
  os_ << " " << spelling(eq.op);
  if (eq.array)
    os_ << " (" << spelling(eq.array->kind) << " " << spelling(eq.array->elemType) << ")";
  os_ << "\n";
  for (size_t i = 0; i < eq.indexVars.size(); ++i) {
    if (eq.indexVars[i])
      line(indent + 1) << "IndexVar " << eq.indexVars[i]->name << " (dim " << i << ")\n";
    else if (i < eq.computedIndex.size() && eq.computedIndex[i])
      line(indent + 1) << "Computed " << inlineText(*eq.lhsIndices[i]) << " (dim " << i << ")\n";
    else
      line(indent + 1) << "Fixed " << inlineText(*eq.lhsIndices[i]) << " (dim " << i << ")\n";
  }
  for (const RangeBinding &b : eq.scatterBindings) {
    line(indent + 1) << "ScatterBinding";
    for (size_t i = 0; i < b.vars.size(); ++i)
      os_ << (i ? ", " : " ") << b.vars[i]->name;
    os_ << " in " << inlineText(*b.lo) << ".." << inlineText(*b.hi) << "\n";
  }
  line(indent + 1) << "Rhs\n";
  expr(*eq.rhs, indent + 2);
  if (eq.where) {
    line(indent + 1) << (eq.dataCondition ? "Where (tested at each point)\n" : "Where\n");
    expr(*eq.where, indent + 2);
  }
}

void Dumper::program(const Program &p) {
  os_ << "Program\n";
  line(1) << "Boundary " << spelling(p.defaultBoundary) << "\n";
  for (const auto &param : p.params)
    line(1) << "Param " << param->name << "\n";
  for (const auto &c : p.consts) {
    line(1) << "Const " << c->name;
    if (auto *i = std::get_if<int64_t>(&c->value))
      os_ << " = " << *i << " (int)";
    else if (auto *d = std::get_if<double>(&c->value))
      os_ << " = " << number(*d) << " (float)";
    os_ << "\n";
    expr(*c->init, 2);
  }
  for (const auto &f : p.funcs) {
    line(1) << "Func " << f->name << "(" << join(f->params, ", ") << ")\n";
    expr(*f->body, 2);
  }
  for (const auto &a : p.arrays) {
    line(1) << "Array " << a->name << " " << spelling(a->kind) << " " << spelling(a->elemType) << " "
            << shapeText(*a) << " boundary " << spelling(a->effectiveBoundary) << (a->boundary ? " (own)" : "")
            << "\n";
  }
  for (const Statement &st : p.statements) {
    if (auto *eq = std::get_if<Equation *>(&st)) {
      equation(**eq, 1);
      continue;
    }
    const RepeatBlock &block = *std::get<RepeatBlock *>(st);
    line(1) << "Repeat " << block.var->name << " in " << inlineText(*block.lo) << ".."
            << inlineText(*block.hi);
    if (block.stopsWhenUnchanged())
      os_ << " until unchanged(" << llvm::join(block.untilUnchanged, ", ") << ")";
    os_ << "\n";
    for (const auto &eq : block.body)
      equation(*eq, 2);
  }
}

void polyc::dsl::dumpProgram(const Program &program, raw_ostream &os) { Dumper(os).program(program); }
