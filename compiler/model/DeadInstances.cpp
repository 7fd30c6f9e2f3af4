// Dead instances (see DeadInstances.h).
#include "compiler/model/DeadInstances.h"

#include <isl/ctx.h>
#include <isl/schedule.h>

#include <set>
#include <string>

namespace polyc::model {

static void restrictStatement(Statement &statement, const isl::set &live) {
  statement.domain = live;
  statement.write.relation = statement.write.relation.intersect_domain(live);
  for (Access &read : statement.reads)
    read.relation = read.relation.intersect_domain(live);
  for (ReductionInfo &reduction : statement.reductions)
    reduction.range = reduction.range.intersect_domain(live);
}

// The isl operations one statement's test may take. Gathers make the read elements unions of many
// pieces, and the subset test can then take minutes (fuzz seed 1000); past the bound the statement is
// kept whole, which is what the program says anyway.
constexpr unsigned long LivenessOperations = 200000;

// The instances of `statement` whose element some read in `readElements` reads: all of them when isl
// gave up or the live part is more complex than the domain.
static isl::set liveInstances(const Statement &statement, const isl::union_set &readElements) {
  isl_ctx *ctx = statement.domain.ctx().get();
  isl_ctx_set_max_operations(ctx, LivenessOperations);
  isl_ctx_reset_operations(ctx);
  isl::set live = statement.domain;
  try {
    isl::set elements = readElements.extract_set(statement.write.relation.range().space()).coalesce();
    live = statement.write.relation.intersect_range(elements).domain().intersect(statement.domain).coalesce();
    // A live part more complex than the domain is kept whole: more pieces (gathers' ranges cut it) cost
    // the dependence analysis more than the dead instances cost at run time (fuzz seed 1000), and new
    // equalities (2 new = not - 1 where one element of a row is read) give dimensions that the GPU
    // targets cannot map (fuzz seed 3000413). Only bounds narrow a domain, or the whole of it is dead.
    if (statement.domain.is_subset(live) ||
        (!live.is_empty() &&
         (isl_set_n_basic_set(live.get()) > isl_set_n_basic_set(statement.domain.get()) ||
          !live.affine_hull().is_equal(statement.domain.affine_hull()))))
      live = statement.domain;
  } catch (const isl::exception_quota &) {
    isl_ctx_reset_error(ctx);
    live = statement.domain;
  }
  isl_ctx_set_max_operations(ctx, 0);
  return live;
}

static bool writesLocal(const Model &model, const Statement &statement) {
  const ArrayInfo *array = model.findArray(statement.write.array);
  return array && array->decl && array->decl->kind == ast::ArrayKind::Local;
}

// The arrays that an output depends on through some chain of reads: the outputs and inouts, and what the
// statements defining a live array read. A local array outside it is dead as a whole. The rounds below
// would only peel such an array's self-recurrence one step of its reads a round, and leave a triangle
// after the last (fuzz seeds 3300021, 3300218).
static std::set<std::string> liveArrays(const Model &model) {
  std::set<std::string> live;
  for (const Statement &statement : model.statements)
    if (!writesLocal(model, statement))
      live.insert(statement.write.array);
  for (bool grew = true; grew;) {
    grew = false;
    for (const Statement &statement : model.statements)
      if (live.count(statement.write.array))
        for (const Access &read : statement.reads)
          grew |= live.insert(read.array).second;
  }
  return live;
}

unsigned removeDeadInstances(Model &model) {
  std::set<unsigned> shrunk;
  std::set<std::string> live = liveArrays(model);
  for (unsigned s = 0; s < model.statements.size(); ++s) {
    Statement &statement = model.statements[s];
    if (live.count(statement.write.array) || statement.domain.is_empty())
      continue;
    restrictStatement(statement, isl::set::empty(statement.domain.space()));
    shrunk.insert(s);
  }
  // Each round counts the reads of the instances still live: a chain of dead definitions (a local
  // read only by dead instances of another) goes one link a round. The bound keeps compile time in
  // check; what is left after it is computed, as before.
  for (int round = 0; round < 8; ++round) {
    isl::union_set readElements = model.mustReads().unite(model.mayReads()).range();
    bool changed = false;
    for (unsigned s = 0; s < model.statements.size(); ++s) {
      Statement &statement = model.statements[s];
      if (!writesLocal(model, statement))
        continue;
      isl::set live = liveInstances(statement, readElements);
      if (live.is_equal(statement.domain))
        continue;
      restrictStatement(statement, live);
      shrunk.insert(s);
      changed = true;
    }
    if (!changed)
      break;
  }
  if (!shrunk.empty() && !model.initialSchedule.is_null())
    model.initialSchedule =
        isl::manage(isl_schedule_intersect_domain(model.initialSchedule.release(), model.domains().release()));
  return static_cast<unsigned>(shrunk.size());
}

} // namespace polyc::model
