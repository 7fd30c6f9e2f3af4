// A stable, readable, indented dump of a (resolved) AST: what `polyc check --dump-ast` prints and what
// the front end's lit tests pin.
#pragma once

#include "dsl/AST.h"

#include "llvm/Support/raw_ostream.h"

namespace polyc::dsl {

void dumpProgram(const ast::Program &program, llvm::raw_ostream &os);

} // namespace polyc::dsl
