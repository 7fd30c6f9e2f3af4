// The OpenCL target (see CodeGenOpenCL.h): prints the schedule's isl AST twice over, host loops into the
// host program and each allocated band into a kernel of the .cl file, with the OpenCL C dialect of the
// expression printer and the runtime's device library (reductions, flexible wavefront).
#include "compiler/codegen/opencl/CodeGenOpenCL.h"

#include "compiler/codegen/ExprPrinter.h"
#include "compiler/codegen/IndexExprs.h"
#include "compiler/codegen/IslAstPrinter.h"
#include "compiler/codegen/IslCalls.h"
#include "compiler/codegen/MpiCalls.h"
#include "compiler/codegen/ProgramInterface.h"
#include "compiler/codegen/RoundTileKernel.h"
#include "compiler/codegen/TermTables.h"
#include "compiler/model/IslUtil.h"

#include "polyc/opencl/DeviceLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include <algorithm>
#include <cassert>
#include <functional>
#include <optional>
#include <set>

using namespace polyc;
using namespace polyc::codegen;
using allocate::AllocationKind;

namespace {

// Who computes one statement instance in a kernel: one work-item; a whole work-group (its reductions
// shared by all work-items); or a run of `lanes` work-items of a flexible wavefront's strip. StripTerms
// prints no point: the whole work-group builds the strip statement's term tables (TermTables.h).
enum class PointMode { Item, Group, Strip, StripTerms };

// An array a flexible wavefront's point reads from a ring of recent rows in local memory (its window),
// through `origin`: a pointer to the point's own cell, with rows `ringCols` elements apart.
struct WindowView {
  unsigned rowDim = 0, colDim = 1;
  std::string row, col;       // the point's row and column (C names of the statement's dimensions)
  std::string origin, ringCols;
  std::string ringRows;       // for the recurrence's second copy of a row
  bool holdsBoundary = false; // the ring holds the boundary's zeros: reads need no bounds test
  bool recurrence = false;    // the statement's own array: its stores go to the ring too
};

// A window sum of a flexible wavefront computed from a term table (see the device library): table
// `index` in local memory (polyc_terms<index>), the lane's first terms in private arrays.
struct TermTableView {
  unsigned index = 0;
  std::string origin;                      // the window's View origin (WindowView::origin)
  ast::ElemType type = ast::ElemType::F32; // the coefficients' (the statement's) type: polyc_term_<type>
};

bool isWord(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `name` occurs in `text` as a whole identifier.
bool mentions(const std::string &text, const std::string &name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    bool before = at > 0 && isWord(text[at - 1]);
    bool after = at + name.size() < text.size() && isWord(text[at + name.size()]);
    if (!before && !after)
      return true;
  }
  return false;
}

std::string suffix(ast::ElemType type) {
  switch (type) {
  case ast::ElemType::F32: return "f32";
  case ast::ElemType::F64: return "f64";
  case ast::ElemType::I32: return "i32";
  }
  return "f32";
}

const char *clScalar(ast::ElemType type) {
  return type == ast::ElemType::F32 ? "cl_float" : type == ast::ElemType::F64 ? "cl_double" : "cl_int";
}

// ---------------------------------------------------------------------------------------------
// The OpenCL C dialect

class OpenCLExprPrinter : public ExprPrinter {
public:
  OpenCLExprPrinter(const model::Model &model, const schedule::Schedule &schedule) : ExprPrinter(model, schedule) {}

  // How the statement about to be printed is computed (set by the kernel printer).
  PointMode mode = PointMode::Item;
  std::string lane = "polyc_lid", lanes = "polyc_group_size";
  // The right-hand side is a sum of sum-reductions: every lane adds its share of all of them and one
  // group reduction of the whole value follows (half the barriers of one reduction per sum).
  bool deferSum = false;
  std::string storeGuard; // the condition under which this work-item stores, empty: always
  std::map<std::string, WindowView> windows; // by array name
  std::set<ast::ElemType> scratchTypes; // the local scratch arrays the printed code uses
  std::map<const ast::Reduction *, TermTableView> termTables; // the strip statement's tabled sums
  // The strip's lanes combine once per step, and a barrier (the step's publication) comes before the
  // next combination: the reduction may leave out its trailing barrier.
  bool unsyncedCombine = false;

  std::string typeName(ast::ElemType type) const override {
    switch (type) {
    case ast::ElemType::F32: return "float";
    case ast::ElemType::F64: return "double";
    case ast::ElemType::I32: return "int";
    }
    return "float";
  }
  // Kernels index with 32-bit integers (64-bit integer arithmetic is emulated on GPUs); the host
  // checks that every array fits (polyc::rt::ocl::checkIndexable).
  std::string indexType() const override { return "int"; }
  bool printsPackages() const override { return mode == PointMode::Item && !roundTile; }
  std::string changedStore(const std::string &) const override { return "*polyc_changed = 1"; }
  // A privatised scatter's array (OpenCLPrinter): its stores go to the work-group's copy in local memory.
  std::string privateArray;
  static constexpr const char *PrivateCopy = "polyc_private";
  std::string storeRef(const model::ArrayInfo &array) const override {
    return !privateArray.empty() && array.name == privateArray ? std::string(PrivateCopy) : arrayRef(array);
  }
  void printAtomicUpdate(const std::string &target, const std::string &op, const std::string &rhs,
                         ast::ElemType type, CodeWriter &w) const override {
    const bool add = op == " += ";
    const std::string space = privateArray.empty() ? "global" : "local";
    if (type == ast::ElemType::I32)
      return w.line(std::string(add ? "atomic_add" : "atomic_sub") + "((volatile __" + space + " int *)&" +
                    target + ", " + rhs + ");");
    w.line("polyc_atomic_add_" + space + "_" + (type == ast::ElemType::F64 ? "f64" : "f32") + "(&" + target +
           ", " + (add ? rhs : "-(" + rhs + ")") + ");");
  }
  std::string mathFunction(ast::Builtin fn, ast::ElemType type) const override {
    if (type == ast::ElemType::I32) {
      switch (fn) {
      case ast::Builtin::Abs: return "polyc_abs_i32"; // OpenCL C's abs(int) is unsigned
      case ast::Builtin::Min: return "min";
      case ast::Builtin::Max: return "max";
      default: return "";
      }
    }
    // OpenCL C's math functions are overloaded for float and double.
    switch (fn) {
    case ast::Builtin::Exp: return "exp";
    case ast::Builtin::Log: return "log";
    case ast::Builtin::Sqrt: return "sqrt";
    case ast::Builtin::Abs: return "fabs";
    case ast::Builtin::Tanh: return "tanh";
    case ast::Builtin::Min: return "fmin";
    case ast::Builtin::Max: return "fmax";
    case ast::Builtin::Pow: return "pow";
    case ast::Builtin::Select: return "";
    }
    return "";
  }
  std::string fmodFunction(ast::ElemType) const override { return "fmod"; }
  std::string floorFunction(ast::ElemType) const override { return "floor"; }
  std::string lowest(ast::ElemType type) const override {
    return type == ast::ElemType::F32 ? "-FLT_MAX" : type == ast::ElemType::F64 ? "-DBL_MAX" : "INT_MIN";
  }
  std::string highest(ast::ElemType type) const override {
    return type == ast::ElemType::F32 ? "FLT_MAX" : type == ast::ElemType::F64 ? "DBL_MAX" : "INT_MAX";
  }
  std::string convert(const std::string &expr, ast::ElemType to) const override {
    return "(" + typeName(to) + ")(" + expr + ")";
  }
  std::string indexCast(const std::string &expr) const override { return "(int)(" + expr + ")"; }

  std::string printReduction(const ReductionParts &parts, CodeWriter &w) override;
  std::string printFlatReduction(const ReductionParts &parts, CodeWriter &w);
  std::string combineLanes(const ReductionParts &parts, CodeWriter &w);
  void printTermLoop(const ReductionParts &parts, const TermTableView &table, CodeWriter &w);
  std::string printTermTable(const ReductionParts &parts, const TermTableView &table, CodeWriter &w);
  // The group reduction a run of lanes calls, e.g. polyc_group_sum_f32(_unsynced).
  std::string groupReduction(const char *op, ast::ElemType type) const {
    return std::string("polyc_group_") + op + "_" + suffix(type) + (unsyncedCombine ? "_unsynced" : "");
  }
  std::string elementRef(const model::ArrayInfo &array, const std::string &storage,
                         llvm::ArrayRef<std::string> indices) const override;
  void printStore(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices, const std::string &target,
                  const std::string &op, const std::string &rhs, CodeWriter &w) override;

  bool storageHoldsBoundary(const model::ArrayInfo &array) const override {
    auto it = windows.find(array.name);
    return it != windows.end() && it->second.holdsBoundary;
  }

