// Helpers shared by the views of polyc explain: equations as written, names of dependence kinds
// and classes, vectors as text.
#include "ExplainPrinters.h"

#include "dsl/Unparse.h"

#include "llvm/Support/SourceMgr.h"

namespace polyc::driver {

// The source between two points with whitespace collapsed and line comments dropped.
static std::string sourceText(const char *begin, const char *end) {
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
  return text;
}

static std::string rangeText(llvm::SMRange range) {
  return range.isValid() ? sourceText(range.Start.getPointer(), range.End.getPointer()) : std::string();
}

// The terms of a top-level chain of `+`, leftmost first.
static void addTerms(const ast::Expr &e, std::vector<const ast::Expr *> &terms) {
  if (auto *b = llvm::dyn_cast<ast::Binary>(&e); b && b->op == ast::BinaryOp::Add) {
    addTerms(*b->lhs, terms);
    terms.push_back(b->rhs.get());
    return;
  }
  terms.push_back(&e);
}

// An equation split by HoistInputTerms no longer computes what its source says: both halves are shown
// as they now are, from the source of the terms each one holds.
static std::string hoistedText(const ast::Equation &eq) {
  std::string text;
  if (eq.hoistedFrom) {
    text = eq.target + "[";
    for (size_t d = 0; d < eq.indexVars.size(); ++d)
      text += (d ? ", " : "") + eq.indexVars[d]->name;
    text += "] =";
  } else {
    text = rangeText(eq.lhsRange) + " =";
  }
  std::vector<const ast::Expr *> terms;
  addTerms(*eq.rhs, terms);
  for (size_t t = 0; t < terms.size(); ++t) {
    std::string term;
    auto *read = llvm::dyn_cast<ast::ArrayRead>(terms[t]);
    if (read && eq.hoistedInto && read->array == eq.hoistedInto->array) {
      term = read->name + "[";
      for (size_t d = 0; d < eq.indexVars.size(); ++d)
        term += (d ? ", " : "") + eq.indexVars[d]->name;
      term += "]";
    } else {
      term = rangeText(terms[t]->range);
    }
    text += (t ? " + " : " ") + term;
  }
  if (eq.hoistedFrom)
    text += " (hoisted from " + eq.hoistedFrom->target + ")";
  return text;
}

// The copy SnapshotUpdates adds before an update that cannot run in place: A_old[i] = A[i].
static std::string snapshotText(const ast::Equation &eq) {
  std::string indices;
  for (size_t d = 0; d < eq.indexVars.size(); ++d)
    indices += (d ? ", " : "") + eq.indexVars[d]->name;
  const std::string &array = eq.snapshotFor->target;
  return eq.target + "[" + indices + "] = " + array + "[" + indices + "] (the old values of " + array +
         " that its update reads)";
}

// An equation that FactorSums or PointTerms changed, or added, as it now is.
static std::string rewrittenText(const ast::Equation &eq) {
  std::string text = eq.target + "[";
  for (size_t d = 0; d < eq.lhsIndices.size(); ++d)
    text += (d ? ", " : "") + dsl::unparse(*eq.lhsIndices[d]);
  text += "] = " + dsl::unparse(*eq.rhs);
  if (eq.where)
    text += " where " + dsl::unparse(*eq.where);
  return text;
}

std::string equationText(const model::Statement &stmt) {
  if (stmt.equation && !stmt.equation->rewrites.empty())
    return rewrittenText(*stmt.equation);
  if (!stmt.range.isValid())
    return stmt.write.array;
  if (stmt.equation && (stmt.equation->hoistedFrom || stmt.equation->hoistedInto))
    return hoistedText(*stmt.equation);
  if (stmt.equation && stmt.equation->snapshotFor)
    return snapshotText(*stmt.equation);
  std::string text = sourceText(stmt.range.Start.getPointer(), stmt.range.End.getPointer());
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
