// Lowers a checked program to the polytope model: one statement per equation with its iteration
// domain, write and read access relations (boundary rules applied, gathers as may-reads, reduction
// variables projected out) and the initial schedule (textual order, repeat loops outermost).
#include "compiler/model/Model.h"

#include "compiler/model/IslUtil.h"
#include "compiler/model/SnapshotUpdates.h"
#include "compiler/support/SourceError.h"
#include "dsl/Affine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <isl/space.h>

#include <set>

namespace polyc::model {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

// What a statement's expressions are lowered against: the "wide" space holds the statement's own
// dimensions followed by the variables of the reductions in scope.
struct Scope {
  isl::space wide;                                // S[dims..., reduction variables...]
  std::map<const ast::IndexVar *, unsigned> vars; // index variable -> position in `wide`
  isl::set domain;                                // the statement's domain, extended to `wide`
};

class Lowering {
public:
  Lowering(const ast::Program &program, isl::ctx ctx, Model &model) : program_(program), ctx_(ctx), model_(model) {}

  llvm::Error run(const ModelOptions &options);

private:
  llvm::Error buildContext(const ModelOptions &options);
  llvm::Error buildArrays();
  llvm::Error buildStatement(const ast::Equation &eq, int repeatBlock, unsigned topPosition,
                             unsigned blockPosition);
  llvm::Error collectReads(const ast::Expr &expr, Statement &stmt, const Scope &scope);
  llvm::Error addArrayRead(const ast::ArrayRead &read, Statement &stmt, const Scope &scope);
  llvm::Error addReduction(const ast::Reduction &red, Statement &stmt, const Scope &scope);

  llvm::Expected<isl::aff> lowerAffine(const ast::Expr &expr, const Scope &scope);
  llvm::Expected<isl::set> lowerCondition(const ast::Expr &expr, const Scope &scope);
  llvm::Expected<isl::set> lowerRange(const ast::RangeBinding &binding, const Scope &scope, isl::set domain);
  std::optional<int64_t> evalConstant(const ast::Expr &expr);
  llvm::Expected<isl::pw_aff> extent(const ast::ArrayDecl &array, unsigned dim, const isl::space &space);

  // The map wide -> stmt space that forgets the reduction variables.
  isl::map forgetReductionVars(const Scope &scope, const Statement &stmt);
  const ArrayInfo *arrayInfo(const ast::ArrayDecl *decl);

  const ast::Program &program_;
  isl::ctx ctx_;
  Model &model_;
  isl::space paramSpace_;
  std::map<const ast::ParamDecl *, std::string> paramNames_;
};

} // namespace

// --- Parameters, context, arrays -------------------------------------------------------------

llvm::Error Lowering::buildContext(const ModelOptions &options) {
  paramSpace_ = isl::manage(isl_space_params_alloc(ctx_.get(), 0));
  for (const auto &param : program_.params) {
    model_.params.push_back(param->name);
    paramNames_[param.get()] = param->name;
    paramSpace_ = paramSpace_.add_param(param->name);
  }
  isl::set context = isl::set::universe(paramSpace_);
  for (const std::string &name : model_.params) {
    isl::aff p = paramSpace_.param_aff_on_domain(name);
    context = context.intersect(p.ge_set(paramSpace_.zero_aff_on_domain()));
  }
  for (const auto &[name, value] : options.paramValues) {
    if (!llvm::is_contained(model_.params, name)) {
      std::string known;
      for (const std::string &p : model_.params)
        known += (known.empty() ? "" : ", ") + p;
      return makeError("unknown parameter '" + name + "' in --param" +
                       (known.empty() ? std::string(" (the program declares no parameters)")
                                      : " (the program declares " + known + ")"));
    }
    if (value < 0)
      return makeError("parameter '" + name + "' must be non-negative, got " + std::to_string(value));
    isl::aff p = paramSpace_.param_aff_on_domain(name);
    context = context.intersect(p.eq_set(paramSpace_.zero_aff_on_domain().add_constant(value)));
    model_.paramValues[name] = value;
  }
  model_.context = context;
  return llvm::Error::success();
}

llvm::Expected<isl::pw_aff> Lowering::extent(const ast::ArrayDecl &array, unsigned dim, const isl::space &space) {
  Scope scope{space, {}, isl::set::universe(space)};
  auto aff = lowerAffine(*array.shape[dim], scope);
  if (!aff)
    return aff.takeError();
  return isl::pw_aff(*aff);
}

