// The exactly-once rule, checked with isl: each '=' equation's domain (its left-hand positions within
// the array's shape, restricted by its where condition) is a set of array elements; the domains of an
// output or local array must not overlap and must cover its shape, for every value of the params.
// An equation in a repeat block whose left-hand side uses the repeat variable covers the union over
// iterations; any other equation in a repeat block defines its elements afresh in every iteration.
#include "dsl/DefinitionCheck.h"

#include "compiler/support/IslContext.h"
#include "dsl/Affine.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <isl/cpp.h>
#include <isl/set.h>

#include <cstdlib>
#include <optional>
#include <string>

using namespace llvm;
using namespace polyc;
using namespace polyc::ast;
using namespace polyc::dsl;

// Enough for every realistic program (about 1000 per equation; the examples need far fewer); bounds
// the time isl may spend on adversarial input to a few seconds.
static constexpr unsigned long kMaxIslOperations = 20'000'000;

namespace {

// Names used inside isl strings are generated (P0, d0, rep), so that no user name can collide with
// isl's own syntax; printed sets get the user's names back (see describe()).
class Checker {
public:
  Checker(const Program &program, DiagnosticEngine &diags, isl_ctx *ctx)
      : program_(program), diags_(diags), ctx_(ctx) {}

  bool run();

private:
  struct Definition {
    const Equation *eq;
    isl::set elements; // the array elements it defines (over all iterations when usesRepeatVar)
  };

  std::string affineToIsl(const AffineExpr &a, const DenseMap<const IndexVar *, std::string> &names);
  std::string conditionToIsl(const Expr &e, const DenseMap<const IndexVar *, std::string> &names);
  std::string shapeConstraints(const ArrayDecl &array, StringRef dimPrefix);
  std::optional<Definition> definitionOf(const Equation &eq);
  std::string describe(const ArrayDecl &array, isl::set elements);
  void checkArray(const ArrayDecl &array, const std::vector<const Equation *> &eqs, bool isRead,
                  const Expr *firstRead);
  void useParamsOf(const ArrayDecl &array, const std::vector<const Equation *> &eqs);

  const Program &program_;
  DiagnosticEngine &diags_;
  isl_ctx *ctx_;
  // The params of the array being checked: only those its shape and equations mention, so that a
  // program with very many params does not make every isl set that wide.
  std::vector<const ParamDecl *> params_;
  DenseMap<const ParamDecl *, std::string> paramNames_;
  std::string paramTuple_;
  isl::set paramContext_;
  bool ok_ = true;
};

} // namespace

static std::string dimName(size_t k) { return "d" + std::to_string(k); }

std::string Checker::affineToIsl(const AffineExpr &a, const DenseMap<const IndexVar *, std::string> &names) {
  std::string out = std::to_string(a.constant);
  for (auto &[p, c] : a.params)
    out += " + " + std::to_string(c) + " * " + paramNames_.lookup(p);
  for (auto &[v, c] : a.vars) {
    auto it = names.find(v);
    assert(it != names.end() && "index variable outside the equation's scope");
    out += " + " + std::to_string(c) + " * " + it->second;
  }
  for (auto &[d, c] : a.divs)
    out += " + " + std::to_string(c) + " * floor((" + affineToIsl(d->numerator, names) + ") / " +
           std::to_string(d->denominator) + ")";
  return out;
}

