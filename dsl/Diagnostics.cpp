// The front end's diagnostic engine: formats errors and notes with llvm::SourceMgr, guarding the printed
// source line against what the user's file may hold (megabyte lines, control bytes, invalid UTF-8).
#include "dsl/Diagnostics.h"

#include <algorithm>

using namespace llvm;
using namespace polyc::dsl;

// A source line is shown at most this wide around the caret.
static constexpr size_t kMaxShownLine = 200;

void DiagnosticEngine::print(SMRange range, SourceMgr::DiagKind kind, const Twine &message) {
  SMLoc loc = range.Start;
  if (!loc.isValid()) {
    SMDiagnostic(sm_.getMemoryBuffer(sm_.getMainFileID())->getBufferIdentifier(), kind, message.str())
        .print("polyc", os_, false);
    return;
  }
  SmallVector<SMRange, 1> ranges;
  if (range.End.isValid() && range.End.getPointer() > range.Start.getPointer())
    ranges.push_back(range);
  SMDiagnostic diag = sm_.GetMessage(loc, kind, message, ranges);

  // Rebuild the diagnostic with a printable window of the line; columns stay byte columns, so every
  // byte that is not printable ASCII is shown as '?'.
  StringRef line = diag.getLineContents();
  int col = std::max(diag.getColumnNo(), 0);
  size_t begin = 0, end = line.size();
  if (line.size() > kMaxShownLine) {
    begin = static_cast<size_t>(col) > kMaxShownLine / 2 ? col - kMaxShownLine / 2 : 0;
    end = std::min(line.size(), begin + kMaxShownLine);
  }
  std::string shown;
  for (size_t i = begin; i < end; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    shown.push_back((c >= 0x20 && c < 0x7f) || c == '\t' ? static_cast<char>(c) : '?');
  }
  std::vector<std::pair<unsigned, unsigned>> colRanges;
  for (auto [lo, hi] : diag.getRanges()) {
    size_t clo = std::clamp<size_t>(lo, begin, end) - begin;
    size_t chi = std::clamp<size_t>(hi, begin, end) - begin;
    if (chi > clo)
      colRanges.emplace_back(clo, chi);
  }
  SMDiagnostic windowed(sm_, loc, diag.getFilename(), diag.getLineNo(), static_cast<int>(col - begin),
                        kind, diag.getMessage(), shown, colRanges);
  if (begin == 0) {
    windowed.print(nullptr, os_, false);
    return;
  }
  // The caret's column is within the window, but the location must name the real column.
  os_ << diag.getFilename() << ":" << diag.getLineNo() << ":" << col + 1 << ": ";
  windowed.print(nullptr, os_, false, true, false);
}

bool DiagnosticEngine::error(SMRange range, const Twine &message) {
  if (errors_ >= kMaxErrors) {
    if (!capReported_)
      os_ << "polyc: error: too many errors emitted, stopping now\n";
    capReported_ = true;
    dropping_ = true;
    return false;
  }
  ++errors_;
  dropping_ = false;
  print(range, SourceMgr::DK_Error, message);
  return false;
}

void DiagnosticEngine::note(SMRange range, const Twine &message) {
  if (dropping_)
    return;
  print(range, SourceMgr::DK_Note, message);
}

void DiagnosticEngine::finish() {
  if (errors_ >= kMaxErrors && !capReported_)
    os_ << "polyc: error: too many errors emitted, stopping now\n";
  capReported_ = true;
}

void DiagnosticEngine::fatal(const Twine &message) {
  ++errors_;
  os_ << "polyc: error: " << message << "\n";
}
