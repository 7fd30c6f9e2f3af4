// Helpers shared by the views of polyc explain: equations as written, names of dependence kinds
// and classes, vectors as text.
#include "ExplainPrinters.h"

#include "llvm/Support/SourceMgr.h"

namespace polyc::driver {

std::string equationText(const model::Statement &stmt) {
  if (!stmt.range.isValid())
    return stmt.write.array;
  const char *begin = stmt.range.Start.getPointer(), *end = stmt.range.End.getPointer();
  std::string text;
  bool space = false;
  for (const char *p = begin; p < end; ++p) {
    if (*p == '/' && p + 1 < end && p[1] == '/') { // a line comment inside the equation
      while (p < end && *p != '\n')
        ++p;
      space = true;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      space = true;
      continue;
    }
    if (space && !text.empty())
      text += ' ';
    space = false;
    text += *p;
  }
  if (!text.empty() && text.back() == ';')
    text.pop_back();
  return text;
}

unsigned equationLine(const model::Statement &stmt, const llvm::SourceMgr &sm) {
  if (!stmt.range.isValid())
    return 0;
  return sm.getLineAndColumn(stmt.range.Start).first;
}

std::string vectorText(const std::vector<int64_t> &v) {
  std::string text = "(";
  for (size_t i = 0; i < v.size(); ++i)
    text += (i ? ", " : "") + std::to_string(v[i]);
  return text + ")";
}

} // namespace polyc::driver
