// A rewrite of the checked AST run after a first buildModel: an update (`A[...] += e`, `-=`) that reads
// elements of A that other instances of it overwrite reads a copy of A's old values instead, so that it
// stays a simultaneous update (docs/language.md) on every target without an order of its instances: a
// parallel copy, then a parallel update that no longer reads the array it changes.
#pragma once

#include "compiler/model/Model.h"

namespace polyc::model {

// Whether some instance of the update `stmt` reads an element of the updated array that another
// instance (of the same repeat iteration) overwrites. When not (w[0] -= w[idx[0]], w[i] += w[i]), the
// update needs neither an order nor a copy: each instance reads before it writes.
bool updateReadsOtherInstances(const Statement &stmt);

// For every update of `model` that reads other instances' elements (Statement::readsOtherInstances,
// from updateReadsOtherInstances), `A[...] op= e;` with A of shape [n1, ..., nk]: adds a local array
// `A_old` (a fresh name) with A's type, shape and boundary rule, the equation
// `A_old[d1, ..., dk] = A[d1, ..., dk];` right before the update (in its repeat block when it is in one,
// so it copies A as the update would see it), and makes every read of A in `e` a read of A_old at the
// same indices. The new equation's `snapshotFor` names the update. `model` must have been
// built from `program`; rebuild it when this returns more than 0 (the number of updates rewritten).
unsigned snapshotUpdates(ast::Program &program, const Model &model);

} // namespace polyc::model
