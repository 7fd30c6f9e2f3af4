// polyc run: the reference interpreter (compiler/interpret) on a .poly file, with the command line of the
// executables that polyc build makes: `polyc run FILE.poly --param N=4 --in x=x.npy --out y=y.npy`.
#include "Commands.h"
#include "Pipeline.h"

#include "compiler/interpret/Interpreter.h"
#include "dsl/Frontend.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <cctype>

using namespace llvm;
using namespace polyc;

static cl::opt<std::string> runInput(cl::Positional, cl::Required, cl::desc("<file.poly>"),
                                     cl::sub(driver::RunCommand));
// Everything after the file goes to the runtime's parser, as it would to a built executable.
static cl::list<std::string> runArguments(cl::ConsumeAfter,
                                          cl::desc("<--param NAME=VALUE, --in NAME=FILE, --out NAME=FILE, "
                                                   "--repeat K, --json, --help, --exact-types>"),
                                          cl::sub(driver::RunCommand));
static cl::opt<bool> runExactTypes("exact-types",
                                   cl::desc("Compute in the declared element types (f32 rounded at every "
                                            "operation, i32 wrapping) instead of float64 and int64"),
                                   cl::sub(driver::RunCommand));

// The name the program's messages start with, as polyc build names it: the file's stem, with every
// character that cannot be in a C identifier replaced by '_'.
static std::string programNameOf(StringRef path) {
  std::string name;
  for (char c : sys::path::stem(path))
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "_" + name;
  return name;
}

int polyc::driver::runRun() {
  interpret::InterpretOptions options;
  options.exactTypes = runExactTypes;
  std::vector<std::string> args{"polyc run " + runInput};
  for (const std::string &arg : runArguments) {
    if (arg == "--exact-types")
      options.exactTypes = true;
    else
      args.push_back(arg);
  }
  SourceMgr sm;
  std::unique_ptr<ast::Program> program = loadProgram(sm, runInput);
  if (!program)
    return 1;
  options.sourceMgr = &sm;
  Expected<int> status = interpret::interpretProgram(*program, programNameOf(runInput), args, options);
  if (!status)
    return reportError(status.takeError(), sm);
  return *status;
}
