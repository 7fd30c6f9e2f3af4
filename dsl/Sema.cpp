// Semantic analysis: resolves every name of a parsed program (VarRef::binding, ArrayRead::array,
// Call::builtin/func, Equation::array/indexVars/enclosingRepeat), evaluates consts, and checks the rules
// of docs/language.md that need no polyhedra; DefinitionCheck then checks the exactly-once rule.
#include "dsl/Sema.h"

#include "dsl/Affine.h"
#include "dsl/DefinitionCheck.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <functional>

using namespace llvm;
using namespace polyc;
using namespace polyc::ast;
using namespace polyc::dsl;

namespace {

// A program-level name: params, consts, arrays and functions share one namespace.
struct GlobalSymbol {
  enum Kind { Param, Const, Array, Func } kind;
  const void *decl;
  SMRange range;
};

const char *kindWithArticle(GlobalSymbol::Kind kind) {
  switch (kind) {
  case GlobalSymbol::Param: return "a param";
  case GlobalSymbol::Const: return "a const";
  case GlobalSymbol::Array: return "an array";
  case GlobalSymbol::Func: return "a function";
  }
  return "a name";
}

const char *kindName(GlobalSymbol::Kind kind) {
  switch (kind) {
  case GlobalSymbol::Param: return "param";
  case GlobalSymbol::Const: return "const";
  case GlobalSymbol::Array: return "array";
  case GlobalSymbol::Func: return "function";
  }
  return "name";
}

std::optional<std::pair<Builtin, unsigned>> builtinOf(StringRef name) {
  using R = std::optional<std::pair<Builtin, unsigned>>;
  return StringSwitch<R>(name)
      .Case("exp", std::pair(Builtin::Exp, 1u))
      .Case("log", std::pair(Builtin::Log, 1u))
      .Case("sqrt", std::pair(Builtin::Sqrt, 1u))
      .Case("abs", std::pair(Builtin::Abs, 1u))
      .Case("tanh", std::pair(Builtin::Tanh, 1u))
      .Case("min", std::pair(Builtin::Min, 2u))
      .Case("max", std::pair(Builtin::Max, 2u))
      .Case("pow", std::pair(Builtin::Pow, 2u))
      .Case("select", std::pair(Builtin::Select, 3u))
      .Default(std::nullopt);
}

// Where an expression is being checked.
struct Scope {
  std::vector<const IndexVar *> vars; // index variables visible here, innermost last
  const FuncDecl *func = nullptr;     // inside a function body
  const RepeatBlock *repeat = nullptr;
};

class Sema {
public:
  Sema(Program &program, DiagnosticEngine &diags) : program_(program), diags_(diags) {}
  bool run();

private:
  bool error(SMRange range, const Twine &message) { return diags_.error(range, message); }
  void declareGlobals();
  void declare(StringRef name, GlobalSymbol symbol);
  const GlobalSymbol *lookupGlobal(StringRef name) const;
  void checkConst(ConstDecl &c);
  std::optional<std::variant<int64_t, double>> evalConst(const Expr &e, const ConstDecl &self);
  void checkFunc(FuncDecl &f);
  void checkArrayDecl(ArrayDecl &a);
  void checkEquation(Equation &eq, const RepeatBlock *repeat);
  void checkRepeat(RepeatBlock &block);

  bool checkFreshName(const IndexVar &var, const Scope &scope, const char *what);
  bool resolve(Expr &e, Scope &scope);
  bool resolveIndex(Expr &e, Scope &scope, bool &isGather);
  bool resolveSamplePositions(ast::ArrayRead &read, Scope &scope);
  bool checkAffine(const Expr &e, const char *what);
  bool checkRowRange(RangeBinding &binding);
  bool findRowTargets(RangeBinding &binding, const Expr &body);
  // `report`: false tests the form without messages (a scatter's condition may read data instead).
  bool checkCondition(const Expr &e, const char *what, bool report = true);
  // `shapeDivision`: a shape extent, which may also be such an expression's floor division by a
  // positive constant (dsl::extentForm).
  bool checkParamsAndConstsOnly(const Expr &e, const char *what, const RepeatBlock *allowedRepeat,
                                bool shapeDivision = false);

  bool checkUpdateOrder(const Equation &eq, const ArrayDecl &a, const RepeatBlock *repeat);
  bool checkScatterBindings(Equation &eq, Scope &scope);
  bool checkComputedIndex(const Expr &index);
  void checkScatter(const Equation &eq);
  void checkUntil(RepeatBlock &block);

  Program &program_;
  DiagnosticEngine &diags_;
  StringMap<GlobalSymbol> globals_;
  // For local and output arrays, in textual order: the first `=` equation, the first one inside a
  // repeat block, and the first update (checkUpdateOrder).
  struct Definitions {
    const Equation *first = nullptr, *inRepeat = nullptr, *firstUpdate = nullptr;
  };
  DenseMap<const ArrayDecl *, Definitions> definitions_;
};

} // namespace

// ---------------------------------------------------------------------------------------------
// Globals

void Sema::declare(StringRef name, GlobalSymbol symbol) {
  auto [it, inserted] = globals_.try_emplace(name, symbol);
  if (inserted)
    return;
  error(symbol.range, Twine("redefinition of '") + name + "' (already declared as " +
                          kindWithArticle(it->second.kind) + ")");
  diags_.note(it->second.range, "previous definition is here");
}

const GlobalSymbol *Sema::lookupGlobal(StringRef name) const {
  auto it = globals_.find(name);
  return it == globals_.end() ? nullptr : &it->second;
}

