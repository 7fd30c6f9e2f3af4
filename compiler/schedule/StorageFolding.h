// Storage folding: the dimensions of local arrays whose values are only live over a bounded window of
// that dimension under the chosen schedule, stored modulo the window. Used by chooseSchedule.
#pragma once

#include "compiler/schedule/Schedule.h"

namespace polyc::schedule {

std::vector<FoldedStorage> foldStorage(const model::Model &model, const isl::union_map &scheduleMap);

} // namespace polyc::schedule