llvm::Error Lowering::buildArrays() {
  for (const auto &decl : program_.arrays) {
    ArrayInfo info;
    info.decl = decl.get();
    info.name = decl->name;
    isl::space space = paramSpace_.add_named_tuple(decl->name, decl->rank());
    isl::set extentSet = isl::set::universe(space);
    isl::multi_aff id = space.identity_multi_aff_on_domain();
    for (unsigned d = 0; d < decl->rank(); ++d) {
      auto n = extent(*decl, d, space);
      if (!n)
        return n.takeError();
      isl::pw_aff v = isl::pw_aff(id.at(static_cast<int>(d)));
      extentSet = extentSet.intersect(v.ge_set(isl::pw_aff(space.zero_aff_on_domain()))).intersect(v.lt_set(*n));
    }
    info.extent = extentSet.intersect_params(model_.context);
    model_.arrays.push_back(std::move(info));
  }
  return llvm::Error::success();
}

const ArrayInfo *Lowering::arrayInfo(const ast::ArrayDecl *decl) {
  for (const ArrayInfo &info : model_.arrays)
    if (info.decl == decl)
      return &info;
  return decl ? model_.findArray(decl->name) : nullptr;
}

// --- Affine expressions and conditions -------------------------------------------------------------

// Integer constant expressions fold as they do in any index (dsl::toAffine: / and % with floor).
std::optional<int64_t> Lowering::evalConstant(const ast::Expr &expr) {
  if (!dsl::isIntegerConstant(expr))
    return std::nullopt;
  std::optional<dsl::AffineExpr> value = dsl::toAffine(expr, "an index");
  if (!value)
    return std::nullopt;
  return value->constant;
}

llvm::Expected<isl::aff> Lowering::lowerAffine(const ast::Expr &expr, const Scope &scope) {
  isl::aff zero = scope.wide.zero_aff_on_domain();
  if (auto c = evalConstant(expr))
    return zero.add_constant(*c);
  auto notAffine = [&](const llvm::Twine &what) {
    return makeSourceError(expr.range, "expression is not affine: " + what);
  };
  if (auto *ref = dyn_cast<ast::VarRef>(&expr)) {
    if (auto *iv = std::get_if<ast::IndexVarRef>(&ref->binding)) {
      auto it = scope.vars.find(iv->var);
      if (it == scope.vars.end())
        return makeSourceError(expr.range, "index variable '" + ref->name + "' is not in scope here");
      return scope.wide.identity_multi_aff_on_domain().at(static_cast<int>(it->second));
    }
    if (auto *p = std::get_if<const ast::ParamDecl *>(&ref->binding))
      return scope.wide.param_aff_on_domain(paramNames_.at(*p));
    return notAffine("'" + ref->name + "' is not an index variable, parameter or integer constant");
  }
  if (auto *un = dyn_cast<ast::Unary>(&expr)) {
    if (un->op != ast::UnaryOp::Neg)
      return notAffine("'!' in an index");
    auto v = lowerAffine(*un->operand, scope);
    if (!v)
      return v.takeError();
    return v->neg();
  }
  if (auto *bin = dyn_cast<ast::Binary>(&expr)) {
    if (bin->op == ast::BinaryOp::Mul) {
      if (auto c = evalConstant(*bin->lhs)) {
        auto v = lowerAffine(*bin->rhs, scope);
        if (!v)
          return v.takeError();
        return v->scale(*c);
      }
      if (auto c = evalConstant(*bin->rhs)) {
        auto v = lowerAffine(*bin->lhs, scope);
        if (!v)
          return v.takeError();
        return v->scale(*c);
      }
      return notAffine("a product of two non-constant terms");
    }
    if (bin->op == ast::BinaryOp::Add || bin->op == ast::BinaryOp::Sub) {
      auto l = lowerAffine(*bin->lhs, scope);
      if (!l)
        return l.takeError();
      auto r = lowerAffine(*bin->rhs, scope);
      if (!r)
        return r.takeError();
      return bin->op == ast::BinaryOp::Add ? l->add(*r) : l->sub(*r);
    }
    if (std::optional<int64_t> d = dsl::positiveDivisor(*bin)) {
      // A quasi-affine index: floor(l / d), or l - d * floor(l / d), which isl keeps exact.
      auto l = lowerAffine(*bin->lhs, scope);
      if (!l)
        return l.takeError();
      isl::val divisor(ctx_, *d);
      return bin->op == ast::BinaryOp::Div ? l->scale_down(divisor).floor() : l->mod(divisor);
    }
    return notAffine(std::string("operator '") + ast::spelling(bin->op) + "' on non-constant operands");
  }
  if (isa<ast::ArrayRead>(&expr))
    return notAffine("an array read (only a gather of an i32 array may index another array)");
  return notAffine("not a sum of index variables, parameters and integer constants");
}