void Sema::declareGlobals() {
  // Declarations of different kinds live in different vectors; declare them in textual order so that
  // the note of a redefinition points at the earlier one.
  std::vector<std::pair<const char *, std::function<void()>>> decls;
  for (auto &p : program_.params)
    decls.emplace_back(p->range.Start.getPointer(), [this, d = p.get()] {
      declare(d->name, {GlobalSymbol::Param, d, d->range});
    });
  for (auto &c : program_.consts)
    decls.emplace_back(c->range.Start.getPointer(), [this, d = c.get()] {
      declare(d->name, {GlobalSymbol::Const, d, d->range});
    });
  for (auto &a : program_.arrays)
    decls.emplace_back(a->range.Start.getPointer(), [this, d = a.get()] {
      declare(d->name, {GlobalSymbol::Array, d, d->range});
    });
  for (auto &f : program_.funcs)
    decls.emplace_back(f->range.Start.getPointer(), [this, d = f.get()] {
      if (builtinOf(d->name) || d->name == "sample") {
        error(d->range, "'" + d->name + "' is a built-in function and cannot be redefined");
        return;
      }
      declare(d->name, {GlobalSymbol::Func, d, d->range});
    });
  std::sort(decls.begin(), decls.end(), [](auto &a, auto &b) { return a.first < b.first; });
  for (auto &d : decls)
    d.second();
}

// ---------------------------------------------------------------------------------------------
// Consts

static bool isBefore(SMRange a, SMRange b) { return a.Start.getPointer() < b.Start.getPointer(); }

std::optional<std::variant<int64_t, double>> Sema::evalConst(const Expr &e, const ConstDecl &self) {
  using Value = std::variant<int64_t, double>;
  switch (e.kind()) {
  case Expr::Kind::IntLit:
    return Value(cast<IntLit>(e).value);
  case Expr::Kind::FloatLit:
    return Value(cast<FloatLit>(e).value);
  case Expr::Kind::VarRef: {
    const auto &ref = cast<VarRef>(e);
    const GlobalSymbol *sym = lookupGlobal(ref.name);
    if (!sym) {
      error(e.range, "unknown name '" + ref.name + "'");
      return std::nullopt;
    }
    if (sym->kind != GlobalSymbol::Const) {
      error(e.range, "const '" + self.name + "' must be a compile-time value, but '" + ref.name + "' is a " +
                         kindName(sym->kind));
      return std::nullopt;
    }
    const auto *c = static_cast<const ConstDecl *>(sym->decl);
    if (c == &self) {
      error(e.range, "const '" + self.name + "' is defined in terms of itself");
      return std::nullopt;
    }
    if (!isBefore(c->range, self.range)) {
      error(e.range, "const '" + ref.name + "' is used before its definition");
      diags_.note(c->range, "'" + ref.name + "' is defined here");
      return std::nullopt;
    }
    const_cast<VarRef &>(ref).binding = c;
    if (auto *i = std::get_if<int64_t>(&c->value))
      return Value(*i);
    if (auto *d = std::get_if<double>(&c->value))
      return Value(*d);
    return std::nullopt; // its own evaluation failed and was reported
  }
  case Expr::Kind::Unary: {
    const auto &u = cast<Unary>(e);
    if (u.op != UnaryOp::Neg) {
      error(e.range, "'!' cannot appear in a const");
      return std::nullopt;
    }
    auto v = evalConst(*u.operand, self);
    if (!v)
      return std::nullopt;
    if (auto *i = std::get_if<int64_t>(&*v)) {
      if (*i == INT64_MIN) {
        error(e.range, "integer overflow in const '" + self.name + "'");
        return std::nullopt;
      }
      return Value(-*i);
    }
    return Value(-std::get<double>(*v));
  }
  case Expr::Kind::Binary: {
    const auto &b = cast<Binary>(e);
    if (b.op != BinaryOp::Add && b.op != BinaryOp::Sub && b.op != BinaryOp::Mul && b.op != BinaryOp::Div &&
        b.op != BinaryOp::Mod) {
      error(e.range, Twine("'") + spelling(b.op) + "' cannot appear in a const (only + - * / % are allowed)");
      return std::nullopt;
    }
    auto l = evalConst(*b.lhs, self);
    auto r = evalConst(*b.rhs, self);
    if (!l || !r)
      return std::nullopt;
    auto *li = std::get_if<int64_t>(&*l);
    auto *ri = std::get_if<int64_t>(&*r);
    if (li && ri) {
      int64_t out = 0;
      bool overflow = false;
      switch (b.op) {
      case BinaryOp::Add: overflow = __builtin_add_overflow(*li, *ri, &out); break;
      case BinaryOp::Sub: overflow = __builtin_sub_overflow(*li, *ri, &out); break;
      case BinaryOp::Mul: overflow = __builtin_mul_overflow(*li, *ri, &out); break;
      case BinaryOp::Div:
      case BinaryOp::Mod:
        if (*ri == 0) {
          error(b.rhs->range, "division by zero in const '" + self.name + "'");
          return std::nullopt;
        }
        overflow = *li == INT64_MIN && *ri == -1;
        if (!overflow)
          out = b.op == BinaryOp::Div ? *li / *ri : *li % *ri;
        break;
      default: break;
      }
      if (overflow) {
        error(e.range, "integer overflow in const '" + self.name + "'");
        return std::nullopt;
      }
      return Value(out);
    }
    double x = li ? static_cast<double>(*li) : std::get<double>(*l);
    double y = ri ? static_cast<double>(*ri) : std::get<double>(*r);
    double out = 0;
    switch (b.op) {
    case BinaryOp::Add: out = x + y; break;
    case BinaryOp::Sub: out = x - y; break;
    case BinaryOp::Mul: out = x * y; break;
    case BinaryOp::Div:
      if (y == 0) {
        error(b.rhs->range, "division by zero in const '" + self.name + "'");
        return std::nullopt;
      }
      out = x / y;
      break;
    case BinaryOp::Mod:
      error(e.range, "'%' needs integer operands in a const");
      return std::nullopt;
    default: break;
    }
    if (!std::isfinite(out)) {
      error(e.range, "floating-point overflow in const '" + self.name + "'");
      return std::nullopt;
    }
    return Value(out);
  }
  case Expr::Kind::ArrayRead:
  case Expr::Kind::Call:
  case Expr::Kind::Reduction:
  case Expr::Kind::Tuple:
    error(e.range, "const '" + self.name + "' must be computed from literals and earlier consts with + - * / %");
    return std::nullopt;
  }
  return std::nullopt;
}

