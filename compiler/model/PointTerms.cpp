// Terms computed once per point (see PointTerms.h).
#include "compiler/model/PointTerms.h"

#include "compiler/model/AstRewrite.h"
#include "dsl/Affine.h"
#include "dsl/Unparse.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace polyc::model {

using dsl::AffineExpr;
using llvm::cast;
using llvm::dyn_cast;
using namespace ast;

namespace {

using VarSet = std::set<const IndexVar *>;
using Terms = std::vector<std::pair<const void *, int64_t>>;

// An affine form's terms over `vars` (or its params when `vars` is null), sorted, for comparisons.
Terms termsOf(const AffineExpr &e, const VarSet *vars) {
  Terms terms;
  if (vars) {
    for (auto &[var, coeff] : e.vars)
      if (vars->count(var))
        terms.emplace_back(var, coeff);
  } else {
    for (auto &[param, coeff] : e.params)
      terms.emplace_back(param, coeff);
  }
  std::sort(terms.begin(), terms.end());
  return terms;
}

bool sameExtent(const Expr &a, const Expr &b) {
  auto x = dsl::toAffine(a, "shape extent"), y = dsl::toAffine(b, "shape extent");
  return x && y && x->vars.empty() && y->vars.empty() && x->isStrictlyAffine() && y->isStrictlyAffine() &&
         termsOf(*x, nullptr) == termsOf(*y, nullptr) && x->constant == y->constant;
}

// Whether an array dimension of this extent has an element at every value of the params (which are
// non-negative): a constant of at least 1 plus params with non-negative coefficients.
bool neverEmpty(const Expr &extent) {
  auto e = dsl::toAffine(extent, "shape extent");
  if (!e || !e->vars.empty() || !e->isStrictlyAffine() || e->constant < 1)
    return false;
  for (auto &[param, coeff] : e->params)
    if (coeff < 0)
      return false;
  return true;
}

// One coordinate of the new array: the equation's index variable `d`, alone or moved by enclosing sum
// variables. A moving coordinate is the whole index of every read it appears in.
struct Coordinate {
  bool used = false;
  bool moves = false;
  Terms shift;                 // the enclosing sum variables' terms
  Terms params;                // of a moving coordinate's index
  int64_t constant = 0;        //   "
  const Expr *index = nullptr; // a moving coordinate's index, as first read
  const Expr *extent = nullptr;
  Boundary boundary = Boundary::Zero;
};

// What a term reads, and whether it qualifies.
class TermScan {
public:
  TermScan(const Equation &eq, const VarSet &sumVars, const std::set<const ArrayDecl *> &excluded)
      : eq_(eq), sumVars_(sumVars), excluded_(excluded), coords_(eq.indexVars.size()) {
    for (size_t d = 0; d < eq.indexVars.size(); ++d)
      dimOf_[eq.indexVars[d].get()] = d;
  }

  // Whether `term` can be computed once per point; fills coordinates().
  bool qualifies(const Expr &term) {
    scan(term);
    if (!ok_)
      return false;
    bool moving = false;
    for (size_t d = 0; d < coords_.size(); ++d) {
      if (plainUse_.count(d) && coords_[d].moves)
        return false;
      moving |= coords_[d].moves;
    }
    if (!moving || !(sums_ > 0 || calls_ > 0 || reads_ >= 2))
      return false;
    std::optional<Boundary> boundary;
    for (const Coordinate &c : coords_)
      if (c.moves) {
        if (boundary && *boundary != c.boundary)
          return false;
        boundary = c.boundary;
      }
    // A read outside the new array gives what the term gave there: under `boundary zero` only if the term
    // is then 0; under clamp and mirror it reads the same edge elements, unless the dimension is empty,
    // where every read gives 0 (docs/language.md) and so must the term.
    for (size_t d = 0; d < coords_.size(); ++d)
      if (coords_[d].moves && (*boundary == Boundary::Zero || !neverEmpty(*coords_[d].extent)) &&
          !zeroWhenOut(term, d))
        return false;
    return true;
  }

