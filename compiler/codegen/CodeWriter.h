// Accumulates emitted source text with consistent layout: indentation by blocks, comments wrapped at
// the column limit, long statements broken at operators, and at most one blank line in a row. Every
// code generator writes through it so that all targets' output reads like careful hand-written code.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace polyc::codegen {

class CodeWriter {
public:
  static constexpr unsigned ColumnLimit = 110; // the project's .clang-format
  explicit CodeWriter(unsigned indentWidth = 2) : indentWidth_(indentWidth) {}

  // One line of code at the current indentation. A line longer than the limit is broken after an
  // operator or a comma of its outermost parentheses, continuation lines indented by two levels.
  void line(llvm::StringRef text);
  // A blank line; dropped at the start of a block and when the previous line is blank already.
  void blank();
  // `// text` at the current indentation, wrapped at the column limit. Newlines in `text` start new
  // comment lines; an empty line of `text` becomes `//`.
  void comment(llvm::StringRef text);
  // `head {`, then everything up to the matching closeBlock() is indented.
  void openBlock(llvm::StringRef head);
  // Ends the innermost block with `}` followed by `tail` (for example ";" after a lambda or struct).
  void closeBlock(llvm::StringRef tail = "");
  // `} else {` (or `} else if (...) {` with `head` = "else if (...)").
  void elseBlock(llvm::StringRef head = "else");
  // Verbatim multi-line text, each line indented at the current level (for fixed snippets).
  void verbatim(llvm::StringRef text);
  // Text another writer produced at this writer's current level, appended as it is.
  void append(const CodeWriter &other);
  void indent() { ++level_; }
  void dedent();

  unsigned level() const { return level_; }
  const std::string &str() const { return out_; }

private:
  void emit(llvm::StringRef text); // one physical line, no wrapping
  std::string prefix(unsigned extra = 0) const;

  unsigned indentWidth_;
  unsigned level_ = 0;
  std::string out_;
  bool lastBlank_ = true;  // true at the start, so a file never opens with a blank line
  bool lastOpened_ = true; // the previous line opened a block
};

} // namespace polyc::codegen
