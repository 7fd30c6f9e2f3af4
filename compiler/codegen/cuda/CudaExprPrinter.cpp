// The CUDA dialect of statement bodies (see CudaExprPrinter.h): group-parallel reductions, read-only
// loads, window reads and the stores of the three statement modes.
#include "compiler/codegen/cuda/CudaExprPrinter.h"

#include "compiler/codegen/IndexExprs.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <cassert>
#include <functional>

using namespace polyc;
using namespace polyc::codegen;

std::string CudaExprPrinter::mathFunction(ast::Builtin fn, ast::ElemType type) const {
  // std::abs/min/max are host functions; CUDA's overloads serve host and device code alike.
  if (type == ast::ElemType::I32) {
    switch (fn) {
    case ast::Builtin::Abs: return "abs";
    case ast::Builtin::Min: return "min";
    case ast::Builtin::Max: return "max";
    default: break;
    }
  }
  return ExprPrinter::mathFunction(fn, type);
}

std::string CudaExprPrinter::elementRef(const model::ArrayInfo &array, const std::string &storage,
                                        llvm::ArrayRef<std::string> indices) const {
  if (isRowsCellTakenAsOne(array))
    return literal(1, array.decl->elemType);
  if (flexible()) {
    auto it = windows.find(array.name);
    if (it != windows.end() && indices.size() == 2) {
      const CudaWindowRead &window = it->second;
      if (mode == CudaStatementMode::FlexibleValue)
        return window.view + "(" + indices[window.rowDim] + ", " + indices[window.colDim] + ")";
      // FlexibleTerms: the point is at the origin, so the indices are the offsets from it.
      termOffset_ = "(" + indices[window.rowDim] + ") * " + window.view + "Cols + (" + indices[window.colDim] + ")";
      return literal(1, array.decl->elemType);
    }
  }
  // An input is never written while a kernel runs: its reads may take the read-only data path. Staged
  // copies (another storage) live in shared memory and are read directly.
  if (array.decl && array.decl->kind == ast::ArrayKind::Input && storage == arrayRef(array))
    return "__ldg(&" + storage + "[" + elementIndex(array, indices) + "])";
  return ExprPrinter::elementRef(array, storage, indices);
}

// Whether a binding's bounds mention a variable of the same reduction (a triangular range), which
// rules out dealing out the flattened index space.
static bool isTriangular(const ast::Reduction &red) {
  std::vector<const ast::IndexVar *> vars;
  for (const ast::RangeBinding &binding : red.bindings)
    for (auto &var : binding.vars)
      vars.push_back(var.get());
  return llvm::any_of(red.bindings, [&](const ast::RangeBinding &binding) {
    return mentionsAny(*binding.lo, vars) || mentionsAny(*binding.hi, vars);
  });
}

static std::string opFunctor(ast::ReductionOp op, const std::string &type) {
  const char *name = op == ast::ReductionOp::Sum ? "SumOp" : op == ast::ReductionOp::Max ? "MaxOp" : "MinOp";
  return std::string("polyc::rt::cuda::") + name + "<" + type + ">()";
}

std::string CudaExprPrinter::printReduction(const ReductionParts &parts, CodeWriter &w) {
  if (mode == CudaStatementMode::ProductStore && parts.reduction == givenSum)
    return GivenSum;
  auto table = parts.nested ? termTables.end() : termTables.find(parts.reduction);
  if (mode == CudaStatementMode::FlexibleTerms)
    return table == termTables.end() ? parts.identity : printTermTable(parts, table->second, w);
  if (mode == CudaStatementMode::Rows && parts.reduction == rows.sum)
    return printSlidingSum(parts, w);
  if (mode == CudaStatementMode::Thread || mode == CudaStatementMode::ProductStore || parts.nested ||
      parts.loops.empty())
    return ExprPrinter::printReduction(parts, w);
  w.line(typeName(parts.type) + " " + parts.accumulator + " = " + parts.identity + ";");
  if (mode == CudaStatementMode::FlexibleValue && table != termTables.end())
    printTermLoop(parts, table->second, w);
  else
    printLaneLoops(parts, w);
  return combineLanes(parts, w);
}

