// Layout of emitted source text (see CodeWriter.h).
#include "compiler/codegen/CodeWriter.h"

#include "llvm/ADT/SmallVector.h"

#include <cassert>

using namespace polyc::codegen;
using llvm::StringRef;

std::string CodeWriter::prefix(unsigned extra) const {
  return std::string((level_ + extra) * indentWidth_, ' ');
}

void CodeWriter::emit(StringRef text) {
  out_ += prefix();
  out_ += text.str();
  out_ += '\n';
  lastBlank_ = false;
  lastOpened_ = false;
}

void CodeWriter::dedent() {
  assert(level_ > 0 && "unbalanced dedent");
  --level_;
}

// Positions where `text` may be broken, with their parenthesis depth: after ", " or before a binary
// operator (" + ", " && ", ...), outside string and character literals and trailing comments. A
// position is where the continuation line starts.
static llvm::SmallVector<std::pair<unsigned, size_t>> breakPoints(StringRef text) {
  static const char *const operators[] = {" || ", " && ", " ? ", " : ", " + ", " - ", " * ", " / ",
                                          " == ", " != ", " <= ", " >= ", " < ", " > ", " % ", " = ",
                                          " += ", " -= "};
  llvm::SmallVector<std::pair<unsigned, size_t>> candidates; // (depth, position)
  unsigned depth = 0;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      depth = depth ? depth - 1 : 0;
    } else if (c == ',' && i + 1 < text.size() && text[i + 1] == ' ') {
      candidates.push_back({depth, i + 2});
    } else if (c == ' ') {
      for (const char *op : operators)
        if (text.substr(i).starts_with(op)) {
          candidates.push_back({depth, i + 1});
          break;
        }
    } else if (c == '/' && text.substr(i).starts_with("//")) {
      break;
    }
  }
  return candidates;
}

void CodeWriter::line(StringRef text) {
  size_t width = ColumnLimit > prefix().size() ? ColumnLimit - prefix().size() : 20;
  if (text.size() <= width || text.starts_with("#") || text.starts_with("//")) {
    emit(text);
    return;
  }
  // Greedy: fill each line up to the limit, breaking at the shallowest break point that fits (the
  // latest of those), so that operands stay whole where they can.
  llvm::SmallVector<std::pair<unsigned, size_t>> points = breakPoints(text);
  size_t start = 0;
  bool first = true;
  for (;;) {
    size_t limit = first ? width : width - 2 * indentWidth_;
    if (text.size() - start <= limit)
      break;
    size_t cut = 0;
    unsigned cutDepth = ~0u;
    for (auto [depth, p] : points)
      if (p > start && p - start <= limit && (depth < cutDepth || (depth == cutDepth && p > cut))) {
        cut = p;
        cutDepth = depth;
      }
    if (cut == 0) // nothing fits: break at the first point past the limit, if any
      for (auto [depth, p] : points)
        if (p > start) {
          cut = p;
          break;
        }
    if (cut == 0)
      break;
    StringRef piece = text.substr(start, cut - start).rtrim();
    if (first)
      emit(piece);
    else
      out_ += prefix(2) + piece.str() + "\n";
    first = false;
    start = cut;
  }
  if (first)
    emit(text.substr(start));
  else
    out_ += prefix(2) + text.substr(start).str() + "\n";
  lastBlank_ = lastOpened_ = false;
}

void CodeWriter::blank() {
  if (lastBlank_ || lastOpened_)
    return;
  out_ += '\n';
  lastBlank_ = true;
}

void CodeWriter::comment(StringRef text) {
  size_t width = ColumnLimit > prefix().size() + 3 ? ColumnLimit - prefix().size() - 3 : 40;
  llvm::SmallVector<StringRef> paragraphs;
  text.split(paragraphs, '\n');
  for (StringRef paragraph : paragraphs) {
    paragraph = paragraph.rtrim();
    if (paragraph.empty()) {
      emit("//");
      continue;
    }
    // Keep the paragraph's own leading spaces (indented comment lines, tables) on every piece.
    size_t lead = paragraph.find_first_not_of(' ');
    std::string indentText(lead, ' ');
    StringRef rest = paragraph.substr(lead);
    while (!rest.empty()) {
      size_t room = width > lead ? width - lead : 20;
      if (rest.size() <= room) {
        emit("// " + indentText + rest.str());
        break;
      }
      size_t cut = rest.substr(0, room + 1).rfind(' ');
      if (cut == StringRef::npos || cut == 0)
        cut = rest.find(' ');
      if (cut == StringRef::npos) {
        emit("// " + indentText + rest.str());
        break;
      }
      emit("// " + indentText + rest.substr(0, cut).rtrim().str());
      rest = rest.substr(cut).ltrim();
    }
  }
}

void CodeWriter::openBlock(StringRef head) {
  line(head.empty() ? std::string("{") : head.str() + " {");
  ++level_;
  lastOpened_ = true;
}

void CodeWriter::closeBlock(StringRef tail) {
  dedent();
  // A blank line right before a closing brace is never wanted.
  if (lastBlank_ && out_.size() >= 2 && out_.substr(out_.size() - 2) == "\n\n")
    out_.pop_back();
  emit("}" + tail.str());
}

void CodeWriter::elseBlock(StringRef head) {
  dedent();
  emit("} " + head.str() + " {");
  ++level_;
  lastOpened_ = true;
}

void CodeWriter::verbatim(StringRef text) {
  llvm::SmallVector<StringRef> lines;
  text.rtrim('\n').split(lines, '\n');
  for (StringRef l : lines) {
    if (l.trim().empty()) {
      out_ += '\n';
      lastBlank_ = true;
      lastOpened_ = false;
    } else {
      emit(l);
    }
  }
}

void CodeWriter::append(const CodeWriter &other) {
  if (other.out_.empty())
    return;
  out_ += other.out_;
  lastBlank_ = other.lastBlank_;
  lastOpened_ = false;
}