llvm::Expected<isl::set> Lowering::lowerCondition(const ast::Expr &expr, const Scope &scope) {
  isl::set universe = isl::set::universe(scope.wide);
  if (auto c = evalConstant(expr))
    return *c != 0 ? universe : isl::set::empty(scope.wide);
  if (auto *un = dyn_cast<ast::Unary>(&expr); un && un->op == ast::UnaryOp::Not) {
    auto v = lowerCondition(*un->operand, scope);
    if (!v)
      return v.takeError();
    return universe.subtract(*v);
  }
  auto *bin = dyn_cast<ast::Binary>(&expr);
  if (!bin)
    return makeSourceError(expr.range, "condition is not an affine comparison");
  if (bin->op == ast::BinaryOp::And || bin->op == ast::BinaryOp::Or) {
    auto l = lowerCondition(*bin->lhs, scope);
    if (!l)
      return l.takeError();
    auto r = lowerCondition(*bin->rhs, scope);
    if (!r)
      return r.takeError();
    return bin->op == ast::BinaryOp::And ? l->intersect(*r) : l->unite(*r);
  }
  auto compare = [&](const isl::aff &l, const isl::aff &r) -> isl::set {
    switch (bin->op) {
    case ast::BinaryOp::Lt:
      return l.lt_set(r);
    case ast::BinaryOp::Le:
      return l.le_set(r);
    case ast::BinaryOp::Gt:
      return l.gt_set(r);
    case ast::BinaryOp::Ge:
      return l.ge_set(r);
    case ast::BinaryOp::Eq:
      return l.eq_set(r);
    default:
      return l.ne_set(r);
    }
  };
  switch (bin->op) {
  case ast::BinaryOp::Lt:
  case ast::BinaryOp::Le:
  case ast::BinaryOp::Gt:
  case ast::BinaryOp::Ge:
  case ast::BinaryOp::Eq:
  case ast::BinaryOp::Ne:
    break;
  default:
    return makeSourceError(expr.range, "condition is not an affine comparison");
  }
  auto *lt = dyn_cast<ast::Tuple>(bin->lhs.get());
  auto *rt = dyn_cast<ast::Tuple>(bin->rhs.get());
  if (lt || rt) {
    if (!lt || !rt || lt->elements.size() != rt->elements.size() ||
        (bin->op != ast::BinaryOp::Eq && bin->op != ast::BinaryOp::Ne))
      return makeSourceError(expr.range, "tuples can only be compared with == and != to tuples of equal size");
    // (a, b) == (c, d) holds when every component is equal; != when any differs.
    isl::set result = bin->op == ast::BinaryOp::Eq ? universe : isl::set::empty(scope.wide);
    for (size_t k = 0; k < lt->elements.size(); ++k) {
      auto l = lowerAffine(*lt->elements[k], scope);
      if (!l)
        return l.takeError();
      auto r = lowerAffine(*rt->elements[k], scope);
      if (!r)
        return r.takeError();
      result = bin->op == ast::BinaryOp::Eq ? result.intersect(l->eq_set(*r)) : result.unite(l->ne_set(*r));
    }
    return result;
  }
  auto l = lowerAffine(*bin->lhs, scope);
  if (!l)
    return l.takeError();
  auto r = lowerAffine(*bin->rhs, scope);
  if (!r)
    return r.takeError();
  return compare(*l, *r);
}

// --- Statements -----------------------------------------------------------------------------------

isl::map Lowering::forgetReductionVars(const Scope &scope, const Statement &stmt) {
  isl::space stmtSpace = stmt.domain.space();
  isl::space map = islutil::mapSpace(scope.wide, stmtSpace);
  isl::multi_aff id = scope.wide.identity_multi_aff_on_domain();
  isl::aff_list list(ctx_, static_cast<int>(stmt.dimNames.size()));
  for (unsigned i = 0; i < stmt.dimNames.size(); ++i)
    list = list.add(id.at(static_cast<int>(i)));
  return map.multi_aff(list).as_map();
}