void Sema::checkConst(ConstDecl &c) {
  if (auto v = evalConst(*c.init, c)) {
    if (auto *i = std::get_if<int64_t>(&*v))
      c.value = *i;
    else
      c.value = std::get<double>(*v);
  }
}

// ---------------------------------------------------------------------------------------------
// Expressions

bool Sema::checkFreshName(const IndexVar &var, const Scope &scope, const char *what) {
  if (const GlobalSymbol *sym = lookupGlobal(var.name)) {
    error(var.range, Twine(what) + " '" + var.name + "' shadows the " + kindName(sym->kind) + " of that name");
    diags_.note(sym->range, Twine("the ") + kindName(sym->kind) + " is declared here");
    return false;
  }
  for (const IndexVar *v : scope.vars) {
    if (v->name == var.name) {
      error(var.range, Twine(what) + " '" + var.name + "' shadows an index variable of the same name");
      diags_.note(v->range, "the index variable is bound here");
      return false;
    }
  }
  return true;
}

bool Sema::resolve(Expr &e, Scope &scope) {
  switch (e.kind()) {
  case Expr::Kind::IntLit:
  case Expr::Kind::FloatLit:
    return true;
  case Expr::Kind::VarRef: {
    auto &ref = cast<VarRef>(e);
    for (auto it = scope.vars.rbegin(); it != scope.vars.rend(); ++it) {
      if ((*it)->name == ref.name) {
        ref.binding = IndexVarRef{*it};
        return true;
      }
    }
    if (scope.func) {
      for (unsigned i = 0; i < scope.func->params.size(); ++i) {
        if (scope.func->params[i] == ref.name) {
          ref.binding = FuncArgRef{scope.func, i};
          return true;
        }
      }
    }
    const GlobalSymbol *sym = lookupGlobal(ref.name);
    if (!sym)
      return error(e.range, "unknown name '" + ref.name + "'");
    switch (sym->kind) {
    case GlobalSymbol::Param:
      ref.binding = static_cast<const ParamDecl *>(sym->decl);
      return true;
    case GlobalSymbol::Const: {
      const auto *c = static_cast<const ConstDecl *>(sym->decl);
      if (scope.func && !isBefore(c->range, scope.func->range)) {
        error(e.range, "const '" + ref.name + "' is used before its definition");
        diags_.note(c->range, "'" + ref.name + "' is defined here");
        return false;
      }
      ref.binding = c;
      return true;
    }
    case GlobalSymbol::Array: {
      const auto *a = static_cast<const ArrayDecl *>(sym->decl);
      if (scope.func)
        return error(e.range, "function '" + scope.func->name + "' cannot read array '" + ref.name +
                                  "' (a function body may use only its arguments, params and consts)");
      if (a->rank() != 0)
        return error(e.range, "array '" + ref.name + "' has " + Twine(a->rank()) +
                                  (a->rank() == 1 ? " dimension" : " dimensions") + "; read it with indices, '" +
                                  ref.name + "[...]'");
      ref.binding = a;
      return true;
    }
    case GlobalSymbol::Func:
      return error(e.range, "'" + ref.name + "' is a function; call it as '" + ref.name + "(...)'");
    }
    return false;
  }
  case Expr::Kind::ArrayRead: {
    auto &read = cast<ArrayRead>(e);
    const GlobalSymbol *sym = lookupGlobal(read.name);
    bool ok = true;
    if (!sym) {
      ok = error(e.range, "unknown array '" + read.name + "'");
    } else if (sym->kind != GlobalSymbol::Array) {
      ok = error(e.range, Twine("'") + read.name + "' is " + kindWithArticle(sym->kind) + ", not an array");
    } else if (scope.func) {
      ok = error(e.range, "function '" + scope.func->name + "' cannot read array '" + read.name +
                              "' (a function body may use only its arguments, params and consts)");
    } else {
      read.array = static_cast<const ArrayDecl *>(sym->decl);
      if (read.array->rank() != read.indices.size()) {
        ok = error(e.range, "array '" + read.name + "' has " + Twine(read.array->rank()) +
                                (read.array->rank() == 1 ? " dimension" : " dimensions") + " but is read with " +
                                Twine(read.indices.size()) + (read.indices.size() == 1 ? " index" : " indices"));
        if (read.array->rank() == 0)
          diags_.note(read.array->range, "'" + read.name + "' is a scalar, declared here; read it as '" +
                                             read.name + "'");
        else
          diags_.note(read.array->range, "'" + read.name + "' is declared here");
      }
    }
    read.isGather.assign(read.indices.size(), false);
    if (read.sampled)
      return resolveSamplePositions(read, scope) && ok;
    for (size_t k = 0; k < read.indices.size(); ++k) {
      bool gather = false;
      if (!resolveIndex(*read.indices[k], scope, gather))
        ok = false;
      read.isGather[k] = gather;
    }
    return ok;
  }
  case Expr::Kind::Unary:
    return resolve(*cast<Unary>(e).operand, scope);
  case Expr::Kind::Binary: {
    auto &b = cast<Binary>(e);
    bool lt = isa<Tuple>(*b.lhs), rt = isa<Tuple>(*b.rhs);
    if ((lt || rt) && (b.op == BinaryOp::Eq || b.op == BinaryOp::Ne)) {
      if (!lt || !rt)
        return error(e.range, "a tuple can only be compared with another tuple");
      auto &l = cast<Tuple>(*b.lhs), &r = cast<Tuple>(*b.rhs);
      if (l.elements.size() != r.elements.size())
        return error(e.range, "tuples of different lengths (" + Twine(l.elements.size()) + " and " +
                                  Twine(r.elements.size()) + ") cannot be compared");
      bool ok = true;
      for (auto &x : l.elements)
        ok &= resolve(*x, scope);
      for (auto &x : r.elements)
        ok &= resolve(*x, scope);
      return ok;
    }
    bool ok = resolve(*b.lhs, scope);
    ok &= resolve(*b.rhs, scope);
    return ok;
  }
  case Expr::Kind::Call: {
    auto &call = cast<Call>(e);
    bool ok = true;
    if (auto builtin = builtinOf(call.callee)) {
      call.builtin = builtin->first;
      if (call.args.size() != builtin->second)
        ok = error(e.range, "built-in function '" + call.callee + "' takes " + Twine(builtin->second) +
                                (builtin->second == 1 ? " argument" : " arguments") + ", but " +
                                Twine(call.args.size()) + (call.args.size() == 1 ? " is" : " are") + " given");
    } else if (const GlobalSymbol *sym = lookupGlobal(call.callee)) {
      if (sym->kind != GlobalSymbol::Func) {
        ok = error(e.range, Twine("'") + call.callee + "' is " + kindWithArticle(sym->kind) + ", not a function");
      } else {
        const auto *f = static_cast<const FuncDecl *>(sym->decl);
        if (scope.func == f) {
          ok = error(e.range, "function '" + f->name + "' calls itself; recursion is not allowed");
        } else if (scope.func && !isBefore(f->range, scope.func->range)) {
          ok = error(e.range, "function '" + scope.func->name + "' calls '" + f->name +
                                  "', which is defined after it (a function may call only earlier functions)");
          diags_.note(f->range, "'" + f->name + "' is defined here");
        } else {
          call.func = f;
          if (call.args.size() != f->params.size()) {
            ok = error(e.range, "function '" + f->name + "' takes " + Twine(f->params.size()) +
                                    (f->params.size() == 1 ? " argument" : " arguments") + ", but " +
                                    Twine(call.args.size()) + (call.args.size() == 1 ? " is" : " are") + " given");
            diags_.note(f->range, "'" + f->name + "' is defined here");
          }
        }
      }
    } else {
      ok = error(e.range, "unknown function '" + call.callee + "'");
    }
    for (auto &arg : call.args)
      ok &= resolve(*arg, scope);
    return ok;
  }
  case Expr::Kind::Reduction: {
    auto &red = cast<Reduction>(e);
    if (scope.func)
      return error(e.range, "a reduction cannot appear in a function body");
    size_t outer = scope.vars.size();
    bool ok = true;
    for (RangeBinding &binding : red.bindings) {
      // Bounds see the enclosing variables and the earlier bindings, not the variables they bound.
      bool boundsOk = resolve(*binding.lo, scope);
      boundsOk = resolve(*binding.hi, scope) && boundsOk;
      if (boundsOk && (isa<ArrayRead>(*binding.lo) || isa<ArrayRead>(*binding.hi))) {
        boundsOk = checkRowRange(binding);
      } else if (boundsOk) {
        boundsOk = checkAffine(*binding.lo, "a reduction bound");
        boundsOk &= checkAffine(*binding.hi, "a reduction bound");
      }
      ok &= boundsOk;
      for (auto &var : binding.vars) {
        if (!checkFreshName(*var, scope, "reduction variable"))
          ok = false;
        scope.vars.push_back(var.get());
      }
    }
    if (red.where) {
      if (resolve(*red.where, scope))
        ok &= checkCondition(*red.where, "a reduction's where condition");
      else
        ok = false;
    }
    ok &= resolve(*red.body, scope);
    for (RangeBinding &binding : red.bindings)
      if (binding.rowArray && ok)
        ok &= findRowTargets(binding, *red.body);
    scope.vars.resize(outer);
    return ok;
  }
  case Expr::Kind::Tuple:
    return error(e.range, "a tuple may only be an operand of '==' or '!='");
  }
  return false;
}

