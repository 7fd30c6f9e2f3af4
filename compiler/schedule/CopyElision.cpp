// Copies into folded slots that already hold the value (see CopyElision.h).
#include "compiler/schedule/CopyElision.h"

#include "compiler/model/IslUtil.h"

#include "llvm/Support/Casting.h"

#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/set.h>

namespace polyc::schedule {

namespace {

// { X[a] -> X[a'] : a'_dim = a_dim + by, the other indices equal }.
isl::map shiftAlong(const isl::space &arraySpace, unsigned dim, int64_t by) {
  isl::multi_aff id = arraySpace.identity_multi_aff_on_domain();
  isl::multi_aff shifted = id.set_at(
      static_cast<int>(dim), id.at(static_cast<int>(dim)).add_constant(isl::val(arraySpace.ctx(), by)));
  return shifted.as_map();
}

// Whether the statement is `X[a] = X[a - e_dim]`: no update, no reduction, its right-hand side the one
// read of its own array at the written element one step back along `dim`.
bool copiesPreviousStep(const model::Statement &stmt, unsigned dim) {
  if (stmt.isUpdate() || !stmt.reductions.empty() || stmt.reads.size() != 1 || !stmt.equation ||
      !llvm::isa<ast::ArrayRead>(stmt.equation->rhs.get()))
    return false;
  const model::Access &read = stmt.reads.front();
  if (read.array != stmt.write.array || read.isMay || read.relation.is_null())
    return false;
  isl::map back = stmt.write.relation.apply_range(shiftAlong(stmt.write.relation.range().space(), dim, -1));
  return back.intersect_domain(stmt.domain).is_equal(read.relation.intersect_domain(stmt.domain));
}

} // namespace

unsigned elideSteadyCopies(const model::Model &model, Schedule &schedule) {
  unsigned count = 0;
  if (schedule.tree.is_null())
    return count;
  isl::union_set removed = isl::union_set::empty(model.ctx);
  for (const FoldedStorage &fold : schedule.folded) {
    if (fold.windowValue < 1)
      continue;
    isl::union_map written = isl::union_map::empty(model.ctx);
    for (const model::Statement &stmt : model.statements)
      if (stmt.write.array == fold.array)
        written = written.unite(isl::union_map(stmt.write.relation.intersect_domain(stmt.domain)));
    for (unsigned s = 0; s < model.statements.size(); ++s) {
      const model::Statement &stmt = model.statements[s];
      if (stmt.write.array != fold.array || !copiesPreviousStep(stmt, fold.dim))
        continue;
      isl::map write = stmt.write.relation.intersect_domain(stmt.domain);
      isl::set copied = stmt.domain.apply(write);
      isl::space space = copied.space();
      // X[a] whose slot holds its value already: X[a - k e] copied for k = 1 .. w - 1, X[a - w e] written.
      isl::set steady = copied;
      for (int64_t k = 1; k < fold.windowValue; ++k)
        steady = steady.intersect(copied.apply(shiftAlong(space, fold.dim, k)));
      isl::set anyWrite = isl::set(written.range().extract_set(space));
      steady = steady.intersect(anyWrite.apply(shiftAlong(space, fold.dim, fold.windowValue)));
      isl::set instances = steady.apply(write.reverse()).intersect(stmt.domain);
      if (instances.is_empty())
        continue;
      removed = removed.unite(isl::union_set(instances));
      schedule.elided.push_back({s, stmt.name + " copies " + fold.array +
                                        " from the step before along dimension " + std::to_string(fold.dim) +
                                        " (" + fold.window + " slots): at each element only the first " +
                                        std::to_string(fold.windowValue - 1) +
                                        " copies of a run run; after them the slot holds the value already"});
      ++count;
    }
  }
  if (count == 0)
    return count;
  schedule.tree = isl::manage(isl_schedule_intersect_domain(
      schedule.tree.copy(), schedule.tree.domain().subtract(removed).release()));
  schedule.scheduleMap = flatScheduleMap(schedule.tree);
  return count;
}

} // namespace polyc::schedule
