// The parser: recursive descent over the grammar of docs/language.md, building the AST (dsl/AST.h).
// Recovers at ';' after an error so that one run reports several; limits nesting to kMaxNestingDepth.
#pragma once

#include "dsl/AST.h"
#include "dsl/Diagnostics.h"

#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace polyc::dsl {

// The deepest expression (counted in AST levels) the parser accepts; deeper input is an error, which
// keeps every later recursive walk of the AST within a bounded stack.
constexpr unsigned kMaxNestingDepth = 256;

// Parses the buffer `bufferId` of `sm`. Always returns a program (partial after errors); errors are
// reported through `diags`, so the caller checks diags.hadError().
std::unique_ptr<ast::Program> parseProgram(llvm::SourceMgr &sm, unsigned bufferId, DiagnosticEngine &diags);

} // namespace polyc::dsl
