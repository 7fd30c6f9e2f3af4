// A rewrite of the checked AST run after a first buildModel: an update (`A[...] += e`, `-=`) whose reads
// of A cannot all be served in place reads a copy of A's old values instead, so that it stays a
// simultaneous update (docs/language.md) with dependences that some schedule can respect.
#pragma once

#include "compiler/model/Model.h"

namespace polyc::model {

// Whether the update `stmt` of `model` can run in place: some affine order of its instances (within one
// iteration of its repeat block) lets every read of the updated array at another instance's point come
// before that instance overwrites it (A[i] += A[i - 1] runs i downwards). Always true for a statement
// that is not an update or that reads the array only at its own point.
bool updateRunsInPlace(const Model &model, const Statement &stmt);

// Whether some instance of the update `stmt` reads an element of the updated array that another
// instance (of the same repeat iteration) overwrites. When not (w[0] -= w[idx[0]], w[i] += w[i]), the
// update needs neither an order nor a copy: each instance reads before it writes.
bool updateReadsOtherInstances(const Statement &stmt);

// For every update of `model` for which updateRunsInPlace is false, `A[...] op= e;` with A of shape
// [n1, ..., nk]: adds a local array `A_old` (a fresh name) with A's type, shape and boundary rule, the
// equation `A_old[d1, ..., dk] = A[d1, ..., dk];` right before the update (in its repeat block when it
// is in one, so it copies A as the update would see it), and makes every read of A in `e` a read of
// A_old at the same indices. The new equation's `snapshotFor` names the update. `model` must have been
// built from `program`; rebuild it when this returns more than 0 (the number of updates rewritten).
unsigned snapshotUpdates(ast::Program &program, const Model &model);

} // namespace polyc::model