// The lanes' share of the terms as loops over the reduction's variables.
void CudaExprPrinter::printLaneLoops(const ReductionParts &parts, CodeWriter &w) {
  const std::string &G = groupSize;
  const std::vector<ReductionLoop> &loops = parts.loops;
  auto body = [&](CodeWriter &bw) {
    if (!parts.condition.empty())
      bw.openBlock("if (" + parts.condition + ")");
    std::string value = parts.body(bw);
    bw.line(parts.update(value));
    if (!parts.condition.empty())
      bw.closeBlock();
  };
  const ReductionLoop &inner = loops.back();
  if (loops.size() == 1 || isTriangular(*parts.reduction)) {
    // One variable (or bounds that depend on each other): the lanes share the innermost loop.
    w.comment("The " + G + " lanes of the group take the terms in turn.");
    for (size_t k = 0; k + 1 < loops.size(); ++k)
      w.openBlock("for (" + indexType() + " " + loops[k].var + " = " + loops[k].lo + "; " + loops[k].var + " < " +
                  loops[k].hi + "; ++" + loops[k].var + ")");
    w.openBlock("for (" + indexType() + " " + inner.var + " = " + inner.lo + " + " + lane + "; " + inner.var +
                " < " + inner.hi + "; " + inner.var + " += " + G + ")");
    body(w);
    w.closeBlock();
    for (size_t k = 0; k + 1 < loops.size(); ++k)
      w.closeBlock();
  } else {
    // Independent ranges: the lanes take consecutive values of the innermost variable (neighbouring
    // addresses: coalesced loads, no shared-memory bank conflicts), and each lane runs the other
    // variables in order inside, unrolled so that several loads are in flight. (Dealing out the
    // flattened index space instead balances small windows better but measured slower on the H100
    // for large ones: docs/performance.md at 2c04002, CUDA.) When the innermost variable has at most half
    // as many values as the group has lanes, most lanes would idle (the MLP's loss over P x 1 outputs:
    // one lane summed all 32,561 cases, 1.7 ms an epoch): the lanes take the flattened index space in
    // turn.
    std::vector<std::string> extents;
    std::string total;
    for (const ReductionLoop &loop : loops) {
      // Parenthesised (a bound char - 1: fuzz seed 31000024) and never negative (an empty range).
      extents.push_back("polyc_max(0, (" + loop.hi + ") - (" + loop.lo + "))");
      total += (total.empty() ? "" : " * ") + extents.back();
    }
    w.openBlock("if (2 * " + extents.back() + " <= " + G + ")");
    w.comment("Most lanes without a value of " + inner.var + ": the lanes take the flattened terms in turn.");
    w.openBlock("for (" + indexType() + " polyc_flat = " + lane + "; polyc_flat < " + total +
                "; polyc_flat += " + G + ")");
    declareFlatReductionIndex(parts, extents, "polyc_flat", w, indexType());
    body(w);
    w.closeBlock();
    w.elseBlock();
    w.comment("The " + G + " lanes of the group take consecutive values of " + inner.var +
              "; each runs the other variables in order.");
    w.openBlock("for (" + indexType() + " " + inner.var + " = " + inner.lo + " + " + lane + "; " + inner.var +
                " < " + inner.hi + "; " + inner.var + " += " + G + ")");
    for (size_t k = 0; k + 1 < loops.size(); ++k) {
      if (k + 2 == loops.size())
        w.line("#pragma unroll 4");
      w.openBlock("for (" + indexType() + " " + loops[k].var + " = " + loops[k].lo + "; " + loops[k].var + " < " +
                  loops[k].hi + "; ++" + loops[k].var + ")");
    }
    body(w);
    for (size_t k = 0; k + 1 < loops.size(); ++k)
      w.closeBlock();
    w.closeBlock();
    w.closeBlock();
  }
}

std::string CudaExprPrinter::combineLanes(const ReductionParts &parts, CodeWriter &w) const {
  // Where all lanes of the flexible strip compute (points outside the domain too), its groups reduce
  // with full-warp shuffles.
  std::string reduce =
      mode == CudaStatementMode::FlexibleValue && convergedGroups ? "warpGroupReduce" : "reduceInGroup";
  w.line(parts.accumulator + " = polyc::rt::cuda::" + reduce + "<" + groupSize + ">(" + parts.accumulator + ", " +
         opFunctor(parts.reduction->op, typeName(parts.type)) + ");");
  return parts.accumulator;
}

