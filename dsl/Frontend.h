// The front end's entry point: reads a .poly file, parses it and runs semantic analysis, printing
// clang-style diagnostics through the SourceMgr. Later stages start from the Program it returns.
#pragma once

#include "dsl/AST.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace polyc {

// The largest source file accepted.
constexpr size_t kMaxSourceBytes = 16u << 20;

// Reads `path` into `sm`, parses and checks it. Diagnostics go to llvm::errs(). Returns null if the
// file cannot be read or the program has any error.
std::unique_ptr<ast::Program> loadProgram(llvm::SourceMgr &sm, llvm::StringRef path);

namespace dsl {
// The same on a buffer already added to `sm`, with diagnostics to `os` (tests and the fuzzer).
std::unique_ptr<ast::Program> loadProgramFromBuffer(llvm::SourceMgr &sm, unsigned bufferId, llvm::raw_ostream &os);
} // namespace dsl

} // namespace polyc