// Applies the array's boundary rule to one affine index: `clamp` and `mirror` move the index inside
// the array (exactly, as piecewise affine functions); `zero` reads nothing outside (the caller
// intersects the range with the array's extent).
static isl::pw_aff applyBoundary(const isl::aff &index, const isl::pw_aff &extent, ast::Boundary boundary) {
  isl::pw_aff e(index);
  if (boundary == ast::Boundary::Zero)
    return e;
  isl::pw_aff zero(index.space().domain().zero_aff_on_domain());
  isl::pw_aff last = extent.sub(zero.add_constant(1));
  isl::set below = e.lt_set(zero), above = e.gt_set(last);
  isl::set inside = isl::set::universe(index.space().domain()).subtract(below).subtract(above);
  if (boundary == ast::Boundary::Mirror) {
    // Reflect without repeating the edge (-1 -> 1, n -> n - 2), then clamp what is still outside.
    isl::pw_aff reflected = e.neg()
                                .intersect_domain(below)
                                .union_add(last.add(last).sub(e).intersect_domain(above))
                                .union_add(e.intersect_domain(inside));
    e = reflected;
    below = e.lt_set(zero);
    above = e.gt_set(last);
    inside = isl::set::universe(index.space().domain()).subtract(below).subtract(above);
  }
  return zero.intersect_domain(below).union_add(last.intersect_domain(above)).union_add(e.intersect_domain(inside));
}

llvm::Error Lowering::addArrayRead(const ast::ArrayRead &read, Statement &stmt, const Scope &scope) {
  // The index expressions may themselves read arrays (the index array of a gather).
  for (const auto &index : read.indices)
    if (auto err = collectReads(*index, stmt, scope))
      return err;
  const ArrayInfo *info = arrayInfo(read.array);
  if (!info)
    return makeSourceError(read.range, "array '" + read.name + "' is not declared");
  const ast::ArrayDecl &decl = *info->decl;
  if (read.indices.size() != decl.rank())
    return makeSourceError(read.range, "array '" + read.name + "' has rank " + std::to_string(decl.rank()));
  isl::space arraySpace = info->extent.space();
  isl::space accessSpace = islutil::mapSpace(scope.wide, arraySpace);
  isl::space product = accessSpace.wrap();
  isl::multi_aff toWide = accessSpace.domain_map_multi_aff();
  isl::multi_aff toArray = accessSpace.range_map_multi_aff();
  isl::set relation = isl::set::universe(product);
  bool isMay = false;
  for (unsigned d = 0; d < decl.rank(); ++d) {
    isl::pw_aff element(toArray.at(static_cast<int>(d)));
    bool gather = d < read.isGather.size() && read.isGather[d];
    if (gather) {
      // A gather may read any element along this dimension: the boundary rule keeps it inside.
      auto n = extent(decl, d, product);
      if (!n)
        return n.takeError();
      isl::pw_aff zero(product.zero_aff_on_domain());
      relation = relation.intersect(element.ge_set(zero)).intersect(element.lt_set(*n));
      isMay = true;
      continue;
    }
    auto index = lowerAffine(*read.indices[d], scope);
    if (!index)
      return index.takeError();
    auto n = extent(decl, d, scope.wide);
    if (!n)
      return n.takeError();
    isl::pw_aff bounded = applyBoundary(*index, *n, decl.effectiveBoundary);
    relation = relation.intersect(element.eq_set(bounded.pullback(toWide)));
  }
  isl::map wideAccess = relation.unwrap().intersect_domain(scope.domain).intersect_range(info->extent);
  Access access;
  access.array = decl.name;
  access.relation = forgetReductionVars(scope, stmt).reverse().apply_range(wideAccess).coalesce();
  access.isMay = isMay;
  access.read = &read;
  stmt.reads.push_back(std::move(access));
  return llvm::Error::success();
}

