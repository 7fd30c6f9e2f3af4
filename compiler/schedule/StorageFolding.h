// Storage folding: the dimensions of local arrays whose values are only live over a bounded window of
// that dimension under the chosen schedule, stored modulo the window. The instances of a band's parallel
// members count as running at once (every target may run them so), so an array is never folded along
// what they write. Used by chooseSchedule.
#pragma once

#include "compiler/schedule/Schedule.h"

namespace polyc::schedule {

std::vector<FoldedStorage> foldStorage(const model::Model &model, const isl::schedule &tree);

} // namespace polyc::schedule