// The positions of `sample(A, ...)`: an integer expression is an index as in any read (affine); any other
// value is a position between elements, interpolated, which may read anywhere along its dimension.
bool Sema::resolveSamplePositions(ArrayRead &read, Scope &scope) {
  bool ok = true;
  if (read.array && read.array->elemType == ElemType::I32)
    ok = error(read.range,
               "sample() interpolates between elements: '" + read.name + "' is i32, not f32 or f64");
  if (read.array && read.array->rank() == 0)
    ok = error(read.range,
               "sample() reads an array of one or more dimensions; '" + read.name + "' is a scalar");
  for (size_t k = 0; k < read.indices.size(); ++k) {
    Expr &position = *read.indices[k];
    if (!resolve(position, scope)) {
      ok = false;
      continue;
    }
    if (isIntegerExpr(position))
      ok &= checkAffine(position, "an integer position of sample()");
    else
      read.isGather[k] = true;
  }
  return ok;
}

// An index of an array read: affine, or a gather (a read of an i32 array with affine indices),
// optionally plus or minus an affine offset.
bool Sema::resolveIndex(Expr &e, Scope &scope, bool &isGather) {
  isGather = false;
  if (!resolve(e, scope))
    return false;
  auto gatherRead = [](const Expr &x) -> const ArrayRead * {
    if (const auto *r = dyn_cast<ArrayRead>(&x))
      if (r->array && r->array->elemType == ElemType::I32)
        return r;
    return nullptr;
  };
  const ArrayRead *read = gatherRead(e);
  const Expr *offset = nullptr;
  if (!read) {
    if (auto *b = dyn_cast<Binary>(&e); b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub)) {
      if ((read = gatherRead(*b->lhs)))
        offset = b->rhs.get();
      else if (b->op == BinaryOp::Add && (read = gatherRead(*b->rhs)))
        offset = b->lhs.get();
    }
  }
  if (read) {
    // The gather's own indices were checked (affine, no nested gather) when `read` was resolved.
    for (bool g : read->isGather)
      if (g)
        return error(read->range, "a gather index cannot itself contain a gather");
    isGather = true;
    return !offset || checkAffine(*offset, "a gather's offset");
  }
  if (const auto *r = dyn_cast<ArrayRead>(&e); r && r->array)
    return error(e.range, "index reads array '" + r->name + "' of type " + spelling(r->array->elemType) +
                              "; only i32 arrays can be used as indices (a gather)");
  return checkAffine(e, "an index");
}