llvm::Error Lowering::addReduction(const ast::Reduction &red, Statement &stmt, const Scope &outer) {
  // The reduction's variables become extra dimensions of the wide space; its ranges and condition
  // restrict them. Reads in its body are projected back onto the statement's dimensions.
  unsigned nOuter = islutil::tupleDims(outer.wide);
  std::vector<std::string> names;
  for (unsigned i = 0; i < nOuter; ++i)
    names.push_back(islutil::dimName(isl::set::universe(outer.wide), i));
  Scope inner;
  inner.vars = outer.vars;
  std::vector<const ast::IndexVar *> vars;
  for (const ast::RangeBinding &binding : red.bindings)
    for (const auto &var : binding.vars) {
      inner.vars[var.get()] = nOuter + static_cast<unsigned>(vars.size());
      vars.push_back(var.get());
      names.push_back(var->name);
    }
  inner.wide = islutil::namedSetSpace(paramSpace_, stmt.name, names);
  isl::multi_aff id = inner.wide.identity_multi_aff_on_domain();
  isl::aff_list outerDims(ctx_, static_cast<int>(nOuter));
  for (unsigned i = 0; i < nOuter; ++i)
    outerDims = outerDims.add(id.at(static_cast<int>(i)));
  isl::multi_aff toOuter = islutil::mapSpace(inner.wide, outer.wide).multi_aff(outerDims);
  isl::set domain = outer.domain.preimage(toOuter);
  unsigned position = nOuter;
  for (const ast::RangeBinding &binding : red.bindings) {
    if (binding.rowArray) {
      // A row range: its bounds are data, so the variable may take any value the run's check of the row
      // array admits, 0 .. the smallest extent it indexes; the bounds' reads are the statement's.
      for (size_t k = 0; k < binding.vars.size(); ++k, ++position) {
        isl::aff v = id.at(static_cast<int>(position));
        domain = domain.intersect(v.ge_set(v.sub(v)));
        for (const ast::DirectIndex &target : binding.rowTargets) {
          auto extent = lowerAffine(*target.array->shape[target.dim], inner);
          if (!extent)
            return extent.takeError();
          domain = domain.intersect(v.lt_set(*extent));
        }
      }
      for (const ast::Expr *bound : {binding.lo.get(), binding.hi.get()})
        if (llvm::Error err = collectReads(*bound, stmt, outer))
          return err;
      continue;
    }
    auto bounded = lowerRange(binding, inner, domain);
    if (!bounded)
      return bounded.takeError();
    domain = *bounded;
    position += static_cast<unsigned>(binding.vars.size());
  }
  if (red.where) {
    auto cond = lowerCondition(*red.where, inner);
    if (!cond)
      return cond.takeError();
    domain = domain.intersect(*cond);
  }
  inner.domain = domain;

  ReductionInfo info;
  info.reduction = &red;
  std::vector<std::string> redNames(names.begin() + nOuter, names.end());
  isl::space redSpace = islutil::namedSetSpace(paramSpace_, "R", redNames);
  isl::aff_list own(ctx_, static_cast<int>(vars.size()));
  for (unsigned i = 0; i < vars.size(); ++i)
    own = own.add(id.at(static_cast<int>(nOuter + i)));
  isl::map toReduction = islutil::mapSpace(inner.wide, redSpace).multi_aff(own).as_map();
  info.range = forgetReductionVars(inner, stmt).intersect_domain(domain).reverse().apply_range(toReduction).coalesce();
  stmt.reductions.push_back(std::move(info));
  size_t before = stmt.reads.size();
  if (llvm::Error err = collectReads(*red.body, stmt, inner))
    return err;
  // Under a row range the body reads only some of the elements its variable may take: may-reads.
  if (llvm::any_of(red.bindings, [](const ast::RangeBinding &b) { return b.rowArray != nullptr; }))
    for (size_t k = before; k < stmt.reads.size(); ++k)
      stmt.reads[k].isMay = true;
  return llvm::Error::success();
}

llvm::Error Lowering::collectReads(const ast::Expr &expr, Statement &stmt, const Scope &scope) {
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
    return llvm::Error::success();
  case ast::Expr::Kind::VarRef: {
    auto &ref = cast<ast::VarRef>(expr);
    if (auto *arr = std::get_if<const ast::ArrayDecl *>(&ref.binding)) {
      const ArrayInfo *info = arrayInfo(*arr);
      if (!info)
        return makeSourceError(expr.range, "array '" + ref.name + "' is not declared");
      Access access;
      access.array = info->name;
      isl::map all = islutil::crossProduct(stmt.domain, info->extent);
      access.relation = all;
      access.scalarRead = &ref;
      stmt.reads.push_back(std::move(access));
    }
    return llvm::Error::success();
  }
  case ast::Expr::Kind::ArrayRead:
    return addArrayRead(cast<ast::ArrayRead>(expr), stmt, scope);
  case ast::Expr::Kind::Unary:
    return collectReads(*cast<ast::Unary>(expr).operand, stmt, scope);
  case ast::Expr::Kind::Binary: {
    auto &bin = cast<ast::Binary>(expr);
    if (auto err = collectReads(*bin.lhs, stmt, scope))
      return err;
    return collectReads(*bin.rhs, stmt, scope);
  }
  case ast::Expr::Kind::Call:
    for (const auto &arg : cast<ast::Call>(expr).args)
      if (auto err = collectReads(*arg, stmt, scope))
        return err;
    return llvm::Error::success();
  case ast::Expr::Kind::Tuple:
    for (const auto &element : cast<ast::Tuple>(expr).elements)
      if (auto err = collectReads(*element, stmt, scope))
        return err;
    return llvm::Error::success();
  case ast::Expr::Kind::Reduction:
    return addReduction(cast<ast::Reduction>(expr), stmt, scope);
  }
  return llvm::Error::success();
}

