// The reference interpreter behind `polyc run`: evaluates a checked program's equations directly from
// the AST (no model, schedule, allocation or code generation) and runs them behind the runtime's
// command line, so that it is an independent oracle for every target (docs/running.md, "polyc run").
#pragma once

#include "dsl/AST.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <vector>

namespace polyc::interpret {

struct InterpretOptions {
  // Compute in the declared element types (f32 rounded at every operation, i32 wrapping) instead of
  // float64 and int64.
  bool exactTypes = false;
  // Names equations as file:line in messages when given.
  const llvm::SourceMgr *sourceMgr = nullptr;
};

// Runs `program` as the executable that `polyc build` makes of it would run, through
// polyc::rt::runMain: `args` is that executable's command line (args[0] is shown in --help's usage)
// and `name` names the program in messages. Returns runMain's exit status (0; 2 bad command line or
// input; 3 the computation failed), or an Error at the offending statement when the statements cannot
// be put in an order (a cycle of dependences through an in-place update or a repeat block).
llvm::Expected<int> interpretProgram(const ast::Program &program, const std::string &name,
                                     const std::vector<std::string> &args, const InterpretOptions &options);

} // namespace polyc::interpret