// A range read from an index array: `c in row[e]..row[e + 1]` with `row` a one-dimensional i32 input and
// `e` affine, CSR's row pointers. Any other bound that reads an array is refused: only this form has a
// check of its values before the run (non-decreasing, within what the range indexes).
bool Sema::checkRowRange(RangeBinding &binding) {
  const char *form =
      "a reduction bound that reads an array must be CSR's row range, 'c in row[e]..row[e + 1]' "
      "with row a one-dimensional i32 input";
  const auto *lo = dyn_cast<ArrayRead>(binding.lo.get());
  const auto *hi = dyn_cast<ArrayRead>(binding.hi.get());
  const Expr &culprit = lo ? *binding.hi : *binding.lo;
  if (!lo || !hi || !lo->array || lo->array != hi->array)
    return error(culprit.range, form);
  const ArrayDecl &row = *lo->array;
  if (row.elemType != ElemType::I32 || row.kind != ArrayKind::Input || row.rank() != 1)
    return error(lo->range, Twine(form) + "; '" + row.name + "' is " + spelling(row.kind) + " " +
                                spelling(row.elemType) + " of rank " + Twine(row.rank()));
  if (lo->isGather[0] || hi->isGather[0])
    return error(lo->range, "a row range's index cannot itself read an array");
  std::optional<AffineExpr> first = toAffine(*lo->indices[0], "a row range's index");
  std::optional<AffineExpr> next = toAffine(*hi->indices[0], "a row range's index");
  if (!first || !next)
    return checkAffine(*lo->indices[0], "a row range's index") &&
           checkAffine(*hi->indices[0], "a row range's index");
  if (!first->isStrictlyAffine() || !next->isStrictlyAffine())
    return error(lo->range,
                 "a row range's index must be affine: '/' and '%' may divide only integer constants there");
  auto sorted = [](auto terms) {
    std::sort(terms.begin(), terms.end());
    return terms;
  };
  if (sorted(first->params) != sorted(next->params) || sorted(first->vars) != sorted(next->vars) ||
      next->constant != first->constant + 1)
    return error(hi->range, "a row range ends where the next row begins: '" + row.name + "[e].." + row.name +
                                "[e + 1]', the same index plus one");
  binding.rowArray = &row;
  return true;
}

// Where the body indexes with a row range's variables directly: those dimensions' extents bound the
// row array's values. A row range whose variable indexes nothing directly is refused.
bool Sema::findRowTargets(RangeBinding &binding, const Expr &body) {
  std::function<void(const Expr &)> visit = [&](const Expr &e) {
    if (const auto *read = dyn_cast<ArrayRead>(&e)) {
      for (unsigned d = 0; d < read->indices.size(); ++d)
        if (const auto *ref = dyn_cast<VarRef>(read->indices[d].get()))
          if (const auto *iv = std::get_if<IndexVarRef>(&ref->binding))
            for (const auto &var : binding.vars)
              if (iv->var == var.get() && read->array)
                binding.rowTargets.push_back({read->array, d});
    }
    forEachChild(e, visit);
  };
  visit(body);
  if (!binding.rowTargets.empty())
    return true;
  return error(binding.lo->range, "the variable of a row range must index an array directly (col[" +
                                      binding.vars.front()->name + "]), whose extent bounds '" +
                                      binding.rowArray->name + "' at run time");
}

bool Sema::checkAffine(const Expr &e, const char *what) {
  AffineError err;
  if (toAffine(e, what, &err))
    return true;
  if (!err.message.empty())
    error(err.range, err.message);
  return false;
}

// A condition: affine comparisons (tuples compare element-wise) joined by && || !.
bool Sema::checkCondition(const Expr &e, const char *what, bool report) {
  auto checkAffine = [&](const Expr &x, const char *w) {
    return report ? this->checkAffine(x, w) : toAffine(x, w).has_value();
  };
  if (const auto *u = dyn_cast<Unary>(&e); u && u->op == UnaryOp::Not)
    return checkCondition(*u->operand, what, report);
  if (const auto *b = dyn_cast<Binary>(&e)) {
    switch (b->op) {
    case BinaryOp::And:
    case BinaryOp::Or: {
      bool ok = checkCondition(*b->lhs, what, report);
      return checkCondition(*b->rhs, what, report) && ok;
    }
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne: {
      if (const auto *lt = dyn_cast<Tuple>(b->lhs.get())) {
        const auto *rt = cast<Tuple>(b->rhs.get()); // resolve() checked the shapes
        bool ok = true;
        for (size_t i = 0; i < lt->elements.size(); ++i) {
          ok &= checkAffine(*lt->elements[i], what);
          ok &= checkAffine(*rt->elements[i], what);
        }
        return ok;
      }
      bool ok = checkAffine(*b->lhs, what);
      return checkAffine(*b->rhs, what) && ok;
    }
    default:
      break;
    }
  }
  return report && error(e.range, Twine(what) + " must be affine comparisons joined by '&&', '||' and '!'");
}