llvm::Error Lowering::buildStatement(const ast::Equation &eq, int repeatBlock, unsigned topPosition,
                                     unsigned blockPosition) {
  Statement stmt;
  stmt.name = "S" + std::to_string(model_.statements.size());
  stmt.equation = &eq;
  stmt.op = eq.op;
  stmt.range = eq.range;
  stmt.repeatBlock = repeatBlock;
  stmt.topPosition = topPosition;
  stmt.blockPosition = blockPosition;
  const ArrayInfo *target = arrayInfo(eq.array);
  if (!target)
    return makeSourceError(eq.lhsRange, "array '" + eq.target + "' is not declared");
  const ast::ArrayDecl &decl = *target->decl;
  if (eq.lhsIndices.size() != decl.rank())
    return makeSourceError(eq.lhsRange, "array '" + eq.target + "' has rank " + std::to_string(decl.rank()));

  Scope scope;
  const ast::RepeatBlock *block = repeatBlock >= 0 ? model_.repeats[repeatBlock].block : nullptr;
  if (block) {
    scope.vars[block->var.get()] = 0;
    stmt.dimNames.push_back(block->var->name);
    stmt.repeatDims = 1;
  }
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p) {
    const ast::IndexVar *var = p < eq.indexVars.size() ? eq.indexVars[p].get() : nullptr;
    if (!var)
      continue;
    scope.vars[var] = static_cast<unsigned>(stmt.dimNames.size());
    stmt.dimNames.push_back(var->name);
  }
  for (const ast::RangeBinding &binding : eq.scatterBindings)
    for (const auto &var : binding.vars) {
      scope.vars[var.get()] = static_cast<unsigned>(stmt.dimNames.size());
      stmt.dimNames.push_back(var->name);
    }
  scope.wide = islutil::namedSetSpace(paramSpace_, stmt.name, stmt.dimNames);
  isl::multi_aff id = scope.wide.identity_multi_aff_on_domain();
  isl::aff zero = scope.wide.zero_aff_on_domain();
  isl::set domain = isl::set::universe(scope.wide).intersect_params(model_.context);
  scope.domain = domain;
  if (block) {
    auto lo = lowerAffine(*block->lo, scope);
    if (!lo)
      return lo.takeError();
    auto hi = lowerAffine(*block->hi, scope);
    if (!hi)
      return hi.takeError();
    domain = domain.intersect(id.at(0).ge_set(*lo)).intersect(id.at(0).lt_set(*hi));
  }
  for (const ast::RangeBinding &binding : eq.scatterBindings) {
    auto bounded = lowerRange(binding, scope, domain);
    if (!bounded)
      return bounded.takeError();
    domain = *bounded;
  }
  // The element each point writes, as a set of [point -> element] pairs: one element for an index
  // variable or a fixed position, any element along a computed index's dimension.
  isl::space writeSpace = islutil::mapSpace(scope.wide, target->extent.space());
  isl::multi_aff toPoint = writeSpace.domain_map_multi_aff();
  isl::multi_aff toElement = writeSpace.range_map_multi_aff();
  isl::set written = isl::set::universe(writeSpace.wrap());
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p) {
    const ast::IndexVar *var = p < eq.indexVars.size() ? eq.indexVars[p].get() : nullptr;
    isl::aff position = zero;
    if (p < eq.computedIndex.size() && eq.computedIndex[p]) {
      auto n = extent(decl, p, writeSpace.wrap());
      if (!n)
        return n.takeError();
      isl::pw_aff element(toElement.at(static_cast<int>(p)));
      written = written.intersect(element.ge_set(isl::pw_aff(writeSpace.wrap().zero_aff_on_domain())))
                    .intersect(element.lt_set(*n));
      continue;
    }
    if (var) {
      position = id.at(static_cast<int>(scope.vars.at(var)));
    } else {
      auto fixed = lowerAffine(*eq.lhsIndices[p], scope);
      if (!fixed)
        return fixed.takeError();
      position = *fixed;
    }
    auto n = extent(decl, p, scope.wide);
    if (!n)
      return n.takeError();
    domain = domain.intersect(isl::pw_aff(position).ge_set(isl::pw_aff(zero))).intersect(isl::pw_aff(position).lt_set(*n));
    isl::pw_aff element(toElement.at(static_cast<int>(p)));
    written = written.intersect(element.eq_set(isl::pw_aff(position).pullback(toPoint)));
  }
  if (eq.where && !eq.dataCondition) {
    auto cond = lowerCondition(*eq.where, scope);
    if (!cond)
      return cond.takeError();
    domain = domain.intersect(*cond);
  }
  stmt.domain = domain.coalesce();
  scope.domain = stmt.domain;

  stmt.write.array = decl.name;
  stmt.write.relation = written.unwrap().intersect_domain(stmt.domain).coalesce();
  stmt.write.isMay = llvm::is_contained(eq.computedIndex, true);
  stmt.scatter = eq.isScatter();
  if (auto err = collectReads(*eq.rhs, stmt, scope))
    return err;
  if (stmt.scatter) { // a computed index and a condition tested at each point read data too
    for (unsigned p = 0; p < eq.lhsIndices.size(); ++p)
      if (eq.computedIndex[p])
        if (auto err = collectReads(*eq.lhsIndices[p], stmt, scope))
          return err;
    if (eq.dataCondition)
      if (auto err = collectReads(*eq.where, stmt, scope))
        return err;
  }
  if (stmt.isUpdate()) {
    // `A[x] += e` reads the old value of every point it writes.
    Access old = stmt.write;
    old.implicitUpdateRead = true;
    stmt.reads.push_back(std::move(old));
    // A scatter reads none of its array but the element it adds to, atomically (Sema).
    stmt.readsOtherInstances = !stmt.scatter && updateReadsOtherInstances(stmt);
    const ast::RepeatBlock *block = eq.enclosingRepeat;
    stmt.signalsChange = block && llvm::is_contained(block->watched, eq.array);
  }
  model_.statements.push_back(std::move(stmt));
  return llvm::Error::success();
}

