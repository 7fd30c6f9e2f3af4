// The polyc tool: parses the command line and dispatches to a subcommand (check, explain, emit, build, run).
#include "Commands.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace polyc::driver {
cl::SubCommand CheckCommand("check", "Run the front end only: report diagnostics, exit 1 on error");
cl::SubCommand ExplainCommand("explain", "Show domains, dependences, schedule and allocation, and why");
cl::SubCommand EmitCommand("emit", "Write the generated sources for a target");
cl::SubCommand BuildCommand("build", "Emit, then compile and link an executable");
cl::SubCommand RunCommand("run", "Interpret the equations directly (the reference for every target), with the "
                                  "executables' command line");
} // namespace polyc::driver

static void printVersion(raw_ostream &os) { os << "polyc version " POLYC_VERSION "\n"; }

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  cl::SetVersionPrinter(printVersion);
  if (!cl::ParseCommandLineOptions(argc, argv, "polyc: a polyhedral compiler for .poly programs\n",
                                   &errs()))
    return 1;
  using namespace polyc::driver;
  if (CheckCommand)
    return runCheck();
  if (ExplainCommand)
    return runExplain();
  if (EmitCommand)
    return runEmit();
  if (BuildCommand)
    return runBuild();
  if (RunCommand)
    return runRun();
  errs() << "polyc: error: no subcommand given; see 'polyc --help'\n";
  return 1;
}
