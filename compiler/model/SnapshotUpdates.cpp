// Updates that read their own array at elements other instances overwrite read a copy of the old values
// (see SnapshotUpdates.h): a rewrite of the checked AST, so that every later stage and every target sees an
// ordinary copy equation before an update that no longer reads the array it changes.
#include "compiler/model/SnapshotUpdates.h"

#include "compiler/model/AstRewrite.h"

#include "llvm/Support/Casting.h"

#include <isl/map.h>

#include <algorithm>

namespace polyc::model {

using llvm::dyn_cast;
using namespace ast;

// x -> y: instance x of the update reads an element that instance y (another one, of the same repeat
// iteration) overwrites, so x must run first.
static isl::map selfConflicts(const Statement &stmt) {
  isl::map conflict = isl::map::empty(isl::space(stmt.domain.space()).map_from_set());
  for (const Access &read : stmt.reads)
    if (read.array == stmt.write.array && !read.implicitUpdateRead)
      conflict = conflict.unite(read.relation.apply_range(stmt.write.relation.reverse()));
  conflict = conflict.intersect_domain(stmt.domain).subtract(isl::map(stmt.domain.identity()));
  // Iterations of a repeat block run in order; only instances of the same iteration need ordering.
  if (stmt.repeatDims)
    conflict = isl::manage(isl_map_equate(conflict.release(), isl_dim_in, 0, isl_dim_out, 0));
  return conflict;
}

bool updateReadsOtherInstances(const Statement &stmt) {
  if (!stmt.isUpdate())
    return false;
  try {
    return !selfConflicts(stmt).is_empty();
  } catch (const isl::exception &) {
    return true;
  }
}

// Rewrites one update (see snapshotUpdates); false when A's shape cannot be copied (it then stays).
static bool snapshotUpdate(Program &program, Equation &update, std::set<std::string> &names) {
  const ArrayDecl *a = update.array;
  if (!a || a->rank() == 0)
    return false;
  std::vector<ExprPtr> shape;
  for (const ExprPtr &extent : a->shape) {
    shape.push_back(cloneExtent(*extent));
    if (!shape.back())
      return false;
  }
  llvm::SMRange range = update.range;
  auto decl = std::make_unique<ArrayDecl>();
  decl->name = freshName(a->name + "_old", names);
  decl->kind = ArrayKind::Local;
  decl->elemType = a->elemType;
  decl->shape = std::move(shape);
  // Reads past the ends follow A's rule, as they did when they read A.
  decl->boundary = a->effectiveBoundary;
  decl->effectiveBoundary = a->effectiveBoundary;
  decl->range = range;

  // A_old[d1, ..., dk] = A[d1, ..., dk]; the update's own index variable names where it has them.
  auto copy = std::make_unique<Equation>();
  copy->target = decl->name;
  copy->array = decl.get();
  copy->op = AssignOp::Assign;
  copy->range = range;
  copy->lhsRange = update.lhsRange;
  copy->enclosingRepeat = update.enclosingRepeat;
  copy->snapshotFor = &update;
  std::set<std::string> taken;
  std::vector<ExprPtr> indices;
  for (unsigned d = 0; d < a->rank(); ++d) {
    const IndexVar *own = d < update.indexVars.size() ? update.indexVars[d].get() : nullptr;
    std::string name = own && !taken.count(own->name) ? own->name : freshName("i" + std::to_string(d), names);
    taken.insert(name);
    copy->indexVars.push_back(std::make_unique<IndexVar>(IndexVar{name, range}));
    auto lhs = std::make_unique<VarRef>(name, range);
    lhs->binding = IndexVarRef{copy->indexVars.back().get()};
    copy->lhsIndices.push_back(std::move(lhs));
    auto rhs = std::make_unique<VarRef>(name, range);
    rhs->binding = IndexVarRef{copy->indexVars.back().get()};
    indices.push_back(std::move(rhs));
  }
  auto read = std::make_unique<ArrayRead>(a->name, std::move(indices), range);
  read->array = a;
  read->isGather.assign(a->rank(), false);
  copy->rhs = std::move(read);

  // Every read of A in the update's right-hand side reads the copy (its own point too: the same value).
  walk(*update.rhs, [&](Expr &node) {
    if (auto *r = dyn_cast<ArrayRead>(&node); r && r->array == a) {
      r->array = decl.get();
      r->name = decl->name;
    }
  });

  // Right before the update, so that the copy sees A as the update would.
  Equation *added = copy.get();
  if (update.enclosingRepeat) {
    RepeatBlock *block = nullptr;
    for (auto &b : program.repeats)
      if (b.get() == update.enclosingRepeat)
        block = b.get();
    auto at = std::find_if(block->body.begin(), block->body.end(),
                           [&](const std::unique_ptr<Equation> &eq) { return eq.get() == &update; });
    block->body.insert(at, std::move(copy));
  } else {
    auto at = std::find_if(program.statements.begin(), program.statements.end(), [&](const ast::Statement &s) {
      auto *eq = std::get_if<Equation *>(&s);
      return eq && *eq == &update;
    });
    program.statements.insert(at, added);
    program.equations.push_back(std::move(copy));
  }
  program.arrays.push_back(std::move(decl));
  return true;
}

unsigned snapshotUpdates(Program &program, const Model &model) {
  std::vector<Equation *> updates;
  for (const Statement &stmt : model.statements)
    if (stmt.equation && stmt.isUpdate() && stmt.readsOtherInstances)
      updates.push_back(const_cast<Equation *>(stmt.equation));
  if (updates.empty())
    return 0;
  std::set<std::string> names = namesInUse(program);
  unsigned rewritten = 0;
  for (Equation *update : updates)
    rewritten += snapshotUpdate(program, *update, names);
  return rewritten;
}

} // namespace polyc::model