  // The element at (row, col) of a window, relative to the point's own cell.
  std::string windowElement(const WindowView &view, const std::string &row, const std::string &col) const {
    return view.origin + "[" + offsetText(row, view.row) + " * " + view.ringCols + " + " + offsetText(col, view.col) +
           "]";
  }

private:
  // `index - var` as C; "(-r1)" rather than "((i - r1) - i)" when the index is `var` plus or minus
  // terms of additive precedence.
  static std::string offsetText(const std::string &index, const std::string &var) {
    if (index == var)
      return "0";
    if (index.size() > var.size() + 3 && index.compare(0, var.size() + 1, var + " ") == 0 &&
        index.find_first_of("?:<>=&|!", var.size()) == std::string::npos) {
      std::string rest = index.substr(var.size() + 1);
      if (rest.compare(0, 2, "- ") == 0)
        return "(-" + rest.substr(2) + ")";
      if (rest.compare(0, 2, "+ ") == 0)
        return "(" + rest.substr(2) + ")";
    }
    return "((" + index + ") - " + var + ")";
  }
};

// A work-group per point (the fixed wavefront): the group's lanes deal out the flattened index space,
// which keeps a group of 32 or 64 work-items (pointGroupSize) busy on small windows too.
// Adds up (or takes the max or min of) the lanes' shares of a reduction through local memory, unless the
// caller combines them itself (deferSum); returns the accumulator.
std::string OpenCLExprPrinter::combineLanes(const ReductionParts &parts, CodeWriter &w) {
  const std::string &acc = parts.accumulator;
  if (deferSum)
    return acc;
  scratchTypes.insert(parts.type);
  const char *op = parts.reduction->op == ast::ReductionOp::Sum   ? "sum"
                   : parts.reduction->op == ast::ReductionOp::Max ? "max"
                                                                  : "min";
  w.line(acc + " = " + groupReduction(op, parts.type) + "(" + acc + ", " + lanes + ", polyc_scratch_" +
         suffix(parts.type) + ");");
  return acc;
}

std::string OpenCLExprPrinter::printFlatReduction(const ReductionParts &parts, CodeWriter &w) {
  // The terms are shared by the lanes: lane l takes terms l, l + lanes, l + 2 * lanes, ... of the
  // reduction's index space flattened in row-major order.
  const std::string acc = parts.accumulator;
  w.line(typeName(parts.type) + " " + acc + " = " + parts.identity + ";");
  const size_t n = parts.loops.size();
  // Flattening needs the ranges independent of each other's variables.
  bool independent = true;
  for (size_t k = 0; k < n; ++k)
    for (size_t e = 0; e < k; ++e)
      independent = independent && !mentions(parts.loops[k].lo, parts.loops[e].var) &&
                    !mentions(parts.loops[k].hi, parts.loops[e].var);
  w.comment(deferSum ? "This lane's share of the terms (the group adds the lanes' shares below)."
                     : "This lane's share of the terms, then the lanes combine theirs.");
  w.openBlock("");
  auto body = [&]() {
    if (!parts.condition.empty())
      w.openBlock("if (" + parts.condition + ")");
    std::string value = parts.body(w);
    w.line(parts.update(value));
    if (!parts.condition.empty())
      w.closeBlock();
  };
  if (n == 1 || !independent) {
    const ReductionLoop &outer = parts.loops[0];
    w.openBlock("for (int " + outer.var + " = " + outer.lo + " + " + lane + "; " + outer.var + " < " + outer.hi +
                "; " + outer.var + " += " + lanes + ")");
    for (size_t k = 1; k < n; ++k)
      w.openBlock("for (int " + parts.loops[k].var + " = " + parts.loops[k].lo + "; " + parts.loops[k].var + " < " +
                  parts.loops[k].hi + "; ++" + parts.loops[k].var + ")");
    body();
    for (size_t k = 0; k < n; ++k)
      w.closeBlock();
  } else {
    // Mixed-radix digits of the flat index, advanced by the digits of `lanes` (no division per term).
    std::string count;
    for (size_t k = 0; k < n; ++k) {
      // In int: a bound that names a long constant would leave max() without one overload to take.
      w.line("const int " + acc + "_n" + std::to_string(k) + " = max((int)(" + parts.loops[k].hi + " - (" +
             parts.loops[k].lo + ")), 0);");
      count += (k ? " * " : "") + acc + "_n" + std::to_string(k);
    }
    w.line("int " + acc + "_rest = " + lane + ", " + acc + "_stride = " + lanes + ";");
    for (size_t k = n; k-- > 0;) {
      std::string nk = acc + "_n" + std::to_string(k), d = acc + "_d" + std::to_string(k),
                  s = acc + "_s" + std::to_string(k);
      if (k == 0) {
        w.line("int " + d + " = " + acc + "_rest;");
        w.line("const int " + s + " = " + acc + "_stride;");
      } else {
        w.line("int " + d + " = " + nk + " ? " + acc + "_rest % " + nk + " : 0;");
        w.line("const int " + s + " = " + nk + " ? " + acc + "_stride % " + nk + " : 0;");
        w.line(acc + "_rest = " + nk + " ? " + acc + "_rest / " + nk + " : 0;");
        w.line(acc + "_stride = " + nk + " ? " + acc + "_stride / " + nk + " : 0;");
      }
    }
    w.openBlock("for (int " + acc + "_k = " + lane + "; " + acc + "_k < " + count + "; " + acc + "_k += " + lanes +
                ")");
    for (size_t k = 0; k < n; ++k)
      w.line("const int " + parts.loops[k].var + " = " + parts.loops[k].lo + " + " + acc + "_d" + std::to_string(k) +
             ";");
    body();
    for (size_t k = n; k-- > 1;) {
      std::string d = acc + "_d" + std::to_string(k);
      w.line(d + " += " + acc + "_s" + std::to_string(k) + ";");
      w.openBlock("if (" + d + " >= " + acc + "_n" + std::to_string(k) + ")");
      w.line(d + " -= " + acc + "_n" + std::to_string(k) + ";");
      w.line("++" + acc + "_d" + std::to_string(k - 1) + ";");
      w.closeBlock();
    }
    w.line(acc + "_d0 += " + acc + "_s0;");
    w.closeBlock();
  }
  w.closeBlock();
  return combineLanes(parts, w);
}

// The number of terms of a reduction whose ranges are integer constants, else nullopt.
static std::optional<int64_t> constantTermCount(const ReductionParts &parts) {
  int64_t count = 1;
  for (const ReductionLoop &loop : parts.loops) {
    int64_t lo = 0, hi = 0;
    if (llvm::StringRef(loop.lo).getAsInteger(10, lo) || llvm::StringRef(loop.hi).getAsInteger(10, hi))
      return std::nullopt;
    count *= std::max<int64_t>(hi - lo, 0);
  }
  return count;
}

std::string OpenCLExprPrinter::printReduction(const ReductionParts &parts, CodeWriter &w) {
  auto table = parts.nested ? termTables.end() : termTables.find(parts.reduction);
  if (mode == PointMode::StripTerms)
    return table == termTables.end() ? parts.identity : printTermTable(parts, table->second, w);
  // A group's point with a reduction of a few constant terms beside its long one (`sum(k in 1..1) 1`):
  // every lane computes it whole, with no barrier. Each group reduction is a barrier tree, and a kernel
  // of eight made PoCL take 28 s to compile it (fuzz seed 51001607).
  constexpr int64_t kFewTerms = 32; // a warp's worth: fewer cost each lane less than a barrier tree
  std::optional<int64_t> terms = constantTermCount(parts);
  bool everyLaneWhole = mode == PointMode::Group && !deferSum && terms && *terms < kFewTerms;
  if (mode == PointMode::Item || parts.nested || parts.loops.empty() || everyLaneWhole)
    return ExprPrinter::printReduction(parts, w);
  if (mode == PointMode::Group)
    return printFlatReduction(parts, w);
  // A strip's point: a few lanes (at most a warp) over a term table or the innermost variable.
  const std::string acc = parts.accumulator;
  w.line(typeName(parts.type) + " " + acc + " = " + parts.identity + ";");
  if (table != termTables.end()) {
    printTermLoop(parts, table->second, w);
    return combineLanes(parts, w);
  }
  const size_t n = parts.loops.size();
  // Whether a range depends on another variable of the reduction (a triangular range).
  bool independent = true;
  for (size_t k = 0; k < n; ++k)
    for (size_t e = 0; e < n; ++e)
      independent = independent && (e == k || (!mentions(parts.loops[k].lo, parts.loops[e].var) &&
                                                !mentions(parts.loops[k].hi, parts.loops[e].var)));
  auto body = [&]() {
    if (!parts.condition.empty())
      w.openBlock("if (" + parts.condition + ")");
    std::string value = parts.body(w);
    w.line(parts.update(value));
    if (!parts.condition.empty())
      w.closeBlock();
  };
  const ReductionLoop &inner = parts.loops.back();
  auto loopHeader = [&](const ReductionLoop &loop) {
    return "for (int " + loop.var + " = " + loop.lo + "; " + loop.var + " < " + loop.hi + "; ++" + loop.var + ")";
  };
  const std::string innerHeader = "for (int " + inner.var + " = " + inner.lo + " + " + lane + "; " + inner.var +
                                  " < " + inner.hi + "; " + inner.var + " += " + lanes + ")";
  if (n == 1 || !independent) {
    // One variable (or ranges that depend on each other): the lanes share the innermost loop.
    w.comment("The lanes of the point take the terms of " + inner.var + " in turn" +
              (deferSum ? " (the group adds the lanes' shares below)." : "."));
    for (size_t k = 0; k + 1 < n; ++k)
      w.openBlock(loopHeader(parts.loops[k]));
    w.openBlock(innerHeader);
    body();
    w.closeBlock();
    for (size_t k = 0; k + 1 < n; ++k)
      w.closeBlock();
  } else {
    // Independent ranges: the lanes take consecutive values of the innermost variable (neighbouring
    // local-memory cells: no bank conflicts) and each runs the other variables in order inside,
    // unrolled so that several reads are in flight. (Dealing out the flattened index space instead,
    // with a carry per term, measured 3x slower on the CUDA target at M=31.)
    w.comment("The lanes of the point take consecutive values of " + inner.var + "; each runs the other variables" +
              " in order" + (deferSum ? " (the group adds the lanes' shares below)." : "."));
    w.openBlock(innerHeader);
    for (size_t k = 0; k + 1 < n; ++k) {
      if (k + 2 == n)
        w.line("#pragma unroll 4");
      w.openBlock(loopHeader(parts.loops[k]));
    }
    body();
    for (size_t k = 0; k + 1 < n; ++k)
      w.closeBlock();
    w.closeBlock();
  }
  return combineLanes(parts, w);
}

std::string OpenCLExprPrinter::elementRef(const model::ArrayInfo &array, const std::string &storage,
                                          llvm::ArrayRef<std::string> indices) const {
  auto it = windows.find(array.name);
  if (it != windows.end() && storage == arrayRef(array) && indices.size() == 2) {
    const WindowView &view = it->second;
    if (mode == PointMode::StripTerms) {
      // A table's term: the coefficient alone, the cell's offset recorded for the table.
      termOffset_ = offsetText(indices[view.rowDim], view.row) + " * " + view.ringCols + " + " +
                    offsetText(indices[view.colDim], view.col);
      return literal(1, array.decl->elemType);
    }
    return windowElement(view, indices[view.rowDim], indices[view.colDim]);
  }
  return ExprPrinter::elementRef(array, storage, indices);
}

// The lanes of a point take the table's terms in turn: lane l terms l, l + lanes, ...; the first
// POLYC_HELD_TERMS of them from the private arrays loaded after the table was built.
void OpenCLExprPrinter::printTermLoop(const ReductionParts &parts, const TermTableView &table, CodeWriter &w) {
  const std::string t = "polyc_terms" + std::to_string(table.index);
  w.comment("The lanes of the point take the terms of table " + std::to_string(table.index) +
            " in turn: the lane's first ones are in registers, the rest in the table.");
  w.line("#pragma unroll");
  w.openBlock("for (int polyc_k = 0; polyc_k < POLYC_HELD_TERMS; ++polyc_k)");
  w.openBlock("if (polyc_k < " + t + "_held)");
  w.line(parts.update(t + "_coefficient[polyc_k] * " + table.origin + "[" + t + "_offset[polyc_k]]"));
  w.closeBlock();
  w.closeBlock();
  w.line("#pragma unroll 4");
  w.openBlock("for (int polyc_t = " + lane + " + POLYC_HELD_TERMS * " + lanes + "; polyc_t < " + t +
              "_size; polyc_t += " + lanes + ")");
  w.line("const polyc_term_" + suffix(table.type) + " polyc_term = " + t + "[polyc_t];");
  w.line(parts.update("polyc_term.coefficient * " + table.origin + "[polyc_term.offset]"));
  w.closeBlock();
}

// The work-group walks the reduction's flattened index space (the innermost variable fastest, so that
// consecutive lanes read neighbouring cells) a group's size of candidates at a time, and appends the
// terms the `where` condition keeps, in order. Returns the identity: no value is computed here.
std::string OpenCLExprPrinter::printTermTable(const ReductionParts &parts, const TermTableView &table,
                                              CodeWriter &w) {
  const std::string t = "polyc_terms" + std::to_string(table.index);
  const std::string type = typeName(table.type);
  std::vector<std::string> extents;
  for (const ReductionLoop &loop : parts.loops)
    extents.push_back("max(0, (" + loop.hi + ") - (" + loop.lo + "))");
  w.comment("Table " + std::to_string(table.index) + ": the terms of " + parts.accumulator + ".");
  w.openBlock("");
  w.line("const int polyc_candidates = " + llvm::join(extents, " * ") + ";");
  w.line("int polyc_count = 0;");
  w.openBlock("for (int polyc_base = 0; polyc_base < polyc_candidates; polyc_base += polyc_group_size)");
  w.line("const int polyc_index = polyc_base + polyc_lid;");
  w.line("int polyc_keep = 0, polyc_offset = 0;");
  w.line(type + " polyc_coefficient = " + literal(0, table.type) + ";");
  w.openBlock("if (polyc_index < polyc_candidates)");
  printTermCandidate(parts, extents, "polyc_index", "1", w);
  w.closeBlock();
  w.line("int polyc_kept;");
  w.line("const int polyc_slot = polyc_count + polyc_wg_count_before(polyc_keep, polyc_scratch_i32, &polyc_kept);");
  w.openBlock("if (polyc_keep)");
  w.line(t + "[polyc_slot].coefficient = polyc_coefficient;");
  w.line(t + "[polyc_slot].offset = polyc_offset;");
  w.closeBlock();
  w.line("polyc_count += polyc_kept;");
  w.closeBlock();
  w.line(t + "_size = polyc_count;");
  w.closeBlock();
  return parts.identity;
}

void OpenCLExprPrinter::printStore(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices,
                                   const std::string &target, const std::string &op, const std::string &rhs,
                                   CodeWriter &w) {
  if (mode == PointMode::StripTerms)
    return; // the tables are built; the points are computed by the steps
  if (roundTile)
    return ExprPrinter::printStore(array, indices, target, op, rhs, w);
  std::string value = rhs;
  ast::ElemType type = array.decl->elemType;
  if (mode != PointMode::Item && deferSum) {
    scratchTypes.insert(type);
    w.line("const " + typeName(type) + " polyc_value = " + groupReduction("sum", type) + "(" + rhs + ", " + lanes +
           ", polyc_scratch_" + suffix(type) + ");");
    value = "polyc_value";
  }
  if (!storeGuard.empty())
    w.openBlock("if (" + storeGuard + ")");
  auto it = windows.find(array.name);
  const WindowView *ring = it != windows.end() && it->second.recurrence && indices.size() == 2 ? &it->second : nullptr;
  // The ring holds every row twice (see the kernel): the point's cell and the one ringRows rows before.
  auto ringStores = [&](const std::string &v) {
    std::string cell = windowElement(*ring, indices[ring->rowDim], indices[ring->colDim]);
    std::string twin = ring->origin + "[" + "-" + ring->ringRows + " * " + ring->ringCols + "]";
    if (cell != ring->origin + "[0 * " + ring->ringCols + " + 0]") {
      // Not the point's own cell: address the other copy from the cell itself.
      twin = cell.substr(0, cell.size() - 1) + " - " + ring->ringRows + " * " + ring->ringCols + "]";
    } else {
      cell = ring->origin + "[0]";
    }
    w.line(cell + " = " + v + ";");
    w.line(twin + " = " + v + ";");
  };
  if (ring && op != " = ") {
    // An update: the new value is the old one changed, and the ring gets it.
    printStoreLine(target, op, value, w);
    ringStores(target);
  } else {
    if (ring && value != "polyc_value") {
      // Computed once, stored three times.
      w.line("const " + typeName(type) + " polyc_value = " + value + ";");
      value = "polyc_value";
    }
    if (ring)
      ringStores(value);
    printStoreLine(target, op, value, w);
  }
  if (!storeGuard.empty())
    w.closeBlock();
}

// Whether `e` is a sum of sum-reductions and nothing else (the IIR filter's right-hand side).
bool isSumOfSums(const ast::Expr &e) {
  if (auto *r = llvm::dyn_cast<ast::Reduction>(&e))
    return r->op == ast::ReductionOp::Sum;
  if (auto *b = llvm::dyn_cast<ast::Binary>(&e))
    return b->op == ast::BinaryOp::Add && isSumOfSums(*b->lhs) && isSumOfSums(*b->rhs);
  return false;
}

void collectReductions(const ast::Expr &e, std::vector<const ast::Reduction *> &out) {
  if (auto *r = llvm::dyn_cast<ast::Reduction>(&e)) {
    out.push_back(r);
    return; // nested ones are computed inside, per term
  }
  if (auto *u = llvm::dyn_cast<ast::Unary>(&e))
    return collectReductions(*u->operand, out);
  if (auto *b = llvm::dyn_cast<ast::Binary>(&e)) {
    collectReductions(*b->lhs, out);
    return collectReductions(*b->rhs, out);
  }
  if (auto *c = llvm::dyn_cast<ast::Call>(&e))
    for (auto &arg : c->args)
      collectReductions(*arg, out);
}

// ---------------------------------------------------------------------------------------------
// Kernels and the host program

// One kernel argument: how the kernel declares it and what the host passes.
struct KernelArg {
  std::string declaration; // "const int H", "__global const float *x", "__local float *polyc_scratch_f32"
  std::string hostValue;   // "cl_int(H)", "x_", or for a local: the byte count
  bool isLocal = false;
  bool perLaunch = false; // changes between launches of the same band (host loop iterators, bounds)
};

struct KernelInfo {
  std::string name;    // in the .cl file
  std::string member;  // the host's polyc::rt::ocl::Kernel member
};

class OpenCLPrinter : public IslAstPrinter {
public:
  OpenCLPrinter(const CodegenInput &input, CodeWriter &host, CodeWriter &kernels, OpenCLExprPrinter &exprs,
                const map::Decomposition *decomposition)
      : IslAstPrinter(input, host), kernels_(kernels), exprs_(exprs), decomposition_(decomposition) {
    for (const model::Statement &s : input.model.statements)
      for (const std::string &d : exprs.dimNames(s))
        statementDims_.insert(d);
  }

  std::vector<KernelInfo> kernels;   // every kernel, for the host's members
  std::vector<std::string> boards;   // WavefrontBoard members
  std::string error;                 // the first mapping failure
  // Top-level fixed wavefronts, recorded into command buffers: their LaunchSequence members, the
  // member functions that enqueue their launches, and what upload() runs to record them.
  std::vector<std::string> sequences;
  CodeWriter sequenceFunctions;
  std::vector<std::string> recordLines;

protected:
  void printBand(const BandView &band, const isl::ast_node &body) override;
  bool printsStatementsOnce(const BandView &band) const override { return mayComputePointsByGroups(band); }
  void printFor(const LoopView &loop, const isl::ast_node_for &node) override {
    hostIterators_.push_back(loop.iterator);
    kernelLoops_ += kernelBand_ != nullptr;
    IslAstPrinter::printFor(loop, node);
    kernelLoops_ -= kernelBand_ != nullptr;
    hostIterators_.pop_back();
  }
  void printStatementCall(const StatementCall &call) override;
  // The changed flag: a buffer that the host clears before the loop, recorded and cleared by a kernel
  // after each iteration, the records read back after each iteration or, where later iterations may run
  // ahead (mayRunAhead), every RunAhead (polyc::rt::ocl::stopAfter); where one work-item runs the whole
  // loop (a single-thread kernel), the kernel's own.
  static constexpr int RunAhead = 16;
  std::vector<std::string> untilSetup(const LoopView &) const override {
    if (kernelBand_)
      return {};
    return {"polyc_changed_.fill32(device(), 0);"};
  }
  std::string resetChanged(const LoopView &) const override {
    return kernelBand_ ? "*polyc_changed = 0;" : "";
  }
  std::string stopsNow(const LoopView &loop) const override {
    if (kernelBand_)
      return "!*polyc_changed";
    std::string combine = input_.mpi ? "polyc::rt::mpi::largestOverRanks" : "polyc::rt::ocl::onThisRank";
    return "polyc::rt::ocl::stopAfter(device(), timer, polyc_record_changed_, polyc_changed_, "
           "polyc_changes_, " +
           loop.iterator + " - " + loop.init + ", " + std::to_string(mayRunAhead(loop) ? RunAhead : 1) +
           ", " + combine + ")";
  }
  std::string idName(const std::string &islName) const override {
    auto it = localNames_.find(islName);
    return it != localNames_.end() ? it->second : IslAstPrinter::idName(islName);
  }

private:
  void fail(const std::string &message) {
    if (error.empty())
      error = message;
  }
  void printVariant(const BandView &band, const isl::ast_node &body, AllocationKind kind);
  void printSingleKernel(const BandView &band, const isl::ast_node &body);
  void printRoundTiles(const BandView &band, const map::RoundTiles &tiles);
  struct MappedKernel {
    std::string name, member;
    bool group = false;
    bool rankBlock = false; // its first mapped member is a shared band's member 0: the rank's block only
    std::vector<KernelArg> args;
    std::vector<std::string> lows, counts;                 // host variables of the mapped members
    std::vector<std::pair<std::string, std::string>> bounds; // host expressions: lowest, highest
  };
  MappedKernel buildMappedKernel(const BandView &band, const isl::ast_node &body, unsigned firstMapped,
                                 PointMode mode, const std::string &kindName, unsigned endMapped = ~0u);
  void printHostLoopsAroundKernel(const BandView &band, const isl::ast_node &node, unsigned member,
                                  PointMode mode, const std::string &kindName);
  LoopView hostLoop(const isl::ast_node_for &loop, const std::string &base);
  void printKernelSetup(const MappedKernel &kernel, const std::vector<unsigned> &statements);
  void printKernelLaunch(const MappedKernel &kernel, const MappedKernel *copy = nullptr);
  const model::Statement *privatisableScatter(const BandView &band) const;
  bool privatePass_ = false; // buildMappedKernel: the privatised scatter's kernel
  void printMappedKernel(const BandView &band, const isl::ast_node &body, PointMode mode,
                         const std::string &kindName);
  void printFixedWavefront(const BandView &band, const isl::ast_node &body);
  void printFixedLoop(const BandView &band, const isl::ast_node &body);
  // Whether it printed the band (false: the flexible kernel does not apply, the caller prints the fixed).
  bool printFlexibleWavefront(const BandView &band);
  std::vector<std::vector<std::string>> planTermTables(const model::Statement &statement, const isl::set &domain,
                                                       const std::vector<const ast::IndexVar *> &pointVars,
                                                       const std::set<std::string> &windowed,
                                                       const std::set<std::string> &staged, ast::ElemType type);
  void printTermTableBuild(const model::Statement &statement, const std::string &row, const std::string &col,
                           const std::string &type, CodeWriter &w);

  // Kernel body printing: the AST under a band with the mapped members as guarded indices.
  void printKernelNode(const isl::ast_node &node, CodeWriter &w);
  void printKernelStatement(unsigned statement, const std::vector<std::string> &args, CodeWriter &w);

  // Host expressions for the bounds of mapped band members, as functions of the host loops around.
  std::vector<std::pair<std::string, std::string>> mappedBounds(const BandView &band, unsigned firstMapped);
  std::string hostExpr(const isl::pw_aff &value, const isl::set &context);

  std::vector<KernelArg> baseArgs(const std::vector<unsigned> &statements, bool perLaunchIterators);
  void emitKernel(const std::string &name, const std::string &comment, const std::vector<KernelArg> &args,
                  const std::string &body);
  void printArgs(const std::string &member, const std::vector<KernelArg> &args, bool perLaunch);
  std::string kernelName(const BandView &band, const std::string &kind);
  std::string hostMember(const std::string &name);
  std::string reductionLength(const std::vector<unsigned> &statements) const;
  bool hasReductions(const std::vector<unsigned> &statements) const;

