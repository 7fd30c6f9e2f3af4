// polyc emit: not built yet (placeholder until its issue lands).
#include "Commands.h"

#include "llvm/Support/raw_ostream.h"

int polyc::driver::runEmit() {
  llvm::errs() << "polyc: 'emit' is not implemented yet\n";
  return 1;
}