  const std::vector<Coordinate> &coordinates() const { return coords_; }
  // The moving coordinate that position `p` of `read` is, if it is one.
  std::optional<size_t> movingAt(const ArrayRead &read, size_t p) const {
    auto it = moving_.find({&read, p});
    return it == moving_.end() ? std::nullopt : std::optional<size_t>(it->second);
  }

private:
  void fail() { ok_ = false; }

  void noteArray(const ArrayDecl *array) {
    if (array == eq_.array || excluded_.count(array))
      fail();
  }

  void scanIndex(const ArrayRead &read, size_t p) {
    std::optional<AffineExpr> e = dsl::toAffine(*read.indices[p], "index");
    if (!e || !e->isStrictlyAffine())
      return fail();
    std::optional<size_t> dim;
    bool inner = false;
    for (auto &[var, coeff] : e->vars) {
      if (auto it = dimOf_.find(var); it != dimOf_.end()) {
        if (dim || coeff != 1)
          return fail();
        dim = it->second;
      } else if (!sumVars_.count(var)) {
        inner = true;
      }
    }
    Terms shift = termsOf(*e, &sumVars_);
    if (!dim)
      return shift.empty() ? void() : fail();
    Coordinate &c = coords_[*dim];
    if (shift.empty()) {
      if (c.moves)
        return fail();
      c.used = true;
      return;
    }
    const Expr &extent = *read.array->shape[p];
    if (inner || (c.used && !c.moves))
      return fail();
    if (c.moves) {
      if (c.shift != shift || c.params != termsOf(*e, nullptr) || c.constant != e->constant ||
          c.boundary != read.array->effectiveBoundary || !sameExtent(*c.extent, extent))
        return fail();
    } else {
      c = Coordinate{true,        true,
                     shift,       termsOf(*e, nullptr),
                     e->constant, read.indices[p].get(),
                     &extent,     read.array->effectiveBoundary};
    }
    moving_[{&read, p}] = *dim;
  }

  void scan(const Expr &e) {
    switch (e.kind()) {
    case Expr::Kind::IntLit:
    case Expr::Kind::FloatLit:
      return;
    case Expr::Kind::VarRef: {
      auto &ref = cast<VarRef>(e);
      if (auto *array = std::get_if<const ArrayDecl *>(&ref.binding))
        noteArray(*array);
      if (auto *var = std::get_if<IndexVarRef>(&ref.binding)) {
        if (auto it = dimOf_.find(var->var); it != dimOf_.end()) {
          plainUse_.insert(it->second);
          coords_[it->second].used = true;
        } else if (sumVars_.count(var->var)) {
          fail(); // an enclosing sum's variable as a value or a bound
        }
      }
      return;
    }
    case Expr::Kind::ArrayRead: {
      auto &read = cast<ArrayRead>(e);
      noteArray(read.array);
      ++reads_;
      if (std::find(read.isGather.begin(), read.isGather.end(), true) != read.isGather.end())
        return fail();
      for (size_t p = 0; p < read.indices.size(); ++p)
        scanIndex(read, p);
      return;
    }
    case Expr::Kind::Unary:
      return scan(*cast<Unary>(e).operand);
    case Expr::Kind::Binary:
      scan(*cast<Binary>(e).lhs);
      return scan(*cast<Binary>(e).rhs);
    case Expr::Kind::Call:
      ++calls_;
      for (auto &arg : cast<Call>(e).args)
        scan(*arg);
      return;
    case Expr::Kind::Reduction: {
      auto &red = cast<Reduction>(e);
      ++sums_;
      for (auto &binding : red.bindings) {
        scan(*binding.lo);
        scan(*binding.hi);
      }
      if (red.where)
        scan(*red.where);
      return scan(*red.body);
    }
    case Expr::Kind::Tuple:
      for (auto &element : cast<Tuple>(e).elements)
        scan(*element);
      return;
    }
  }