// Sema has checked that `e` is a condition: affine comparisons joined by && || !.
std::string Checker::conditionToIsl(const Expr &e, const DenseMap<const IndexVar *, std::string> &names) {
  if (const auto *u = dyn_cast<Unary>(&e))
    return "not (" + conditionToIsl(*u->operand, names) + ")";
  const auto &b = cast<Binary>(e);
  if (b.op == BinaryOp::And || b.op == BinaryOp::Or)
    return "(" + conditionToIsl(*b.lhs, names) + (b.op == BinaryOp::And ? ") and (" : ") or (") +
           conditionToIsl(*b.rhs, names) + ")";
  auto side = [&](const Expr &x) { return "(" + affineToIsl(*toAffine(x, "a condition"), names) + ")"; };
  if (const auto *lt = dyn_cast<Tuple>(b.lhs.get())) {
    const auto *rt = cast<Tuple>(b.rhs.get());
    std::string out;
    for (size_t i = 0; i < lt->elements.size(); ++i) {
      if (i)
        out += b.op == BinaryOp::Eq ? " and " : " or ";
      out += side(*lt->elements[i]) + (b.op == BinaryOp::Eq ? " = " : " != ") + side(*rt->elements[i]);
    }
    return "(" + out + ")";
  }
  const char *op = "";
  switch (b.op) {
  case BinaryOp::Lt: op = " < "; break;
  case BinaryOp::Le: op = " <= "; break;
  case BinaryOp::Gt: op = " > "; break;
  case BinaryOp::Ge: op = " >= "; break;
  case BinaryOp::Eq: op = " = "; break;
  case BinaryOp::Ne: op = " != "; break;
  default: assert(false && "not a comparison");
  }
  return side(*b.lhs) + op + side(*b.rhs);
}

std::string Checker::shapeConstraints(const ArrayDecl &array, StringRef dimPrefix) {
  std::string out = "0 = 0";
  DenseMap<const IndexVar *, std::string> none;
  for (size_t k = 0; k < array.rank(); ++k) {
    std::string extent = affineToIsl(*toAffine(*array.shape[k], "a shape extent"), none);
    std::string d = dimPrefix.str() + std::to_string(k);
    out += " and 0 <= " + d + " and " + d + " < " + extent;
  }
  return out;
}

static std::string dimTuple(size_t rank, bool withRepeat) {
  std::string out = "[";
  if (withRepeat)
    out += rank ? "rep, " : "rep";
  for (size_t k = 0; k < rank; ++k)
    out += (k ? ", " : "") + dimName(k);
  return out + "]";
}

std::optional<Checker::Definition> Checker::definitionOf(const Equation &eq) {
  const ArrayDecl &array = *eq.array;
  const RepeatBlock *repeat = eq.enclosingRepeat;
  DenseMap<const IndexVar *, std::string> names;
  std::string constraints = shapeConstraints(array, "d");
  bool usesRepeatVar = false;
  if (repeat)
    names[repeat->var.get()] = "rep";
  for (size_t k = 0; k < eq.lhsIndices.size(); ++k) {
    if (eq.indexVars[k]) {
      names[eq.indexVars[k].get()] = dimName(k);
      continue;
    }
    AffineExpr a = *toAffine(*eq.lhsIndices[k], "a left-hand index");
    if (repeat && a.coefficient(repeat->var.get()) != 0)
      usesRepeatVar = true;
    constraints += " and " + dimName(k) + " = " + affineToIsl(a, names);
  }
  if (eq.where)
    constraints += " and (" + conditionToIsl(*eq.where, names) + ")";
  if (usesRepeatVar) {
    DenseMap<const IndexVar *, std::string> none;
    constraints += " and " + affineToIsl(*toAffine(*repeat->lo, "a repeat bound"), none) +
                   " <= rep and rep < " + affineToIsl(*toAffine(*repeat->hi, "a repeat bound"), none);
    // A left-hand position c * rep + ... with c != 0 differs between iterations, so iterations never
    // define the same element twice; the elements are the union over the iterations.
    isl::map byIteration(ctx_, paramTuple_ + " -> { [rep] -> " + dimTuple(array.rank(), false) + " : " +
                                   constraints + " }");
    byIteration = byIteration.intersect_params(paramContext_);
    return Definition{&eq, byIteration.range()};
  }
  isl::set elements(ctx_, paramTuple_ + " -> { " + dimTuple(array.rank(), false) + " : " + constraints + " }");
  return Definition{&eq, elements.intersect_params(paramContext_)};
}