// A point's G lanes take the table's terms in turn (every lane is busy whatever the window's shape): a
// lane's first terms from registers, then the rest of its share from the table (LaneTerms::forEachTerm).
void CudaExprPrinter::printTermLoop(const ReductionParts &parts, const CudaTermTable &table, CodeWriter &w) {
  const std::string type = typeName(parts.type);
  w.comment("The " + groupSize + " lanes of the group take the terms of table " + std::to_string(table.index) +
            " in turn (built once per block): the lane's first ones are in registers, the rest in the table.");
  w.openBlock(std::string(TermTablesParam) + "[" + std::to_string(table.index) + "].template forEachTerm<" +
              groupSize + ">(" + lane + ", " + table.view + ", [&](" + type + " polyc_coefficient, " + type +
              " polyc_cell)");
  w.line(parts.update("polyc_coefficient * polyc_cell"));
  w.closeBlock(");");
}

// Warp 0 walks the reduction's flattened index space 32 terms at a time (the innermost variable
// fastest, as printTermLoop's lanes then read neighbouring cells) and appends the terms the `where`
// condition keeps. Returns the identity: the terms function computes no value.
std::string CudaExprPrinter::printTermTable(const ReductionParts &parts, const CudaTermTable &table,
                                            CodeWriter &w) {
  const std::string &acc = parts.accumulator;
  const std::string type = typeName(parts.type);
  std::vector<std::string> extents;
  for (const ReductionLoop &loop : parts.loops)
    extents.push_back("int(polyc_max(0, (" + loop.hi + ") - (" + loop.lo + ")))");
  w.comment("Table " + std::to_string(table.index) + ": the terms of " + acc + ".");
  w.openBlock("");
  w.line("polyc::rt::cuda::TermAppender<" + type + "> polyc_appender{" + TermTablesParam + "[" +
         std::to_string(table.index) + "]};");
  w.line("const int polyc_count = " + llvm::join(extents, " * ") + ";");
  w.openBlock("for (int polyc_base = 0; polyc_base < polyc_count; polyc_base += polyc::rt::cuda::WarpSize)");
  w.line("const int polyc_term = polyc_base + int(threadIdx.x);");
  w.line("bool polyc_keep = false;");
  w.line(type + " polyc_coefficient = " + literal(0, parts.type) + ";");
  w.line("int polyc_offset = 0;");
  w.openBlock("if (polyc_term < polyc_count)");
  printTermCandidate(parts, extents, "polyc_term", "true", w);
  w.closeBlock();
  w.line("polyc_appender.append(polyc_keep, polyc_coefficient, polyc_offset);");
  w.closeBlock();
  w.line("polyc_appender.finish();");
  w.closeBlock();
  return parts.identity;
}

void CudaExprPrinter::printRowsStatement(const model::Statement &statement, CodeWriter &w) {
  assert(mode == CudaStatementMode::Rows && !rowsLoopOpen_);
  printStatement(statement, w);
  assert(rowsLoopOpen_ && "a Rows statement's value is its sliding sum");
  w.closeBlock();
  rowsLoopOpen_ = false;
}

