// polyc build: not built yet (placeholder until its issue lands).
#include "Commands.h"

#include "llvm/Support/raw_ostream.h"

int polyc::driver::runBuild() {
  llvm::errs() << "polyc: 'build' is not implemented yet\n";
  return 1;
}