// Shapes and repeat bounds: affine in params and integer consts (and, for a fixed left-hand index,
// the enclosing repeat variable).
bool Sema::checkParamsAndConstsOnly(const Expr &e, const char *what, const RepeatBlock *allowedRepeat,
                                    bool shapeDivision) {
  AffineError err;
  std::optional<AffineExpr> a = toAffine(e, what, &err);
  if (!a) {
    if (!err.message.empty())
      error(err.range, err.message);
    return false;
  }
  if (!a->isStrictlyAffine() && !(shapeDivision && extentForm(*a)))
    return error(e.range,
                 Twine(what) + (shapeDivision ? " must be affine in params and integer constants, or "
                                                "such an expression divided by a positive constant, "
                                                "'(H + 1) / 2'"
                                              : " must be affine: '/' and '%' may divide only integer "
                                                "constants here"));
  for (auto &[var, coeff] : a->vars) {
    if (allowedRepeat && var == allowedRepeat->var.get())
      continue;
    return error(e.range, Twine(what) + " may use only params, integer constants" +
                              (allowedRepeat ? " and the repeat variable" : "") + ", not index variable '" +
                              var->name + "'");
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Declarations and statements

void Sema::checkFunc(FuncDecl &f) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (f.params[j] == f.params[i]) {
        error(f.paramRanges[i], "duplicate argument '" + f.params[i] + "' of function '" + f.name + "'");
        diags_.note(f.paramRanges[j], "previous definition is here");
      }
    }
    if (const GlobalSymbol *sym = lookupGlobal(f.params[i]);
        sym && (sym->kind == GlobalSymbol::Param || sym->kind == GlobalSymbol::Const)) {
      error(f.paramRanges[i], "argument '" + f.params[i] + "' shadows the " + kindName(sym->kind) +
                                  " of that name");
      diags_.note(sym->range, Twine("the ") + kindName(sym->kind) + " is declared here");
    }
  }
  Scope scope;
  scope.func = &f;
  resolve(*f.body, scope);
}

void Sema::checkArrayDecl(ArrayDecl &a) {
  a.effectiveBoundary = a.boundary ? *a.boundary : program_.defaultBoundary;
  Scope scope;
  // The bytes of the constant extents: an array whose size cannot be a 64-bit number whatever the params
  // is an error here (param-dependent sizes are checked by the runtime, against the params given).
  int64_t bytes = a.elemType == ElemType::F64 ? 8 : 4;
  bool overflows = false, empty = false;
  for (auto &extent : a.shape) {
    if (!resolve(*extent, scope) || !checkParamsAndConstsOnly(*extent, "a shape extent", nullptr, true))
      continue;
    std::optional<AffineExpr> v = toAffine(*extent, "a shape extent");
    if (v && v->isConstant() && v->constant < 0)
      error(extent->range, "shape extent of array '" + a.name + "' is negative (" + Twine(v->constant) + ")");
    else if (v && v->isConstant()) {
      overflows |= __builtin_mul_overflow(bytes, v->constant, &bytes);
      empty |= v->constant == 0;
    }
  }
  if (overflows && !empty)
    error(a.range, "array '" + a.name + "' is too large: its size in bytes overflows a 64-bit integer");
}

// A left-hand position fixed by params, constants and the repeat variable (`r[0, j]`, `loss[e]`).
static bool isFixedPosition(const AffineExpr &a, const RepeatBlock *repeat) {
  return a.isStrictlyAffine() &&
         all_of(a.vars, [&](auto &term) { return repeat && term.first == repeat->var.get(); });
}

