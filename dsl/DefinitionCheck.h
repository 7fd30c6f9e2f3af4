// The exactly-once rule: with isl, every point of every output and local array is covered by exactly
// one '=' equation (per repeat iteration where the equations are redefined each iteration).
#pragma once

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

namespace polyc::dsl {

// Runs on a program that Sema has resolved without errors. Returns false after reporting
// overlapping definitions, undefined points, and outputs or read locals that are never defined.
bool checkDefinitions(const ast::Program &program, DiagnosticEngine &diags);

} // namespace polyc::dsl
