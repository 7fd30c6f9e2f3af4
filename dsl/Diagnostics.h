// The front end's diagnostic engine: clang-style errors and notes with source ranges, printed through
// llvm::SourceMgr. Caps the number of errors so that garbage input cannot flood the terminal.
#pragma once

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace polyc::dsl {

class DiagnosticEngine {
public:
  static constexpr unsigned kMaxErrors = 20;

  DiagnosticEngine(llvm::SourceMgr &sm, llvm::raw_ostream &os) : sm_(sm), os_(os) {}

  // Reports an error at `range` (its start is the caret). Returns false so that callers can write
  // `return diags.error(...)`. Once kMaxErrors is reached, further errors and their notes are dropped.
  bool error(llvm::SMRange range, const llvm::Twine &message);
  // A note attached to the last error (dropped with it).
  void note(llvm::SMRange range, const llvm::Twine &message);
  // An error without a source location (an unreadable file).
  void fatal(const llvm::Twine &message);

  unsigned errorCount() const { return errors_; }
  bool hadError() const { return errors_ > 0; }
  // True once the cap is reached: passes may stop early.
  bool tooMany() const { return errors_ >= kMaxErrors; }
  llvm::SourceMgr &sourceMgr() { return sm_; }
  // Says that errors were dropped if passes stopped at the cap before trying to report more.
  void finish();

private:
  void print(llvm::SMRange range, llvm::SourceMgr::DiagKind kind, const llvm::Twine &message);

  llvm::SourceMgr &sm_;
  llvm::raw_ostream &os_;
  unsigned errors_ = 0;
  bool dropping_ = false;
  bool capReported_ = false;
};

} // namespace polyc::dsl