  // Whether `e` is 0 whenever coordinate `d` leaves its array: every term of its sums has a factor that
  // reads at d (under `boundary zero` that read gives 0).
  bool zeroWhenOut(const Expr &e, size_t d) const {
    switch (e.kind()) {
    case Expr::Kind::ArrayRead: {
      auto &read = cast<ArrayRead>(e);
      for (size_t p = 0; p < read.indices.size(); ++p)
        if (movingAt(read, p) == d)
          return true;
      return false;
    }
    case Expr::Kind::Unary:
      return cast<Unary>(e).op == UnaryOp::Neg && zeroWhenOut(*cast<Unary>(e).operand, d);
    case Expr::Kind::Binary: {
      auto &b = cast<Binary>(e);
      if (b.op == BinaryOp::Mul)
        return zeroWhenOut(*b.lhs, d) || zeroWhenOut(*b.rhs, d);
      if (b.op == BinaryOp::Add || b.op == BinaryOp::Sub)
        return zeroWhenOut(*b.lhs, d) && zeroWhenOut(*b.rhs, d);
      return false;
    }
    case Expr::Kind::Reduction:
      return cast<Reduction>(e).op == ReductionOp::Sum && zeroWhenOut(*cast<Reduction>(e).body, d);
    default:
      return false;
    }
  }

  const Equation &eq_;
  const VarSet &sumVars_;
  const std::set<const ArrayDecl *> &excluded_;
  std::map<const IndexVar *, size_t> dimOf_;
  std::vector<Coordinate> coords_;
  std::set<size_t> plainUse_;
  std::map<std::pair<const ArrayRead *, size_t>, size_t> moving_;
  unsigned reads_ = 0, calls_ = 0, sums_ = 0;
  bool ok_ = true;
};

ExprPtr refTo(const IndexVar &var, llvm::SMRange range) {
  auto ref = std::make_unique<VarRef>(var.name, range);
  ref->binding = IndexVarRef{&var};
  return ref;
}

class Extractor {
public:
  explicit Extractor(Program &program) : program_(program), names_(namesInUse(program)) {
    for (auto &eq : program.equations)
      if (eq->op != AssignOp::Assign)
        excluded_.insert(eq->array);
    for (auto &block : program.repeats)
      for (auto &eq : block->body)
        excluded_.insert(eq->array);
  }

  unsigned run() {
    unsigned count = extractAll();
    placeAdded();
    return count;
  }

private:
  unsigned extractAll() {
    unsigned count = 0;
    // Indices, not iterators: the equations added are visited too.
    for (size_t e = 0; e < program_.equations.size(); ++e) {
      Equation &eq = *program_.equations[e];
      if (!eligible(eq))
        continue;
      VarSet sumVars;
      count += visit(eq.rhs, eq, sumVars);
    }
    return count;
  }

  static unsigned depth(const Equation *eq) {
    unsigned d = 0;
    for (; eq->pointTermOf; eq = eq->pointTermOf)
      ++d;
    return d;
  }

  // The added equations go, deepest first, before the first equation they serve. The textual order only
  // breaks ties in the schedule's dependence order, and this one computes the terms of one depth together
  // (all the products, then all the sums that read them): siblings are neighbours, so they can fuse.
  void placeAdded() {
    if (added_.empty())
      return;
    std::stable_sort(added_.begin(), added_.end(),
                     [](const Equation *a, const Equation *b) { return depth(a) > depth(b); });
    std::set<const Equation *> served;
    for (const Equation *eq : added_)
      served.insert(eq->pointTermOf);
    auto first =
        std::find_if(program_.statements.begin(), program_.statements.end(), [&](const Statement &s) {
          auto *eq = std::get_if<Equation *>(&s);
          return eq && served.count(*eq);
        });
    program_.statements.insert(first, added_.begin(), added_.end());
  }

  static bool eligible(const Equation &eq) {
    if (eq.op != AssignOp::Assign || eq.enclosingRepeat || !eq.array || eq.array->rank() == 0 ||
        eq.indexVars.size() != eq.array->rank())
      return false;
    return std::all_of(eq.indexVars.begin(), eq.indexVars.end(), [](auto &var) { return var != nullptr; });
  }

