// Copies into folded slots that already hold the value. An equation that copies its array's previous
// step, `Bs[t, i, j, k] = Bs[t - 1, i, j, k] where <boundary>` (heat-3d, jacobi-2d, lu-right-looking),
// keeps a value from step to step; with the step dimension folded into w slots, the slot of X[t, x] holds
// X[t - w, x], which equals X[t - 1, x] when the copy also wrote X[t - w + 1, x], ..., X[t - 1, x]. Those
// instances are removed from the schedule's tree (the model keeps them: dependences and both checks,
// which ran before, see every copy). On the GPU the boundary pieces' guards then leave the step kernels
// after the first step (heat-3d's host-loop steps: 12.0 ms -> 8.7 ms for 500 steps, measured with the
// copies removed by hand, H100, 2026-11-27).
#pragma once

#include "compiler/schedule/Schedule.h"

namespace polyc::schedule {

// Removes the steady instances of every identity copy along a folded dimension from schedule.tree (and
// scheduleMap) and records them in schedule.elided. Returns the number of statements elided from.
unsigned elideSteadyCopies(const model::Model &model, Schedule &schedule);

} // namespace polyc::schedule
