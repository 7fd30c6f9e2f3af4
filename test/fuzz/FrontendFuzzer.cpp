// libFuzzer entry for the front end: the bytes are a .poly file; parse, check and dump it with every
// diagnostic formatted into a null stream. Any crash, sanitizer report, hang or leak is a bug.
#include "dsl/ASTDump.h"
#include "dsl/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sm;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.poly"), llvm::SMLoc());
  llvm::raw_null_ostream diagnostics;
  std::unique_ptr<polyc::ast::Program> program = polyc::dsl::loadProgramFromBuffer(sm, id, diagnostics);
  if (program) {
    llvm::raw_null_ostream dump;
    polyc::dsl::dumpProgram(*program, dump);
  }
  return 0;
}