void Sema::checkEquation(Equation &eq, const RepeatBlock *repeat) {
  eq.enclosingRepeat = repeat;
  eq.indexVars.clear();
  eq.indexVars.resize(eq.lhsIndices.size());
  const GlobalSymbol *sym = lookupGlobal(eq.target);
  bool targetOk = true;
  if (!sym) {
    targetOk = error(eq.lhsRange, "unknown array '" + eq.target + "'");
  } else if (sym->kind != GlobalSymbol::Array) {
    targetOk = error(eq.lhsRange, Twine("cannot define '") + eq.target + "': it is " + kindWithArticle(sym->kind) +
                                      ", not an array");
    diags_.note(sym->range, Twine("the ") + kindName(sym->kind) + " is declared here");
  } else {
    const auto *a = static_cast<const ArrayDecl *>(sym->decl);
    eq.array = a;
    if (a->kind == ArrayKind::Input) {
      targetOk = error(eq.lhsRange, "cannot write to input array '" + eq.target + "'");
      diags_.note(a->range, "'" + eq.target + "' is declared as an input here");
    } else if (eq.op == AssignOp::Assign && a->kind == ArrayKind::InOut) {
      targetOk = error(eq.lhsRange, "inout array '" + eq.target + "' can only be updated with '+=' or '-='");
      diags_.note(a->range, "'" + eq.target + "' is declared as inout here");
    } else if (a->kind != ArrayKind::InOut) {
      targetOk = checkUpdateOrder(eq, *a, repeat);
    }
    if (a->rank() != eq.lhsIndices.size()) {
      targetOk = error(eq.lhsRange, "array '" + eq.target + "' has " + Twine(a->rank()) +
                                        (a->rank() == 1 ? " dimension" : " dimensions") + " but is defined with " +
                                        Twine(eq.lhsIndices.size()) +
                                        (eq.lhsIndices.size() == 1 ? " index" : " indices"));
      diags_.note(a->range, "'" + eq.target + "' is declared here");
    }
  }

  Scope scope;
  scope.repeat = repeat;
  if (repeat)
    scope.vars.push_back(repeat->var.get());
  // Fresh identifiers on the left bind index variables; every other position is fixed.
  bool ok = targetOk;
  auto namesScatterVar = [&](StringRef name) {
    return any_of(eq.scatterBindings, [&](const RangeBinding &b) {
      return any_of(b.vars, [&](const auto &v) { return v->name == name; });
    });
  };
  for (size_t k = 0; k < eq.lhsIndices.size(); ++k) {
    auto *ref = dyn_cast<VarRef>(eq.lhsIndices[k].get());
    if (!ref || lookupGlobal(ref->name) || (repeat && repeat->var->name == ref->name) ||
        namesScatterVar(ref->name))
      continue;
    bool duplicate = false;
    for (size_t j = 0; j < k; ++j) {
      if (eq.indexVars[j] && eq.indexVars[j]->name == ref->name) {
        error(ref->range, "index variable '" + ref->name + "' appears twice on the left-hand side");
        diags_.note(eq.indexVars[j]->range, "first bound here");
        duplicate = true;
      }
    }
    if (duplicate) {
      ok = false;
      continue;
    }
    eq.indexVars[k] = std::make_unique<IndexVar>(IndexVar{ref->name, ref->range});
    ref->binding = IndexVarRef{eq.indexVars[k].get()};
  }
  // A scatter's variables: bounds see the repeat variable, the left-hand variables and earlier bindings.
  Scope scatterScope = scope;
  for (auto &v : eq.indexVars)
    if (v)
      scatterScope.vars.push_back(v.get());
  ok &= checkScatterBindings(eq, scatterScope);
  eq.computedIndex.assign(eq.lhsIndices.size(), false);
  for (size_t k = 0; k < eq.lhsIndices.size(); ++k) {
    if (eq.indexVars[k])
      continue;
    Expr &index = *eq.lhsIndices[k];
    if (auto *ref = dyn_cast<VarRef>(&index)) {
      if (const GlobalSymbol *g = lookupGlobal(ref->name);
          g && (g->kind == GlobalSymbol::Array || g->kind == GlobalSymbol::Func)) {
        ok = error(index.range, Twine("'") + ref->name + "' is " + (g->kind == GlobalSymbol::Array ? "an array" : "a function") +
                                    " and cannot be used as an index variable");
        diags_.note(g->range, "declared here");
        continue;
      }
    }
    // Resolve with the left-hand variables visible, so that `A[i, i + 1]` is reported as what it is.
    Scope fixedScope = scatterScope;
    if (!resolve(index, fixedScope)) {
      ok = false;
      continue;
    }
    AffineError err;
    std::optional<AffineExpr> a = toAffine(index, "a left-hand index", &err);
    if (eq.isScatter() && !(a && isFixedPosition(*a, repeat))) {
      eq.computedIndex[k] = true;
      ok &= checkComputedIndex(index);
      continue;
    }
    if (!a) {
      if (!err.message.empty()) {
        error(err.range, err.message);
        if (eq.op != AssignOp::Assign)
          diags_.note(index.range, "an index computed at each point makes a scatter, which names its points "
                                   "with 'for': 'A[bin[i]] += 1 for i in 0..N;'");
      }
      ok = false;
      continue;
    }
    if (!isFixedPosition(*a, repeat))
      ok = error(index.range, "a left-hand index must be a fresh index variable or an affine expression of "
                              "params, constants and the repeat variable");
  }
  scope = scatterScope;
  for (const RangeBinding &b : eq.scatterBindings)
    for (const auto &v : b.vars)
      scope.vars.push_back(v.get());
  if (eq.where && eq.isScatter()) {
    Scope whereScope = scope;
    if (resolve(*eq.where, whereScope)) {
      eq.dataCondition = !checkCondition(*eq.where, "a where condition", /*report=*/false);
      if (eq.dataCondition && holdsReduction(*eq.where))
        ok = error(eq.where->range, "a scatter's where condition that reads data cannot hold a reduction");
    } else {
      ok = false;
    }
  } else if (eq.where) {
    Scope whereScope = scope;
    if (resolve(*eq.where, whereScope) && checkCondition(*eq.where, "a where condition")) {
      if (repeat) {
        // The exactly-once rule treats a repeat block's equations as the same in every iteration,
        // except for left-hand positions that name the repeat variable.
        std::vector<const Expr *> stack{eq.where.get()};
        while (!stack.empty()) {
          const Expr *x = stack.back();
          stack.pop_back();
          if (auto *r = dyn_cast<VarRef>(x)) {
            if (auto *iv = std::get_if<IndexVarRef>(&r->binding); iv && iv->var == repeat->var.get()) {
              ok = error(r->range, "the repeat variable '" + r->name +
                                       "' cannot appear in a where condition (use select() in the right-hand side)");
              break;
            }
          } else if (auto *u = dyn_cast<Unary>(x)) {
            stack.push_back(u->operand.get());
          } else if (auto *b = dyn_cast<Binary>(x)) {
            stack.push_back(b->lhs.get());
            stack.push_back(b->rhs.get());
          } else if (auto *t = dyn_cast<Tuple>(x)) {
            for (auto &el : t->elements)
              stack.push_back(el.get());
          }
        }
      }
    } else {
      ok = false;
    }
  }
  ok &= resolve(*eq.rhs, scope);
  if (ok && eq.isScatter())
    checkScatter(eq);
}

// `for y in 0..H, x in 0..W`: fresh names over affine ranges (a row range would need its run-time check
// to bound a scatter's points, which it does not have).
bool Sema::checkScatterBindings(Equation &eq, Scope &scope) {
  bool ok = true;
  for (RangeBinding &binding : eq.scatterBindings) {
    bool boundsOk = resolve(*binding.lo, scope);
    boundsOk = resolve(*binding.hi, scope) && boundsOk;
    if (boundsOk) {
      boundsOk = checkAffine(*binding.lo, "a scatter's range bound");
      boundsOk &= checkAffine(*binding.hi, "a scatter's range bound");
    }
    ok &= boundsOk;
    for (auto &var : binding.vars) {
      ok &= checkFreshName(*var, scope, "scatter variable");
      scope.vars.push_back(var.get());
    }
  }
  return ok;
}

// A computed index: any value, computed at each point; a reduction would make one point many.
bool Sema::checkComputedIndex(const Expr &index) {
  if (holdsReduction(index))
    return error(index.range, "a scatter's computed index cannot hold a reduction");
  return true;
}

// A scatter adds to the elements its points name; it reads none of the array it updates (each point
// would see some of the others' additions and not others).
void Sema::checkScatter(const Equation &eq) {
  if (eq.op == AssignOp::Assign) {
    error(eq.lhsRange, "a scatter ('for') adds to the elements its points name: write '+=' or '-=', after "
                       "an '=' equation that gives the array its first values");
    return;
  }
  std::vector<const Expr *> stack{eq.rhs.get()};
  if (eq.where)
    stack.push_back(eq.where.get());
  for (const auto &index : eq.lhsIndices)
    stack.push_back(index.get());
  while (!stack.empty()) {
    const Expr *x = stack.back();
    stack.pop_back();
    const ArrayDecl *read = nullptr;
    if (const auto *r = dyn_cast<ArrayRead>(x))
      read = r->array;
    else if (const auto *v = dyn_cast<VarRef>(x); v && std::holds_alternative<const ArrayDecl *>(v->binding))
      read = std::get<const ArrayDecl *>(v->binding);
    if (read && read == eq.array) {
      error(x->range, "a scatter cannot read the array it updates, '" + eq.target +
                          "': copy it first (each point would see some of the other points' additions)");
      return;
    }
    forEachChild(*x, [&](const Expr &c) { stack.push_back(&c); });
  }
}