// `domain` with the variables of an affine range binding (a reduction's, a scatter's `for`), dimensions
// of `scope.wide`, restricted to lo <= v < hi.
llvm::Expected<isl::set> Lowering::lowerRange(const ast::RangeBinding &binding, const Scope &scope,
                                              isl::set domain) {
  isl::multi_aff id = scope.wide.identity_multi_aff_on_domain();
  auto lo = lowerAffine(*binding.lo, scope);
  if (!lo)
    return lo.takeError();
  auto hi = lowerAffine(*binding.hi, scope);
  if (!hi)
    return hi.takeError();
  for (const auto &var : binding.vars) {
    isl::aff v = id.at(static_cast<int>(scope.vars.at(var.get())));
    domain = domain.intersect(v.ge_set(*lo)).intersect(v.lt_set(*hi));
  }
  return domain;
}

// The identity schedule of one statement: a band over its own dimensions.
static isl::schedule statementSchedule(const Statement &stmt, unsigned firstDim) {
  isl::schedule leaf = isl::schedule::from_domain(stmt.domain);
  unsigned n = static_cast<unsigned>(stmt.dimNames.size());
  if (n <= firstDim)
    return leaf;
  isl::space space = stmt.domain.space();
  isl::multi_aff id = space.identity_multi_aff_on_domain();
  isl::aff_list list(space.ctx(), static_cast<int>(n - firstDim));
  for (unsigned i = firstDim; i < n; ++i)
    list = list.add(id.at(static_cast<int>(i)));
  isl::space range = islutil::anonymousSetSpace(space, n - firstDim);
  isl::multi_union_pw_aff partial = islutil::mapSpace(space, range).multi_aff(list).to_multi_union_pw_aff();
  return islutil::insertBand(leaf, partial, std::vector<bool>(n - firstDim, false), true);
}

static isl::schedule sequenceOf(const std::vector<isl::schedule> &parts) {
  isl::schedule result = parts.front();
  for (size_t i = 1; i < parts.size(); ++i)
    result = islutil::sequence(result, parts[i]);
  return result;
}

