// The polyc tool's subcommands: each lives in its own file (CheckCommand.cpp, ExplainCommand.cpp, ...),
// declares its options with llvm::cl::sub(...) and is dispatched from polyc.cpp.
#pragma once

#include "llvm/Support/CommandLine.h"

namespace polyc::driver {

extern llvm::cl::SubCommand CheckCommand;
extern llvm::cl::SubCommand ExplainCommand;
extern llvm::cl::SubCommand EmitCommand;
extern llvm::cl::SubCommand BuildCommand;
extern llvm::cl::SubCommand RunCommand;

// Each returns the process exit status: 0 success, 1 error in the user's program or options (polyc run:
// also the statuses of the executables, 2 bad command line or input, 3 the computation failed).
int runCheck();
int runExplain();
int runEmit();
int runBuild();
int runRun();

} // namespace polyc::driver
