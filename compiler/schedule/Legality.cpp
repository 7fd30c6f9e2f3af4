// The schedule's independent legality check: for every dependence, the source instance's time
// vector must be lexicographically before the target's. It shares nothing with the scheduler's
// reasoning, so a scheduler bug shows up as an error here rather than as wrong results.
#include "compiler/schedule/Schedule.h"

#include "compiler/model/IslUtil.h"
#include "compiler/support/SourceError.h"

#include <sstream>

namespace polyc::schedule {

llvm::Error verifySchedule(const model::Model &model, const analysis::DependenceGraph &deps,
                           const Schedule &schedule) {
  try {
    isl::union_map time = flatScheduleMap(schedule.tree);
    isl::union_set missing = model.domains().subtract(schedule.tree.domain());
    if (!missing.is_empty()) {
      std::ostringstream os;
      os << missing;
      return makeError("the schedule leaves statement instances out: " + os.str());
    }
    for (const analysis::Dependence &dep : deps.edges) {
      const model::Statement &src = model.statements[dep.source], &tgt = model.statements[dep.target];
      isl::union_map pairs = isl::union_map(dep.relation).apply_domain(time).apply_range(time);
      if (pairs.is_empty())
        continue;
      isl::map timePairs = pairs.as_map();
      isl::map notBefore = timePairs.intersect(polyc::islutil::lexGe(timePairs.domain().space()));
      if (notBefore.is_empty())
        continue;
      // Name one pair of instances that the schedule runs in the wrong order.
      isl::union_map wrongOrder =
          time.apply_range(isl::union_map(polyc::islutil::lexGe(timePairs.domain().space()))).apply_range(time.reverse());
      isl::union_map bad = isl::union_map(dep.relation).intersect(wrongOrder);
      std::ostringstream os;
      os << "the schedule violates the " << analysis::spelling(dep.kind) << " dependence " << src.name << " -> " << tgt.name
         << " through '" << dep.array << "'";
      if (!bad.is_empty())
        os << ": " << bad.as_map().wrap().sample_point() << " is not ordered";
      return makeError(os.str());
    }
    return llvm::Error::success();
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in the legality check (isl): ") + e.what());
  }
}

} // namespace polyc::schedule