// The sum's other variables as loops in order; inside, one run of the sliding variable: the ring's first
// cells (the first step's cells for instances 1 .. polyc_R - 1), then a step a value, with its
// coefficient (the body with the cell taken as 1, 0 where the `where` condition fails) and the cell it
// reads for instance 0. Then opens the loop over the instances, inside which the statement stores
// (closed by printRowsStatement); its value there is the instance's sum.
std::string CudaExprPrinter::printSlidingSum(const ReductionParts &parts, CodeWriter &w) {
  const std::string type = typeName(parts.type);
  const std::string &acc = parts.accumulator;
  // parts.loops has the sum's variables in binding order.
  std::vector<const ast::IndexVar *> vars;
  for (const ast::RangeBinding &binding : rows.sum->bindings)
    for (const auto &var : binding.vars)
      vars.push_back(var.get());
  const size_t slide = size_t(llvm::find(vars, rows.window.variable) - vars.begin());
  assert(slide < parts.loops.size() && "the sliding variable is one of the sum's");
  const ReductionLoop &s = parts.loops[slide];
  w.comment("The thread's " + std::string(RowsParam) + " instances along " + rows.dim +
            " at once: a step of " + s.var +
            " reads one cell for all of them (polyc::rt::cuda::SlidingSum).");
  w.line("polyc::rt::cuda::SlidingSum<" + type + ", " + RowsParam + "> " + acc + ";");
  for (size_t k = 0; k < parts.loops.size(); ++k)
    if (k != slide)
      w.openBlock("for (int " + parts.loops[k].var + " = " + parts.loops[k].lo + "; " + parts.loops[k].var +
                  " < " + parts.loops[k].hi + "; ++" + parts.loops[k].var + ")");
  auto cell = [&](CodeWriter &cw) {
    std::string value = readValue(*rows.window.read, cw);
    ast::ElemType cellType = rows.window.read->array->elemType;
    return cellType == parts.type ? value : convert(value, parts.type);
  };
  const std::string zero = literal(0, parts.type);
  w.openBlock(acc + ".start([&](int polyc_q)");
  w.line("[[maybe_unused]] const int " + rows.dim + " = " + RowsFirst + " + polyc_q;");
  w.line("[[maybe_unused]] const int " + s.var + " = " + s.lo + ";");
  if (rowsInterior)
    w.line("return " + cell(w) + ";");
  else
    w.line("return polyc_q < " + std::string(RowsCount) + " ? " + cell(w) + " : " + zero + ";");
  w.closeBlock(");");
  w.openBlock(acc + ".template slide<" + RowsRun + ">(int(polyc_max(0, (" + s.hi + ") - (" + s.lo +
              "))), [&](int polyc_step, " + type + " &polyc_coefficient, " + type + " &polyc_cell)");
  w.line("[[maybe_unused]] const int " + rows.dim + " = " + RowsFirst + ";");
  w.line("[[maybe_unused]] const int " + s.var + " = " + s.lo + " + polyc_step;");
  rowsCoefficient_ = true;
  std::string coefficient = parts.body(w);
  rowsCoefficient_ = false;
  if (!parts.condition.empty())
    coefficient = "(" + parts.condition + ") ? " + coefficient + " : " + zero;
  w.line("polyc_coefficient = " + coefficient + ";");
  w.line("polyc_cell = " + cell(w) + ";");
  w.closeBlock(");");
  for (size_t k = 0; k + 1 < parts.loops.size(); ++k)
    w.closeBlock();
  // Unrolled over polyc_R, so that each store names its sum's register; a loop to polyc_rows indexes the
  // sums at run time (docs/performance.md at 2c04002, CUDA, session 15: the FIR kernel 25% faster at M = 3).
  w.line("#pragma unroll");
  w.openBlock("for (int polyc_row = 0; polyc_row < " + std::string(RowsParam) + "; ++polyc_row)");
  if (!rowsInterior)
    w.line("if (polyc_row >= " + std::string(RowsCount) + ") break;");
  w.line("const int " + rows.dim + " = " + RowsFirst + " + polyc_row;");
  rowsLoopOpen_ = true;
  return acc + ".sum[polyc_row]";
}

void CudaExprPrinter::printStore(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices,
                                 const std::string &target, const std::string &op, const std::string &rhs,
                                 CodeWriter &w) {
  switch (mode) {
  case CudaStatementMode::Thread:
  case CudaStatementMode::Rows:
  case CudaStatementMode::ProductStore:
    return ExprPrinter::printStore(array, indices, target, op, rhs, w);
  case CudaStatementMode::Group:
    w.line("if (" + lane + " == 0)");
    w.indent();
    printStoreLine(target, op, rhs, w);
    w.dedent();
    return;
  case CudaStatementMode::FlexibleValue:
    w.line("return " + rhs + ";");
    return;
  case CudaStatementMode::FlexibleTerms:
    return; // the tables are built; the value is the strip's to compute
  }
}
