// A rewrite of the checked AST run just before buildModel: the leading input-only terms of a recurrence
// (the FIR half of the IIR filter) become their own equation over a new local array, computed for all
// points in parallel before the wavefront, so the wavefront's critical path only does the recurrent part.
#pragma once

#include "dsl/AST.h"

namespace polyc::model {

// For each top-level `Y[i1, ..., in] = t1 + t2 + ... + tm;` (no where, every left-hand position an index
// variable) whose longest leading run t1 .. tk of terms reads no array that any equation defines or
// updates, where t1 .. tk hold a reduction and some later term reads Y: adds a local array `Y_in` (a
// fresh name) with Y's type, shape and boundary, appends `Y_in[i1, ..., in] = t1 + ... + tk;` after the
// program's equations and makes Y's right-hand side `Y_in[i1, ..., in] + t(k+1) + ... + tm` (same left
// association, so results are the same bit for bit). Anything else is left as it is. The new nodes
// carry the source ranges of the terms they came from and are resolved as Sema would resolve them.
// Returns the number of equations split.
unsigned hoistInputTerms(ast::Program &program);

} // namespace polyc::model