// "r[0, j] for 0 <= j < N": the elements, with the user's names for params and the array's dimensions.
std::string Checker::describe(const ArrayDecl &array, isl::set elements) {
  elements = elements.coalesce().gist_params(paramContext_);
  isl_set *s = elements.release();
  s = isl_set_set_tuple_name(s, array.name.c_str());
  for (size_t i = 0; i < params_.size(); ++i)
    s = isl_set_set_dim_name(s, isl_dim_param, static_cast<unsigned>(i), params_[i]->name.c_str());
  // Dimension names: the first defining equation's index variables where it has them.
  std::vector<std::string> dims(array.rank());
  for (const auto &st : program_.statements) {
    auto visit = [&](const Equation &eq) {
      if (eq.array != &array)
        return;
      for (size_t k = 0; k < eq.indexVars.size() && k < dims.size(); ++k)
        if (dims[k].empty() && eq.indexVars[k])
          dims[k] = eq.indexVars[k]->name;
    };
    if (auto *eq = std::get_if<Equation *>(&st))
      visit(**eq);
    else
      for (auto &eq : std::get<RepeatBlock *>(st)->body)
        visit(*eq);
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    std::string name = dims[k].empty() ? "i" + std::to_string(k) : dims[k];
    auto taken = [&](const std::string &n) {
      for (const ParamDecl *p : params_)
        if (p->name == n)
          return true;
      for (size_t j = 0; j < k; ++j)
        if (dims[j] == n)
          return true;
      return false;
    };
    while (taken(name))
      name += "'";
    dims[k] = name;
    s = isl_set_set_dim_name(s, isl_dim_set, static_cast<unsigned>(k), name.c_str());
  }
  char *text = isl_set_to_str(s);
  isl_set_free(s);
  std::string printed = text ? text : "";
  free(text);

  // "[N] -> { r[t = 0, j] : 0 <= j < N; ... }" -> "r[0, j] for 0 <= j < N; ..."
  StringRef body = printed;
  size_t open = body.find('{'), close = body.rfind('}');
  if (open == StringRef::npos || close == StringRef::npos || close < open)
    return printed;
  body = body.slice(open + 1, close).trim();
  SmallVector<StringRef, 4> pieces;
  body.split(pieces, "; ");
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i == 3) {
      out += "; ...";
      break;
    }
    StringRef piece = pieces[i].trim();
    auto [tuple, cond] = piece.split(" : ");
    size_t lb = tuple.find('['), rb = tuple.rfind(']');
    std::string shown = tuple.str();
    if (lb != StringRef::npos && rb != StringRef::npos && rb > lb) {
      SmallVector<StringRef, 4> elems;
      tuple.slice(lb + 1, rb).split(elems, ", ");
      shown = tuple.take_front(lb + 1).str();
      for (size_t k = 0; k < elems.size(); ++k) {
        StringRef el = elems[k];
        size_t eqPos = el.find(" = ");
        shown += (k ? ", " : "") + (eqPos == StringRef::npos ? el : el.drop_front(eqPos + 3)).str();
      }
      shown += "]";
    }
    out += (i ? "; " : "") + shown;
    if (!cond.empty())
      out += " for " + cond.str();
  }
  return out;
}