  unsigned visit(ExprPtr &slot, Equation &eq, VarSet &sumVars) {
    Expr &e = *slot;
    bool compound = llvm::isa<Binary, Unary, Call, Reduction>(e);
    if (compound && !sumVars.empty()) {
      TermScan scan(eq, sumVars, excluded_);
      if (scan.qualifies(e)) {
        extract(slot, eq, scan);
        return 1;
      }
    }
    unsigned count = 0;
    switch (e.kind()) {
    case Expr::Kind::Unary:
      return visit(cast<Unary>(e).operand, eq, sumVars);
    case Expr::Kind::Binary:
      count += visit(cast<Binary>(e).lhs, eq, sumVars);
      return count + visit(cast<Binary>(e).rhs, eq, sumVars);
    case Expr::Kind::Call:
      for (auto &arg : cast<Call>(e).args)
        count += visit(arg, eq, sumVars);
      return count;
    case Expr::Kind::Reduction: {
      auto &red = cast<Reduction>(e);
      VarSet inner = sumVars;
      for (auto &binding : red.bindings)
        for (auto &var : binding.vars)
          inner.insert(var.get());
      return visit(red.body, eq, inner);
    }
    default:
      return 0;
    }
  }

  // Moves the term in `slot` into a new equation over a new array and reads that array in its place.
  void extract(ExprPtr &slot, Equation &eq, const TermScan &scan) {
    const std::vector<Coordinate> &coords = scan.coordinates();
    llvm::SMRange range = slot->range;
    auto decl = std::make_unique<ArrayDecl>();
    const Equation *root = &eq;
    while (root->pointTermOf)
      root = root->pointTermOf;
    decl->name = freshName(root->target + "_pt", names_);
    decl->kind = ArrayKind::Local;
    decl->elemType = eq.array->elemType;
    decl->effectiveBoundary = eq.array->effectiveBoundary;
    decl->range = range;
    auto added = std::make_unique<Equation>();
    added->target = decl->name;
    added->array = decl.get();
    added->range = added->lhsRange = range;
    added->pointTermOf = &eq;
    std::map<size_t, const IndexVar *> newVar;
    std::vector<ExprPtr> readIndices;
    for (size_t d = 0; d < coords.size(); ++d) {
      if (!coords[d].used)
        continue;
      const Coordinate &c = coords[d];
      decl->shape.push_back(cloneExtent(c.moves ? *c.extent : *eq.array->shape[d]));
      if (c.moves)
        decl->effectiveBoundary = c.boundary;
      added->indexVars.push_back(std::make_unique<IndexVar>(IndexVar{eq.indexVars[d]->name, range}));
      newVar[d] = added->indexVars.back().get();
      added->lhsIndices.push_back(refTo(*newVar[d], range));
      readIndices.push_back(c.moves ? cloneExtent(*c.index) : refTo(*eq.indexVars[d], range));
    }
    decl->boundary = decl->effectiveBoundary;

    // The term's moving indices become the new variables; its plain uses of i are rebound to them.
    std::map<const IndexVar *, const IndexVar *> rebind;
    for (auto &[d, var] : newVar)
      rebind[eq.indexVars[d].get()] = var;
    walk(*slot, [&](Expr &node) {
      if (auto *read = dyn_cast<ArrayRead>(&node)) {
        for (size_t p = 0; p < read->indices.size(); ++p)
          if (std::optional<size_t> d = scan.movingAt(*read, p))
            read->indices[p] = refTo(*newVar.at(*d), read->indices[p]->range);
      } else if (auto *ref = dyn_cast<VarRef>(&node)) {
        if (auto *var = std::get_if<IndexVarRef>(&ref->binding); var && rebind.count(var->var))
          ref->binding = IndexVarRef{rebind.at(var->var)};
      }
    });
    added->rhs = std::move(slot);
    auto read = std::make_unique<ArrayRead>(decl->name, std::move(readIndices), range);
    read->array = decl.get();
    read->isGather.assign(decl->rank(), false);
    slot = std::move(read);

    eq.rewrites.push_back("term computed once per point: " + dsl::unparse(*slot));
    added->rewrites.push_back("computed once per point for " + eq.target);
    added_.push_back(added.get());
    program_.equations.push_back(std::move(added));
    program_.arrays.push_back(std::move(decl));
  }

  Program &program_;
  std::set<std::string> names_;
  std::set<const ArrayDecl *> excluded_;
  std::vector<Equation *> added_;
};

} // namespace

unsigned computeTermsOncePerPoint(Program &program) { return Extractor(program).run(); }

} // namespace polyc::model
