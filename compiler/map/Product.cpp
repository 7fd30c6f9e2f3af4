// Recognises a kernel band that is a matrix product (Mapping.h, ProductForm): the statement's shape from
// its syntax (one sum of one variable, of the product of two reads, each free of the other output's
// variable), the band's members as the statement's own dimensions and its domain as a box, from isl.
#include "compiler/map/Mapping.h"

#include "compiler/model/IslUtil.h"

#include "llvm/Support/Casting.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <set>

namespace polyc::map {

namespace iu = polyc::islutil;

namespace {

// The index variables an expression mentions, and whether it reads an array or mentions one of them.
struct Mentions {
  std::set<const ast::IndexVar *> vars;
  bool readsArray = false;
};

void collect(const ast::Expr &expr, Mentions &mentions) {
  if (auto *ref = llvm::dyn_cast<ast::VarRef>(&expr)) {
    if (auto *var = std::get_if<ast::IndexVarRef>(&ref->binding))
      mentions.vars.insert(var->var);
    if (std::holds_alternative<const ast::ArrayDecl *>(ref->binding))
      mentions.readsArray = true;
  } else if (auto *read = llvm::dyn_cast<ast::ArrayRead>(&expr)) {
    mentions.readsArray = true;
    for (const ast::ExprPtr &index : read->indices)
      collect(*index, mentions);
  } else if (auto *unary = llvm::dyn_cast<ast::Unary>(&expr)) {
    collect(*unary->operand, mentions);
  } else if (auto *binary = llvm::dyn_cast<ast::Binary>(&expr)) {
    collect(*binary->lhs, mentions);
    collect(*binary->rhs, mentions);
  } else if (auto *call = llvm::dyn_cast<ast::Call>(&expr)) {
    for (const ast::ExprPtr &arg : call->args)
      collect(*arg, mentions);
  } else if (llvm::isa<ast::Reduction>(&expr) || llvm::isa<ast::Tuple>(&expr)) {
    mentions.readsArray = true; // not an index expression: never a product's bound or factor index
  }
}

Mentions mentionsOf(const ast::Expr &expr) {
  Mentions mentions;
  collect(expr, mentions);
  return mentions;
}

// The variable of a statement dimension: the repeat dimensions have none in the equation.
const ast::IndexVar *dimVar(const model::Statement &statement, unsigned dim) {
  if (dim < statement.repeatDims)
    return nullptr;
  unsigned k = statement.repeatDims;
  for (const auto &var : statement.equation->indexVars) {
    if (!var)
      continue;
    if (k++ == dim)
      return var.get();
  }
  return nullptr;
}

// The statement's one sum of the product of two reads, or null.
const ast::Reduction *productSum(const model::Statement &statement, std::string &why) {
  if (statement.reductions.size() != 1) {
    why = statement.reductions.empty() ? "no sum" : "more than one reduction";
    return nullptr;
  }
  const ast::Reduction *sum = statement.reductions.front().reduction;
  if (sum->op != ast::ReductionOp::Sum || sum->bindings.size() != 1 ||
      sum->bindings.front().vars.size() != 1 || sum->where || sum->bindings.front().rowArray) {
    why = "the reduction is not a sum over one range of one variable without a where";
    return nullptr;
  }
  auto *product = llvm::dyn_cast<ast::Binary>(sum->body.get());
  if (!product || product->op != ast::BinaryOp::Mul || !llvm::isa<ast::ArrayRead>(product->lhs.get()) ||
      !llvm::isa<ast::ArrayRead>(product->rhs.get())) {
    why = "the sum's terms are not the product of two array reads";
    return nullptr;
  }
  const ast::RangeBinding &range = sum->bindings.front();
  Mentions lo = mentionsOf(*range.lo), hi = mentionsOf(*range.hi);
  if (!lo.vars.empty() || !hi.vars.empty() || lo.readsArray || hi.readsArray) {
    why = "the sum's bounds are not expressions of the params";
    return nullptr;
  }
  return sum;
}

} // namespace

// The statement dimension that band member `member` is on `domain` (the member's value equal to it
// everywhere), if any.
std::optional<unsigned> memberDim(const isl::set &domain, const isl::multi_union_pw_aff &partial,
                                  unsigned member) {
  isl::union_map schedule = isl::union_map::from(partial).intersect_domain(isl::union_set(domain));
  if (schedule.is_empty())
    return std::nullopt;
  isl::map map = isl::manage(isl_map_from_union_map(schedule.release()));
  for (unsigned d = 0; d < iu::tupleDims(domain.space()); ++d) {
    isl::map equated = isl::manage(isl_map_equate(map.copy(), isl_dim_in, int(d), isl_dim_out, int(member)));
    if (equated.is_equal(map))
      return d;
  }
  return std::nullopt;
}

std::optional<ProductForm> findProduct(const model::Model &model, const schedule::Schedule &schedule,
                                       unsigned band, const isl::union_set &domain,
                                       const isl::multi_union_pw_aff &partial, const isl::set &around,
                                       std::string &why) {
  const schedule::Band &b = schedule.bands[band];
  if (b.statements.size() != 1 || b.coincident.size() != 2 || !b.coincident[0] || !b.coincident[1]) {
    why = "not one statement over two parallel members";
    return std::nullopt;
  }
  ProductForm form;
  form.statement = b.statements.front();
  const model::Statement &statement = model.statements[form.statement];
  if (statement.dimNames.size() != statement.repeatDims + 2) {
    why = "the statement has dimensions besides the band's and its repeat loop's";
    return std::nullopt;
  }
  if (!(form.sum = productSum(statement, why)))
    return std::nullopt;
  isl::set points =
      isl::manage(isl_union_set_extract_set(domain.copy(), statement.domain.get_space().release()))
          .intersect_params(model.context);
  if (points.is_empty()) {
    why = "it has no instance";
    return std::nullopt;
  }
  if (!iu::isBox(points)) {
    why = "its domain is not a box";
    return std::nullopt;
  }
  std::optional<unsigned> rowDim = memberDim(points, partial, 0), columnDim = memberDim(points, partial, 1);
  if (!rowDim || !columnDim || *rowDim < statement.repeatDims || *columnDim < statement.repeatDims ||
      *rowDim == *columnDim) {
    why = "its members are not the statement's own dimensions";
    return std::nullopt;
  }
  form.rowDim = *rowDim;
  form.columnDim = *columnDim;
  const ast::IndexVar *a = dimVar(statement, form.rowDim), *bVar = dimVar(statement, form.columnDim);
  const ast::IndexVar *c = form.sum->bindings.front().vars.front().get();
  auto *product = llvm::cast<ast::Binary>(form.sum->body.get());
  auto *first = llvm::cast<ast::ArrayRead>(product->lhs.get()),
       *second = llvm::cast<ast::ArrayRead>(product->rhs.get());
  Mentions firstVars = mentionsOf(*first), secondVars = mentionsOf(*second);
  auto fits = [](const Mentions &factor, const ast::IndexVar *own, const ast::IndexVar *other) {
    return factor.vars.count(own) && !factor.vars.count(other);
  };
  if (fits(firstVars, a, bVar) && fits(secondVars, bVar, a)) {
    form.rowFactor = first;
    form.columnFactor = second;
  } else if (fits(secondVars, a, bVar) && fits(firstVars, bVar, a)) {
    form.rowFactor = second;
    form.columnFactor = first;
  } else {
    why = "the factors do not read one at (a, c) and the other at (b, c)";
    return std::nullopt;
  }
  for (const ast::ArrayRead *factor : {form.rowFactor, form.columnFactor})
    if (llvm::is_contained(factor->isGather, true)) {
      why = "a factor is gathered";
      return std::nullopt;
    }
  auto alongTerms = [&](const ast::ArrayRead *factor) {
    return !factor->indices.empty() && mentionsOf(*factor->indices.back()).vars.count(c) > 0;
  };
  form.rowAlongTerms = alongTerms(form.rowFactor);
  form.columnAlongTerms = alongTerms(form.columnFactor);
  // The extents are 0 where the params leave the statement no instance (the launch is then skipped).
  isl::pw_aff none =
      isl::manage(isl_pw_aff_val_on_domain(model.context.copy(), isl_val_zero(model.context.ctx().get())));
  auto orNone = [&](const isl::pw_aff &extent) {
    return isl::manage(isl_pw_aff_union_max(extent.copy(), none.copy()));
  };
  auto range = [&](unsigned dim, std::string &first, std::string &extent) {
    isl::pw_aff lo = iu::dimMin(points, dim), hi = iu::dimMax(points, dim);
    first = iu::pwAffToC(lo.gist_params(around), around);
    extent = iu::pwAffToC(orNone(hi.sub(lo).add_constant(1)).gist_params(around), around);
  };
  range(form.rowDim, form.rowFirst, form.rows);
  range(form.columnDim, form.columnFirst, form.columns);
  return form;
}

std::optional<std::string> canFollowProduct(const model::Model &model, const ProductForm &product,
                                            unsigned statement, const isl::union_set &productDomain,
                                            const isl::union_set &domain,
                                            const isl::multi_union_pw_aff &partial, const isl::set &around) {
  const model::Statement &follower = model.statements[statement];
  const model::Statement &head = model.statements[product.statement];
  if (!follower.reductions.empty() || follower.repeatDims != head.repeatDims ||
      follower.dimNames.size() != head.dimNames.size())
    return std::nullopt;
  auto extract = [&](const isl::union_set &set, const model::Statement &s) {
    return isl::manage(isl_union_set_extract_set(set.copy(), s.domain.get_space().release()))
        .intersect_params(model.context);
  };
  // Its points are the product's, for the params that give it any (the output deltas have none without
  // hidden units, the output layer has): the kernel computes it under that condition.
  isl::set points = extract(domain, follower), productPoints = extract(productDomain, head);
  isl::set params = points.params();
  if (!iu::anonymousSet(points).is_equal(iu::anonymousSet(productPoints).intersect_params(params)) ||
      memberDim(points, partial, 0) != product.rowDim || memberDim(points, partial, 1) != product.columnDim)
    return std::nullopt;
  // The statements before it in the product's kernel: what they write it reads at its own point only,
  // and it writes nothing they read or write.
  std::vector<unsigned> before{product.statement};
  before.insert(before.end(), product.followers.begin(), product.followers.end());
  isl::set own = iu::anonymousSet(follower.domain);
  for (unsigned b : before) {
    const model::Statement &earlier = model.statements[b];
    if (earlier.write.array == follower.write.array)
      return std::nullopt;
    for (const model::Access &read : earlier.reads)
      if (read.array == follower.write.array)
        return std::nullopt;
    for (const model::Access &read : follower.reads) {
      if (read.array != earlier.write.array)
        continue;
      if (read.isMay)
        return std::nullopt;
      // Within one iteration of the repeat loop (the host runs its iterations in order).
      isl::map pairs = read.relation.apply_range(earlier.write.relation.reverse());
      for (unsigned d = 0; d < follower.repeatDims; ++d)
        pairs = isl::manage(isl_map_equate(pairs.release(), isl_dim_in, int(d), isl_dim_out, int(d)));
      if (!iu::anonymousMap(pairs).is_subset(own.identity()))
        return std::nullopt;
    }
  }
  isl::set always = productPoints.params().intersect(around);
  if (always.is_subset(params))
    return std::string();
  isl::pw_aff indicator = isl::manage(isl_set_indicator_function(params.copy()));
  return iu::pwAffToC(indicator.gist_params(always), always);
}

} // namespace polyc::map
