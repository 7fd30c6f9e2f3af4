// Streamed arrays (`polyc build --stream`): when the schedule's outermost loop is a sequential loop over
// every statement (the frames of a video, the steps of a simulation), an input whose reads at step t reach
// only slices t - lag .. t of its first dimension, and an output written whole, one slice per step, need not
// be in memory at once. They are held as rings of lag + 2 slices (Schedule::folded), which the runtime fills
// one slice before each step and drains one after it: a sequence longer than memory runs, and its transfers
// overlap the steps. Used by the pipeline after the storage check.
#pragma once

#include "compiler/schedule/Schedule.h"

namespace polyc::schedule {

// The streamed arrays of `schedule`, and the inputs and outputs that stay whole with the reason. An error,
// saying why, when the outer loop is not a sequential loop over every statement or no input streams.
llvm::Expected<Streaming> planStreaming(const model::Model &model, const Schedule &schedule);

// Adds the rings of `streaming` to `schedule` (its folds, Schedule::streaming) and keeps the outer loop
// step by step: no tiles along it.
void applyStreaming(Schedule &schedule, Streaming streaming);

} // namespace polyc::schedule
