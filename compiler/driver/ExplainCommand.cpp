// polyc explain: not built yet (placeholder until its issue lands).
#include "Commands.h"

#include "llvm/Support/raw_ostream.h"

int polyc::driver::runExplain() {
  llvm::errs() << "polyc: 'explain' is not implemented yet\n";
  return 1;
}