  // --mpi: a band the ranks share; its kernels cover the rank's block of member 0.
  void printShared(const BandView &band, const isl::ast_node &body, const map::BandDecomposition &shared);
  // --mpi: a band, or an instance, whose sums the ranks split by their terms: partial values, combined,
  // then the statements with them.
  void printSplitBand(const BandView &band, const isl::ast_node &body);
  void printCombine(const map::TermSplit &split);
  void printInstance(const StatementCall &call);

  CodeWriter &kernels_;
  OpenCLExprPrinter &exprs_;
  const map::Decomposition *decomposition_; // --mpi: the bands the ranks share; null otherwise
  int sharedBand_ = -1;                     // the shared band being printed
  bool printingSplit_ = false;              // printing a band split by its terms (printSplitBand)
  CodeWriter *out_ = &w_;       // where a fixed wavefront's host code goes (a recorded function's body)
  std::string sink_ = "timer";  // the LaunchSink its launches go to
  std::vector<std::string> variantGuards_; // the run-time conditions that select the band printed now
  std::map<unsigned, std::string> sequenceCalls_; // band -> its replay statement, printed once per band
  std::vector<std::string> hostIterators_;       // C names of the host loops around, outermost first
  std::map<std::string, std::string> localNames_; // isl iterator -> C name, for loops printed here
  std::map<unsigned, std::string> mappedMembers_; // band member -> the kernel's index variable
  std::set<unsigned> boundMembers_; // mapped members whose loop encloses the node printed now
  // The value of member `member` of kernelBand_ at the instance of statement `s` whose dimensions are the
  // C expressions `args`, as a C expression.
  std::string memberValue(unsigned member, unsigned s, const std::vector<std::string> &args);
  const BandView *kernelBand_ = nullptr;
  int kernelLoops_ = 0; // the kernel's own loops around the code printed now
  std::set<std::string> statementDims_;
  std::set<std::string> kernelNames_;
};

std::string OpenCLPrinter::kernelName(const BandView &band, const std::string &kind) {
  std::string stmts;
  for (unsigned s : band.statements)
    stmts += (stmts.empty() ? "" : "_") + input_.model.statements[s].name;
  std::string base = stmts + "_" + kind;
  std::string name = base;
  for (unsigned k = 2; kernelNames_.count(name); ++k)
    name = base + std::to_string(k);
  kernelNames_.insert(name);
  return name;
}

// The host class's member that holds a kernel (or a kernel's board): taken from the name scope, as a
// constant named S0_parallel is spelled S0_parallel_ and the class's members hide the namespace's names.
std::string OpenCLPrinter::hostMember(const std::string &name) { return names().fresh(name + "_"); }

bool OpenCLPrinter::hasReductions(const std::vector<unsigned> &statements) const {
  for (unsigned s : statements) {
    std::vector<const ast::Reduction *> reductions;
    collectReductions(*input_.model.statements[s].equation->rhs, reductions);
    if (!reductions.empty())
      return true;
  }
  return false;
}

// The number of terms of a point's reductions, on the host (sizes the work-groups); 64 when a range
// depends on more than the params.
std::string OpenCLPrinter::reductionLength(const std::vector<unsigned> &statements) const {
  std::vector<std::string> perStatement;
  const ast::Program &program = *input_.model.program;
  auto affineText = [&](const ast::Expr &e) -> std::optional<std::string> {
    std::optional<AffineForm> form = affineForm(e, program);
    if (!form)
      return std::nullopt;
    std::string text = std::to_string(form->constant);
    for (auto [param, coefficient] : form->terms)
      text += " + " + std::to_string(coefficient) + " * " + cIdentifier(program.params[param]->name);
    return "(" + text + ")";
  };
  for (unsigned s : statements) {
    std::vector<const ast::Reduction *> reductions;
    collectReductions(*input_.model.statements[s].equation->rhs, reductions);
    std::string total;
    for (const ast::Reduction *r : reductions) {
      std::string product;
      for (const ast::RangeBinding &binding : r->bindings) {
        auto lo = affineText(*binding.lo), hi = affineText(*binding.hi);
        std::string extent = lo && hi ? "std::max<int64_t>(" + *hi + " - " + *lo + ", 0)" : "int64_t(8)";
        for (size_t v = 0; v < binding.vars.size(); ++v)
          product += (product.empty() ? "" : " * ") + extent;
      }
      total += (total.empty() ? "" : " + ") + (product.empty() ? "1" : product);
    }
    if (!total.empty())
      perStatement.push_back(total);
  }
  if (perStatement.empty())
    return "int64_t(1)";
  std::string text = perStatement[0];
  for (size_t k = 1; k < perStatement.size(); ++k)
    text = "std::max<int64_t>(" + text + ", " + perStatement[k] + ")";
  return text;
}

std::vector<KernelArg> OpenCLPrinter::baseArgs(const std::vector<unsigned> &statements, bool perLaunchIterators) {
  std::vector<KernelArg> args;
  const model::Model &model = input_.model;
  for (auto &p : model.program->params)
    args.push_back({"const int " + cIdentifier(p->name), "cl_int(" + cIdentifier(p->name) + ")"});
  std::set<std::string> written, used;
  for (unsigned s : statements) {
    const model::Statement &st = model.statements[s];
    written.insert(st.write.array);
    used.insert(st.write.array);
    for (const model::Access &a : st.reads)
      used.insert(a.array);
  }
  for (const model::ArrayInfo &array : model.arrays) {
    if (!used.count(array.name))
      continue;
    std::string type = exprs_.typeName(array.decl->elemType);
    args.push_back({"__global " + std::string(written.count(array.name) ? "" : "const ") + type + " *" +
                        cIdentifier(array.name),
                    cIdentifier(array.name) + "_"});
  }
  if (llvm::any_of(statements, [&](unsigned s) { return model.statements[s].signalsChange; }))
    args.push_back({"__global int *polyc_changed", "polyc_changed_"});
  for (const std::string &iterator : hostIterators_)
    args.push_back({"const int " + iterator, "cl_int(" + iterator + ")", false, perLaunchIterators});
  // --mpi: a split sum's block of terms and its buffer of partial values.
  for (unsigned s : statements) {
    if (!splitOf(decomposition_, s))
      continue;
    const model::Statement &statement = model.statements[s];
    args.push_back({"const polyc_Block " + splitBlockName(statement), splitBlockName(statement)});
    args.push_back({"__global " + exprs_.typeName(statement.equation->array->elemType) + " *" +
                        splitBufferName(statement),
                    splitBufferName(statement) + "_"});
  }
  return args;
}

void OpenCLPrinter::emitKernel(const std::string &name, const std::string &comment,
                               const std::vector<KernelArg> &args, const std::string &body) {
  std::string signature = "__kernel void " + name + "(";
  for (size_t k = 0; k < args.size(); ++k)
    signature += (k ? ", " : "") + args[k].declaration;
  signature += ")";
  kernels_.blank();
  kernels_.comment(comment);
  kernels_.openBlock(signature);
  kernels_.verbatim(body);
  kernels_.closeBlock();
}

// Sets the kernel's arguments on the host: all of them, or only those that change between launches.
void OpenCLPrinter::printArgs(const std::string &member, const std::vector<KernelArg> &args, bool perLaunch) {
  std::string text;
  for (size_t k = 0; k < args.size(); ++k) {
    if (perLaunch && !args[k].perLaunch)
      continue;
    if (!perLaunch && args[k].perLaunch)
      continue;
    if (args[k].isLocal)
      text += (text.empty() ? "" : ".") + std::string("localArg(") + std::to_string(k) + ", " + args[k].hostValue + ")";
    else
      text += (text.empty() ? "" : ".") + std::string("arg(") + std::to_string(k) + ", " + args[k].hostValue + ")";
  }
  if (!text.empty())
    out_->line(member + "." + text + ";");
}

std::string OpenCLPrinter::hostExpr(const isl::pw_aff &value, const isl::set &context) {
  isl::ast_build build = isl::ast_build::from_context(context);
  return expr(build.expr_from(value));
}

// The set of the band's schedule points, with the first `firstMapped` members (host loops) as params
// named like isl's iterators, and for each mapped member its lowest and highest value.
std::vector<std::pair<std::string, std::string>> OpenCLPrinter::mappedBounds(const BandView &band,
                                                                             unsigned firstMapped) {
  std::vector<std::pair<std::string, std::string>> bounds;
  isl::union_set domains = input_.model.domains();
  if (!input_.model.context.is_null())
    domains = domains.intersect_params(input_.model.context);
  isl::union_set points = isl::union_map::from(band.partialSchedule).intersect_domain(domains).range();
  isl::set set = isl::manage(isl_set_from_union_set(points.release()));
  unsigned members = static_cast<unsigned>(band.partialSchedule.size());
  isl_size params = isl_set_dim(set.get(), isl_dim_param);
  set = isl::manage(isl_set_move_dims(set.release(), isl_dim_param, params, isl_dim_set, 0, firstMapped));
  for (unsigned m = 0; m < firstMapped; ++m) {
    isl::id id(set.ctx(), "c" + std::to_string(band.firstScheduleDim + m));
    set = isl::manage(isl_set_set_dim_id(set.release(), isl_dim_param, params + m, id.release()));
  }
  isl::set context = set.params();
  for (unsigned m = firstMapped; m < members; ++m) {
    unsigned pos = m - firstMapped;
    bounds.push_back({hostExpr(dimMin(set, pos), context), hostExpr(dimMax(set, pos), context)});
  }
  return bounds;
}

void OpenCLPrinter::printBand(const BandView &band, const isl::ast_node &body) {
  if (decomposition_ && sharedBand_ < 0 && band.index < decomposition_->bands.size() &&
      decomposition_->bands[band.index].distributed)
    return printShared(band, body, decomposition_->bands[band.index]);
  if (!printingSplit_ && !bandSplits(decomposition_, band.index).empty())
    return printSplitBand(band, body);
  const allocate::BandAllocation *allocation = band.allocation;
  const map::BandMapping &mapped = input_.mapping->bands.at(band.index);
  if (mapped.placement == map::Placement::HostLoop) {
    // The loop on the host, the bands inside enqueued on each iteration (a persistent kernel would need
    // grid-wide barriers, which OpenCL does not have).
    w_.comment("Band " + std::to_string(band.index) + " (" + describeBand(input_, band.index) + "): host loop.");
    // Round tiles (map::RoundTiles), not under --mpi (whose ranks exchange rows between rounds), unless
    // POLYC_OPENCL_ROUND_TILES=0.
    if (!mapped.roundTiles || input_.mpi)
      return printNode(body);
    w_.openBlock("if (polyc::rt::ocl::roundTiles())");
    printRoundTiles(band, *mapped.roundTiles);
    w_.elseBlock();
    printNode(body);
    w_.closeBlock();
    return;
  }
  if (mapped.placement == map::Placement::SingleThread) {
    w_.comment("Band " + std::to_string(band.index) + ": no parallel work in or under it, one work-item.");
    return printSingleKernel(band, body);
  }
  if (!allocation) {
    w_.comment("Band " + std::to_string(band.index) + ": no allocation, one work-item.");
    return printSingleKernel(band, body);
  }
  w_.comment("Band " + std::to_string(band.index) + " (" + describeBand(input_, band.index) + "): " +
             describeAllocation(input_, band.index) + ".");
  if (!allocation->runtimeCondition.empty() && allocation->otherwise) {
    auto isWavefront = [](AllocationKind k) {
      return k == AllocationKind::FixedWavefront || k == AllocationKind::FlexibleWavefront;
    };
    std::string condition = "(" + spellParams(allocation->runtimeCondition, *input_.model.program) + ")";
    if (isWavefront(allocation->kind) && isWavefront(*allocation->otherwise) && allocation->kind != *allocation->otherwise)
      // POLYC_OPENCL_WAVEFRONT=fixed|flexible can force either variant (benchmarks, tests).
      condition = "polyc::rt::ocl::takeConditionVariant(" + spellParams(allocation->runtimeCondition, *input_.model.program) + ", " +
                  (allocation->kind == AllocationKind::FlexibleWavefront ? "true" : "false") + ")";
    w_.openBlock("if " + (condition.front() == '(' ? condition : "(" + condition + ")"));
    variantGuards_.push_back(condition);
    printVariant(band, body, allocation->kind);
    variantGuards_.back() = "!" + (condition.front() == '(' ? condition : "(" + condition + ")");
    w_.elseBlock();
    printVariant(band, body, *allocation->otherwise);
    variantGuards_.pop_back();
    w_.closeBlock();
    return;
  }
  printVariant(band, body, allocation->kind);
}

// A band the MPI ranks share (map::Decomposition): its kernels' work-items cover this rank's block of
// member 0 (printKernelLaunch), or its host loop over member 0 does (printHostLoopsAroundKernel); an
// instance isl puts outside the member's loop belongs to the work-item of its value, so to the block's
// owner. Then the rows the band wrote go to the ranks that read them, through host memory.
void OpenCLPrinter::printShared(const BandView &band, const isl::ast_node &body,
                                const map::BandDecomposition &shared) {
  MpiArrays arrays{input_.model, exprs_,
                   [](const model::ArrayInfo &a) { return "static_cast<void *>(" + cIdentifier(a.name) + "_.get())"; },
                   "polyc_rows."};
  arrays.overlap = {"", "polyc_rows.beginHalo(", "polyc_rows.finishHalos();"};
  sharedBand_ = int(band.index);
  printSharedBand(w_, band.index, shared, arrays, [&] { printBand(band, body); });
  sharedBand_ = -1;
}

// The host's combine of a split statement's partial values (after its partial pass).
void OpenCLPrinter::printCombine(const map::TermSplit &split) {
  const model::Statement &statement = input_.model.statements[split.statement];
  w_.line("polyc_rows.combineValues<" + std::string(clScalar(statement.equation->array->elemType)) + ">(" +
          splitBufferName(statement) + "_, " + splitBufferSize(split, input_.model, exprs_) + ", " +
          combineOperation(*statement.reductions[0].reduction) + ");");
}

// A band whose reductions the ranks split by their terms (map::TermSplit): its kernels compute this rank's
// partial values into the buffers, the buffers are combined across the ranks (through host memory), then
// data-parallel kernels compute the statements with the combined values (no sum left in them).
void OpenCLPrinter::printSplitBand(const BandView &band, const isl::ast_node &body) {
  w_.comment("Band " + std::to_string(band.index) + ": the MPI ranks split its reductions by their terms; " +
             "each rank's partial values first, combined across the ranks, then the statements with them.");
  printingSplit_ = true;
  exprs_.splitPass = ExprPrinter::SplitPass::Partial;
  printBand(band, body);
  exprs_.splitPass = ExprPrinter::SplitPass::Finish;
  for (const map::TermSplit *split : bandSplits(decomposition_, band.index))
    printCombine(*split);
  printVariant(band, body, AllocationKind::DataParallel);
  printingSplit_ = false;
}

void OpenCLPrinter::printVariant(const BandView &band, const isl::ast_node &body, AllocationKind kind) {
  switch (kind) {
  case AllocationKind::DataParallel:
    w_.comment(std::string(allocate::spelling(kind)) + ": one work-item per point.");
    return printMappedKernel(band, body, PointMode::Item, "parallel");
  case AllocationKind::Reduction:
    w_.comment("reduction: one work-group per point, its reductions shared by the work-group.");
    return printMappedKernel(band, body, PointMode::Group, "reduce");
  case AllocationKind::FixedWavefront:
    return printFixedWavefront(band, body);
  case AllocationKind::FlexibleWavefront:
    if (!printFlexibleWavefront(band))
      printFixedWavefront(band, body);
    return;
  case AllocationKind::Sequential:
    w_.comment("sequential: one work-item runs the band in order.");
    return printSingleKernel(band, body);
  }
}

void OpenCLPrinter::printSingleKernel(const BandView &band, const isl::ast_node &body) {
  std::string name = kernelName(band, "serial");
  std::string member = hostMember(name);
  std::vector<KernelArg> args = baseArgs(band.statements, false);
  CodeWriter w;
  exprs_.mode = PointMode::Item;
  exprs_.scratchTypes.clear();
  mappedMembers_.clear();
  kernelBand_ = &band;
  printKernelNode(body, w);
  kernelBand_ = nullptr;
  emitKernel(name, "Band " + std::to_string(band.index) + " in order, by one work-item.", args, w.str());
  kernels.push_back({name, member});
  printArgs(member, args, false);
  w_.line("timer.enqueue(device(), " + member + ", 1, 1);");
}

// Emits the kernel of a band whose members from `firstMapped` up to `endMapped` (excluded) are mapped to
// work-items (Item) or work-groups (Group); the members before it are host loops around the launch, the
// members after it loops of each work-item.
OpenCLPrinter::MappedKernel OpenCLPrinter::buildMappedKernel(const BandView &band, const isl::ast_node &body,
                                                             unsigned firstMapped, PointMode mode,
                                                             const std::string &kindName, unsigned endMapped) {
  MappedKernel kernel;
  kernel.name = kernelName(band, kindName);
  kernel.member = hostMember(kernel.name);
  kernel.group = mode == PointMode::Group;
  kernel.rankBlock = sharedBand_ == int(band.index) && firstMapped == 0;
  unsigned members = std::min(endMapped, static_cast<unsigned>(band.partialSchedule.size()));
  kernel.bounds = mappedBounds(band, firstMapped);
  kernel.args = baseArgs(band.statements, true);
  // The kernel's index variables, named after the band's dimensions but apart from statement dims.
  NameScope scope = names();
  for (const std::string &d : statementDims_)
    scope.take(d);
  for (const std::string &it : hostIterators_)
    scope.take(it);
  mappedMembers_.clear();
  std::vector<std::string> vars;
  for (unsigned m = firstMapped; m < members; ++m) {
    std::string base = band.band && m < band.band->dimNames.size() && isIdentifier(band.band->dimNames[m])
                           ? band.band->dimNames[m]
                           : "c" + std::to_string(m);
    std::string var = scope.fresh(cIdentifier(base));
    mappedMembers_[m] = var;
    vars.push_back(var);
    // From the scope as well: "polyc_lo_" + var may be the spelling of a param (polyc_lo_j1 is spelled
    // polyc_lo_j1_, the name made for a variable j1_).
    kernel.lows.push_back(scope.fresh("polyc_lo_" + var));
    kernel.counts.push_back(scope.fresh("polyc_n_" + var));
  }

  // The body first: it tells which local scratch arrays the kernel needs.
  CodeWriter w;
  exprs_.mode = mode;
  exprs_.lane = "polyc_lid";
  exprs_.lanes = "polyc_group_size";
  exprs_.windows.clear();
  exprs_.scratchTypes.clear();
  kernelBand_ = &band;
  const model::ArrayInfo *copied = privatePass_ ? input_.model.findArray(exprs_.privateArray) : nullptr;
  if (kernel.group) {
    w.line("const int polyc_lid = get_local_id(0), polyc_group_size = get_local_size(0);");
    w.comment("The whole work-group computes one point (all its work-items take the same branches).");
    w.line("int polyc_rest = get_group_id(0);");
  } else if (copied) {
    w.comment("The work-group adds into its copy of " + copied->name +
              " (zeroed here), then adds the copy to it; each "
              "work-item takes every so many points.");
    w.line("const int polyc_item = get_local_id(0), polyc_items = get_local_size(0);");
    w.line("for (int polyc_k = polyc_item; polyc_k < polyc_elements; polyc_k += polyc_items)");
    w.line("  " + std::string(OpenCLExprPrinter::PrivateCopy) + "[polyc_k] = 0;");
    w.line("barrier(CLK_LOCAL_MEM_FENCE);");
    w.openBlock("for (int polyc_point = get_global_id(0); polyc_point < polyc_points; polyc_point += "
                "get_global_size(0))");
    w.line("int polyc_rest = polyc_point;");
  } else {
    w.line("const int polyc_point = get_global_id(0);");
    w.openBlock("if (polyc_point < polyc_points)");
    w.line("int polyc_rest = polyc_point;");
  }
  // The launch has exactly the points' product of work-groups (or a guard on polyc_points), so what is
  // left for the outermost variable is below its count: it needs no modulo, and the kernel no count
  // argument (one argument less to set per launch of a fixed wavefront).
  for (size_t k = vars.size(); k-- > 0;) {
    if (k == 0) {
      w.line("const int " + vars[k] + " = " + kernel.lows[k] + " + polyc_rest;");
      break;
    }
    w.line("const int " + vars[k] + " = " + kernel.lows[k] + " + polyc_rest % " + kernel.counts[k] + ";");
    w.line("polyc_rest /= " + kernel.counts[k] + ";");
  }
  if (vars.empty())
    w.line("(void)polyc_rest;");
  printKernelNode(body, w);
  if (!kernel.group)
    w.closeBlock();
  if (copied) {
    w.line("barrier(CLK_LOCAL_MEM_FENCE);");
    w.openBlock("for (int polyc_k = polyc_item; polyc_k < polyc_elements; polyc_k += polyc_items)");
    const std::string copy = std::string(OpenCLExprPrinter::PrivateCopy) + "[polyc_k]";
    w.openBlock("if (" + copy + " != 0)");
    const std::string array = exprs_.privateArray;
    exprs_.privateArray.clear(); // the array itself, in global memory
    exprs_.printAtomicUpdate(exprs_.arrayRef(*copied) + "[polyc_k]", " += ", copy, copied->decl->elemType, w);
    exprs_.privateArray = array;
    w.closeBlock();
    w.closeBlock();
  }
  kernelBand_ = nullptr;
  mappedMembers_.clear();

  for (size_t k = 0; k < vars.size(); ++k) {
    kernel.args.push_back({"const int " + kernel.lows[k], "cl_int(" + kernel.lows[k] + ")", false, true});
    if (k > 0)
      kernel.args.push_back({"const int " + kernel.counts[k], "cl_int(" + kernel.counts[k] + ")", false, true});
  }
  if (!kernel.group)
    kernel.args.push_back({"const int polyc_points", "cl_int(polyc_points)", false, true});
  if (copied) {
    kernel.args.push_back({"const int polyc_elements", "cl_int(polyc_elements)", false, false});
    kernel.args.push_back(
        {"__local " + exprs_.typeName(copied->decl->elemType) + " *" +
             std::string(OpenCLExprPrinter::PrivateCopy),
         // Set before the choice: at most what the copy may take (it is launched only then).
         "size_t(std::clamp<int64_t>(polyc_bytes, 1, polyc::rt::ocl::PrivateHistogramBytes))", true, false});
  }
  for (ast::ElemType t : exprs_.scratchTypes)
    kernel.args.push_back({"__local " + exprs_.typeName(t) + " *polyc_scratch_" + suffix(t),
                           "polyc_group * sizeof(" + std::string(clScalar(t)) + ")", true, false});
  std::string what = kernel.group ? "one work-group per point" : "one work-item per point";
  std::string dims;
  for (unsigned m = firstMapped; m < members; ++m)
    dims += (dims.empty() ? "" : ", ") + describeDimension(band, m);
  emitKernel(kernel.name,
             "Band " + std::to_string(band.index) + ", " + what + " over " + (dims.empty() ? "one point" : dims) +
                 (firstMapped ? " (launched per " + describeDimension(band, 0) + ")" : "") + ".",
             kernel.args, w.str());
  kernels.push_back({kernel.name, kernel.member});
  return kernel;
}

// The host side of a mapped kernel: its work-group size and the arguments that do not change between
// launches (once, before any host loop of the band), then per launch the bounds and the enqueue.
void OpenCLPrinter::printKernelSetup(const MappedKernel &kernel, const std::vector<unsigned> &statements) {
  if (kernel.group)
    out_->line("const size_t polyc_group = polyc::rt::ocl::pointGroupSize(device(), " + kernel.member + ", " +
            reductionLength(statements) + ");");
  else
    out_->line("const size_t polyc_group = polyc::rt::ocl::itemGroupSize(device(), " + kernel.member + ");");
  printArgs(kernel.member, kernel.args, false);
}

// A band of one scatter whose points are work-items: it may add into a copy of its array a work-group.
// Round tiles (map::RoundTiles): a kernel whose work-group loads its tile and halo of the array into two
// buffers in local memory, runs up to `rounds` rounds of the update on them and writes the tile's own
// points to the other of two arrays (the update's copy of old values, unused otherwise); the host
// enqueues it for each `rounds` rounds, the two arrays in turn, then copies the last into the array when
// it is the copy.
void OpenCLPrinter::printRoundTiles(const BandView &band, const map::RoundTiles &tiles) {
  const model::Model &model = input_.model;
  const model::ArrayInfo &array = *model.findArray(tiles.array);
  const model::ArrayInfo &snapshot = *model.findArray(tiles.snapshot);
  const std::string type = exprs_.typeName(array.decl->elemType);
  const bool stopsEarly = band.band && band.band->stopsWhenUnchanged;
  std::vector<KernelArg> args = baseArgs({tiles.update}, false);
  args.push_back({"__global const " + type + " *polyc_source", "polyc_source", false, true});
  args.push_back({"__global " + type + " *polyc_target", "polyc_target", false, true});
  args.push_back({"const int polyc_first", "cl_int(polyc_round)", false, true});
  args.push_back({"const int polyc_rounds", "cl_int(polyc_rounds)", false, true});
  RoundTileDialect dialect;
  dialect.index = "int";
  dialect.buffers = "__local " + type;
  dialect.bufferPointer = "__local " + type;
  dialect.item = "get_local_id(0)";
  dialect.items = "get_local_size(0)";
  dialect.group = "get_group_id(0)";
  dialect.barrier = "barrier(CLK_LOCAL_MEM_FENCE);";
  dialect.source = "polyc_source";
  dialect.target = "polyc_target";
  dialect.update = [&](CodeWriter &w, const std::vector<std::string> &point, const std::string &inside) {
    std::vector<std::string> dims{"polyc_first + polyc_j"};
    dims.insert(dims.end(), point.begin(), point.end());
    exprs_.mode = PointMode::Item;
    exprs_.windows.clear();
    exprs_.roundTile = roundTileStorage(tiles);
    w.openBlock("if (" + inside + ")");
    exprs_.roundTile->interior = true;
    printKernelStatement(tiles.update, dims, w);
    w.elseBlock();
    exprs_.roundTile->interior = false;
    printKernelStatement(tiles.update, dims, w);
    w.closeBlock();
    exprs_.roundTile.reset();
  };
  if (stopsEarly)
    dialect.reportChange = "if (polyc_moved) *polyc_changed = 1;";
  CodeWriter w;
  printRoundTileBody(tiles, exprs_, dialect, w);
  const std::string name = kernelName(band, "rounds"), member = hostMember(name);
  emitKernel(name,
             "Band " + std::to_string(band.index) +
                 ", round tiles: " + describeRoundTileKernel(tiles, "work-group", "local") + ".",
             args, w.str());
  kernels.push_back({name, member});
  const std::string copyName = kernelName(band, "rounds_copy"), copyMember = hostMember(copyName);
  emitKernel(copyName,
             "Band " + std::to_string(band.index) + ": the last round tiles' array copied into " +
                 tiles.array + ".",
             {{"__global const " + type + " *polyc_from", ""},
              {"__global " + type + " *polyc_to", ""},
              {"const int polyc_count", ""}},
             "const int polyc_k = get_global_id(0);\nif (polyc_k < polyc_count)\n  polyc_to[polyc_k] = "
             "polyc_from[polyc_k];");
  kernels.push_back({copyName, copyMember});

  // The host: the launches, the two arrays in turn.
  const std::string first = exprs_.paramIndex(*tiles.block->lo), end = exprs_.paramIndex(*tiles.block->hi);
  const std::string rounds = std::to_string(tiles.rounds);
  w_.openBlock("");
  if (stopsEarly)
    w_.line("polyc_changed_.fill32(device(), 0);");
  w_.line("const int64_t polyc_tiles = " + roundTileBlocks(tiles, exprs_) + ";");
  w_.line("polyc::rt::ocl::checkIndexable(\"" + name + "'s work-groups\", polyc_tiles * 256);");
  w_.line("const size_t polyc_group = polyc::rt::ocl::itemGroupSize(device(), " + member + ");");
  w_.line("cl_mem polyc_source = " + cIdentifier(array.name) +
          "_.get(), polyc_target = " + cIdentifier(snapshot.name) + "_.get();");
  printArgs(member, args, false);
  if (stopsEarly)
    w_.line("int64_t polyc_launch = 0; // the launches made");
  w_.openBlock("for (int64_t polyc_round = " + first + "; polyc_round < " + end +
               "; polyc_round += " + rounds + ")");
  w_.line("const int64_t polyc_rounds = std::min<int64_t>(" + rounds + ", (" + end + ") - polyc_round);");
  printArgs(member, args, true);
  w_.line("timer.enqueue(device(), " + member + ", size_t(polyc_tiles) * polyc_group, polyc_group);");
  w_.line("std::swap(polyc_source, polyc_target);");
  if (stopsEarly)
    w_.line("if (polyc::rt::ocl::stopAfter(device(), timer, polyc_record_changed_, polyc_changed_, "
            "polyc_changes_, "
            "polyc_launch++, " +
            std::to_string(launchesAhead(tiles)) + ", polyc::rt::ocl::onThisRank)) break;");
  w_.closeBlock();
  w_.openBlock("if (polyc_source != " + cIdentifier(array.name) + "_.get())");
  w_.line("const int64_t polyc_count = " + exprs_.storageSize(array) + ";");
  w_.line(copyMember + ".arg(0, polyc_source).arg(1, " + cIdentifier(array.name) +
          "_.get()).arg(2, cl_int(polyc_count));");
  w_.line("timer.enqueue(device(), " + copyMember + ", size_t((polyc_count + 255) / 256 * 256), 256);");
  w_.closeBlock();
  w_.closeBlock();
}

const model::Statement *OpenCLPrinter::privatisableScatter(const BandView &band) const {
  const std::optional<unsigned> scatter = input_.mapping->bands.at(band.index).privatisedScatter;
  if (!scatter || sharedBand_ >= 0)
    return nullptr;
  return &input_.model.statements[*scatter];
}

void OpenCLPrinter::printKernelLaunch(const MappedKernel &kernel, const MappedKernel *copy) {
  std::string points = "1";
  for (size_t k = 0; k < kernel.lows.size(); ++k) {
    // The bounds in parentheses: a piecewise one prints as a conditional expression.
    std::string low = kernel.bounds[k].first, high = "(" + kernel.bounds[k].second + ")";
    if (k == 0 && kernel.rankBlock) {
      low = "std::max<int64_t>(" + low + ", polyc_rank.first)";
      high = "std::min<int64_t>(" + high + ", polyc_rank.end - 1)";
    }
    out_->line("const int64_t " + kernel.lows[k] + " = " + low + ";");
    out_->line("const int64_t " + kernel.counts[k] + " = std::max<int64_t>(" + high + " - " + kernel.lows[k] +
               " + 1, 0);");
    points += " * " + kernel.counts[k];
  }
  out_->line("const int64_t polyc_points = " + points + ";");
  out_->openBlock("if (polyc_points > 0)");
  out_->line("polyc::rt::ocl::checkIndexable(\"" + kernel.name + "'s points\", polyc_points" +
          std::string(kernel.group ? " * int64_t(polyc_group)" : "") + ");");
  if (copy) {
    out_->openBlock(
        "if (polyc::rt::ocl::privateHistogram(device(), polyc_bytes, polyc_elements, polyc_points))");
    printArgs(copy->member, copy->args, true);
    out_->line(
        sink_ + ".enqueue(device(), " + copy->member +
        ", polyc::rt::ocl::privateItems(device(), polyc_points, polyc_private_group), polyc_private_group);");
    out_->elseBlock();
  }
  printArgs(kernel.member, kernel.args, true);
  if (kernel.group)
    out_->line(sink_ + ".enqueue(device(), " + kernel.member + ", size_t(polyc_points) * polyc_group, polyc_group);");
  else
    out_->line(sink_ + ".enqueue(device(), " + kernel.member +
            ", (size_t(polyc_points) + polyc_group - 1) / polyc_group * polyc_group, polyc_group);");
  if (copy)
    out_->closeBlock();
  out_->closeBlock();
}

// A kernel band (map::Placement::Kernel): its members before the mapping's grid members are host loops
// that launch the kernel once per iteration, the grid members are the kernel's work-items (or groups),
// the members after them loops of each work-item.
void OpenCLPrinter::printMappedKernel(const BandView &band, const isl::ast_node &body, PointMode mode,
                                      const std::string &kindName) {
  printHostLoopsAroundKernel(band, body, 0, mode, kindName);
}

// Walks `node`, the subtree of `band` below its first `member` members, down to the grid's first member.
void OpenCLPrinter::printHostLoopsAroundKernel(const BandView &band, const isl::ast_node &node, unsigned member,
                                               PointMode mode, const std::string &kindName) {
  const std::vector<unsigned> &grid = input_.mapping->bands.at(band.index).gridMembers;
  unsigned firstMapped = grid.empty() ? 0 : grid.front();
  if (member >= firstMapped) {
    const unsigned endMapped = grid.empty() ? ~0u : grid.back() + 1;
    MappedKernel kernel = buildMappedKernel(band, node, member, mode, kindName, endMapped);
    // A scatter's second kernel, adding into a copy of its array a work-group (privateHistogram).
    std::optional<MappedKernel> copy;
    const model::Statement *scatter = mode == PointMode::Item ? privatisableScatter(band) : nullptr;
    if (scatter) {
      privatePass_ = true;
      exprs_.privateArray = scatter->write.array;
      copy = buildMappedKernel(band, node, member, mode, kindName, endMapped);
      exprs_.privateArray.clear();
      privatePass_ = false;
    }
    out_->openBlock("");
    if (copy) {
      const model::ArrayInfo &array = *input_.model.findArray(scatter->write.array);
      out_->line("const int64_t polyc_elements = " + exprs_.storageSize(array) + ";");
      out_->line(std::string("const int64_t polyc_bytes = polyc_elements * int64_t(sizeof(") +
                 clScalar(array.decl->elemType) + "));");
    }
    printKernelSetup(kernel, band.statements);
    if (copy) {
      out_->line("const size_t polyc_private_group = polyc::rt::ocl::itemGroupSize(device(), " +
                 copy->member + ");");
      printArgs(copy->member, copy->args, false);
    }
    printKernelLaunch(kernel, copy ? &*copy : nullptr);
    out_->closeBlock();
    return;
  }
  if (node.isa<isl::ast_node_if>()) {
    auto i = node.as<isl::ast_node_if>();
    out_->openBlock("if (" + expr(i.cond()) + ")");
    printHostLoopsAroundKernel(band, i.then_node(), member, mode, kindName);
    if (i.has_else_node()) {
      out_->elseBlock();
      printHostLoopsAroundKernel(band, i.else_node(), member, mode, kindName);
    }
    out_->closeBlock();
    return;
  }
  if (node.isa<isl::ast_node_block>()) {
    isl::ast_node_list children = node.as<isl::ast_node_block>().children();
    for (unsigned c = 0; c < children.size(); ++c)
      printHostLoopsAroundKernel(band, children.at(c), member, mode, kindName);
    return;
  }
  if (!node.isa<isl::ast_node_for>())
    return fail("band " + std::to_string(band.index) + ": no loop over its dimension " + std::to_string(member));
  auto loop = node.as<isl::ast_node_for>();
  const std::string &dimName = band.band ? band.band->dimNames.at(member) : "";
  LoopView view = hostLoop(loop, isIdentifier(dimName) ? dimName : "c" + std::to_string(member));
  if (member == 0 && sharedBand_ == int(band.index))
    narrowToRankBlock(view);
  out_->comment(describeDimension(band, member) + ": in order on the host, a launch each");
  out_->openBlock(forHeader(view));
  hostIterators_.push_back(view.iterator);
  printHostLoopsAroundKernel(band, loop.body(), member + 1, mode, kindName);
  hostIterators_.pop_back();
  out_->closeBlock();
  localNames_.erase(loop.iterator().as<isl::ast_expr_id>().id().name());
}

// A loop printed on the host: its iterator named after `base`, apart from the statements' dimensions
// and the host loops around, and known by that name (localNames_) until the caller erases it.
LoopView OpenCLPrinter::hostLoop(const isl::ast_node_for &loop, const std::string &base) {
  NameScope scope = names();
  for (const std::string &d : statementDims_)
    scope.take(d);
  for (const std::string &it : hostIterators_)
    scope.take(it);
  LoopView view;
  view.iterator = scope.fresh(cIdentifier(base));
  localNames_[loop.iterator().as<isl::ast_expr_id>().id().name()] = view.iterator;
  setBounds(view, loop);
  return view;
}

// The fixed wavefront. At the top level its launches go into a member function that a LaunchSequence
// records once (in upload(), outside the timed region) into a command buffer and replays; inside host
// loops, whose iterators change the arguments between replays, they are enqueued directly.
void OpenCLPrinter::printFixedWavefront(const BandView &band, const isl::ast_node &body) {
  if (!hostIterators_.empty())
    return printFixedLoop(band, body);
  auto known = sequenceCalls_.find(band.index);
  if (known == sequenceCalls_.end()) {
    std::string index = std::to_string(band.index);
    std::string sequence = "band" + index + "Sequence_", function = "enqueueBand" + index;
    CodeWriter launches;
    out_ = &launches;
    sink_ = "launches";
    printFixedLoop(band, body);
    out_ = &w_;
    sink_ = "timer";
    CodeWriter &f = sequenceFunctions;
    f.blank();
    std::string statements;
    for (unsigned st : band.statements)
      statements += (statements.empty() ? "" : ", ") + input_.model.statements[st].name;
    f.comment("Band " + index + " (" + statements + "), fixed wavefront: its launches, recorded into " + sequence +
              " or enqueued directly.");
    f.openBlock("void " + function + "(polyc::rt::ocl::LaunchSink &launches, const polyc::rt::RunContext &context)");
    const ast::Program &program = *input_.model.program;
    for (size_t p = 0; p < program.params.size(); ++p)
      f.line("[[maybe_unused]] const int64_t " + cIdentifier(program.params[p]->name) + " = context.params[" +
             std::to_string(p) + "];");
    if (program.params.empty())
      f.line("(void)context;");
    f.verbatim(launches.str());
    f.closeBlock();
    sequences.push_back(sequence);
    std::string enqueue = "[&](polyc::rt::ocl::LaunchSink &launches) { " + function + "(launches, context); }";
    std::string record = sequence + ".record(device(), sequenceKey(context), " + enqueue + ");";
    if (!variantGuards_.empty())
      record = "if (" + llvm::join(variantGuards_, " && ") + ") " + record;
    recordLines.push_back(record);
    known = sequenceCalls_
                .emplace(band.index,
                         sequence + ".enqueueOrReplay(device(), timer, sequenceKey(context), " + enqueue + ");")
                .first;
  }
  w_.comment("fixed wavefront: one launch per hyperplane, replayed from the command buffer upload() recorded, or "
             "enqueued one by one (POLYC_OPENCL_COMMAND_BUFFER=0, no cl_khr_command_buffer).");
  w_.line(known->second);
}

// A host loop over the band's first member (the hyperplane t), one launch of the rest per t.
void OpenCLPrinter::printFixedLoop(const BandView &band, const isl::ast_node &body) {
  bool group = hasReductions(band.statements);
  out_->comment(std::string("fixed wavefront: a host loop over ") + describeDimension(band, 0) + ", one launch per step, " +
             (group ? "one work-group per point." : "one work-item per point."));
  // The band's body is the loop of its first member, possibly under guards.
  std::function<void(const isl::ast_node &)> walk = [&](const isl::ast_node &node) {
    if (node.isa<isl::ast_node_if>()) {
      auto i = node.as<isl::ast_node_if>();
      out_->openBlock("if (" + expr(i.cond()) + ")");
      walk(i.then_node());
      if (i.has_else_node()) {
        out_->elseBlock();
        walk(i.else_node());
      }
      out_->closeBlock();
      return;
    }
    if (node.isa<isl::ast_node_block>()) {
      isl::ast_node_list children = node.as<isl::ast_node_block>().children();
      for (unsigned c = 0; c < children.size(); ++c)
        walk(children.at(c));
      return;
    }
    if (node.isa<isl::ast_node_for>()) {
      auto loop = node.as<isl::ast_node_for>();
      std::string islName = loop.iterator().as<isl::ast_expr_id>().id().name();
      std::string base = band.band && !band.band->dimNames.empty() ? band.band->dimNames[0] : "t";
      LoopView view = hostLoop(loop, base);
      hostIterators_.push_back(view.iterator);
      MappedKernel kernel =
          buildMappedKernel(band, loop.body(), 1, group ? PointMode::Group : PointMode::Item, "fixed");
      out_->openBlock("");
      printKernelSetup(kernel, band.statements);
      out_->comment(describeDimension(band, 0) + ": the hyperplanes in order, one launch each");
      out_->openBlock(forHeader(view));
      printKernelLaunch(kernel);
      out_->closeBlock();
      out_->closeBlock();
      hostIterators_.pop_back();
      localNames_.erase(islName);
      return;
    }
    fail("fixed wavefront of band " + std::to_string(band.index) + ": the AST has no loop over its first dimension");
  };
  walk(body);
}

void OpenCLPrinter::printKernelNode(const isl::ast_node &node, CodeWriter &w) {
  if (node.isa<isl::ast_node_block>()) {
    isl::ast_node_list children = node.as<isl::ast_node_block>().children();
    for (unsigned c = 0; c < children.size(); ++c)
      printKernelNode(children.at(c), w);
    return;
  }
  if (node.isa<isl::ast_node_mark>())
    return printKernelNode(node.as<isl::ast_node_mark>().node(), w);
  if (node.isa<isl::ast_node_if>()) {
    auto i = node.as<isl::ast_node_if>();
    w.openBlock("if (" + expr(i.cond()) + ")");
    printKernelNode(i.then_node(), w);
    if (i.has_else_node()) {
      w.elseBlock();
      printKernelNode(i.else_node(), w);
    }
    w.closeBlock();
    return;
  }
  if (node.isa<isl::ast_node_for>()) {
    auto loop = node.as<isl::ast_node_for>();
    std::string islName = loop.iterator().as<isl::ast_expr_id>().id().name();
    std::optional<unsigned> member;
    if (kernelBand_ && islName.size() > 1 && islName[0] == 'c' && llvm::all_of(islName.substr(1), llvm::isDigit)) {
      unsigned dim = std::stoul(islName.substr(1));
      if (dim >= kernelBand_->firstScheduleDim)
        member = dim - kernelBand_->firstScheduleDim;
    }
    if (member && mappedMembers_.count(*member)) {
      // A mapped dimension: this work-item's (or work-group's) index, if the loop would reach it.
      std::string var = mappedMembers_[*member];
      localNames_[islName] = var;
      // A loop with a step (the points of a skewed band at one time, ii = -t - 3c) has a work-item for
      // every value in its range; those between the steps do nothing.
      LoopView bounds;
      setBounds(bounds, loop);
      std::string onStep =
          bounds.inc == "1" ? "" : " && (" + var + " - (" + bounds.init + ")) % " + bounds.inc + " == 0";
      w.openBlock("if (" + var + " >= " + bounds.init + " && " + bounds.cond + onStep + ")");
      boundMembers_.insert(*member);
      printKernelNode(loop.body(), w);
      boundMembers_.erase(*member);
      w.closeBlock();
      localNames_.erase(islName);
      return;
    }
    NameScope scope = names();
    for (const std::string &d : statementDims_)
      scope.take(d);
    for (auto &[isl, c] : localNames_)
      scope.take(c);
    std::string base = "c" + std::to_string(localNames_.size());
    if (member && kernelBand_->band && *member < kernelBand_->band->dimNames.size() &&
        isIdentifier(kernelBand_->band->dimNames[*member]))
      base = kernelBand_->band->dimNames[*member];
    std::string var = scope.fresh(cIdentifier(base));
    localNames_[islName] = var;
    LoopView view;
    view.iterator = var;
    view.band = member ? kernelBand_ : nullptr;
    view.member = member.value_or(0);
    setBounds(view, loop);
    w.openBlock(forHeader(view, "int"));
    const bool until = stopsWhenUnchanged(view); // a repeat loop in one work-item
    if (until)
      w.line(resetChanged(view));
    printKernelNode(loop.body(), w);
    if (until)
      w.line("if (" + stopsNow(view) + ") break;");
    w.closeBlock();
    localNames_.erase(islName);
    return;
  }
  if (node.isa<isl::ast_node_user>()) {
    isl::ast_expr_op call = node.as<isl::ast_node_user>().expr().as<isl::ast_expr_op>();
    std::string stmt = call.arg(0).as<isl::ast_expr_id>().id().name();
    unsigned s = ~0u;
    for (unsigned k = 0; k < input_.model.statements.size(); ++k)
      if (input_.model.statements[k].name == stmt)
        s = k;
    std::vector<std::string> args;
    for (unsigned a = 1; a < call.n_arg(); ++a)
      args.push_back(expr(call.arg(a)));
    // A mapped member with no loop on the way here took one value only (isl prints no loop for a
    // degenerate one, as for the t = 0 piece of `where t != 1`): the instance belongs to the work-item
    // of that value alone, not to every work-item along the member.
    std::vector<std::string> guards;
    for (auto &[m, var] : mappedMembers_)
      if (!boundMembers_.count(m) && s != ~0u)
        guards.push_back(var + " == " + memberValue(m, s, args));
    if (guards.empty())
      return printKernelStatement(s, args, w);
    w.openBlock("if (" + llvm::join(guards, " && ") + ")");
    printKernelStatement(s, args, w);
    w.closeBlock();
    return;
  }
}

// One statement instance inside a kernel: its dimensions as named locals, then the statement.
std::string OpenCLPrinter::memberValue(unsigned member, unsigned s, const std::vector<std::string> &args) {
  const model::Statement &statement = input_.model.statements[s];
  isl::space space = isl::manage(isl_space_from_domain(statement.domain.space().release()));
  space = isl::manage(isl_space_add_dims(space.release(), isl_dim_out, 1));
  isl::union_pw_aff all = kernelBand_->partialSchedule.at(static_cast<int>(member));
  isl::pw_aff value = isl::manage(isl_union_pw_aff_extract_pw_aff(all.copy(), space.release()));
  isl::set where = statement.domain;
  if (!input_.model.context.is_null())
    where = where.intersect_params(input_.model.context);
  // The member over the statement's domain as one affine expression: simplified by the domain (which
  // merges the pieces of a piecewise member), unless that brought in a fractional coefficient (`i` over
  // the one point 2i = D - 1 becomes (D - 1) / 2, fuzz seed 8002720), then as it is (isl's
  // intersect_domain would substitute the same way).
  auto single = [](const isl::pw_aff &candidate) -> std::optional<isl::aff> {
    std::vector<isl::aff> pieces;
    candidate.foreach_piece([&](isl::set, isl::multi_aff piece) { pieces.push_back(piece.at(0)); });
    if (pieces.size() != 1)
      return std::nullopt;
    return pieces.front();
  };
  std::optional<isl::aff> simplified = single(value.gist(where).coalesce());
  std::optional<isl::aff> chosen = simplified;
  if (!simplified || !islutil::coefficients(*simplified).integral)
    if (std::optional<isl::aff> plain = single(value.coalesce()))
      chosen = plain;
  if (!chosen) {
    fail("band " + std::to_string(kernelBand_->index) + ": a mapped member of " + statement.name +
         " with no loop is not one affine expression");
    return "0";
  }
  isl::aff aff = *chosen;
  std::string text;
  auto term = [&](isl::val coefficient, const std::string &what) {
    if (coefficient.is_zero())
      return;
    if (!coefficient.is_int())
      fail("band " + std::to_string(kernelBand_->index) + ": a mapped member of " + statement.name +
           " with no loop has a fractional coefficient");
    int64_t c = coefficient.get_num_si();
    std::string magnitude = std::to_string(c < 0 ? -c : c);
    std::string factor = what.empty() ? magnitude : (c == 1 || c == -1 ? what : magnitude + " * " + what);
    text += text.empty() ? (c < 0 ? "-" : "") + factor : (c < 0 ? " - " : " + ") + factor;
  };
  for (unsigned k = 0; k < args.size(); ++k)
    term(isl::manage(isl_aff_get_coefficient_val(aff.get(), isl_dim_in, static_cast<int>(k))),
         isIdentifier(args[k]) || llvm::all_of(args[k], llvm::isDigit) ? args[k] : "(" + args[k] + ")");
  isl_size params = isl_aff_dim(aff.get(), isl_dim_param);
  for (int p = 0; p < params; ++p)
    term(isl::manage(isl_aff_get_coefficient_val(aff.get(), isl_dim_param, p)), idName(isl_aff_get_dim_name(aff.get(), isl_dim_param, p)));
  term(aff.get_constant_val(), "");
  if (text.empty())
    return "0";
  return isIdentifier(text) || llvm::all_of(text, llvm::isDigit) ? text : "(" + text + ")";
}

void OpenCLPrinter::printKernelStatement(unsigned s, const std::vector<std::string> &args, CodeWriter &w) {
  const model::Statement &statement = input_.model.statements[s];
  std::vector<std::string> dims = exprs_.dimNames(statement);
  w.comment(statement.name + ": " + equationText(*statement.equation));
  w.openBlock("");
  bool same = args.size() == dims.size();
  for (size_t k = 0; same && k < dims.size(); ++k)
    same = args[k] == dims[k];
  if (!same) {
    // Through temporaries: an argument may mention a name the statement's dimensions shadow.
    for (size_t k = 0; k < dims.size() && k < args.size(); ++k)
      w.line("const int polyc_arg" + std::to_string(k) + " = " + args[k] + ";");
    for (size_t k = 0; k < dims.size() && k < args.size(); ++k)
      w.line("const int " + dims[k] + " = polyc_arg" + std::to_string(k) + ";");
  }
  std::vector<const ast::Reduction *> reductions;
  collectReductions(*statement.equation->rhs, reductions);
  exprs_.deferSum = exprs_.mode != PointMode::Item && isSumOfSums(*statement.equation->rhs);
  exprs_.storeGuard = exprs_.mode == PointMode::Group ? "polyc_lid == 0" : "";
  exprs_.printStatement(statement, w);
  exprs_.deferSum = false;
  exprs_.storeGuard.clear();
  // Where the work-group computes several instances of its point in turn, the next may read what work-item
  // 0 stored: every work-item waits for it (the whole work-group takes the same branches).
  if (exprs_.mode == PointMode::Group && readsEarlierInstances(input_.model, kernelBand_, kernelLoops_ > 0))
    w.line("barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);");
  w.closeBlock();
}

// A statement instance outside every band. Under MPI, one whose sum the ranks split by its terms: its
// partial value first, combined across the ranks, then the statement with the combined value.
void OpenCLPrinter::printStatementCall(const StatementCall &call) {
  const map::TermSplit *split = splitOf(decomposition_, call.statement);
  if (!split)
    return printInstance(call);
  if (split->band >= 0)
    return fail("internal error: statement " + input_.model.statements[call.statement].name +
                ", split by its terms, met outside its band");
  exprs_.splitPass = ExprPrinter::SplitPass::Partial;
  printInstance(call);
  exprs_.splitPass = ExprPrinter::SplitPass::Finish;
  printCombine(*split);
  printInstance(call);
}

// One instance: one work-group when it reduces (its work-items share the reductions, as a triangular
// solve's sum(j in 0..i) in a sequential loop over i), else one work-item.
void OpenCLPrinter::printInstance(const StatementCall &call) {
  const model::Statement &statement = input_.model.statements[call.statement];
  // A split statement's instance after the combine has no sum left.
  const bool finishing =
      exprs_.splitPass == ExprPrinter::SplitPass::Finish && splitOf(decomposition_, call.statement);
  const bool grouped = !statement.reductions.empty() && !finishing;
  std::string base = statement.name + (grouped ? "_group" : "_single");
  std::string name = base;
  for (unsigned k = 2; kernelNames_.count(name); ++k)
    name = base + std::to_string(k);
  kernelNames_.insert(name);
  std::string member = hostMember(name);
  std::vector<KernelArg> args = baseArgs({call.statement}, true);
  std::vector<std::string> argNames;
  for (size_t k = 0; k < call.args.size(); ++k) {
    std::string arg = "polyc_point" + std::to_string(k);
    args.push_back({"const int " + arg, "cl_int(" + call.args[k] + ")", false, true});
    argNames.push_back(arg);
  }
  CodeWriter w;
  exprs_.mode = grouped ? PointMode::Group : PointMode::Item;
  exprs_.lane = "polyc_lid";
  exprs_.lanes = "polyc_group_size";
  exprs_.windows.clear();
  exprs_.scratchTypes.clear();
  if (grouped)
    w.line("const int polyc_lid = get_local_id(0), polyc_group_size = get_local_size(0);");
  printKernelStatement(call.statement, argNames, w);
  for (ast::ElemType t : exprs_.scratchTypes)
    args.push_back({"__local " + exprs_.typeName(t) + " *polyc_scratch_" + suffix(t),
                    "polyc_group * sizeof(" + std::string(clScalar(t)) + ")", true, false});
  emitKernel(name, statement.name + " at one point, by " + (grouped ? "one work-group." : "one work-item."), args,
             w.str());
  kernels.push_back({name, member});
  w_.openBlock("");
  w_.line("const size_t polyc_group = " +
          (grouped ? "polyc::rt::ocl::pointGroupSize(device(), " + member + ", " + reductionLength({call.statement}) + ")"
                   : std::string("1")) +
          ";");
  printArgs(member, args, false);
  printArgs(member, args, true);
  w_.line("timer.enqueue(device(), " + member + ", polyc_group, polyc_group);");
  w_.closeBlock();
}

// ---- The flexible wavefront

// A window of the flexible wavefront: an array read at the point's row and column plus offsets bounded
// by the params, staged in local memory as a ring of recent rows.
struct FlexibleWindow {
  const model::ArrayInfo *array = nullptr;
  bool recurrence = false;
  isl::set deltas; // read index - point, over (array dim 0, array dim 1)
  std::string name; // C identifier of the array
};

// The extent of the innermost variable of the statement's reductions (the one the lanes of a point
// share), the largest over its reductions, on the host; 0 when it has none.
static std::string innerReductionExtent(const model::Statement &statement, const ast::Program &program) {
  std::vector<const ast::Reduction *> reductions;
  collectReductions(*statement.equation->rhs, reductions);
  std::string text = "int64_t(0)";
  for (const ast::Reduction *r : reductions) {
    if (r->bindings.empty())
      continue;
    const ast::RangeBinding &binding = r->bindings.back();
    std::optional<AffineForm> lo = affineForm(*binding.lo, program), hi = affineForm(*binding.hi, program);
    std::string extent = "int64_t(32)"; // a range that depends on more than the params
    if (lo && hi) {
      std::string difference = std::to_string(hi->constant - lo->constant);
      for (auto [param, coefficient] : hi->terms)
        difference += " + " + std::to_string(coefficient) + " * " + cIdentifier(program.params[param]->name);
      for (auto [param, coefficient] : lo->terms)
        difference += " - " + std::to_string(coefficient) + " * " + cIdentifier(program.params[param]->name);
      extent = "std::max<int64_t>(" + difference + ", 0)";
    }
    text = "std::max<int64_t>(" + text + ", " + extent + ")";
  }
  return text;
}

// The window sums of the flexible wavefront's statement that take their terms from tables (TermTables.h),
// registered with the expression printer; returns each table's extents (host expressions of the sum's
// variables' ranges, whose product is the table's capacity), in table order. The coefficients have the
// statement's `type`. A sum isl cannot bound keeps its loops.
std::vector<std::vector<std::string>> OpenCLPrinter::planTermTables(const model::Statement &statement,
                                                                    const isl::set &domain,
                                                                    const std::vector<const ast::IndexVar *> &pointVars,
                                                                    const std::set<std::string> &windowed,
                                                                    const std::set<std::string> &staged,
                                                                    ast::ElemType type) {
  std::vector<std::vector<std::string>> extents;
  exprs_.termTables.clear();
  isl::set context = domain.params();
  for (const ast::Reduction *red : outerReductions(*statement.equation->rhs)) {
    std::optional<std::string> window = termTableWindow(*red, pointVars, windowed, staged);
    auto info = llvm::find_if(statement.reductions, [&](const model::ReductionInfo &r) { return r.reduction == red; });
    if (!window || info == statement.reductions.end())
      continue;
    std::vector<std::string> tableExtents;
    try {
      for (const isl::pw_aff &extent : boxExtents(info->range.intersect_domain(domain).range()))
        tableExtents.push_back(hostExpr(extent, context));
    } catch (const isl::exception &) {
      continue;
    }
    exprs_.termTables[red] = TermTableView{unsigned(extents.size()), exprs_.windows.at(*window).origin, type};
    extents.push_back(std::move(tableExtents));
  }
  return extents;
}

// Once per work-group, before the first column: the term tables (the whole group appends the terms in
// order), then each lane's first POLYC_HELD_TERMS terms of each table into private arrays.
void OpenCLPrinter::printTermTableBuild(const model::Statement &statement, const std::string &row,
                                        const std::string &col, const std::string &type, CodeWriter &w) {
  const size_t count = exprs_.termTables.size();
  for (size_t k = 0; k < count; ++k)
    w.line("int polyc_terms" + std::to_string(k) + "_size = 0;");
  w.comment("The window sums' terms, once per work-group: a table of (coefficient, offset from the point's cell).");
  w.openBlock("");
  w.comment("Any point will do: a table's terms are the same at every point.");
  w.line("const int " + row + " = polyc_row_lo, " + col + " = polyc_col_lo;");
  exprs_.mode = PointMode::StripTerms;
  exprs_.printStatement(statement, w);
  exprs_.mode = PointMode::Strip;
  w.closeBlock();
  w.line("barrier(CLK_LOCAL_MEM_FENCE);");
  for (size_t k = 0; k < count; ++k) {
    const std::string t = "polyc_terms" + std::to_string(k);
    w.line(type + " " + t + "_coefficient[POLYC_HELD_TERMS];");
    w.line("int " + t + "_offset[POLYC_HELD_TERMS], " + t + "_held = 0;");
    w.line("#pragma unroll");
    w.openBlock("for (int polyc_k = 0; polyc_k < POLYC_HELD_TERMS; ++polyc_k)");
    w.line("const int polyc_t = polyc_lane + polyc_k * polyc_lanes, polyc_has = polyc_t < " + t + "_size;");
    w.line(t + "_coefficient[polyc_k] = polyc_has ? " + t + "[polyc_t].coefficient : 0;");
    w.line(t + "_offset[polyc_k] = polyc_has ? " + t + "[polyc_t].offset : 0;");
    w.line(t + "_held += polyc_has;");
    w.closeBlock();
  }
}

bool OpenCLPrinter::printFlexibleWavefront(const BandView &band) {
  // What the flexible kernel cannot compute runs as the fixed wavefront (the allocation chose by cost).
  auto notApplicable = [&](const std::string &reason) {
    w_.comment("Band " + std::to_string(band.index) + ": the flexible wavefront does not apply (" + reason +
               "); the fixed wavefront runs instead.");
    return false;
  };
  if (band.statements.size() != 1) {
    return notApplicable("it needs exactly one statement");
  }
  const model::Model &model = input_.model;
  const ast::Program &program = *model.program;
  unsigned s = band.statements[0];
  const model::Statement &statement = model.statements[s];
  allocate::WavefrontMapping mapping;
  if (band.allocation && band.allocation->wavefront)
    mapping = *band.allocation->wavefront;
  unsigned rowDim = mapping.rowDim, colDim = mapping.columnDim;
  const ast::Equation &eq = *statement.equation;
  bool identityWrite = statement.repeatDims == 0 && statement.dimNames.size() == 2 && eq.lhsIndices.size() == 2 &&
                       eq.indexVars.size() == 2 && eq.indexVars[0] && eq.indexVars[1] && rowDim != colDim &&
                       rowDim < 2 && colDim < 2;
  if (!identityWrite) {
    return notApplicable("the OpenCL kernel needs a two-dimensional statement outside repeat blocks that "
                         "writes A[i, j]");
  }
  // The strips' columns are the arrays' contiguous (last) dimension, whatever the allocation's mapping
  // prefers: a ring row a step loads is then contiguous in global memory (coalesced loads). Either
  // orientation is legal, since every dependence looks back along both dimensions (checked below).
  if (colDim != 1)
    std::swap(rowDim, colDim);
  const model::ArrayInfo *array = model.findArray(statement.write.array);
  isl::set domain = statement.domain;
  if (!model.context.is_null())
    domain = domain.intersect_params(model.context);
  isl::set context = domain.params();
  // The domain must be a box: the product of its two projections.
  {
    isl::set box = flatProduct(resetTupleId(projectOutDim(domain, 1)), resetTupleId(projectOutDim(domain, 0)));
    isl::set plain = resetTupleId(domain);
    if (!box.is_equal(plain)) {
      return notApplicable("its domain is not a rectangle");
    }
  }
  // No dependence may go back along the rows or the columns.
  for (const analysis::Dependence &d : input_.deps.edges) {
    if (d.source != s || d.target != s || d.distances.is_null())
      continue;
    isl::set dist = resetTupleId(d.distances);
    isl::set back(dist.ctx(), "{ [a, b] : a < 0 or b < 0 }");
    if (!dist.intersect(back).is_empty()) {
      return notApplicable("a dependence goes back along the rows or the columns");
    }
  }

  // The reads: windows (2D, each index the point's own dimension plus an offset; inputs only with the
  // zero boundary, whose values the ring holds), staged arrays (an input read at indices that do not
  // depend on the point: filter coefficients), or global memory.
  std::vector<const ast::IndexVar *> pointVars = {eq.indexVars[0].get(), eq.indexVars[1].get()};
  std::map<std::string, FlexibleWindow> windows;
  std::set<std::string> notWindowed, staged, global;
  for (const model::Access &read : statement.reads) {
    if (!read.read || read.implicitUpdateRead)
      continue;
    const model::ArrayInfo *source = model.findArray(read.array);
    const ast::ArrayRead &ar = *read.read;
    bool recurrence = read.array == statement.write.array;
    bool gather = llvm::is_contained(ar.isGather, true);
    bool windowed = !gather && !read.isMay && source->decl->rank() == 2 && ar.indices.size() == 2 &&
                    (recurrence || source->decl->effectiveBoundary == ast::Boundary::Zero);
    for (unsigned d = 0; windowed && d < 2; ++d)
      for (unsigned v = 0; windowed && v < 2; ++v) {
        auto k = coefficientOf(*ar.indices[d], pointVars[v], program);
        windowed = k && *k == (d == v ? 1 : 0);
      }
    if (windowed) {
      // The access relation leaves out the elements outside the array (the boundary rule gives them);
      // the ring holds them too (as zeros), so the window's offsets are taken without that limit.
      isl::map relation = read.relation;
      if (!source->extent.is_null())
        relation = gistRange(relation, source->extent);
      isl::set deltas = resetTupleIds(relation.intersect_domain(domain)).deltas();
      FlexibleWindow &window = windows[read.array];
      window.array = source;
      window.recurrence = recurrence;
      window.name = cIdentifier(read.array);
      window.deltas = window.deltas.is_null() ? deltas : window.deltas.unite(deltas);
      // A window must have bounded offsets (the ring's size). The gist can leave them unbounded: with the
      // array's extent it also drops the bounds of a reduction's range that the extent implies.
      if (!isBounded(window.deltas) && !window.deltas.is_empty())
        notWindowed.insert(read.array);
      continue;
    }
    notWindowed.insert(read.array);
    bool invariant = !gather && !llvm::any_of(ar.indices, [&](const ast::ExprPtr &e) { return mentionsAny(*e, pointVars); });
    if (invariant && source->decl->kind == ast::ArrayKind::Input && source->decl->rank() > 0)
      staged.insert(read.array);
    else
      global.insert(read.array);
  }
  for (const std::string &n : notWindowed) {
    windows.erase(n);
    if (global.count(n))
      staged.erase(n);
  }
  if (notWindowed.count(statement.write.array)) {
    return notApplicable("it reads its own array other than at a bounded distance before the point");
  }
  isl::ctx ctx = domain.ctx();
  if (windows.count(statement.write.array) &&
      !windows[statement.write.array].deltas.intersect(isl::set(ctx, "{ [a, b] : a > 0 or b > 0 }")).is_empty()) {
    return notApplicable("it reads its own array ahead of the point");
  }
  // The recurrence first: its ring is the one the point's stores go to.
  std::vector<FlexibleWindow *> order;
  if (windows.count(statement.write.array))
    order.push_back(&windows[statement.write.array]);
  for (auto &[n, window] : windows)
    if (!window.recurrence)
      order.push_back(&window);

  std::string rowLo = hostExpr(dimMin(domain, rowDim), context);
  std::string rowHi = hostExpr(dimMax(domain, rowDim), context);
  std::string colLo = hostExpr(dimMin(domain, colDim), context);
  std::string colHi = hostExpr(dimMax(domain, colDim), context);

  std::string name = kernelName(band, "flexible");
  std::string member = hostMember(name);
  std::string board = hostMember(name + "_board");
  boards.push_back(board);
  ast::ElemType type = array->decl->elemType;
  std::string T = exprs_.typeName(type);
  std::vector<std::string> dims = exprs_.dimNames(statement);

  // The kernel body.
  CodeWriter w;
  exprs_.mode = PointMode::Strip;
  exprs_.lane = "polyc_lane";
  exprs_.lanes = "polyc_lanes";
  exprs_.windows.clear();
  exprs_.scratchTypes.clear();
  for (const FlexibleWindow *window : order) {
    WindowView view;
    view.rowDim = rowDim;
    view.colDim = colDim;
    view.row = dims[rowDim];
    view.col = dims[colDim];
    view.origin = "polyc_" + window->name + "_at";
    view.ringCols = "polyc_" + window->name + "_ring_cols";
    view.ringRows = "polyc_" + window->name + "_ring_rows";
    view.holdsBoundary = window->array->decl->effectiveBoundary == ast::Boundary::Zero;
    view.recurrence = window->recurrence;
    exprs_.windows[window->array->name] = view;
  }
  for (const std::string &n : staged)
    exprs_.setReadStorage(n, "polyc_" + cIdentifier(n) + "_local");
  std::set<std::string> windowed;
  for (const auto &[n, window] : windows)
    windowed.insert(n);
  std::vector<std::vector<std::string>> tableExtents =
      planTermTables(statement, domain, pointVars, windowed, staged, type);
  // The global element (row, col) of a window's array, 0 outside it (the zero boundary).
  auto globalRead = [&](const FlexibleWindow &window, const std::string &row, const std::string &col) {
    std::vector<std::string> idx(2);
    idx[rowDim] = row;
    idx[colDim] = col;
    std::string source = window.recurrence ? "polyc_seen" : window.name;
    return "(" + row + " >= 0 && " + row + " < " + exprs_.extent(*window.array, rowDim) + " && " + col + " >= 0 && " +
           col + " < " + exprs_.extent(*window.array, colDim) + " ? " + source + "[" +
           exprs_.elementIndex(*window.array, idx) + "] : " + exprs_.literal(0, window.array->decl->elemType) + ")";
  };
  auto p = [&](const FlexibleWindow &window, const std::string &what) { return "polyc_" + window.name + "_" + what; };
  auto elemType = [&](const FlexibleWindow &window) { return exprs_.typeName(window.array->decl->elemType); };
  // Stores a ring row's element at both of its slots.
  auto ringStore = [&](const FlexibleWindow &window, const std::string &row, const std::string &c,
                       const std::string &value) {
    w.line("const int polyc_slot = ((" + row + ") & (" + p(window, "ring_rows") + " - 1)) * " + p(window, "ring_cols") +
           " + " + c + ";");
    w.line(p(window, "ring") + "[polyc_slot] = " + p(window, "ring") + "[polyc_slot + " + p(window, "ring_rows") +
           " * " + p(window, "ring_cols") + "] = " + value + ";");
  };
  // The columns of a window's rows that are loaded: all of them for an input, only the halo on the
  // strip's left for the recurrence (the strip computes its own).
  auto loadedCols = [&](const FlexibleWindow &window) {
    return window.recurrence ? p(window, "left") : p(window, "ring_cols");
  };
  w.line("const int polyc_lid = get_local_id(0), polyc_group_size = get_local_size(0);");
  w.line("const int polyc_strip_lane = polyc_lid / polyc_lanes, polyc_lane = polyc_lid % polyc_lanes;");
  w.line("const int polyc_columns = (polyc_cols + polyc_strip - 1) / polyc_strip;");
  w.line("const int polyc_steps = polyc_rows + polyc_strip - 1;");
  w.comment("Step s of a strip needs its left neighbour at step s + strip: strip - 1 for the skew inside the\n"
            "strip, 1 because the next row of the halo is loaded during step s.");
  w.line("const int polyc_lag = polyc_strip;");
  w.line("__local int polyc_shared[4];");
  if (windows.count(statement.write.array)) {
    w.comment("What other work-groups wrote during this kernel is read past the (incoherent) L1 cache.");
    w.line("volatile __global const " + T + " *polyc_seen = " + cIdentifier(array->name) + ";");
  }
  if (!staged.empty()) {
    w.comment("The arrays every point reads whole (point-invariant inputs), once per work-group.");
    for (const std::string &n : staged) {
      const model::ArrayInfo &a = *model.findArray(n);
      w.openBlock("for (int polyc_k = polyc_lid; polyc_k < " + exprs_.storageSize(a) +
                  "; polyc_k += polyc_group_size)");
      w.line("polyc_" + cIdentifier(n) + "_local[polyc_k] = " + cIdentifier(n) + "[polyc_k];");
      w.closeBlock();
    }
    w.line("barrier(CLK_LOCAL_MEM_FENCE);");
  }
  if (!tableExtents.empty())
    printTermTableBuild(statement, dims[rowDim], dims[colDim], T, w);
  w.line("polyc_wf_state polyc_state = polyc_wf_begin();");
  w.openBlock("while (!polyc_state.done)");
  w.openBlock("if (polyc_state.column < 0)");
  w.line("polyc_wf_scan(&polyc_state, polyc_progress, polyc_locks, polyc_completed, polyc_columns, polyc_steps, "
         "polyc_lag, polyc_scratch_i32, polyc_shared);");
  w.openBlock("if (polyc_state.column >= 0)");
  w.comment("A new column: fill each ring with the rows its first step reads (zeros outside the arrays). The\n"
            "recurrence's rows the strip has not computed yet are overwritten before they are read.");
  w.line("const int polyc_first_col = polyc_col_lo + polyc_state.column * polyc_strip;");
  w.line("const int polyc_step = polyc_row_lo + polyc_state.step;");
  for (const FlexibleWindow *window : order) {
    w.openBlock("");
    w.line("const int polyc_low_row = polyc_step - (polyc_strip - 1) - " + p(*window, "back") + ";");
    w.line("const int polyc_count = (polyc_strip + " + p(*window, "back") + " + " + p(*window, "ahead") + ") * " +
           p(*window, "ring_cols") + ";");
    w.openBlock("for (int polyc_k = polyc_lid; polyc_k < polyc_count; polyc_k += polyc_group_size)");
    w.line("const int polyc_row = polyc_low_row + polyc_k / " + p(*window, "ring_cols") + ", polyc_c = polyc_k % " +
           p(*window, "ring_cols") + ";");
    w.line("const int polyc_col = polyc_first_col - " + p(*window, "left") + " + polyc_c;");
    ringStore(*window, "polyc_row", "polyc_c", globalRead(*window, "polyc_row", "polyc_col"));
    w.closeBlock();
    w.closeBlock();
  }
  w.line("barrier(CLK_LOCAL_MEM_FENCE);");
  w.closeBlock();
  w.elseBlock();
  w.line("const int polyc_first_col = polyc_col_lo + polyc_state.column * polyc_strip;");
  w.line("const int polyc_step = polyc_row_lo + polyc_state.step;");
  w.comment("Load each ring's next row now (row step + ahead + 1, which no point of this step reads: the ring\n"
            "has more rows than a step reads), store it after this step's reads: its latency hides behind them.");
  for (const FlexibleWindow *window : order) {
    std::string next = p(*window, "next");
    w.line("const int " + next + "_row = polyc_step + " + p(*window, "ahead") + " + 1;");
    w.line(elemType(*window) + " " + next + " = " + exprs_.literal(0, window->array->decl->elemType) + ";");
    w.openBlock("if (polyc_lid < " + loadedCols(*window) + ")");
    w.line("const int polyc_col = polyc_first_col - " + p(*window, "left") + " + polyc_lid;");
    w.line(next + " = " + globalRead(*window, next + "_row", "polyc_col") + ";");
    w.closeBlock();
    w.openBlock("for (int polyc_h = polyc_lid + polyc_group_size; polyc_h < " + loadedCols(*window) +
                "; polyc_h += polyc_group_size)");
    w.line("const int polyc_col = polyc_first_col - " + p(*window, "left") + " + polyc_h;");
    ringStore(*window, next + "_row", "polyc_h", globalRead(*window, next + "_row", "polyc_col"));
    w.closeBlock();
  }
  w.comment("Lane group polyc_strip_lane computes the point (row step - lane, column first + lane). Lanes past\n"
            "the domain compute a clamped point and store nothing, so every work-item meets every barrier.");
  w.line("const int polyc_row = polyc_step - polyc_strip_lane;");
  w.line("const int polyc_col = polyc_first_col + polyc_strip_lane;");
  w.line("const int polyc_active = polyc_row >= polyc_row_lo && polyc_row < polyc_row_lo + polyc_rows && "
         "polyc_col < polyc_col_lo + polyc_cols;");
  w.comment(statement.name + ": " + equationText(eq));
  w.openBlock("");
  w.line("const int " + dims[rowDim] + " = clamp(polyc_row, polyc_row_lo, polyc_row_lo + polyc_rows - 1);");
  w.line("const int " + dims[colDim] + " = min(polyc_col, polyc_col_lo + polyc_cols - 1);");
  if (!order.empty())
    w.comment("Each window's reads go through the point's own cell. Its ring holds every row twice (slots\n"
              "r % R and r % R + R), so rows back..ahead of the point are contiguous from the copy chosen here.");
  for (const FlexibleWindow *window : order) {
    std::string m = p(*window, "m");
    w.line("const int " + m + " = " + dims[rowDim] + " & (" + p(*window, "ring_rows") + " - 1);");
    std::string base = window->recurrence ? m + " + " + p(*window, "ring_rows")
                                          : m + " + (" + m + " + " + p(*window, "ahead") + " < " +
                                                p(*window, "ring_rows") + " ? " + p(*window, "ring_rows") + " : 0)";
    w.line(std::string(window->recurrence ? "" : "const ") + "__local " + elemType(*window) + " *" +
           p(*window, "at") + " = " + p(*window, "ring") + " + (" + base + ") * " + p(*window, "ring_cols") + " + " +
           dims[colDim] + " - polyc_first_col + " + p(*window, "left") + ";");
  }
  exprs_.deferSum = isSumOfSums(*eq.rhs);
  exprs_.unsyncedCombine = exprs_.deferSum || outerReductions(*eq.rhs).size() == 1;
  exprs_.storeGuard = "polyc_lane == 0 && polyc_active";
  exprs_.printStatement(statement, w);
  exprs_.deferSum = exprs_.unsyncedCombine = false;
  exprs_.storeGuard.clear();
  w.closeBlock();
  for (const FlexibleWindow *window : order) {
    w.openBlock("if (polyc_lid < " + loadedCols(*window) + ")");
    ringStore(*window, p(*window, "next") + "_row", "polyc_lid", p(*window, "next"));
    w.closeBlock();
  }
  w.line("polyc_wf_publish(&polyc_state, polyc_progress, polyc_locks, polyc_completed, polyc_steps, polyc_lag, "
         "polyc_polls, polyc_shared);");
  w.closeBlock();
  w.closeBlock();
  exprs_.windows.clear();
  exprs_.termTables.clear();
  exprs_.clearReadStorage();

  std::vector<KernelArg> args = baseArgs({s}, false);
  for (const char *counter : {"progress", "locks", "completed"})
    args.push_back({std::string("__global int *polyc_") + counter, board + "." + counter + "()"});
  for (const char *value : {"row_lo", "col_lo", "rows", "cols", "strip", "lanes", "polls"})
    args.push_back({std::string("const int polyc_") + value, std::string("cl_int(polyc_") + value + ")"});
  for (size_t k = 0; k < order.size(); ++k) {
    for (const char *value : {"ring_rows", "ring_cols", "back", "ahead", "left"})
      args.push_back({"const int " + p(*order[k], value), "cl_int(" + p(*order[k], value) + ")"});
    args.push_back({"__local " + elemType(*order[k]) + " *" + p(*order[k], "ring"),
                    "polyc_shape.windows[" + std::to_string(k) + "].bytes", true});
  }
  for (const std::string &n : staged) {
    const model::ArrayInfo &a = *model.findArray(n);
    args.push_back({"__local " + exprs_.typeName(a.decl->elemType) + " *polyc_" + cIdentifier(n) + "_local",
                    "polyc_" + cIdentifier(n) + "_bytes", true});
  }
  for (size_t k = 0; k < tableExtents.size(); ++k)
    args.push_back({"__local polyc_term_" + suffix(type) + " *polyc_terms" + std::to_string(k),
                    "polyc_terms" + std::to_string(k) + "_bytes", true});
  std::set<ast::ElemType> scratch = exprs_.scratchTypes;
  scratch.insert(ast::ElemType::I32); // the column scan
  for (ast::ElemType t : scratch)
    args.push_back({"__local " + exprs_.typeName(t) + " *polyc_scratch_" + suffix(t),
                    "polyc_shape.groupSize * sizeof(" + std::string(clScalar(t)) + ")", true});
  std::string what = "Band " + std::to_string(band.index) + ", " + statement.name +
                     ": flexible wavefront (seed 004). Processor columns are strips of polyc_strip columns of " +
                     dims[colDim] + " (the arrays' contiguous dimension); a strip is walked in steps over " +
                     dims[rowDim] + ", skewed inside the strip; work-groups take strips under column locks and "
                     "progress counters (see the device library above).";
  if (!order.empty() || !staged.empty()) {
    std::string inLocal;
    for (const FlexibleWindow *window : order)
      inLocal += (inLocal.empty() ? "" : ", ") + window->array->name;
    what += " A step reads only local memory: rings of recent rows of " + (inLocal.empty() ? "no array" : inLocal);
    std::string stagedNames;
    for (const std::string &n : staged)
      stagedNames += (stagedNames.empty() ? "" : ", ") + n;
    what += stagedNames.empty() ? "." : ", and copies of " + stagedNames + ".";
  }
  emitKernel(name, what, args, w.str());
  kernels.push_back({name, member});

  // The launch.
  w_.comment("flexible wavefront: one persistent kernel over strips of columns of " + dims[colDim] + ".");
  w_.openBlock("");
  w_.line("const int64_t polyc_row_lo = " + rowLo + ", polyc_rows = std::max<int64_t>(" + rowHi +
          " - polyc_row_lo + 1, 0);");
  w_.line("const int64_t polyc_col_lo = " + colLo + ", polyc_cols = std::max<int64_t>(" + colHi +
          " - polyc_col_lo + 1, 0);");
  w_.openBlock("if (polyc_rows > 0 && polyc_cols > 0)");
  // Offsets along the strip's rows (array dimension rowDim) and columns (colDim), from the params.
  auto bound = [&](const FlexibleWindow &window, unsigned d, bool low) {
    if (window.deltas.is_empty())
      return std::string("int64_t(0)");
    isl::pw_aff v = low ? dimMin(window.deltas, d).neg() : dimMax(window.deltas, d);
    return "std::max<int64_t>(0, " + hostExpr(v, context) + ")";
  };
  std::string windowList;
  for (const FlexibleWindow *window : order) {
    windowList += std::string(windowList.empty() ? "" : ", ") + "{" + bound(*window, rowDim, true) + ", " +
                  (window->recurrence ? "0" : bound(*window, rowDim, false)) + ", " + bound(*window, colDim, true) +
                  ", " + (window->recurrence ? "0" : bound(*window, colDim, false)) + ", sizeof(" +
                  clScalar(window->array->decl->elemType) + ")}";
  }
  w_.comment("The windows a point reads (rows back and ahead, columns left and right).");
  w_.line("const std::vector<polyc::rt::ocl::WindowSpec> polyc_windows = {" + windowList + "};");
  std::string stagedBytes = "0";
  for (const std::string &n : staged) {
    const model::ArrayInfo &a = *model.findArray(n);
    std::string bytes = "polyc_" + cIdentifier(n) + "_bytes";
    // At least one element: OpenCL refuses a local argument of 0 bytes (an empty array is never read).
    w_.line("const size_t " + bytes + " = size_t(std::max<int64_t>(" + exprs_.storageSize(a) + ", 1)) * sizeof(" +
            clScalar(a.decl->elemType) + ");");
    stagedBytes += " + " + bytes;
  }
  // The largest table's capacity: the strip's lanes follow it.
  std::string tableTerms;
  for (size_t k = 0; k < tableExtents.size(); ++k)
    tableTerms += ", (" + llvm::join(tableExtents[k], ") * (") + ")";
  if (!tableTerms.empty())
    tableTerms = ", std::max<int64_t>({int64_t(0)" + tableTerms + "})";
  for (size_t k = 0; k < tableExtents.size(); ++k) {
    std::string bytes = "polyc_terms" + std::to_string(k) + "_bytes";
    w_.line("const size_t " + bytes + " = polyc::rt::ocl::termTableBytes({" + llvm::join(tableExtents[k], ", ") +
            "}, " + (type == ast::ElemType::F64 ? "16" : "8") + ");");
    stagedBytes += " + " + bytes;
  }
  std::string scratchType = "cl_int";
  for (ast::ElemType t : scratch)
    if (t != ast::ElemType::I32)
      scratchType = clScalar(t);
  w_.line("const polyc::rt::ocl::StripShape polyc_shape = polyc::rt::ocl::chooseStripShape(device(), " + member +
          ", polyc_rows, polyc_cols, polyc_windows, " + stagedBytes + ", " +
          innerReductionExtent(statement, program) + ", sizeof(" + scratchType + ") * " +
          std::to_string(scratch.size() - 1) + tableTerms + ");");
  w_.line("const int polyc_strip = polyc_shape.strip, polyc_lanes = polyc_shape.lanes;");
  w_.line("const int polyc_polls = polyc_shape.polls;");
  for (size_t k = 0; k < order.size(); ++k) {
    std::string at = "polyc_windows[" + std::to_string(k) + "]", sh = "polyc_shape.windows[" + std::to_string(k) + "]";
    w_.line("const int " + p(*order[k], "ring_rows") + " = " + sh + ".ringRows, " + p(*order[k], "ring_cols") + " = " +
            sh + ".ringCols;");
    w_.line("const int " + p(*order[k], "back") + " = int(" + at + ".back), " + p(*order[k], "ahead") + " = int(" +
            at + ".ahead), " + p(*order[k], "left") + " = int(" + at + ".left);");
  }
  w_.line(board + ".reset(device(), polyc_shape.columns);");
  printArgs(member, args, false);
  w_.line("timer.enqueue(device(), " + member + ", polyc_shape.groups * polyc_shape.groupSize, polyc_shape.groupSize);");
  w_.closeBlock();
  w_.closeBlock();
  return true;
}

// ---------------------------------------------------------------------------------------------
// Files

bool usesDouble(const model::Model &model) {
  for (const model::ArrayInfo &a : model.arrays)
    if (a.decl->elemType == ast::ElemType::F64)
      return true;
  // A scatter's computed indices and condition are computed in double.
  return llvm::any_of(model.statements, [](const model::Statement &s) { return s.scatter; });
}

// The element types that scatters add to: each needs its atomic addition.
std::set<ast::ElemType> scatteredTypes(const model::Model &model) {
  std::set<ast::ElemType> types;
  for (const model::Statement &s : model.statements)
    if (s.scatter)
      types.insert(s.equation->array->elemType);
  return types;
}

// Atomic additions of floating-point values: OpenCL 1.2 has integer atomics only, so a value is added by
// compare-and-swap of its bits until no other work-item changed the element in between.
void printAtomicHelpers(const std::set<ast::ElemType> &types, CodeWriter &cl) {
  for (ast::ElemType type : types) {
    if (type == ast::ElemType::I32)
      continue;
    const bool f64 = type == ast::ElemType::F64;
    const std::string t = f64 ? "double" : "float", bits = f64 ? "ulong" : "uint";
    if (f64)
      cl.line("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable");
    for (const std::string space : {"global", "local"}) { // the array, a work-group's copy of it
      cl.openBlock("inline void polyc_atomic_add_" + space + "_" + (f64 ? "f64" : "f32") + "(volatile __" +
                   space + " " + t + " *p, " + t + " v)");
      cl.line(bits + " old = as_" + bits + "(*p), seen;");
      cl.openBlock("while ((seen = " + std::string(f64 ? "atom_cmpxchg" : "atomic_cmpxchg") +
                   "((volatile __" + space + " " + bits + " *)p, old, as_" + bits + "(as_" + t +
                   "(old) + v))) != old)");
      cl.line("old = seen;");
      cl.closeBlock();
      cl.closeBlock();
    }
  }
}

// The class is named after the program (Iir2dOpenCL), with a digit where a name of the program would
// collide (programTypeName).
std::string className(const ast::Program &program, const std::string &prog) {
  return programTypeName(program, prog, "OpenCL");
}

} // namespace

