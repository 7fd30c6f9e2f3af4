// The front end's entry point: file -> SourceMgr buffer -> parser -> Sema, with the reading guarded
// against what a path may name (a directory, a device, a file too large to be a program).
#include "dsl/Frontend.h"

#include "dsl/Diagnostics.h"
#include "dsl/Parser.h"
#include "dsl/Sema.h"

#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace polyc;

// Reads at most kMaxSourceBytes + 1 bytes, so that /dev/zero or a pipe cannot make us read forever.
static Expected<std::unique_ptr<MemoryBuffer>> readSource(StringRef path) {
  Expected<sys::fs::file_t> file = sys::fs::openNativeFileForRead(path);
  if (!file)
    return file.takeError();
  std::string data;
  char chunk[1 << 16];
  Error err = Error::success();
  while (true) {
    Expected<size_t> n = sys::fs::readNativeFile(*file, MutableArrayRef<char>(chunk, sizeof chunk));
    if (!n) {
      err = n.takeError();
      break;
    }
    if (*n == 0)
      break;
    data.append(chunk, *n);
    if (data.size() > kMaxSourceBytes) {
      err = createStringError(errc::file_too_large, "file is larger than 16 MiB");
      break;
    }
  }
  sys::fs::closeFile(*file);
  if (err)
    return err;
  return MemoryBuffer::getMemBufferCopy(data, path);
}

std::unique_ptr<ast::Program> dsl::loadProgramFromBuffer(SourceMgr &sm, unsigned bufferId, raw_ostream &os) {
  DiagnosticEngine diags(sm, os);
  if (sm.getMemoryBuffer(bufferId)->getBufferSize() > kMaxSourceBytes) {
    diags.fatal("cannot read '" + sm.getMemoryBuffer(bufferId)->getBufferIdentifier() +
                "': file is larger than 16 MiB");
    return nullptr;
  }
  std::unique_ptr<ast::Program> program = parseProgram(sm, bufferId, diags);
  bool ok = !diags.hadError() && checkProgram(*program, diags) && !diags.hadError();
  diags.finish();
  return ok ? std::move(program) : nullptr;
}

std::unique_ptr<ast::Program> polyc::loadProgram(SourceMgr &sm, StringRef path) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer = readSource(path);
  if (!buffer) {
    errs() << "polyc: error: cannot read '" << path << "': " << toString(buffer.takeError()) << "\n";
    return nullptr;
  }
  unsigned id = sm.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  return dsl::loadProgramFromBuffer(sm, id, errs());
}