static isl::schedule buildInitialSchedule(const Model &model) {
  std::vector<isl::schedule> items;
  std::vector<int> itemBlock;
  for (const Statement &stmt : model.statements) {
    if (stmt.repeatBlock >= 0 && !itemBlock.empty() && itemBlock.back() == stmt.repeatBlock)
      continue;
    if (stmt.repeatBlock < 0) {
      items.push_back(statementSchedule(stmt, 0));
      itemBlock.push_back(-1);
      continue;
    }
    const RepeatInfo &repeat = model.repeats[stmt.repeatBlock];
    std::vector<isl::schedule> body;
    isl::multi_union_pw_aff outer;
    for (unsigned s : repeat.statements) {
      const Statement &member = model.statements[s];
      body.push_back(statementSchedule(member, 1));
      isl::space space = member.domain.space();
      isl::aff_list list(space.ctx(), 1);
      list = list.add(space.identity_multi_aff_on_domain().at(0));
      isl::space range = islutil::anonymousSetSpace(space, 1);
      isl::multi_union_pw_aff part = islutil::mapSpace(space, range).multi_aff(list).to_multi_union_pw_aff();
      outer = outer.is_null() ? part : outer.union_add(part);
    }
    items.push_back(islutil::insertBand(sequenceOf(body), outer, {false}, true));
    itemBlock.push_back(stmt.repeatBlock);
  }
  if (items.empty())
    return isl::schedule::from_domain(isl::union_set::empty(model.ctx));
  return sequenceOf(items);
}

llvm::Error Lowering::run(const ModelOptions &options) {
  model_.program = &program_;
  model_.ctx = ctx_;
  if (auto err = buildContext(options))
    return err;
  if (auto err = buildArrays())
    return err;
  unsigned topPosition = 0;
  for (const ast::Statement &item : program_.statements) {
    if (auto *eq = std::get_if<ast::Equation *>(&item)) {
      if (auto err = buildStatement(**eq, -1, topPosition, 0))
        return err;
    } else {
      const ast::RepeatBlock *block = std::get<ast::RepeatBlock *>(item);
      RepeatInfo info;
      info.block = block;
      info.var = block->var->name;
      model_.repeats.push_back(info);
      int index = static_cast<int>(model_.repeats.size()) - 1;
      unsigned blockPosition = 0;
      for (const auto &eq : block->body) {
        model_.repeats[index].statements.push_back(static_cast<unsigned>(model_.statements.size()));
        if (auto err = buildStatement(*eq, index, topPosition, blockPosition++))
          return err;
      }
    }
    ++topPosition;
  }
  model_.initialSchedule = buildInitialSchedule(model_);
  return llvm::Error::success();
}

llvm::Expected<Model> buildModel(const ast::Program &program, isl::ctx ctx, const ModelOptions &options) {
  Model model;
  try {
    Lowering lowering(program, ctx, model);
    if (auto err = lowering.run(options))
      return err;
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in the polytope model (isl): ") + e.what());
  }
  return model;
}

// --- Model queries --------------------------------------------------------------------------------

isl::union_set Model::domains() const {
  isl::union_set result = isl::union_set::empty(ctx);
  for (const Statement &stmt : statements)
    result = result.unite(isl::union_set(stmt.domain));
  return result;
}

isl::union_map Model::writes() const {
  isl::union_map result = isl::union_map::empty(ctx);
  for (const Statement &stmt : statements)
    result = result.unite(isl::union_map(stmt.write.relation));
  return result;
}

isl::union_map Model::mustReads() const {
  isl::union_map result = isl::union_map::empty(ctx);
  for (const Statement &stmt : statements)
    for (const Access &read : stmt.reads)
      if (!read.isMay)
        result = result.unite(isl::union_map(read.relation));
  return result;
}

isl::union_map Model::mayReads() const {
  isl::union_map result = isl::union_map::empty(ctx);
  for (const Statement &stmt : statements)
    for (const Access &read : stmt.reads)
      if (read.isMay)
        result = result.unite(isl::union_map(read.relation));
  return result;
}

const ArrayInfo *Model::findArray(const std::string &name) const {
  for (const ArrayInfo &info : arrays)
    if (info.name == name)
      return &info;
  return nullptr;
}

bool mentionsRepeatVariable(const Statement &statement) {
  const ast::Equation &eq = *statement.equation;
  if (!eq.enclosingRepeat)
    return false;
  const std::vector<const ast::IndexVar *> repeatVar{eq.enclosingRepeat->var.get()};
  auto mentions = [&](const ast::ExprPtr &e) { return e && ast::mentionsAny(*e, repeatVar); };
  return mentions(eq.rhs) || mentions(eq.where) || llvm::any_of(eq.lhsIndices, mentions) ||
         llvm::any_of(eq.scatterBindings,
                      [&](const ast::RangeBinding &b) { return mentions(b.lo) || mentions(b.hi); });
}

} // namespace polyc::model