static void collectParams(const Expr &e, DenseSet<const ParamDecl *> &out) {
  std::vector<const Expr *> stack{&e};
  while (!stack.empty()) {
    const Expr *x = stack.back();
    stack.pop_back();
    if (auto *ref = dyn_cast<VarRef>(x)) {
      if (auto *p = std::get_if<const ParamDecl *>(&ref->binding))
        out.insert(*p);
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

void Checker::useParamsOf(const ArrayDecl &array, const std::vector<const Equation *> &eqs) {
  DenseSet<const ParamDecl *> used;
  for (auto &extent : array.shape)
    collectParams(*extent, used);
  for (const Equation *eq : eqs) {
    for (auto &index : eq->lhsIndices)
      collectParams(*index, used);
    if (eq->where)
      collectParams(*eq->where, used);
    if (eq->enclosingRepeat) {
      collectParams(*eq->enclosingRepeat->lo, used);
      collectParams(*eq->enclosingRepeat->hi, used);
    }
  }
  params_.clear();
  paramNames_.clear();
  for (const auto &p : program_.params)
    if (used.contains(p.get()))
      params_.push_back(p.get());
  std::string context = "0 = 0";
  paramTuple_ = "[";
  for (size_t i = 0; i < params_.size(); ++i) {
    std::string name = "P" + std::to_string(i);
    paramNames_[params_[i]] = name;
    paramTuple_ += (i ? ", " : "") + name;
    context += " and " + name + " >= 0";
  }
  paramTuple_ += "]";
  paramContext_ = isl::set(ctx_, paramTuple_ + " -> { : " + context + " }");
}

void Checker::checkArray(const ArrayDecl &array, const std::vector<const Equation *> &eqs, bool isRead,
                         const Expr *firstRead) {
  if (eqs.empty()) {
    if (array.kind == ArrayKind::Output) {
      diags_.error(array.range, "output array '" + array.name + "' is never defined");
      ok_ = false;
    } else if (isRead) {
      diags_.error(array.range, "local array '" + array.name + "' is read but never defined");
      diags_.note(firstRead->range, "'" + array.name + "' is read here");
      ok_ = false;
    }
    return;
  }
  useParamsOf(array, eqs);
  std::vector<Definition> defs;
  std::optional<isl::set> defined; // the union of defs
  bool arrayOk = true;
  for (const Equation *eq : eqs) {
    std::optional<Definition> def = definitionOf(*eq);
    if (!def)
      continue;
    if (def->elements.is_empty()) {
      diags_.error(eq->lhsRange, "equation defines no element of '" + array.name +
                                     "': its left-hand side lies outside the array or its where condition is "
                                     "never true");
      arrayOk = ok_ = false;
      continue;
    }
    // One test against the union of the earlier definitions keeps this linear in the number of
    // equations; the culprit is looked for only when there is an overlap.
    if (defined && !defined->intersect(def->elements).is_empty()) {
      for (const Definition &prev : defs) {
        isl::set both = prev.elements.intersect(def->elements);
        if (both.is_empty())
          continue;
        diags_.error(eq->lhsRange, "array '" + array.name + "' is defined twice at " + describe(array, both));
        diags_.note(prev.eq->lhsRange, "previous definition is here");
        break;
      }
      arrayOk = ok_ = false;
    }
    defined = defined ? defined->unite(def->elements).coalesce() : def->elements;
    defs.push_back(std::move(*def));
  }
  if (!arrayOk)
    return;
  isl::set shape(ctx_, paramTuple_ + " -> { " + dimTuple(array.rank(), false) + " : " +
                           shapeConstraints(array, "d") + " }");
  shape = shape.intersect_params(paramContext_);
  isl::set missing = defined ? shape.subtract(*defined) : shape;
  if (!missing.is_empty()) {
    diags_.error(array.range, "array '" + array.name + "' is not defined at " + describe(array, missing));
    size_t notes = 0;
    for (const Definition &def : defs)
      if (notes++ < 3)
        diags_.note(def.eq->lhsRange, "'" + array.name + "' is partly defined here");
    ok_ = false;
  }
}

static void collectReads(const Expr &e, DenseMap<const ArrayDecl *, const Expr *> &reads) {
  std::vector<const Expr *> stack{&e};
  while (!stack.empty()) {
    const Expr *x = stack.back();
    stack.pop_back();
    switch (x->kind()) {
    case Expr::Kind::IntLit:
    case Expr::Kind::FloatLit:
      break;
    case Expr::Kind::VarRef:
      if (auto *a = std::get_if<const ArrayDecl *>(&cast<VarRef>(x)->binding))
        reads.try_emplace(*a, x);
      break;
    case Expr::Kind::ArrayRead: {
      auto *r = cast<ArrayRead>(x);
      if (r->array)
        reads.try_emplace(r->array, x);
      for (auto &i : r->indices)
        stack.push_back(i.get());
      break;
    }
    case Expr::Kind::Unary:
      stack.push_back(cast<Unary>(x)->operand.get());
      break;
    case Expr::Kind::Binary:
      stack.push_back(cast<Binary>(x)->lhs.get());
      stack.push_back(cast<Binary>(x)->rhs.get());
      break;
    case Expr::Kind::Call:
      for (auto &a : cast<Call>(x)->args)
        stack.push_back(a.get());
      break;
    case Expr::Kind::Reduction: {
      auto *r = cast<Reduction>(x);
      for (auto &b : r->bindings) {
        stack.push_back(b.lo.get());
        stack.push_back(b.hi.get());
      }
      if (r->where)
        stack.push_back(r->where.get());
      stack.push_back(r->body.get());
      break;
    }
    case Expr::Kind::Tuple:
      for (auto &el : cast<Tuple>(x)->elements)
        stack.push_back(el.get());
      break;
    }
  }
}

bool Checker::run() {
  DenseMap<const ArrayDecl *, std::vector<const Equation *>> defining;
  DenseMap<const ArrayDecl *, const Expr *> reads;
  auto visit = [&](const Equation &eq) {
    if (eq.op == AssignOp::Assign)
      defining[eq.array].push_back(&eq);
    collectReads(*eq.rhs, reads);
    if (eq.isScatter()) { // its computed indices and its condition may read data too
      for (const auto &index : eq.lhsIndices)
        collectReads(*index, reads);
      if (eq.where)
        collectReads(*eq.where, reads);
    }
  };
  for (const Statement &st : program_.statements) {
    if (auto *eq = std::get_if<Equation *>(&st))
      visit(**eq);
    else
      for (auto &eq : std::get<RepeatBlock *>(st)->body)
        visit(*eq);
  }
  for (const auto &array : program_.arrays) {
    if (diags_.tooMany())
      break;
    if (array->kind != ArrayKind::Output && array->kind != ArrayKind::Local)
      continue;
    auto it = defining.find(array.get());
    auto read = reads.find(array.get());
    checkArray(*array, it == defining.end() ? std::vector<const Equation *>{} : it->second,
               read != reads.end(), read != reads.end() ? read->second : nullptr);
  }
  return ok_;
}

// Whether isl ran out of its operation budget. isl's parser turns the quota error into a syntax error,
// so the error code alone does not tell; once the budget is spent, every further operation fails.
static bool quotaExceeded(isl_ctx *ctx) {
  if (isl_ctx_last_error(ctx) == isl_error_quota)
    return true;
  isl_set *probe = isl_set_read_from_str(ctx, "{ [0] }");
  if (!probe)
    return true;
  isl_set_free(probe);
  return false;
}

// Where to report a failure of the whole check: the first array, the most likely culprit's neighbour.
static SMRange firstArray(const Program &program) {
  return program.arrays.empty() ? SMRange() : program.arrays.front()->range;
}

bool polyc::dsl::checkDefinitions(const Program &program, DiagnosticEngine &diags) {
  IslContext context;
  isl_ctx_set_max_operations(context.get(), kMaxIslOperations);
  try {
    return Checker(program, diags, context.get()).run();
  } catch (const isl::exception &e) {
    if (quotaExceeded(context.get()))
      diags.error(firstArray(program), "the program is too complex to check that every array element is defined "
                                       "exactly once (too many equations or too large coefficients)");
    else
      diags.error(firstArray(program), Twine("internal error while checking array definitions: ") + e.what());
    return false;
  }
}
