// Semantic analysis of a parsed .poly program: name resolution, const evaluation, arity, affinity of
// shapes, indices, ranges and conditions, write permissions, and (through DefinitionCheck) that every
// output and local array element is defined exactly once. Fills in the AST's resolved members.
#pragma once

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

namespace polyc::dsl {

// Checks `program` and resolves its names. Returns false (having reported errors) if it is invalid.
bool checkProgram(ast::Program &program, DiagnosticEngine &diags);

} // namespace polyc::dsl
