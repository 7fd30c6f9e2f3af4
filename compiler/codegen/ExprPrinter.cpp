// Printing of statement right-hand sides as C-family source (see ExprPrinter.h): values in the
// equation's element type, indices in the index type, boundary rules only where isl cannot prove a
// read in range, reductions as accumulation loops.
#include "compiler/codegen/ExprPrinter.h"

#include "compiler/codegen/IndexExprs.h"
#include "compiler/codegen/ProgramInterface.h"
#include "dsl/Affine.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/ErrorHandling.h"

#include <isl/aff.h>
#include <isl/local_space.h>
#include <isl/set.h>

#include <cassert>
#include <cmath>
#include <cstdio>

using namespace polyc;
using namespace polyc::codegen;
using llvm::dyn_cast;

namespace {
// C precedence levels, loosest first; Atom covers names, literals, calls and parenthesised text.
enum Prec { Ternary = 0, Or, And, Equality, Relational, Additive, Multiplicative, Unary, Atom };
} // namespace

struct ExprPrinter::Code {
  std::string text;
  int prec = Atom;
};

struct ExprPrinter::Scope {
  const model::Statement *statement = nullptr; // null inside a func body
  const ast::FuncDecl *func = nullptr;         // the func being printed, if any
  std::map<const ast::IndexVar *, std::string> vars;
  std::vector<std::string> funcArgs; // by position
  NameScope names;
  // The statement's dimensions and the variables of the reductions around the code being printed,
  // with their ranges: the space in which boundsChecks asks isl whether an index can leave its array.
  std::vector<const ast::IndexVar *> dimVars;
  struct ReductionVar {
    const ast::IndexVar *var;
    const ast::RangeBinding *binding;
  };
  std::vector<ReductionVar> reductionVars;
  unsigned reductionDepth = 0;
  unsigned counter = 0;
};

// Model::findArray without depending on the model library's definition of it.
static const model::ArrayInfo *findArray(const model::Model &model, const std::string &name) {
  for (const model::ArrayInfo &a : model.arrays)
    if (a.name == name)
      return &a;
  return nullptr;
}

static std::string wrapIf(const std::string &text, int prec, int needed) {
  return prec < needed ? "(" + text + ")" : text;
}

// Whether `text` reads as one operand without parentheses: a name, a number, a call, an element
// access or a fully parenthesised expression.
static bool isAtomText(const std::string &text) {
  if (text.empty())
    return true;
  size_t i = 0;
  while (i < text.size() && (isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' ||
                             text[i] == '.' || text[i] == ':'))
    ++i;
  while (i < text.size() && (text[i] == '(' || text[i] == '[')) {
    int depth = 0;
    size_t j = i;
    for (; j < text.size(); ++j) {
      if (text[j] == '(' || text[j] == '[')
        ++depth;
      else if ((text[j] == ')' || text[j] == ']') && --depth == 0)
        break;
    }
    if (j >= text.size())
      return false;
    i = j + 1;
  }
  return i == text.size();
}

static std::string parenthesize(const std::string &text) {
  return isAtomText(text) ? text : "(" + text + ")";
}

static const char *binarySpelling(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Add: return "+";
  case ast::BinaryOp::Sub: return "-";
  case ast::BinaryOp::Mul: return "*";
  case ast::BinaryOp::Div: return "/";
  case ast::BinaryOp::Mod: return "%";
  case ast::BinaryOp::Lt: return "<";
  case ast::BinaryOp::Le: return "<=";
  case ast::BinaryOp::Gt: return ">";
  case ast::BinaryOp::Ge: return ">=";
  case ast::BinaryOp::Eq: return "==";
  case ast::BinaryOp::Ne: return "!=";
  case ast::BinaryOp::And: return "&&";
  case ast::BinaryOp::Or: return "||";
  }
  llvm_unreachable("unknown binary operator");
}

static bool isComparison(ast::BinaryOp op) {
  return op == ast::BinaryOp::Lt || op == ast::BinaryOp::Le || op == ast::BinaryOp::Gt ||
         op == ast::BinaryOp::Ge || op == ast::BinaryOp::Eq || op == ast::BinaryOp::Ne;
}

static bool isLogical(ast::BinaryOp op) { return op == ast::BinaryOp::And || op == ast::BinaryOp::Or; }

// An integer constant expression: literals and integer constants joined by + - * / % (Sema folds them,
// / and % truncating as in C).
using dsl::isIntegerConstant;
using dsl::isIntegerExpr;

// ---------------------------------------------------------------------------------------------
// Construction and names

ExprPrinter::ExprPrinter(const model::Model &model, const schedule::Schedule &schedule)
    : model_(model), schedule_(schedule) {
  takeGlobalNames(*model.program, globalNames_);
  computeFuncParams();
}

std::vector<std::string> ExprPrinter::dimNames(const model::Statement &statement) const {
  std::vector<std::string> names;
  NameScope scope = globalNames_;
  for (const std::string &dim : statement.dimNames)
    names.push_back(scope.fresh(cIdentifier(dim)));
  return names;
}

void ExprPrinter::setReadStorage(const std::string &array, const std::string &storage) {
  readStorage_[array] = storage;
}

// ---------------------------------------------------------------------------------------------
// Dialect defaults (C++17)

std::string ExprPrinter::typeName(ast::ElemType type) const {
  switch (type) {
  case ast::ElemType::F32: return "float";
  case ast::ElemType::F64: return "double";
  case ast::ElemType::I32: return "int32_t";
  }
  llvm_unreachable("unknown element type");
}

std::string ExprPrinter::mathFunction(ast::Builtin fn, ast::ElemType type) const {
  bool f32 = type == ast::ElemType::F32;
  if (type == ast::ElemType::I32) {
    // Integer equations: abs, min and max stay integral; the others go through double (see call()).
    switch (fn) {
    case ast::Builtin::Abs: return "std::abs";
    case ast::Builtin::Min: return "std::min";
    case ast::Builtin::Max: return "std::max";
    default: return "";
    }
  }
  switch (fn) {
  case ast::Builtin::Exp: return f32 ? "expf" : "exp";
  case ast::Builtin::Log: return f32 ? "logf" : "log";
  case ast::Builtin::Sqrt: return f32 ? "sqrtf" : "sqrt";
  case ast::Builtin::Abs: return f32 ? "fabsf" : "fabs";
  case ast::Builtin::Tanh: return f32 ? "tanhf" : "tanh";
  case ast::Builtin::Min: return f32 ? "fminf" : "fmin";
  case ast::Builtin::Max: return f32 ? "fmaxf" : "fmax";
  case ast::Builtin::Pow: return f32 ? "powf" : "pow";
  case ast::Builtin::Select: return "";
  }
  llvm_unreachable("unknown builtin");
}

std::string ExprPrinter::fmodFunction(ast::ElemType type) const {
  return type == ast::ElemType::F32 ? "fmodf" : "fmod";
}

std::string ExprPrinter::floorFunction(ast::ElemType type) const {
  return type == ast::ElemType::F32 ? "floorf" : "floor";
}

std::string ExprPrinter::literal(double value, ast::ElemType type) const {
  if (type == ast::ElemType::I32) {
    // A float literal in an i32 equation converts like a C cast: truncation.
    double truncated = std::trunc(value);
    if (truncated >= -2147483647.0 && truncated <= 2147483647.0)
      return std::to_string(static_cast<int64_t>(truncated));
    return truncated < 0 ? "INT32_MIN" : "INT32_MAX";
  }
  if (std::isinf(value))
    return value > 0 ? highest(type) : lowest(type);
  // The shortest text that reads back as the same value of the type.
  char buffer[64];
  for (int digits = 1; digits <= 17; ++digits) {
    if (type == ast::ElemType::F32) {
      snprintf(buffer, sizeof buffer, "%.*g", digits, static_cast<double>(static_cast<float>(value)));
      if (strtof(buffer, nullptr) == static_cast<float>(value))
        break;
    } else {
      snprintf(buffer, sizeof buffer, "%.*g", digits, value);
      if (strtod(buffer, nullptr) == value)
        break;
    }
  }
  std::string text = buffer;
  if (text.find_first_of(".eEn") == std::string::npos) // "1" -> "1.0"; keep "1e-09", "nan"
    text += ".0";
  return type == ast::ElemType::F32 ? text + "f" : text;
}

std::string ExprPrinter::lowest(ast::ElemType type) const {
  switch (type) {
  case ast::ElemType::F32: return "-FLT_MAX";
  case ast::ElemType::F64: return "-DBL_MAX";
  case ast::ElemType::I32: return "INT32_MIN";
  }
  llvm_unreachable("unknown element type");
}

std::string ExprPrinter::highest(ast::ElemType type) const {
  switch (type) {
  case ast::ElemType::F32: return "FLT_MAX";
  case ast::ElemType::F64: return "DBL_MAX";
  case ast::ElemType::I32: return "INT32_MAX";
  }
  llvm_unreachable("unknown element type");
}

std::string ExprPrinter::convert(const std::string &expr, ast::ElemType to) const {
  return typeName(to) + "(" + expr + ")";
}

std::string ExprPrinter::indexCast(const std::string &expr) const { return indexType() + "(" + expr + ")"; }

// ---------------------------------------------------------------------------------------------
// Storage

const schedule::FoldedStorage *ExprPrinter::folding(const std::string &array, unsigned dim) const {
  for (const schedule::FoldedStorage &f : schedule_.folded)
    if (f.array == array && f.dim == dim)
      return &f;
  return nullptr;
}

std::string ExprPrinter::extent(const model::ArrayInfo &array, unsigned dim) const {
  assert(array.decl && dim < array.decl->rank());
  return paramIndex(*array.decl->shape[dim]);
}

std::string ExprPrinter::paramIndex(const ast::Expr &expr) const {
  CodeWriter unused;
  return const_cast<ExprPrinter *>(this)->index(expr, unused).text;
}

