// What the targets' `polyc build` functions (buildCpu, buildCuda, buildOpenCL) share: finding the
// runtime's headers and libraries, finding the compiler, and running it on the emitted sources with its
// output kept in the build folder and shown when it fails (or always with -v).
#pragma once

#include "Targets.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace polyc::driver {

// The runtime's include folder: $POLYC_RUNTIME_DIR/include when POLYC_RUNTIME_DIR is set, else the
// runtime/include of the source tree this polyc was built from.
std::string runtimeIncludeDir();
// A runtime library: $POLYC_RUNTIME_DIR/<fileName>, or $POLYC_RUNTIME_DIR/lib/<fileName> when the first
// does not exist, when POLYC_RUNTIME_DIR is set; else `builtPath` (where this build put it, empty when
// this build has no such library).
std::string runtimeLibrary(llvm::StringRef fileName, llvm::StringRef builtPath);

// Whether `header` (a path under the include folder) exists; if not, prints
// "cannot find the <what> (no <header>); set POLYC_RUNTIME_DIR to a folder with include/ and <contents>".
bool runtimeHeaderExists(llvm::StringRef header, llvm::StringRef what, llvm::StringRef contents);
// Whether every library exists; if not, prints "cannot find the runtime library '<library>'<advice>"
// for the first one missing.
bool runtimeLibrariesExist(llvm::ArrayRef<std::string> libraries, llvm::StringRef advice);

// The host C++ compiler's command: $CXX (whose extra words, as in "ccache g++", follow the program)
// or c++, the program found on the PATH. If not found, prints "cannot find the C++ compiler '<name>'
// (set CXX to <requirement>)" and returns false.
bool findHostCompiler(llvm::StringRef requirement, std::vector<std::string> &command);

// --mpi: the MPI compiler wrapper ($POLYC_MPICXX, else the one this polyc was configured with) and the
// runtime's MPI layer (libpolyc_runtime_mpi.a). Prints why and returns false when the layer is missing.
bool findMpi(std::string &wrapper, std::string &library);

// The host compiler's command for `job`: the MPI compiler wrapper with --mpi (and the MPI layer in
// `mpiLibrary`), else findHostCompiler's. False, with a message printed, when it cannot be found.
bool hostCompilerFor(const BuildJob &job, llvm::StringRef requirement, std::vector<std::string> &command,
                     std::string &mpiLibrary);

// Whether `compiler` (a command as hostCompilerFor gives it; a wrapper such as mpicxx reports the compiler
// it runs) is GCC: its --version names the Free Software Foundation.
bool isGnuCompiler(const BuildJob &job, const std::vector<std::string> &compiler);

// Appends the space-separated words of the environment variable `variable` (extra flags for
// experiments, such as POLYC_CXXFLAGS), if set.
void appendFlagsFromEnvironment(std::vector<std::string> &args, const char *variable);

// Runs `args` (args[0] the compiler's path) for `job`: prints the command first with -v, keeps the
// compiler's output in the job's folder, prints it and the command when the compiler fails (returns 1)
// and with -v also when it succeeds (returns 0).
int runCompiler(const BuildJob &job, const std::vector<std::string> &args);

} // namespace polyc::driver