// A local or output array may be updated (`+=`, `-=`) once it is defined: all of its `=` equations come
// before its first update in the text, none inside a repeat block (which would define it afresh in
// every iteration, under the updates).
bool Sema::checkUpdateOrder(const Equation &eq, const ArrayDecl &a, const RepeatBlock *repeat) {
  Definitions &d = definitions_[&a];
  const char *kind = a.kind == ArrayKind::Local ? "local" : "output";
  if (eq.op == AssignOp::Assign) {
    if (d.firstUpdate) {
      error(eq.lhsRange, Twine("'") + eq.target +
                             "' is defined after it is updated: its '=' equations must "
                             "come before its updates");
      diags_.note(d.firstUpdate->lhsRange, "first updated here");
      return false;
    }
    if (!d.first)
      d.first = &eq;
    if (repeat && !d.inRepeat)
      d.inRepeat = &eq;
    return true;
  }
  if (!d.first) {
    error(eq.lhsRange, Twine("'") + spelling(eq.op) + "' needs a value to update: " + kind + " array '" +
                           eq.target + "' has no '=' equation before it (or declare it inout)");
    diags_.note(a.range, "'" + eq.target + "' is declared here");
    return false;
  }
  if (d.inRepeat) {
    error(eq.lhsRange, Twine("'") + eq.target +
                           "' is defined inside a repeat block, afresh in every "
                           "iteration, so it cannot be updated: define it before the block");
    diags_.note(d.inRepeat->lhsRange, "defined here");
    return false;
  }
  if (!d.firstUpdate)
    d.firstUpdate = &eq;
  return true;
}

// `until unchanged(A, ...)`: each name an array the block updates, named once. The block's left-hand
// sides may not use the repeat variable: the elements of the iterations that do not run would stay
// undefined.
void Sema::checkUntil(RepeatBlock &block) {
  block.watched.clear();
  for (size_t i = 0; i < block.untilUnchanged.size(); ++i) {
    const std::string &name = block.untilUnchanged[i];
    SMRange range = block.untilRanges[i];
    const GlobalSymbol *sym = lookupGlobal(name);
    if (!sym) {
      error(range, "unknown array '" + name + "'");
      continue;
    }
    if (sym->kind != GlobalSymbol::Array) {
      error(range, Twine("'") + name + "' is " + kindWithArticle(sym->kind) + ", not an array");
      diags_.note(sym->range, Twine("the ") + kindName(sym->kind) + " is declared here");
      continue;
    }
    const auto *a = static_cast<const ArrayDecl *>(sym->decl);
    if (llvm::is_contained(block.watched, a)) {
      error(range, "'" + name + "' is named twice in 'unchanged('");
      continue;
    }
    bool updated =
        llvm::any_of(block.body, [&](auto &eq) { return eq->array == a && eq->op != AssignOp::Assign; });
    if (auto scatter = find_if(block.body, [&](auto &eq) { return eq->array == a && eq->isScatter(); });
        scatter != block.body.end()) {
      error(range, "'" + name + "' is updated by a scatter ('for'), whose changes the loop cannot watch");
      diags_.note((*scatter)->lhsRange, "the scatter is here");
      continue;
    }
    if (!updated) {
      error(range, "'" + name +
                       "' is not updated in this repeat block, so it never changes: 'until "
                       "unchanged(...)' names arrays that the block updates with '+=' or '-='");
      continue;
    }
    block.watched.push_back(a);
  }
  for (auto &eq : block.body)
    for (auto &index : eq->lhsIndices) {
      bool usesVar = false;
      std::vector<const Expr *> stack{index.get()};
      while (!stack.empty() && !usesVar) {
        const Expr *x = stack.back();
        stack.pop_back();
        if (auto *r = dyn_cast<VarRef>(x))
          if (auto *iv = std::get_if<IndexVarRef>(&r->binding); iv && iv->var == block.var.get())
            usesVar = true;
        forEachChild(*x, [&](const Expr &c) { stack.push_back(&c); });
      }
      if (usesVar) {
        error(index->range, "in a block that stops early ('until'), the repeat variable '" + block.var->name +
                                "' cannot index a left-hand side: the iterations that do not run would leave "
                                "their elements undefined");
        break;
      }
    }
}

void Sema::checkRepeat(RepeatBlock &block) {
  Scope outer;
  if (resolve(*block.lo, outer))
    checkParamsAndConstsOnly(*block.lo, "a repeat bound", nullptr);
  if (resolve(*block.hi, outer))
    checkParamsAndConstsOnly(*block.hi, "a repeat bound", nullptr);
  checkFreshName(*block.var, outer, "repeat variable");
  for (auto &eq : block.body)
    checkEquation(*eq, &block);
  if (block.stopsWhenUnchanged())
    checkUntil(block);
}

bool Sema::run() {
  declareGlobals();
  // Consts and functions in textual order: each may use only earlier ones.
  for (auto &c : program_.consts)
    checkConst(*c);
  for (auto &a : program_.arrays)
    checkArrayDecl(*a);
  for (auto &f : program_.funcs)
    checkFunc(*f);
  for (Statement s : program_.statements) {
    if (diags_.tooMany())
      return false;
    if (auto *eq = std::get_if<Equation *>(&s))
      checkEquation(**eq, nullptr);
    else
      checkRepeat(*std::get<RepeatBlock *>(s));
  }
  if (diags_.hadError())
    return false;
  return checkDefinitions(program_, diags_);
}

bool polyc::dsl::checkProgram(Program &program, DiagnosticEngine &diags) {
  return Sema(program, diags).run();
}