llvm::Expected<std::vector<GeneratedFile>> polyc::codegen::emitOpenCL(const CodegenInput &input) {
  const model::Model &model = input.model;
  const ast::Program &program = *model.program;
  const std::string prog = programName(input);
  const bool fp64 = usesDouble(model);

  // ---- the kernels
  CodeWriter cl;
  printBanner(input, prog + ".cl", "OpenCL C 1.2 kernels (the host program " + prog + ".cpp embeds them)", cl);
  cl.blank();
  if (fp64) {
    cl.line("#pragma OPENCL EXTENSION cl_khr_fp64 : enable");
    cl.line("#define POLYC_USE_FP64 1");
  }
  cl.comment("Integer limits the printed code may name.");
  cl.line("#ifndef INT32_MIN");
  cl.line("#define INT32_MIN INT_MIN");
  cl.line("#define INT32_MAX INT_MAX");
  cl.line("#endif");
  if (!program.consts.empty()) {
    cl.blank();
    cl.comment("Constants of the program.");
    for (auto &c : program.consts) {
      if (auto *i = std::get_if<int64_t>(&c->value))
        cl.line("__constant long " + cIdentifier(c->name) + " = " + std::to_string(*i) + ";");
      else if (auto *d = std::get_if<double>(&c->value)) {
        char buffer[64];
        snprintf(buffer, sizeof buffer, "%.17g", *d);
        std::string text = buffer;
        if (text.find_first_of(".eEn") == std::string::npos)
          text += ".0";
        cl.line(std::string("__constant ") + (fp64 ? "double " : "float ") + cIdentifier(c->name) + " = " + text +
                (fp64 ? "" : "f") + ";");
      }
    }
  }
  // --mpi: the bands the ranks share and the sums they split by their terms (map/Decompose.h).
  std::optional<map::Decomposition> decomposition;
  if (input.mpi)
    decomposition = map::decompose(model, input.schedule, input.allocation, {input.mpiRecompute});
  OpenCLExprPrinter exprs(model, input.schedule);
  std::vector<Package> packages = findPackages(model, input.schedule);
  if (decomposition && !decomposition->splits.empty()) {
    exprs.setSplitReductions(splitReductions(*decomposition, model, /*instanceBuffers=*/true));
    // A split statement's plain form finishes with the combined values (the partial passes set Partial).
    exprs.splitPass = ExprPrinter::SplitPass::Finish;
    dropSplitPackages(packages, *decomposition);
    cl.blank();
    cl.comment("MPI: a rank's block of the terms of a sum the ranks split (polyc::rt::mpi::Block).");
    cl.line("typedef struct { long first; long end; } polyc_Block;");
  }
  exprs.setPackages(std::move(packages));
  cl.blank();
  exprs.printHelpers(cl);
  printAtomicHelpers(scatteredTypes(model), cl);
  cl.blank();
  exprs.printUserFunctions(cl);
  cl.blank();
  cl.verbatim(polyc::rt::ocl::kWorkGroupReductionSource);
  cl.verbatim(polyc::rt::ocl::kFlexibleWavefrontSource);

  const bool stopsEarly = model.anyLoopStopsEarly();
  if (stopsEarly) {
    cl.blank();
    cl.comment(
        "After each iteration of a repeat loop that stops early: its changed flag, recorded and cleared.");
    cl.openBlock(
        "__kernel void polyc_record_changed(__global int *flag, __global int *ring, const int slot)");
    cl.line("ring[slot] = *flag;");
    cl.line("*flag = 0;");
    cl.closeBlock();
  }

  // ---- the schedule: host code and kernels together
  CodeWriter schedule;
  OpenCLPrinter printer(input, schedule, cl, exprs, decomposition ? &*decomposition : nullptr);
  if (llvm::Error error = printer.printSchedule())
    return error;
  if (!printer.error.empty())
    return llvm::createStringError("OpenCL code generation: " + printer.error);
  if (stopsEarly)
    printer.kernels.push_back({"polyc_record_changed", "polyc_record_changed_"});

  // ---- the host program
  const std::string cls = className(program, prog);
  std::vector<const model::ArrayInfo *> interface = interfaceArrays(model);
  CodeWriter h;
  printBanner(input, prog + ".cpp", "host program (OpenCL C API through polyc's runtime)", h);
  h.blank();
  h.line("#include \"" + prog + ".h\"");
  h.blank();
  h.line("#include <polyc/Runtime.h>");
  h.line("#include <polyc/opencl/OpenCLRuntime.h>");
  if (input.mpi)
    h.line("#include <polyc/opencl/MpiRows.h>");
  h.blank();
  h.line("#include <algorithm>");
  h.line("#include <cstdint>");
  h.line("#include <cstdio>");
  h.line("#include <string>");
  h.line("#include <vector>");
  h.blank();
  h.line("namespace {");
  h.blank();
  h.comment("The kernels of " + prog + ".cl, embedded so that the executable needs no file beside it.");
  std::string clText = cl.str();
  h.line("const char *const kKernelSource = R\"polyc_cl(");
  // Raw text: CodeWriter must not re-indent or wrap it.
  std::string hostText = h.str() + clText + ")polyc_cl\";\n";
  CodeWriter h2;
  h2.blank();
  printConstants(program, h2);
  h2.blank();
  ExprPrinter hostExprs(model, input.schedule);
  hostExprs.printHelpers(h2);
  h2.blank();
  h2.comment("Runs " + prog + " on the OpenCL device POLYC_OPENCL_DEVICE names (default: the first GPU).");
  h2.openBlock("class " + cls + " final : public polyc::rt::ocl::OpenCLCompute");
  h2.dedent();
  h2.line("public:");
  h2.indent();
  h2.line(cls + "() : OpenCLCompute(kKernelSource, \"\") {}");
  h2.blank();
  auto paramLines = [&](CodeWriter &w) {
    for (size_t p = 0; p < program.params.size(); ++p)
      w.line("[[maybe_unused]] const int64_t " + cIdentifier(program.params[p]->name) + " = context.params[" +
             std::to_string(p) + "];");
  };
  // upload
  h2.openBlock("void upload(polyc::rt::RunContext &context) override");
  h2.line(input.mpi ? "polyc::rt::ocl::prepareInRankOrder([this] { prepare(); });" : "prepare();");
  paramLines(h2);
  for (size_t a = 0; a < model.arrays.size(); ++a) {
    const model::ArrayInfo &array = model.arrays[a];
    std::string name = cIdentifier(array.name);
    std::string size = array.decl->kind == ast::ArrayKind::Local ? hostExprs.checkedStorageSize(array)
                                                                 : hostExprs.storageSize(array);
    h2.line("polyc::rt::ocl::checkIndexable(\"" + array.name + "\", " + size + ");");
    h2.line(name + "_.resize(device(), size_t(" + size + ") * sizeof(" + clScalar(array.decl->elemType) + "));");
    // Outputs too: the runtime zeroes them before every run (docs/running.md), and an output that the
    // run does not write everywhere (a repeat block of no iteration) must read as 0, as on every target.
    auto it = std::find(interface.begin(), interface.end(), &array);
    if (it != interface.end())
      h2.line("polyc::rt::ocl::uploadArray(device(), " + name + "_, context.arrays[" +
              std::to_string(it - interface.begin()) + "]);");
  }
  for (const map::TermSplit &split : decomposition ? decomposition->splits : std::vector<map::TermSplit>()) {
    const model::Statement &statement = model.statements[split.statement];
    h2.line(splitBufferName(statement) + "_.resize(device(), size_t(" +
            splitBufferSize(split, model, hostExprs, /*checked=*/true) + ") * sizeof(" +
            clScalar(statement.equation->array->elemType) + ")); // MPI: " + statement.name +
            "'s partial values");
  }
  if (stopsEarly) {
    h2.line("polyc_changed_.resize(device(), sizeof(cl_int));");
    h2.line("polyc_changes_.resize(device(), polyc::rt::ocl::ChangedRingSize * sizeof(cl_int));");
  }
  h2.openBlock("if (!" + (printer.kernels.empty() ? std::string("true") : printer.kernels.front().member) + ")");
  for (const KernelInfo &k : printer.kernels)
    h2.line(k.member + " = program().kernel(\"" + k.name + "\");");
  h2.closeBlock();
  if (!printer.recordLines.empty()) {
    h2.comment("Record the fixed wavefronts' launches (once per sizes and buffers), outside the timed region.");
    for (const std::string &line : printer.recordLines)
      h2.line(line);
  }
  h2.closeBlock();
  h2.blank();
  // compute
  h2.openBlock("double compute(polyc::rt::RunContext &context) override");
  paramLines(h2);
  printRowArrayChecksOfContext(input, exprs, h2);
  h2.line("polyc::rt::ocl::RegionTimer timer;");
  if (decomposition)
    h2.line("[[maybe_unused]] polyc::rt::ocl::RankRows polyc_rows(device());");
  for (const map::TermSplit &split : decomposition ? decomposition->splits : std::vector<map::TermSplit>())
    h2.line("const polyc::rt::mpi::Block " + splitBlockName(model.statements[split.statement]) +
            " = polyc::rt::mpi::rankBlock(" + spellParams(split.first, program) + ", " +
            spellParams(split.extent, program) + "); // MPI: this rank's terms");
  h2.verbatim(schedule.str());
  h2.line("return timer.finish(device());");
  h2.closeBlock();
  h2.blank();
  // download
  h2.openBlock("void download(polyc::rt::RunContext &context) override");
  for (size_t k = 0; k < interface.size(); ++k)
    if (interface[k]->decl->kind != ast::ArrayKind::Input)
      h2.line("polyc::rt::ocl::downloadArray(device(), " + cIdentifier(interface[k]->name) + "_, context.arrays[" +
              std::to_string(k) + "]);");
  if (std::none_of(interface.begin(), interface.end(),
                   [](const model::ArrayInfo *a) { return a->decl->kind != ast::ArrayKind::Input; }))
    h2.line("(void)context;");
  if (decomposition)
    printGathersOfContext(h2, *decomposition, model, exprs);
  h2.closeBlock();
  h2.blank();
  h2.dedent();
  h2.line("private:");
  h2.indent();
  if (!printer.sequences.empty()) {
    h2.comment("What a recorded launch sequence depends on: the sizes and the device buffers (which upload() keeps "
               "while the sizes stay).");
    h2.openBlock("uint64_t sequenceKey(const polyc::rt::RunContext &context) const");
    std::vector<std::string> keys;
    for (size_t p = 0; p < program.params.size(); ++p)
      keys.push_back("uint64_t(context.params[" + std::to_string(p) + "])");
    for (const model::ArrayInfo &array : model.arrays)
      keys.push_back("uint64_t(reinterpret_cast<uintptr_t>(" + cIdentifier(array.name) + "_.get()))");
    if (program.params.empty())
      h2.line("(void)context;");
    h2.line("return polyc::rt::ocl::hashKey({" + llvm::join(keys, ", ") + "});");
    h2.closeBlock();
    h2.verbatim(printer.sequenceFunctions.str());
    h2.blank();
  }
  for (const model::ArrayInfo &array : model.arrays)
    h2.line("polyc::rt::ocl::Buffer " + cIdentifier(array.name) + "_; // " + ast::spelling(array.decl->kind) + " " +
            array.name);
  for (const map::TermSplit &split : decomposition ? decomposition->splits : std::vector<map::TermSplit>())
    h2.line("polyc::rt::ocl::Buffer " + splitBufferName(model.statements[split.statement]) + "_; // MPI: " +
            model.statements[split.statement].name + "'s partial values, then the ranks' combined ones");
  if (stopsEarly) {
    h2.line("polyc::rt::ocl::Buffer polyc_changed_; // an iteration of a repeat loop that stops early "
            "changed one");
    h2.line(
        "polyc::rt::ocl::Buffer polyc_changes_; // the iterations' changed flags, recorded on the device");
  }
  for (const KernelInfo &k : printer.kernels)
    h2.line("polyc::rt::ocl::Kernel " + k.member + ";");
  for (const std::string &b : printer.boards)
    h2.line("polyc::rt::ocl::WavefrontBoard " + b + ";");
  for (const std::string &sequence : printer.sequences)
    h2.line("polyc::rt::ocl::LaunchSequence " + sequence + ";");
  h2.closeBlock(";");
  h2.blank();
  h2.openBlock("polyc::rt::ProgramInfo programInfo()");
  h2.line("polyc::rt::ProgramInfo info;");
  if (llvm::Error error = printProgramInfo(input, "info", h2))
    return error;
  h2.line("return info;");
  h2.closeBlock();
  h2.blank();
  h2.line("} // namespace");
  h2.blank();
  // the library function
  h2.comment("The library entry point of " + prog + ".h. OpenCL failures throw polyc::rt::ocl::Error.");
  h2.openBlock("extern \"C\" " + runFunctionSignature(input));
  h2.line("const polyc::rt::ProgramInfo info = programInfo();");
  std::string params;
  for (auto &p : program.params)
    params += (params.empty() ? "" : ", ") + std::string("p->") + cIdentifier(p->name);
  h2.line("const std::vector<int64_t> params = {" + params + "};");
  std::string arrays;
  for (const model::ArrayInfo *a : interface)
    arrays += (arrays.empty() ? "" : ", ") + std::string("const_cast<void *>(static_cast<const void *>(") +
              cIdentifier(a->name) + "))";
  h2.line("const std::vector<void *> arrays = {" + arrays + "};");
  h2.line(cls + " compute;");
  h2.line("polyc::rt::ocl::runOnce(info, compute, params, arrays);");
  if (program.params.empty())
    h2.line("(void)p;");
  h2.closeBlock();
  h2.blank();
  h2.openBlock("int main(int argc, char **argv)");
  h2.line("const polyc::rt::ProgramInfo info = programInfo();");
  h2.line(cls + " compute;");
  h2.line(std::string("return polyc::rt::") + (input.mpi ? "mpi::runMainMpi" : "runMain") +
          "(argc, argv, info, compute);");
  h2.closeBlock();
  hostText += h2.str();

  std::vector<GeneratedFile> files;
  files.push_back({prog + ".cl", clText});
  files.push_back({prog + ".cpp", hostText});
  files.push_back(emitLibraryHeader(input));
  return files;
}