// The window as the schedule names it when that is a constant's name (L), else its value.
static std::string windowText(const schedule::FoldedStorage &f) {
  bool isName = !f.window.empty() && (isalpha(static_cast<unsigned char>(f.window[0])) || f.window[0] == '_') &&
                llvm::all_of(f.window, [](char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (isName)
    return cIdentifier(f.window);
  return f.windowValue > 0 ? std::to_string(f.windowValue) : f.window;
}

std::string ExprPrinter::elementIndex(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices) const {
  if (indices.empty())
    return "0";
  std::string offset;
  for (unsigned d = 0; d < indices.size(); ++d) {
    std::string idx = indices[d];
    std::string ext = extent(array, d);
    if (auto *f = folding(array.name, d)) {
      // Reads reach here only in range (after the boundary rule), so a plain % is a floor modulo.
      int64_t constant = 0;
      if (f->windowValue == 1)
        idx = "0"; // one slot: every index is slot 0
      else if (f->windowValue > 0 && !llvm::StringRef(idx).getAsInteger(10, constant) && constant >= 0)
        idx = std::to_string(constant % f->windowValue);
      else
        idx = parenthesize(idx) + " % " + windowText(*f);
      ext = windowText(*f);
    }
    if (d == 0)
      offset = indices.size() == 1 ? idx : parenthesize(idx);
    else
      offset = (d == 1 ? offset : "(" + offset + ")") + " * " + parenthesize(ext) + " + " +
               parenthesize(idx);
  }
  return offset;
}

std::string ExprPrinter::storageSize(const model::ArrayInfo &array) const {
  if (array.decl->rank() == 0)
    return "1";
  std::string size;
  for (unsigned d = 0; d < array.decl->rank(); ++d) {
    std::string ext = extent(array, d);
    if (auto *f = folding(array.name, d))
      ext = windowText(*f);
    size += (d ? " * " : "") + parenthesize(ext);
  }
  return size;
}

std::vector<std::string> ExprPrinter::wholeExtents(const model::ArrayInfo &array) const {
  std::vector<std::string> extents;
  for (unsigned d = 0; d < array.decl->rank(); ++d)
    extents.push_back(extent(array, d));
  return extents;
}

std::string ExprPrinter::checkedStorageSize(const model::ArrayInfo &array) const {
  if (array.decl->rank() == 0)
    return "1";
  std::vector<std::string> extents;
  for (unsigned d = 0; d < array.decl->rank(); ++d) {
    auto *f = folding(array.name, d);
    extents.push_back(f ? windowText(*f) : extent(array, d));
  }
  return "polyc::rt::localElements(\"" + array.name + "\", {" + llvm::join(extents, ", ") + "}, sizeof(" +
         typeName(array.decl->elemType) + "))";
}

// ---------------------------------------------------------------------------------------------
// Helpers and user functions

// The index helpers as templates computing in the wider of their arguments' signed types (int where
// both are int; an unsigned lane or block index taken as signed): CUDA's kernels index in int or int64_t.
// `q` qualifies each function.
static void printGenericIndexHelpers(const std::string &q, CodeWriter &w) {
  w.comment("The type the index helpers compute in: the wider of their arguments' signed types.");
  w.line("template <typename A, typename B>");
  w.line("using polyc_common = std::common_type_t<std::make_signed_t<A>, std::make_signed_t<B>>;");
  auto helper = [&](const std::string &text) {
    w.line("template <typename A, typename B, typename T = polyc_common<A, B>>");
    w.line(q + "T " + text);
  };
  w.comment("Index arithmetic as isl defines it: floor division and a modulo that is never negative.");
  helper("polyc_min(A a, B b) { return T(a) < T(b) ? T(a) : T(b); }");
  helper("polyc_max(A a, B b) { return T(a) > T(b) ? T(a) : T(b); }");
  helper("polyc_mod(A a, B b) { T r = T(a) % T(b); return r < 0 ? r + T(b) : r; }");
  helper("polyc_floord(A a, B b) { return (T(a) - polyc_mod(a, b)) / T(b); }");
  w.blank();
  w.comment("Boundary rules: clamp to [0, n - 1]; mirror reflects without repeating the edge, then clamps.");
  helper("polyc_clamp(A i, B n) { return T(i) < 0 ? T(0) : (T(i) >= T(n) ? T(n) - 1 : T(i)); }");
  helper("polyc_mirror(A i, B n) {");
  w.line("  const T x = i, m = n;");
  w.line("  return polyc_clamp(x < 0 ? -x : (x >= m ? 2 * (m - 1) - x : x), m);");
  w.line("}");
}

void ExprPrinter::printHelpers(CodeWriter &w) const {
  std::string q = functionQualifier() + " ";
  std::string i32 = typeName(ast::ElemType::I32);
  if (genericIndexHelpers()) {
    printGenericIndexHelpers(q, w);
  } else {
    std::string ix = indexType();
    w.comment("Index arithmetic as isl defines it: floor division and a modulo that is never negative.");
    w.line(q + ix + " polyc_min(" + ix + " a, " + ix + " b) { return a < b ? a : b; }");
    w.line(q + ix + " polyc_max(" + ix + " a, " + ix + " b) { return a > b ? a : b; }");
    w.line(q + ix + " polyc_mod(" + ix + " a, " + ix + " b) { " + ix + " r = a % b; return r < 0 ? r + b : r; }");
    w.line(q + ix + " polyc_floord(" + ix + " a, " + ix + " b) { return (a - polyc_mod(a, b)) / b; }");
    w.blank();
    w.comment("Boundary rules: clamp to [0, n - 1]; mirror reflects without repeating the edge, then clamps.");
    w.line(q + ix + " polyc_clamp(" + ix + " i, " + ix + " n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }");
    w.line(q + ix + " polyc_mirror(" + ix + " i, " + ix + " n) {");
    w.line("  return polyc_clamp(i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i), n);");
    w.line("}");
  }
  w.blank();
  w.comment("i32 equations divide truncating, as C does, but a zero divisor gives 0 instead of a trap.");
  w.line(q + i32 + " polyc_div_i32(" + i32 + " a, " + i32 + " b) { return b == 0 ? 0 : " +
         convert(indexCast("a") + " / b", ast::ElemType::I32) + "; }");
  w.line(q + i32 + " polyc_mod_i32(" + i32 + " a, " + i32 + " b) { return b == 0 ? 0 : " +
         convert(indexCast("a") + " % b", ast::ElemType::I32) + "; }");
  // OpenCL C's abs of an int is an unsigned int (min(abs(a), b) is then ambiguous): one of the type.
  w.line(q + i32 + " polyc_abs_i32(" + i32 + " a) { return a < 0 ? -a : a; }");
}

void ExprPrinter::collectFuncUses(const ast::Expr &expr, ast::ElemType type) {
  switch (expr.kind()) {
  case ast::Expr::Kind::Call: {
    auto &c = llvm::cast<ast::Call>(expr);
    for (auto &arg : c.args)
      collectFuncUses(*arg, type);
    if (c.func) {
      std::pair<const ast::FuncDecl *, ast::ElemType> use{c.func, type};
      if (std::find(funcUses_.begin(), funcUses_.end(), use) == funcUses_.end()) {
        funcUses_.push_back(use);
        collectFuncUses(*c.func->body, type);
      }
    }
    break;
  }
  case ast::Expr::Kind::Unary:
    collectFuncUses(*llvm::cast<ast::Unary>(expr).operand, type);
    break;
  case ast::Expr::Kind::Binary:
    collectFuncUses(*llvm::cast<ast::Binary>(expr).lhs, type);
    collectFuncUses(*llvm::cast<ast::Binary>(expr).rhs, type);
    break;
  case ast::Expr::Kind::Reduction: {
    auto &r = llvm::cast<ast::Reduction>(expr);
    collectFuncUses(*r.body, type);
    if (r.where)
      collectFuncUses(*r.where, type);
    break;
  }
  case ast::Expr::Kind::Tuple:
    for (auto &e : llvm::cast<ast::Tuple>(expr).elements)
      collectFuncUses(*e, type);
    break;
  case ast::Expr::Kind::ArrayRead:
    for (auto &e : llvm::cast<ast::ArrayRead>(expr).indices)
      collectFuncUses(*e, type);
    break;
  default:
    break;
  }
}

// The params a func reads, directly or through the funcs it calls, in declaration order.
static void paramsRead(const ast::Expr &expr, std::set<const ast::ParamDecl *> &params,
                       const std::map<const ast::FuncDecl *, std::set<const ast::ParamDecl *>> &known) {
  if (auto *ref = dyn_cast<ast::VarRef>(&expr)) {
    if (auto *p = std::get_if<const ast::ParamDecl *>(&ref->binding))
      params.insert(*p);
    return;
  }
  if (auto *c = dyn_cast<ast::Call>(&expr)) {
    for (auto &arg : c->args)
      paramsRead(*arg, params, known);
    if (c->func) {
      auto it = known.find(c->func);
      if (it != known.end())
        params.insert(it->second.begin(), it->second.end());
    }
    return;
  }
  if (auto *u = dyn_cast<ast::Unary>(&expr))
    return paramsRead(*u->operand, params, known);
  if (auto *b = dyn_cast<ast::Binary>(&expr)) {
    paramsRead(*b->lhs, params, known);
    return paramsRead(*b->rhs, params, known);
  }
  if (auto *r = dyn_cast<ast::Reduction>(&expr)) {
    for (auto &binding : r->bindings) {
      paramsRead(*binding.lo, params, known);
      paramsRead(*binding.hi, params, known);
    }
    if (r->where)
      paramsRead(*r->where, params, known);
    return paramsRead(*r->body, params, known);
  }
  if (auto *t = dyn_cast<ast::Tuple>(&expr))
    for (auto &e : t->elements)
      paramsRead(*e, params, known);
}

void ExprPrinter::computeFuncParams() {
  const ast::Program &program = *model_.program;
  std::map<const ast::FuncDecl *, std::set<const ast::ParamDecl *>> known;
  for (auto &f : program.funcs) {
    std::set<const ast::ParamDecl *> params;
    paramsRead(*f->body, params, known);
    known[f.get()] = params;
    std::vector<std::string> names;
    for (auto &p : program.params)
      if (params.count(p.get()))
        names.push_back(p->name); // as written: spelled where printed (paramRef, cIdentifier)
    funcParams_[f.get()] = names;
  }
}

std::string ExprPrinter::funcName(const ast::FuncDecl &func, ast::ElemType type) const {
  unsigned types = 0;
  for (auto &use : funcUses_)
    types += use.first == &func;
  if (types <= 1)
    return cIdentifier(func.name);
  return cIdentifier(func.name + "_" + ast::spelling(type));
}

void ExprPrinter::printUserFunctions(CodeWriter &w) {
  funcUses_.clear();
  for (const model::Statement &s : model_.statements) {
    ast::ElemType type = s.equation->array->elemType;
    collectFuncUses(*s.equation->rhs, type);
  }
  // Definitions in declaration order, so a func is defined before the funcs that call it.
  for (auto &f : model_.program->funcs)
    for (ast::ElemType type : {ast::ElemType::F32, ast::ElemType::F64, ast::ElemType::I32}) {
      std::pair<const ast::FuncDecl *, ast::ElemType> use{f.get(), type};
      if (std::find(funcUses_.begin(), funcUses_.end(), use) == funcUses_.end())
        continue;
      Scope scope;
      scope.func = f.get();
      scope.names = globalNames_;
      std::string signature;
      for (const std::string &param : f->params) {
        std::string name = scope.names.fresh(cIdentifier(param));
        scope.funcArgs.push_back(name);
        signature += (signature.empty() ? "" : ", ") + typeName(type) + " " + name;
      }
      for (const std::string &param : funcParams_[f.get()])
        signature += (signature.empty() ? "" : ", ") + indexType() + " " + cIdentifier(param);
      w.comment("func " + f->name + "(" + llvm::join(f->params, ", ") + ") = " + exprText(*f->body) +
                ", in " + ast::spelling(type));
      w.openBlock(functionQualifier() + " " + typeName(type) + " " + funcName(*f, type) + "(" + signature +
                  ")");
      Scope *saved = scope_;
      scope_ = &scope;
      Code body = value(*f->body, type, w);
      scope_ = saved;
      w.line("return " + body.text + ";");
      w.closeBlock();
      w.blank();
    }
}

// ---------------------------------------------------------------------------------------------
// Statements

ExprPrinter::Scope ExprPrinter::statementScope(const model::Statement &statement) const {
  const ast::Equation &eq = *statement.equation;
  Scope scope;
  scope.statement = &statement;
  scope.names = globalNames_;
  std::vector<std::string> dims = dimNames(statement);
  for (const std::string &d : dims)
    scope.names.take(d);
  unsigned next = 0;
  if (statement.repeatDims && eq.enclosingRepeat) {
    scope.vars[eq.enclosingRepeat->var.get()] = dims[next];
    scope.dimVars.push_back(eq.enclosingRepeat->var.get());
  }
  next = statement.repeatDims;
  for (auto &var : eq.indexVars)
    if (var && next < dims.size()) {
      scope.vars[var.get()] = dims[next++];
      scope.dimVars.push_back(var.get());
    }
  for (const ast::RangeBinding &binding : eq.scatterBindings)
    for (const auto &var : binding.vars)
      if (next < dims.size()) {
        scope.vars[var.get()] = dims[next++];
        scope.dimVars.push_back(var.get());
      }
  return scope;
}

std::string ExprPrinter::printPart(const model::Statement &statement, const ast::Expr &expr, CodeWriter &w,
                                   const ast::Reduction *around) {
  Scope scope = statementScope(statement);
  if (around)
    for (const ast::RangeBinding &binding : around->bindings)
      for (auto &var : binding.vars) {
        scope.names.take(cIdentifier(var->name));
        scope.vars[var.get()] = cIdentifier(var->name);
        scope.reductionVars.push_back({var.get(), &binding});
      }
  Scope *saved = scope_;
  scope_ = &scope;
  Code part = value(expr, statement.equation->array->elemType, w);
  scope_ = saved;
  return part.text;
}

void ExprPrinter::printStatement(const model::Statement &statement, CodeWriter &w) {
  if (const Package *package = printsPackages() ? packageOf(statement) : nullptr) {
    const model::Statement &head = model_.statements[package->statements.front()];
    if (&head == &statement)
      printPackage(*package, w);
    else
      w.comment(statement.name + " is computed with " + head.name + ", in one package.");
    return;
  }
  const ast::Equation &eq = *statement.equation;
  Scope scope = statementScope(statement);
  Scope *saved = scope_;
  scope_ = &scope;
  ast::ElemType type = eq.array->elemType;
  const model::ArrayInfo *array = findArray(model_, eq.array->name);
  assert(array && "the model has every array of the program");
  // A scatter's point adds only where its condition holds and its computed indices name an element.
  unsigned scatterBlocks = 0;
  if (eq.dataCondition) {
    // Its comparisons are of values, computed in double whatever the equation's type (docs/language.md).
    w.openBlock("if (" + condition(*eq.where, ast::ElemType::F64, w).text + ")");
    ++scatterBlocks;
  }
  std::vector<std::string> lhs, scatterTests;
  for (unsigned k = 0; k < eq.lhsIndices.size(); ++k) {
    if (k < eq.indexVars.size() && eq.indexVars[k])
      lhs.push_back(scope.vars[eq.indexVars[k].get()]);
    else if (k < eq.computedIndex.size() && eq.computedIndex[k])
      lhs.push_back(computedIndex(*eq.lhsIndices[k], *array, k, scatterTests, w));
    else
      lhs.push_back(index(*eq.lhsIndices[k], w).text);
  }
  if (!scatterTests.empty()) {
    w.openBlock("if (" + llvm::join(scatterTests, " && ") + ")");
    ++scatterBlocks;
  }
  const ast::Reduction *split = statement.reductions.empty() ? nullptr : statement.reductions[0].reduction;
  auto splitting = split ? splitReductions_.find(split) : splitReductions_.end();
  const bool oneValue = splitting != splitReductions_.end() && splitting->second.oneValue;
  splitElement_ = oneValue ? "0" : elementIndex(*array, lhs);
  if (splitPass == SplitPass::Partial && splitting != splitReductions_.end() && !splitting->second.buffer.empty()) {
    Code partial = value(*split, type, w);
    printStore(*array, lhs, splitting->second.buffer + "[" + splitElement_ + "]", " = ", partial.text, w);
    scope_ = saved;
    return;
  }
  Code rhs = value(*eq.rhs, type, w);
  const char *op = eq.op == ast::AssignOp::Assign ? " = " : eq.op == ast::AssignOp::AddAssign ? " += " : " -= ";
  storing_ = &statement;
  printStore(*array, lhs, storeRef(*array) + "[" + elementIndex(*array, lhs) + "]", op, rhs.text, w);
  storing_ = nullptr;
  for (; scatterBlocks > 0; --scatterBlocks)
    w.closeBlock();
  scope_ = saved;
}

// A scatter's computed index into dimension `dim` of `array`: declared in a fresh local, which is
// returned. An integer expression is computed as indices are; any other value in double, rounded down.
// The array's boundary rule then applies: `zero` adds `tests` that the index lies inside (the point adds
// nothing otherwise), `clamp` and `mirror` move it inside. A NaN adds nothing; so does any index into an
// empty dimension.
std::string ExprPrinter::computedIndex(const ast::Expr &expr, const model::ArrayInfo &array, unsigned dim,
                                       std::vector<std::string> &tests, CodeWriter &w) {
  const std::string ix = indexType(), n = extent(array, dim);
  const std::string name = scope_->names.fresh("polyc_at");
  const ast::Boundary boundary = array.decl->effectiveBoundary;
  if (dsl::isIntegerExpr(expr)) {
    const std::string i = index(expr, w).text;
    if (boundary == ast::Boundary::Zero) {
      w.line("const " + ix + " " + name + " = " + i + ";");
      tests.push_back(name + " >= 0 && " + name + " < " + n);
    } else {
      w.line("const " + ix + " " + name + " = " +
             (boundary == ast::Boundary::Clamp ? "polyc_clamp(" : "polyc_mirror(") + i + ", " + n + ");");
      tests.push_back(n + " > 0");
    }
    return name;
  }
  const std::string real = name + "_real", last = "(" + typeName(ast::ElemType::F64) + ")(" + n + " - 1)";
  w.line("const " + typeName(ast::ElemType::F64) + " " + real + " = " + floorFunction(ast::ElemType::F64) + "(" +
         value(expr, ast::ElemType::F64, w).text + ");");
  std::string inside = real;
  if (boundary == ast::Boundary::Mirror) // reflect without repeating the edge, then clamp
    inside = "(" + real + " < 0 ? -" + real + " : " + real + " > " + last + " ? 2 * " + last + " - " + real +
             " : " + real + ")";
  // Compared as doubles before the conversion, which is undefined outside the index type.
  std::string chosen =
      boundary == ast::Boundary::Zero
          ? real + " >= 0 && " + real + " <= " + last + " ? " + indexCast(real) + " : -1"
          : "!(" + real + " == " + real + ") || " + last + " < 0 ? -1 : " + inside + " <= 0 ? 0 : " + inside +
                " >= " + last + " ? " + indexCast(last) + " : " + indexCast(inside);
  w.line("const " + ix + " " + name + " = " + chosen + ";");
  tests.push_back(name + " >= 0");
  return name;
}

void ExprPrinter::printAtomicUpdate(const std::string &target, const std::string &op, const std::string &rhs,
                                    ast::ElemType, CodeWriter &w) const {
  w.line("#pragma omp atomic");
  w.line(target + op + rhs + ";");
}

void ExprPrinter::printStoreLine(const std::string &target, const std::string &op, const std::string &rhs,
                                 CodeWriter &w) const {
  if (storing_ && storing_->scatter)
    return printAtomicUpdate(target, op, rhs, storing_->equation->array->elemType, w);
  if (!storing_ || !storing_->signalsChange || op == " = ")
    return w.line(target + op + rhs + ";");
  const ast::ElemType elemType = storing_->equation->array->elemType;
  const std::string type = typeName(elemType);
  w.openBlock("");
  w.line("const " + type + " polyc_old = " + target + ";");
  w.line("const " + type + " polyc_new = polyc_old " + op.substr(1, 1) + " (" + rhs + ");");
  w.line(elemType == ast::ElemType::I32 ? "if (polyc_new != polyc_old)"
                                        : "if (polyc_new != polyc_old && (polyc_new == polyc_new || "
                                          "polyc_old == polyc_old)) // NaN == NaN here");
  w.indent();
  w.line(changedStore(scope_->vars.at(storing_->equation->enclosingRepeat->var.get())) + ";");
  w.dedent();
  w.line(target + " = polyc_new;");
  w.closeBlock();
}

// ---------------------------------------------------------------------------------------------
// Packages

const Package *ExprPrinter::packageOf(const model::Statement &statement) const {
  for (const Package &package : packages_)
    for (unsigned s : package.statements)
      if (&model_.statements[s] == &statement)
        return &package;
  return nullptr;
}

// A name free in every member's scope, then taken in all of them.
static std::string freshInAll(const std::string &base, std::vector<NameScope *> names) {
  while (true) {
    std::string name = names.front()->fresh(base);
    if (std::none_of(names.begin() + 1, names.end(), [&](NameScope *n) { return n->isTaken(name); })) {
      for (NameScope *n : names)
        n->take(name);
      return name;
    }
  }
}

void ExprPrinter::printPackage(const Package &package, CodeWriter &w) {
  std::vector<Scope> scopes;
  std::vector<const ast::Expr *> rhs;
  std::string names;
  for (unsigned s : package.statements) {
    scopes.push_back(statementScope(model_.statements[s]));
    rhs.push_back(model_.statements[s].equation->rhs.get());
    names += (names.empty() ? "" : ", ") + model_.statements[s].name;
  }
  w.comment(names + ": one package, their sums in one loop nest with an accumulator each.");
  Scope *saved = scope_;
  const ast::ElemType type = model_.statements[package.statements.front()].equation->array->elemType;
  std::vector<Code> values = packageValues(rhs, type, scopes, w);
  for (size_t m = 0; m < package.statements.size(); ++m) {
    const model::Statement &statement = model_.statements[package.statements[m]];
    scope_ = &scopes[m];
    std::vector<std::string> lhs;
    for (auto &var : statement.equation->indexVars)
      lhs.push_back(scopes[m].vars.at(var.get()));
    const model::ArrayInfo *array = findArray(model_, statement.write.array);
    assert(array && "the model has every array of the program");
    printStore(*array, lhs, arrayRef(*array) + "[" + elementIndex(*array, lhs) + "]", " = ", values[m].text,
               w);
  }
  scope_ = saved;
}

std::vector<ExprPrinter::Code> ExprPrinter::packageValues(const std::vector<const ast::Expr *> &nodes,
                                                          ast::ElemType type, std::vector<Scope> &scopes,
                                                          CodeWriter &w) {
  std::vector<Code> values;
  const ast::Expr &first = *nodes.front();
  if (!ast::holdsReduction(first)) {
    for (size_t m = 0; m < nodes.size(); ++m) {
      scope_ = &scopes[m];
      values.push_back(value(*nodes[m], type, w));
    }
    return values;
  }
  auto children = [&](auto pick) {
    std::vector<const ast::Expr *> out;
    for (const ast::Expr *node : nodes)
      out.push_back(pick(*node));
    return packageValues(out, type, scopes, w);
  };
  switch (first.kind()) {
  case ast::Expr::Kind::Reduction:
    return packageReduction(nodes, type, scopes, w);
  case ast::Expr::Kind::Unary: // negation (Packages.cpp admits nothing else around a sum)
    for (Code &operand :
         children([](const ast::Expr &e) { return llvm::cast<ast::Unary>(e).operand.get(); })) {
      std::string text = wrapIf(operand.text, operand.prec, Unary);
      values.push_back({"-" + (text[0] == '-' ? "(" + text + ")" : text), Unary});
    }
    return values;
  case ast::Expr::Kind::Binary: { // + - *, as value() prints them
    auto &b = llvm::cast<ast::Binary>(first);
    std::vector<Code> lhs = children([](const ast::Expr &e) { return llvm::cast<ast::Binary>(e).lhs.get(); });
    std::vector<Code> rhs = children([](const ast::Expr &e) { return llvm::cast<ast::Binary>(e).rhs.get(); });
    int prec = (b.op == ast::BinaryOp::Add || b.op == ast::BinaryOp::Sub) ? Additive : Multiplicative;
    for (size_t m = 0; m < nodes.size(); ++m)
      values.push_back({wrapIf(lhs[m].text, lhs[m].prec, prec) + " " + binarySpelling(b.op) + " " +
                            wrapIf(rhs[m].text, rhs[m].prec, prec + 1),
                        prec});
    return values;
  }
  default:
    llvm_unreachable("a package's sums sit under + - * and negation only (Packages.cpp)");
  }
}

std::vector<ExprPrinter::Code> ExprPrinter::packageReduction(const std::vector<const ast::Expr *> &nodes,
                                                             ast::ElemType type, std::vector<Scope> &scopes,
                                                             CodeWriter &w) {
  auto &red = llvm::cast<ast::Reduction>(*nodes.front());
  std::vector<NameScope *> names;
  for (Scope &scope : scopes)
    names.push_back(&scope.names);
  std::vector<std::string> accumulators;
  for (size_t m = 0; m < nodes.size(); ++m) {
    accumulators.push_back(freshInAll(ast::spelling(red.op) + std::to_string(scopes.front().counter++), names));
    w.line(typeName(type) + " " + accumulators.back() + " = " + reductionIdentity(red.op, type) + ";");
  }
  if (std::string pragma = packageLoopPragma(red, accumulators); !pragma.empty())
    w.line(pragma);
  // The ranges are the same for every member (Packages.cpp): printed in the first member's scope.
  unsigned loops = 0;
  for (size_t b = 0; b < red.bindings.size(); ++b) {
    scope_ = &scopes.front();
    std::string lo = index(*red.bindings[b].lo, w).text, hi = index(*red.bindings[b].hi, w).text;
    for (size_t v = 0; v < red.bindings[b].vars.size(); ++v, ++loops) {
      std::string var = freshInAll(cIdentifier(red.bindings[b].vars[v]->name), names);
      for (size_t m = 0; m < nodes.size(); ++m) {
        const ast::RangeBinding &binding = llvm::cast<ast::Reduction>(*nodes[m]).bindings[b];
        scopes[m].vars[binding.vars[v].get()] = var;
        scopes[m].reductionVars.push_back({binding.vars[v].get(), &binding});
      }
      w.openBlock("for (" + reductionIndexType() + " " + var + " = " + lo + "; " + var + " < " + hi + "; ++" +
                  var + ")");
    }
  }
  std::vector<const ast::Expr *> bodies;
  for (const ast::Expr *node : nodes)
    bodies.push_back(llvm::cast<ast::Reduction>(*node).body.get());
  for (Scope &scope : scopes)
    ++scope.reductionDepth;
  std::vector<Code> values = packageValues(bodies, type, scopes, w);
  for (Scope &scope : scopes)
    --scope.reductionDepth;
  auto combine = reductionCombine(red.op, type);
  for (size_t m = 0; m < nodes.size(); ++m)
    w.line(combine(accumulators[m], values[m].text));
  for (unsigned k = 0; k < loops; ++k)
    w.closeBlock();
  std::vector<Code> results;
  for (size_t m = 0; m < nodes.size(); ++m) {
    scopes[m].reductionVars.resize(scopes[m].reductionVars.size() - loops);
    results.push_back({accumulators[m]});
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Expressions

ExprPrinter::Code ExprPrinter::varRef(const ast::VarRef &ref, ast::ElemType type) const {
  const ast::Binding &b = ref.binding;
  if (auto *p = std::get_if<const ast::ParamDecl *>(&b)) {
    std::string name = scope_ && scope_->func ? cIdentifier((*p)->name) : paramRef((*p)->name);
    return {convert(name, type)};
  }
  if (auto *c = std::get_if<const ast::ConstDecl *>(&b)) {
    std::string name = cIdentifier((*c)->name);
    bool isFloat = std::holds_alternative<double>((*c)->value);
    if (isFloat && type == ast::ElemType::F64)
      return {name};
    return {convert(name, type)};
  }
  if (auto *a = std::get_if<const ast::ArrayDecl *>(&b)) {
    const model::ArrayInfo *array = findArray(model_, (*a)->name);
    assert(array && "the model has every array of the program");
    auto it = readStorage_.find((*a)->name);
    std::string text = (it != readStorage_.end() ? it->second : arrayRef(*array)) + "[0]";
    return {(*a)->elemType == type ? text : convert(text, type)};
  }
  if (auto *v = std::get_if<ast::IndexVarRef>(&b)) {
    assert(scope_ && scope_->vars.count(v->var) && "index variable out of scope");
    return {convert(scope_->vars.at(v->var), type)};
  }
  if (auto *arg = std::get_if<ast::FuncArgRef>(&b)) {
    assert(scope_ && arg->position < scope_->funcArgs.size());
    return {scope_->funcArgs[arg->position]};
  }
  llvm_unreachable("unresolved name (Sema resolves every name)");
}

ExprPrinter::Code ExprPrinter::value(const ast::Expr &expr, ast::ElemType type, CodeWriter &w) {
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
    return {type == ast::ElemType::I32 ? std::to_string(llvm::cast<ast::IntLit>(expr).value)
                                        : literal(static_cast<double>(llvm::cast<ast::IntLit>(expr).value), type)};
  case ast::Expr::Kind::FloatLit:
    return {literal(llvm::cast<ast::FloatLit>(expr).value, type)};
  case ast::Expr::Kind::VarRef:
    return varRef(llvm::cast<ast::VarRef>(expr), type);
  case ast::Expr::Kind::ArrayRead: {
    if (llvm::cast<ast::ArrayRead>(expr).sampled)
      return sampledRead(llvm::cast<ast::ArrayRead>(expr), type, w);
    Code read = arrayRead(llvm::cast<ast::ArrayRead>(expr), w);
    if (llvm::cast<ast::ArrayRead>(expr).array->elemType != type)
      read = {convert(read.text, type)};
    return read;
  }
  case ast::Expr::Kind::Unary: {
    auto &u = llvm::cast<ast::Unary>(expr);
    if (u.op == ast::UnaryOp::Not)
      return {convert(condition(expr, type, w).text, type)};
    Code operand = value(*u.operand, type, w);
    std::string text = wrapIf(operand.text, operand.prec, Unary);
    if (text[0] == '-')
      text = "(" + text + ")";
    return {"-" + text, Unary};
  }
  case ast::Expr::Kind::Binary: {
    auto &b = llvm::cast<ast::Binary>(expr);
    if (isComparison(b.op) || isLogical(b.op))
      return {convert(condition(expr, type, w).text, type)};
    Code lhs = value(*b.lhs, type, w);
    Code rhs = value(*b.rhs, type, w);
    bool isInt = type == ast::ElemType::I32;
    if (b.op == ast::BinaryOp::Div && isInt)
      return {"polyc_div_i32(" + lhs.text + ", " + rhs.text + ")"};
    if (b.op == ast::BinaryOp::Mod)
      return {(isInt ? std::string("polyc_mod_i32") : fmodFunction(type)) + "(" + lhs.text + ", " +
              rhs.text + ")"};
    int prec = (b.op == ast::BinaryOp::Add || b.op == ast::BinaryOp::Sub) ? Additive : Multiplicative;
    // Left-associative: the right operand needs parentheses at equal precedence unless the operator
    // is + or * (which C evaluates the same either way only for exact arithmetic, so keep them too).
    return {wrapIf(lhs.text, lhs.prec, prec) + " " + binarySpelling(b.op) + " " +
                wrapIf(rhs.text, rhs.prec, prec + 1),
            prec};
  }
  case ast::Expr::Kind::Call:
    return call(llvm::cast<ast::Call>(expr), type, w);
  case ast::Expr::Kind::Reduction:
    return reduction(llvm::cast<ast::Reduction>(expr), type, w);
  case ast::Expr::Kind::Tuple:
    break;
  }
  llvm_unreachable("a tuple is only an operand of == and != (Sema checks)");
}

ExprPrinter::Code ExprPrinter::comparison(const ast::Binary &cmp, ast::ElemType type, CodeWriter &w) {
  auto operand = [&](const ast::Expr &e, bool integral) {
    return integral ? index(e, w) : value(e, type, w);
  };
  auto *lt = dyn_cast<ast::Tuple>(cmp.lhs.get());
  auto *rt = dyn_cast<ast::Tuple>(cmp.rhs.get());
  if (lt && rt && lt->elements.size() == rt->elements.size()) {
    // (a, b) == (c, d) is a == c && b == d; != is the negation, a != c || b != d.
    bool eq = cmp.op == ast::BinaryOp::Eq;
    std::string text;
    for (size_t k = 0; k < lt->elements.size(); ++k) {
      bool integral = isIntegerExpr(*lt->elements[k]) && isIntegerExpr(*rt->elements[k]);
      Code l = operand(*lt->elements[k], integral);
      Code r = operand(*rt->elements[k], integral);
      text += (k ? (eq ? " && " : " || ") : "") + wrapIf(l.text, l.prec, Relational) +
              (eq ? " == " : " != ") + wrapIf(r.text, r.prec, Relational);
    }
    return {text, lt->elements.size() > 1 ? (eq ? And : Or) : Equality};
  }
  bool integral = isIntegerExpr(*cmp.lhs) && isIntegerExpr(*cmp.rhs);
  Code l = operand(*cmp.lhs, integral);
  Code r = operand(*cmp.rhs, integral);
  int prec = (cmp.op == ast::BinaryOp::Eq || cmp.op == ast::BinaryOp::Ne) ? Equality : Relational;
  return {wrapIf(l.text, l.prec, Additive) + " " + binarySpelling(cmp.op) + " " + wrapIf(r.text, r.prec, Additive),
          prec};
}

ExprPrinter::Code ExprPrinter::condition(const ast::Expr &expr, ast::ElemType type, CodeWriter &w) {
  if (auto *b = dyn_cast<ast::Binary>(&expr)) {
    if (isComparison(b->op))
      return comparison(*b, type, w);
    if (isLogical(b->op)) {
      int prec = b->op == ast::BinaryOp::And ? And : Or;
      Code l = condition(*b->lhs, type, w);
      Code r = condition(*b->rhs, type, w);
      // Parenthesise && inside || too: it is what compilers warn about, and what readers misread.
      int needed = prec == Or ? And + 1 : prec;
      return {wrapIf(l.text, l.prec, needed) + " " + binarySpelling(b->op) + " " + wrapIf(r.text, r.prec, needed),
              prec};
    }
  }
  if (auto *u = dyn_cast<ast::Unary>(&expr); u && u->op == ast::UnaryOp::Not) {
    Code operand = condition(*u->operand, type, w);
    return {"!" + wrapIf(operand.text, operand.prec, Unary), Unary};
  }
  bool integral = isIntegerExpr(expr);
  Code v = integral ? index(expr, w) : value(expr, type, w);
  return {wrapIf(v.text, v.prec, Relational) + " != " + (integral ? "0" : literal(0, type)), Equality};
}

// `/` and `%` in an index or an integer comparison divide with floor (docs/language.md; the model and
// `polyc run` agree): C's operators where both operands are constants that make them agree, the
// helpers otherwise. Sema has checked that the divisor is an integer constant, not 0.
ExprPrinter::Code ExprPrinter::floorDivision(const ast::Binary &b, CodeWriter &w) {
  bool isDiv = b.op == ast::BinaryOp::Div;
  if (isIntegerConstant(b)) {
    std::optional<dsl::AffineExpr> l = dsl::toAffine(*b.lhs, "an index"),
                                   r = dsl::toAffine(*b.rhs, "an index");
    if (!l || !r || r->constant == 0)
      return {"0"};
    if (l->constant < 0 || r->constant < 0) {
      int64_t v = isDiv ? dsl::floorDiv(l->constant, r->constant) : dsl::floorMod(l->constant, r->constant);
      return {v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v)};
    }
    Code lhs = index(*b.lhs, w), rhs = index(*b.rhs, w);
    return {wrapIf(lhs.text, lhs.prec, Multiplicative) + (isDiv ? " / " : " % ") +
                wrapIf(rhs.text, rhs.prec, Multiplicative + 1),
            Multiplicative};
  }
  return {std::string(isDiv ? "polyc_floord(" : "polyc_mod(") + index(*b.lhs, w).text + ", " +
          index(*b.rhs, w).text + ")"};
}

ExprPrinter::Code ExprPrinter::index(const ast::Expr &expr, CodeWriter &w) {
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
    return {std::to_string(llvm::cast<ast::IntLit>(expr).value)};
  case ast::Expr::Kind::VarRef: {
    auto &ref = llvm::cast<ast::VarRef>(expr);
    if (auto *p = std::get_if<const ast::ParamDecl *>(&ref.binding))
      return {scope_ && scope_->func ? cIdentifier((*p)->name) : paramRef((*p)->name)};
    if (auto *c = std::get_if<const ast::ConstDecl *>(&ref.binding))
      return {std::holds_alternative<double>((*c)->value) ? indexCast(cIdentifier((*c)->name))
                                                           : cIdentifier((*c)->name)};
    if (auto *v = std::get_if<ast::IndexVarRef>(&ref.binding)) {
      assert(scope_ && scope_->vars.count(v->var) && "index variable out of scope");
      return {scope_->vars.at(v->var)};
    }
    return {indexCast(value(expr, ast::ElemType::F64, w).text)};
  }
  case ast::Expr::Kind::ArrayRead:
    return arrayRead(llvm::cast<ast::ArrayRead>(expr), w);
  case ast::Expr::Kind::Unary: {
    auto &u = llvm::cast<ast::Unary>(expr);
    if (u.op == ast::UnaryOp::Neg) {
      Code operand = index(*u.operand, w);
      std::string text = wrapIf(operand.text, operand.prec, Unary);
      return {"-" + (text[0] == '-' ? "(" + text + ")" : text), Unary};
    }
    break;
  }
  case ast::Expr::Kind::Binary: {
    auto &b = llvm::cast<ast::Binary>(expr);
    if (isComparison(b.op) || isLogical(b.op))
      break;
    if (b.op == ast::BinaryOp::Div || b.op == ast::BinaryOp::Mod)
      return floorDivision(b, w);
    Code lhs = index(*b.lhs, w);
    Code rhs = index(*b.rhs, w);
    int prec = (b.op == ast::BinaryOp::Add || b.op == ast::BinaryOp::Sub) ? Additive : Multiplicative;
    return {wrapIf(lhs.text, lhs.prec, prec) + " " + binarySpelling(b.op) + " " +
                wrapIf(rhs.text, rhs.prec, prec + 1),
            prec};
  }
  case ast::Expr::Kind::Call: {
    auto &c = llvm::cast<ast::Call>(expr);
    if (c.builtin && (*c.builtin == ast::Builtin::Min || *c.builtin == ast::Builtin::Max) && c.args.size() == 2)
      return {std::string(*c.builtin == ast::Builtin::Min ? "polyc_min(" : "polyc_max(") +
              index(*c.args[0], w).text + ", " + index(*c.args[1], w).text + ")"};
    break;
  }
  default:
    break;
  }
  // Anything else used as an integer: compute it as a double and truncate.
  return {indexCast(value(expr, ast::ElemType::F64, w).text)};
}

// The isl form of an affine index expression over `space` (the statement's dimensions, then the
// enclosing reduction variables, at `positions`); null when it is not affine (a gather, a call).
static isl::aff toAff(const ast::Expr &e, const isl::space &space,
                      const std::map<const ast::IndexVar *, unsigned> &positions, const ast::Program &program) {
  isl::ctx ctx = space.ctx();
  auto constant = [&](int64_t v) { return isl::aff::zero_on_domain(space).add_constant(isl::val(ctx, v)); };
  switch (e.kind()) {
  case ast::Expr::Kind::IntLit:
    return constant(llvm::cast<ast::IntLit>(e).value);
  case ast::Expr::Kind::VarRef: {
    auto &ref = llvm::cast<ast::VarRef>(e);
    if (auto *p = std::get_if<const ast::ParamDecl *>(&ref.binding))
      return isl::manage(isl_aff_param_on_domain_space_id(space.copy(), isl::id(ctx, (*p)->name).release()));
    if (auto *c = std::get_if<const ast::ConstDecl *>(&ref.binding))
      if (auto *v = std::get_if<int64_t>(&(*c)->value))
        return constant(*v);
    if (auto *v = std::get_if<ast::IndexVarRef>(&ref.binding)) {
      auto it = positions.find(v->var);
      if (it != positions.end())
        return isl::manage(
            isl_aff_var_on_domain(isl_local_space_from_space(space.copy()), isl_dim_set, it->second));
    }
    return isl::aff();
  }
  case ast::Expr::Kind::Unary: {
    auto &u = llvm::cast<ast::Unary>(e);
    isl::aff operand = u.op == ast::UnaryOp::Neg ? toAff(*u.operand, space, positions, program) : isl::aff();
    return operand.is_null() ? operand : operand.neg();
  }
  case ast::Expr::Kind::Binary: {
    auto &b = llvm::cast<ast::Binary>(e);
    isl::aff lhs = toAff(*b.lhs, space, positions, program);
    isl::aff rhs = toAff(*b.rhs, space, positions, program);
    if (lhs.is_null() || rhs.is_null())
      return isl::aff();
    switch (b.op) {
    case ast::BinaryOp::Add: return lhs.add(rhs);
    case ast::BinaryOp::Sub: return lhs.sub(rhs);
    case ast::BinaryOp::Mul:
      return lhs.is_cst() || rhs.is_cst() ? lhs.mul(rhs) : isl::aff();
    case ast::BinaryOp::Div:
      return rhs.is_cst() && rhs.constant_val().is_pos() ? lhs.div(rhs).floor() : isl::aff();
    case ast::BinaryOp::Mod:
      return rhs.is_cst() && rhs.constant_val().is_pos() ? lhs.mod(rhs.constant_val()) : isl::aff();
    default: return isl::aff();
    }
  }
  default:
    return isl::aff();
  }
}

// Which ends of each index of `read` can be crossed, as isl decides over the statement's domain and
// the ranges of the enclosing reductions. (The model's access relations cannot tell: they describe
// the elements actually read, after the boundary rule.) When in doubt, both ends are checked.
std::vector<ExprPrinter::BoundsCheck> ExprPrinter::boundsChecks(const ast::ArrayRead &read) const {
  unsigned rank = static_cast<unsigned>(read.indices.size());
  std::vector<BoundsCheck> checks(rank);
  if (!scope_ || !scope_->statement || scope_->statement->domain.is_null()) {
    recordUnplacedGuard();
    return checks;
  }
  const model::Statement &s = *scope_->statement;
  const model::ArrayInfo *array = findArray(model_, read.name);
  if (!array || !array->decl) {
    recordUnplacedGuard();
    return checks;
  }
  try {
    isl::set wide = s.domain;
    if (!model_.context.is_null())
      wide = wide.intersect_params(model_.context);
    isl_size dims = isl_set_dim(wide.get(), isl_dim_set);
    if (dims < 0 || static_cast<size_t>(dims) != scope_->dimVars.size()) {
      recordUnplacedGuard();
      return checks;
    }
    std::map<const ast::IndexVar *, unsigned> positions;
    for (unsigned k = 0; k < scope_->dimVars.size(); ++k)
      positions[scope_->dimVars[k]] = k;
    unsigned extra = static_cast<unsigned>(scope_->reductionVars.size());
    wide = isl::manage(isl_set_add_dims(wide.release(), isl_dim_set, extra));
    for (unsigned q = 0; q < extra; ++q)
      positions[scope_->reductionVars[q].var] = static_cast<unsigned>(dims) + q;
    isl::space space = wide.space();
    for (unsigned q = 0; q < extra; ++q) {
      const Scope::ReductionVar &r = scope_->reductionVars[q];
      isl::aff var = isl::manage(isl_aff_var_on_domain(isl_local_space_from_space(space.copy()), isl_dim_set,
                                              static_cast<unsigned>(dims) + q));
      if (r.binding->rowArray) {
        // A row range's bounds are data; the run's check of the row array keeps the variable in
        // 0 .. each extent it indexes (as the model has it).
        wide = wide.intersect(var.ge_set(isl::aff::zero_on_domain(space)));
        for (const ast::DirectIndex &target : r.binding->rowTargets) {
          isl::aff extent = toAff(*target.array->shape[target.dim], space, positions, *model_.program);
          if (!extent.is_null())
            wide = wide.intersect(var.lt_set(extent));
        }
        continue;
      }
      isl::aff lo = toAff(*r.binding->lo, space, positions, *model_.program);
      isl::aff hi = toAff(*r.binding->hi, space, positions, *model_.program);
      if (!lo.is_null())
        wide = wide.intersect(var.ge_set(lo));
      if (!hi.is_null())
        wide = wide.intersect(var.lt_set(hi));
    }
    // A kept test's points go to the guard record.
    auto crosses = [&](const isl::set &crossing) {
      bool can = !crossing.is_empty();
      if (can)
        recordGuard(crossing, static_cast<unsigned>(dims));
      return can;
    };
    for (unsigned d = 0; d < rank; ++d) {
      isl::aff zero = isl::aff::zero_on_domain(space);
      isl::aff extent = toAff(*array->decl->shape[d], space, positions, *model_.program);
      if (extent.is_null()) {
        recordUnplacedGuard();
        continue;
      }
      checks[d].emptyExtent = crosses(wide.intersect(extent.le_set(zero)));
      if (d < read.isGather.size() && read.isGather[d]) {
        recordUnplacedGuard();
        continue; // a gathered index can be anything: check both ends
      }
      isl::aff index = toAff(*read.indices[d], space, positions, *model_.program);
      if (index.is_null()) {
        recordUnplacedGuard();
        continue;
      }
      checks[d].low = crosses(wide.intersect(index.lt_set(zero)));
      checks[d].high = crosses(wide.intersect(index.ge_set(extent)));
    }
  } catch (const isl::exception &) {
    recordUnplacedGuard();
    return std::vector<BoundsCheck>(rank); // cannot prove: check every end
  }
  return checks;
}

void ExprPrinter::startGuardRecord() {
  recordingGuards_ = true;
  guardedPoints_.reset();
  unplacedGuard_ = false;
}

ExprPrinter::GuardRecord ExprPrinter::finishGuardRecord() {
  recordingGuards_ = false;
  GuardRecord record{!unplacedGuard_, std::move(guardedPoints_)};
  guardedPoints_.reset();
  unplacedGuard_ = false;
  return record;
}

void ExprPrinter::recordGuard(const isl::set &crossing, unsigned domainDims) const {
  if (!recordingGuards_)
    return;
  isl_size all = isl_set_dim(crossing.get(), isl_dim_set);
  isl::set points = isl::manage(
      isl_set_project_out(crossing.copy(), isl_dim_set, domainDims, static_cast<unsigned>(all) - domainDims));
  points = isl::manage(isl_set_reset_tuple_id(points.release()));
  guardedPoints_ = guardedPoints_ ? guardedPoints_->unite(points) : points;
}

void ExprPrinter::recordUnplacedGuard() const {
  if (recordingGuards_)
    unplacedGuard_ = true;
}

ExprPrinter::Code ExprPrinter::arrayRead(const ast::ArrayRead &read, CodeWriter &w) {
  const model::ArrayInfo *array = findArray(model_, read.name);
  assert(array && read.array && "Sema resolves every array read");
  const bool interiorTile = roundTile && roundTile->interior &&
                            (array->name == roundTile->array || array->name == roundTile->snapshot);
  std::vector<BoundsCheck> checks =
      storageHoldsBoundary(*array) || interiorTile
          ? std::vector<BoundsCheck>(read.indices.size(), BoundsCheck{false, false, false})
          : boundsChecks(read);
  std::vector<Code> indices;
  for (const ast::ExprPtr &index : read.indices)
    indices.push_back(this->index(*index, w));
  return boundedRead(read, *array, indices, checks, w);
}

// The element at `indices` under the array's boundary rule, where `checks` says an index may be outside.
ExprPrinter::Code ExprPrinter::boundedRead(const ast::ArrayRead &read, const model::ArrayInfo &array,
                                           std::vector<Code> indices, const std::vector<BoundsCheck> &checks,
                                           CodeWriter &w) {
  ast::Boundary rule = read.array->effectiveBoundary;
  std::vector<std::string> texts;
  std::vector<std::string> conditions;
  for (unsigned d = 0; d < indices.size(); ++d) {
    Code idx = indices[d];
    bool low = checks[d].low, high = checks[d].high;
    if (!low && !high) {
      texts.push_back(idx.text);
      continue;
    }
    std::string text = idx.text;
    // A gathered index is used up to three times below: read it once into a local.
    if (text.find('[') != std::string::npos && scope_) {
      std::string local = scope_->names.fresh(cIdentifier(read.name) + "Index" + std::to_string(d));
      w.line("const " + indexType() + " " + local + " = " + text + ";");
      text = local;
      idx = {local};
    }
    std::string ext = extent(array, d);
    if (rule == ast::Boundary::Zero) {
      if (low)
        conditions.push_back(wrapIf(text, idx.prec, Additive) + " >= 0");
      if (high)
        conditions.push_back(wrapIf(text, idx.prec, Additive) + " < " + ext);
      texts.push_back(text);
    } else {
      // An empty dimension has no element to clamp or mirror to: such a read yields 0.
      if (checks[d].emptyExtent)
        conditions.push_back(wrapIf(ext, isAtomText(ext) ? Atom : Additive, Relational) + " > 0");
      texts.push_back(std::string(rule == ast::Boundary::Clamp ? "polyc_clamp(" : "polyc_mirror(") + text +
                      ", " + ext + ")");
    }
  }
  auto it = readStorage_.find(read.name);
  std::string storage = it != readStorage_.end() ? it->second : arrayRef(array);
  std::string element = elementRef(array, storage, texts);
  if (conditions.empty())
    return {element};
  return {"(" + llvm::join(conditions, " && ") + " ? " + element + " : " + literal(0, array.decl->elemType) +
          ")"};
}

// sample(A, ...): the multilinear interpolation between the elements around the positions, each corner
// read under A's boundary rule, in the equation's type (docs/language.md). A position's index is its
// floor, kept within +-limit (a NaN goes below) so that the corners' indices never overflow; its
// fraction (NaN for a NaN or an infinite position) carries the rest. In an i32 equation the positions
// are integers and name elements.
ExprPrinter::Code ExprPrinter::sampledRead(const ast::ArrayRead &read, ast::ElemType type, CodeWriter &w) {
  const model::ArrayInfo *array = findArray(model_, read.name);
  assert(array && read.array && "Sema resolves every array read");
  std::vector<BoundsCheck> checks = boundsChecks(read); // positions reach past any halo the storage holds
  std::string ix = indexType(), t = typeName(type);
  std::string limit = ix == "int" ? "1073741824" : "4611686018427387904";
  auto local = [&](const std::string &kind, const std::string &ty, const std::string &text) {
    if (!scope_)
      return "(" + text + ")";
    std::string name = scope_->names.fresh("polyc_" + kind);
    w.line("const " + ty + " " + name + " = " + text + ";");
    return name;
  };
  std::vector<Code> below;
  std::vector<std::pair<unsigned, std::string>> between; // interpolated dimension, fraction
  for (unsigned d = 0; d < read.indices.size(); ++d) {
    if (!read.isGather[d]) {
      below.push_back(index(*read.indices[d], w));
      continue;
    }
    std::string position = local("position", t, value(*read.indices[d], type, w).text);
    if (type == ast::ElemType::I32) {
      below.push_back({position});
      continue;
    }
    std::string floor = local("floor", t, floorFunction(type) + "(" + position + ")");
    below.push_back({local("below", ix,
                           floor + " >= -" + limit + " && " + floor + " <= " + limit + " ? (" + ix + ")" +
                               floor + " : (" + floor + " > 0 ? " + limit + " : -" + limit + ")")});
    between.emplace_back(d, local("fraction", t, position + " - " + floor));
  }
  std::string one = literal(1, type), sum;
  for (unsigned corner = 0; corner < (1u << between.size()); ++corner) {
    std::vector<Code> at = below;
    std::string weight;
    for (size_t k = 0; k < between.size(); ++k) {
      auto [d, fraction] = between[k];
      bool above = (corner >> k) & 1;
      if (above)
        at[d] = {at[d].text + " + 1", Additive};
      weight += (weight.empty() ? "" : " * ") + (above ? fraction : "(" + one + " - " + fraction + ")");
    }
    Code element = boundedRead(read, *array, at, checks, w);
    std::string term =
        weight.empty() ? element.text : weight + " * " + wrapIf(element.text, element.prec, Multiplicative);
    sum += (sum.empty() ? "" : " + ") + term;
  }
  if (read.array->elemType != type)
    return {convert("(" + sum + ")", type)};
  return {"(" + sum + ")"};
}

std::string ExprPrinter::readValue(const ast::ArrayRead &read, CodeWriter &w) {
  return arrayRead(read, w).text;
}

ExprPrinter::Code ExprPrinter::call(const ast::Call &c, ast::ElemType type, CodeWriter &w) {
  if (c.func) {
    std::vector<std::string> args;
    for (auto &arg : c.args)
      args.push_back(value(*arg, type, w).text);
    auto it = funcParams_.find(c.func);
    if (it != funcParams_.end())
      for (const std::string &param : it->second)
        args.push_back(scope_ && scope_->func ? cIdentifier(param) : paramRef(param));
    return {funcName(*c.func, type) + "(" + llvm::join(args, ", ") + ")"};
  }
  assert(c.builtin && "Sema resolves every call");
  ast::Builtin fn = *c.builtin;
  if (fn == ast::Builtin::Select) {
    Code cond = condition(*c.args[0], type, w);
    Code a = value(*c.args[1], type, w);
    Code b = value(*c.args[2], type, w);
    return {"(" + cond.text + " ? " + a.text + " : " + b.text + ")"};
  }
  std::vector<std::string> args;
  std::string name = mathFunction(fn, type);
  if (name.empty()) {
    // No integer version (exp, log, sqrt, tanh, pow of i32): compute in double, convert back.
    for (auto &arg : c.args)
      args.push_back(convert(value(*arg, type, w).text, ast::ElemType::F64));
    return {convert(mathFunction(fn, ast::ElemType::F64) + "(" + llvm::join(args, ", ") + ")", type)};
  }
  for (auto &arg : c.args)
    args.push_back(value(*arg, type, w).text);
  return {name + "(" + llvm::join(args, ", ") + ")"};
}

// The conjuncts of a condition: a && b && c as a, b, c.
static void collectConjuncts(const ast::Expr &expr, std::vector<const ast::Expr *> &conjuncts) {
  if (auto *b = llvm::dyn_cast<ast::Binary>(&expr); b && b->op == ast::BinaryOp::And) {
    collectConjuncts(*b->lhs, conjuncts);
    collectConjuncts(*b->rhs, conjuncts);
    return;
  }
  conjuncts.push_back(&expr);
}

// The operands of an equality `a == b`, or of `!(a != b)` (fuzz seed 710420), else null.
static const ast::Binary *asEquality(const ast::Expr *c) {
  if (auto *u = llvm::dyn_cast<ast::Unary>(c); u && u->op == ast::UnaryOp::Not)
    if (auto *ne = llvm::dyn_cast<ast::Binary>(u->operand.get()); ne && ne->op == ast::BinaryOp::Ne)
      return ne;
  auto *eq = llvm::dyn_cast<ast::Binary>(c);
  return eq && eq->op == ast::BinaryOp::Eq ? eq : nullptr;
}

// A conjunct `v op e` of a reduction's `where` clause that bounds its variable v (op: <, <=, >, >=).
struct VariableBound {
  ast::BinaryOp op;
  const ast::Expr *value;
};

// The reduction's variables that a conjunct `v == e` of its `where` clause fixes, each with its e: an
// integer expression of params, constants and outer variables (no array reads, none of the reduction's
// own variables); and into `bounds`, the conjuncts `v < e` (and <=, >, >=) of the other variables. The
// conjuncts used are taken out of `conditions`: they narrow the variables' loops instead of testing each
// iteration (NVIDIA's OpenCL compiler crashed on `for (v = 0; v < W; ++v) if (v < 1)`, seeds 720053,
// 720277, and on `if (v == e)` inside the loop, seeds 200208, 300092).
static std::map<const ast::IndexVar *, const ast::Expr *>
restrictedVariables(const ast::Reduction &red, std::vector<const ast::Expr *> &conditions,
               std::map<const ast::IndexVar *, std::vector<VariableBound>> &bounds) {
  std::vector<const ast::IndexVar *> own;
  for (const ast::RangeBinding &binding : red.bindings)
    for (auto &var : binding.vars)
      own.push_back(var.get());
  std::function<bool(const ast::Expr &)> readsArrays = [&](const ast::Expr &e) {
    if (llvm::isa<ast::ArrayRead>(e))
      return true;
    if (auto *u = llvm::dyn_cast<ast::Unary>(&e))
      return readsArrays(*u->operand);
    if (auto *b = llvm::dyn_cast<ast::Binary>(&e))
      return readsArrays(*b->lhs) || readsArrays(*b->rhs);
    return false;
  };
  auto ownVariable = [&](const ast::Expr &e) -> const ast::IndexVar * {
    auto *ref = llvm::dyn_cast<ast::VarRef>(&e);
    auto *var = ref ? std::get_if<ast::IndexVarRef>(&ref->binding) : nullptr;
    return var && llvm::is_contained(own, var->var) ? var->var : nullptr;
  };
  auto isValue = [&](const ast::Expr &e) { return isIntegerExpr(e) && !readsArrays(e) && !mentionsAny(e, own); };
  std::map<const ast::IndexVar *, const ast::Expr *> fixed;
  llvm::erase_if(conditions, [&](const ast::Expr *c) {
    const ast::Binary *eq = asEquality(c);
    if (!eq)
      return false;
    for (auto [var, value] : {std::pair(eq->lhs.get(), eq->rhs.get()), std::pair(eq->rhs.get(), eq->lhs.get())})
      if (const ast::IndexVar *v = ownVariable(*var); v && !fixed.count(v) && isValue(*value)) {
        fixed[v] = value;
        return true;
      }
    return false;
  });
  // Then the bounds `v < e`, `v <= e`, `v > e`, `v >= e` (either side) of the variables left.
  llvm::erase_if(conditions, [&](const ast::Expr *c) {
    auto *cmp = llvm::dyn_cast<ast::Binary>(c);
    if (!cmp)
      return false;
    ast::BinaryOp op = cmp->op;
    const ast::Expr *var = cmp->lhs.get(), *value = cmp->rhs.get();
    const ast::IndexVar *v = ownVariable(*var);
    if (!v) { // e op v is v op' e
      static const std::map<ast::BinaryOp, ast::BinaryOp> mirrored = {{ast::BinaryOp::Lt, ast::BinaryOp::Gt},
          {ast::BinaryOp::Le, ast::BinaryOp::Ge}, {ast::BinaryOp::Gt, ast::BinaryOp::Lt},
          {ast::BinaryOp::Ge, ast::BinaryOp::Le}};
      auto m = mirrored.find(op);
      if (m == mirrored.end())
        return false;
      op = m->second;
      std::swap(var, value);
      v = ownVariable(*var);
    }
    bool bound = op == ast::BinaryOp::Lt || op == ast::BinaryOp::Le || op == ast::BinaryOp::Gt ||
                 op == ast::BinaryOp::Ge;
    if (!v || !bound || fixed.count(v) || !isValue(*value))
      return false;
    bounds[v].push_back({op, value});
    return true;
  });
  return fixed;
}

std::string ExprPrinter::reductionIdentity(ast::ReductionOp op, ast::ElemType type) const {
  return op == ast::ReductionOp::Sum ? literal(0, type) : op == ast::ReductionOp::Max ? lowest(type) : highest(type);
}

std::function<std::string(const std::string &, const std::string &)>
ExprPrinter::reductionCombine(ast::ReductionOp op, ast::ElemType type) const {
  if (op == ast::ReductionOp::Sum)
    return [](const std::string &acc, const std::string &v) { return acc + " += " + v + ";"; };
  std::string fn = mathFunction(op == ast::ReductionOp::Max ? ast::Builtin::Max : ast::Builtin::Min, type);
  return [fn](const std::string &acc, const std::string &v) { return acc + " = " + fn + "(" + acc + ", " + v + ");"; };
}

ExprPrinter::Code ExprPrinter::reduction(const ast::Reduction &red, ast::ElemType type, CodeWriter &w) {
  assert(scope_ && "reductions occur in statements and funcs");
  auto split = splitReductions_.find(&red);
  const SplitReduction *splitting = split == splitReductions_.end() ? nullptr : &split->second;
  if (splitting && splitPass == SplitPass::Finish && !splitting->buffer.empty())
    return {splitting->buffer + "[" + splitElement_ + "]"};
  ReductionParts parts;
  parts.reduction = &red;
  parts.type = type;
  parts.nested = scope_->reductionDepth > 0;
  parts.accumulator = scope_->names.fresh(ast::spelling(red.op) + std::to_string(scope_->counter++));
  parts.identity = reductionIdentity(red.op, type);
  std::vector<const ast::Expr *> conditions;
  if (red.where)
    collectConjuncts(*red.where, conditions);
  std::map<const ast::IndexVar *, std::vector<VariableBound>> bounds;
  std::map<const ast::IndexVar *, const ast::Expr *> fixed = restrictedVariables(red, conditions, bounds);
  std::vector<std::string> rangeGuards;
  for (const ast::RangeBinding &binding : red.bindings) {
    Code loCode = index(*binding.lo, w), hiCode = index(*binding.hi, w);
    std::string lo = loCode.text, hi = hiCode.text;
    if (binding.rowArray) {
      // A row's end is read once, before the loop: in the loop's test, a read each pass (nvcc does not
      // hoist __ldg) made every pass wait for it before the next pass's loads could issue. (Sema keeps
      // a reduction's own variables out of its bounds, so the end is fixed where the loops begin.)
      std::string end = scope_->names.fresh(cIdentifier(binding.vars.front()->name) + "End");
      w.line("const " + reductionIndexType() + " " + end + " = " + hi + ";");
      hi = end;
    }
    for (auto &var : binding.vars) {
      std::string name = scope_->names.fresh(cIdentifier(var->name));
      scope_->vars[var.get()] = name;
      scope_->reductionVars.push_back({var.get(), &binding});
      auto value = fixed.find(var.get());
      if (value == fixed.end()) {
        // The where clause's bounds narrow the loop: [max(lo, e) or e + 1, min(hi, e) or e + 1).
        std::string first = lo, end = hi;
        for (const VariableBound &b : bounds[var.get()]) {
          std::string e = "(" + index(*b.value, w).text + ")";
          if (b.op == ast::BinaryOp::Le || b.op == ast::BinaryOp::Gt)
            e = "(" + e + " + 1)";
          // The tighter of the two: the smaller end, the larger first.
          if (b.op == ast::BinaryOp::Lt || b.op == ast::BinaryOp::Le)
            end = "(" + e + " < (" + end + ") ? " + e + " : (" + end + "))";
          else
            first = "(" + e + " > (" + first + ") ? " + e + " : (" + first + "))";
        }
        parts.loops.push_back({name, first, end});
        continue;
      }
      // A variable the `where` clause fixes (max(n in 0..N where n == m)) takes that value alone, if it
      // is in its range: a loop of one iteration, not N iterations of a test. (NVIDIA's OpenCL compiler
      // also crashed on the test inside the loop.)
      Code at = index(*value->second, w);
      std::string first = wrapIf(at.text, at.prec, Additive);
      parts.loops.push_back({name, first, first + " + 1"});
      rangeGuards.push_back(name + " >= " + wrapIf(lo, loCode.prec, Additive) + " && " + name + " < " +
                            wrapIf(hi, hiCode.prec, Additive));
    }
  }
  if (splitting) {
    // The loop over the split variable narrowed to this rank's block of its values.
    const std::string &block = splitting->block;
    size_t position = 0;
    for (const ast::RangeBinding &binding : red.bindings)
      for (auto &var : binding.vars) {
        if (var.get() == splitting->variable) {
          ReductionLoop &loop = parts.loops[position];
          loop.lo = "polyc_max(" + loop.lo + ", " + block + ".first)";
          loop.hi = "polyc_min(" + loop.hi + ", " + block + ".end)";
        }
        ++position;
      }
  }
  std::vector<Code> tests;
  for (const std::string &guard : rangeGuards)
    tests.push_back({guard, And});
  for (const ast::Expr *c : conditions)
    tests.push_back(condition(*c, type, w));
  if (tests.size() == 1)
    parts.condition = tests[0].text;
  for (size_t k = 0; tests.size() > 1 && k < tests.size(); ++k)
    parts.condition += (k ? " && " : "") + wrapIf(tests[k].text, tests[k].prec, And + 1);
  parts.combine = reductionCombine(red.op, type);
  parts.update = [combine = parts.combine, acc = parts.accumulator](const std::string &v) { return combine(acc, v); };
  parts.body = [this, &red, type](CodeWriter &bw) {
    ++scope_->reductionDepth;
    Code body = value(*red.body, type, bw);
    --scope_->reductionDepth;
    return body.text;
  };
  std::string result = printReduction(parts, w);
  scope_->reductionVars.resize(scope_->reductionVars.size() - parts.loops.size());
  if (splitting && splitting->buffer.empty()) {
    // Each instance combines its own partial value with the other ranks' at once.
    const std::string all = scope_->names.fresh(parts.accumulator + "All");
    w.line("const " + typeName(type) + " " + all + " = polyc::rt::mpi::combineValue(" + typeName(type) + "(" +
           result + "), " + splitting->combine + ");");
    return {all};
  }
  return {result};
}

std::string ExprPrinter::elementRef(const model::ArrayInfo &array, const std::string &storage,
                                    llvm::ArrayRef<std::string> indices) const {
  if (roundTile && (array.name == roundTile->array || array.name == roundTile->snapshot))
    return roundTile->from + "[" + roundTileOffset(indices) + "]";
  return storage + "[" + elementIndex(array, indices) + "]";
}

std::string ExprPrinter::roundTileOffset(llvm::ArrayRef<std::string> indices) const {
  std::string offset;
  for (size_t k = 0; k < indices.size(); ++k) {
    const std::string position = indices[k] + " - " + roundTile->origin[k];
    offset = offset.empty() ? position : "(" + offset + ") * " + roundTile->stride[k] + " + " + position;
  }
  return offset;
}

void ExprPrinter::printStore(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices,
                             const std::string &target, const std::string &op, const std::string &rhs,
                             CodeWriter &w) {
  if (!roundTile || !storing_)
    return printStoreLine(target, op, rhs, w);
  const ast::ElemType elemType = array.decl->elemType;
  const std::string type = typeName(elemType), offset = roundTileOffset(indices);
  w.line("const " + type + " polyc_old = " + roundTile->from + "[" + offset + "];");
  w.line("const " + type + " polyc_new = polyc_old " + op.substr(1, 1) + " (" + rhs + ");");
  w.line(roundTile->to + "[" + offset + "] = polyc_new;");
  w.line(roundTile->changed + " = polyc_new != polyc_old" +
         (elemType == ast::ElemType::I32
              ? ";"
              : " && (polyc_new == polyc_new || polyc_old == polyc_old); // NaN == NaN"));
}

std::string ExprPrinter::printReduction(const ReductionParts &parts, CodeWriter &w) {
  w.line(typeName(parts.type) + " " + parts.accumulator + " = " + parts.identity + ";");
  printReductionLoops(parts, reductionLoopPragma(parts), w);
  return parts.accumulator;
}

void ExprPrinter::printReductionLoops(const ReductionParts &parts, const std::string &pragma, CodeWriter &w) {
  if (!pragma.empty())
    w.line(pragma);
  for (const ReductionLoop &loop : parts.loops)
    w.openBlock("for (" + reductionIndexType() + " " + loop.var + " = " + loop.lo + "; " + loop.var + " < " +
                loop.hi + "; ++" + loop.var + ")");
  if (!parts.condition.empty())
    w.openBlock("if (" + parts.condition + ")");
  std::string body = parts.body(w);
  w.line(parts.update(body));
  if (!parts.condition.empty())
    w.closeBlock();
  for (size_t k = 0; k < parts.loops.size(); ++k)
    w.closeBlock();
}

void ExprPrinter::declareFlatReductionIndex(const ReductionParts &parts,
                                            const std::vector<std::string> &extents, const std::string &flat,
                                            CodeWriter &w, const std::string &type) {
  w.line(type + " polyc_rest = " + flat + ";");
  for (size_t k = parts.loops.size(); k-- > 0;) {
    const ReductionLoop &loop = parts.loops[k];
    if (k == 0) {
      w.line("const " + type + " " + loop.var + " = " + loop.lo + " + polyc_rest;");
      break;
    }
    w.line("const " + type + " " + loop.var + " = " + loop.lo + " + polyc_rest % " + extents[k] + ";");
    w.line("polyc_rest /= " + extents[k] + ";");
  }
}

void ExprPrinter::printTermCandidate(const ReductionParts &parts, const std::vector<std::string> &extents,
                                     const std::string &flat, const std::string &kept, CodeWriter &w) {
  declareFlatReductionIndex(parts, extents, flat, w);
  if (!parts.condition.empty())
    w.openBlock("if (" + parts.condition + ")");
  termOffset_.clear();
  std::string coefficient = parts.body(w);
  assert(!termOffset_.empty() && "a term table's sum reads its window once per term");
  w.line("polyc_coefficient = " + coefficient + ";");
  w.line("polyc_offset = " + termOffset_ + ";");
  w.line("polyc_keep = " + kept + ";");
  if (!parts.condition.empty())
    w.closeBlock();
}
