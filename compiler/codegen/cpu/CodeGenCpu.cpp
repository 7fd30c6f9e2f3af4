// The CPU target (see CodeGenCpu.h): prints the schedule's loops with OpenMP pragmas chosen from the
// allocation, the flexible wavefront as a runtime call, each statement as a member function of a
// struct that holds the params and arrays, the C interface function and a main() for runMain.
#include "compiler/codegen/cpu/CodeGenCpu.h"
#include "compiler/map/Decompose.h"

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/ExprPrinter.h"
#include "compiler/codegen/IslAstPrinter.h"
#include "compiler/codegen/IndexExprs.h"
#include "compiler/codegen/MpiCalls.h"
#include "compiler/codegen/IslCalls.h"
#include "compiler/codegen/Names.h"
#include "compiler/codegen/ProgramInterface.h"
#include "compiler/codegen/TermTables.h"

#include "llvm/ADT/StringExtras.h"

#include <isl/aff.h>
#include <isl/set.h>

#include <optional>
#include <set>

using namespace polyc;
using namespace polyc::codegen;

// Whether `name` occurs in `text` as a whole identifier.
static bool usesIdentifier(const std::string &text, const std::string &name) {
  auto isIdent = [](char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
    if ((at == 0 || !isIdent(text[at - 1])) && (at + name.size() >= text.size() || !isIdent(text[at + name.size()])))
      return true;
  return false;
}

namespace {

// Statement bodies for the CPU: OpenMP reductions on statements that run outside any parallel loop
// and whose band the allocation made a reduction (a scalar `loss[e] = sum(...)`).
class CpuExprPrinter : public ExprPrinter {
public:
  using ExprPrinter::ExprPrinter;
  bool parallelReductions = false;
  // Strip mode, for a statement function Sk_strip(..., polyc_first, polyc_run) that computes the points
  // polyc_first .. polyc_first + polyc_run - 1 of the statement's last dimension, named `stripDim`, at
  // once: each reduction's accumulator is an array over the run, its loops outside and the run inside
  // (so that the terms of a run, B[k, j .. j + 63] for gemm, vectorise), then the run's stores. Each
  // point adds its terms in the same order as alone: the results are the same. Empty: off.
  std::string stripDim;

  std::string printReduction(const ReductionParts &parts, CodeWriter &w) override {
    if (stripDim.empty() || parts.nested)
      return printScalarReduction(parts, w);
    const std::string acc = parts.accumulator, lane = acc + "[polyc_r]";
    w.line(typeName(parts.type) + " " + acc + "[" + std::to_string(StripWidth) + "];");
    w.line("for (" + indexType() + " polyc_r = 0; polyc_r < polyc_run; ++polyc_r)");
    w.line("  " + lane + " = " + parts.identity + ";");
    // The run inside the reduction's loops, unless their bounds use the point (a variable that the
    // where clause fixes to it: max(s in 0..Q where s == j)); then each point's loops inside the run.
    bool runInside = llvm::none_of(parts.loops, [&](const ReductionLoop &loop) {
      return usesIdentifier(loop.lo, stripDim) || usesIdentifier(loop.hi, stripDim);
    });
    if (!runInside)
      openRun(w);
    for (const ReductionLoop &loop : parts.loops)
      w.openBlock("for (" + indexType() + " " + loop.var + " = " + loop.lo + "; " + loop.var + " < " + loop.hi +
                  "; ++" + loop.var + ")");
    if (runInside)
      openRun(w);
    if (!parts.condition.empty())
      w.openBlock("if (" + parts.condition + ")");
    w.line(parts.combine(lane, parts.body(w)));
    if (!parts.condition.empty())
      w.closeBlock();
    w.closeBlock();
    for (size_t k = 0; k < parts.loops.size(); ++k)
      w.closeBlock();
    return lane;
  }

  void printStore(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices, const std::string &target,
                  const std::string &op, const std::string &rhs, CodeWriter &w) override {
    if (stripDim.empty())
      return ExprPrinter::printStore(array, indices, target, op, rhs, w);
    openRun(w);
    printStoreLine(target, op, rhs, w);
    w.closeBlock();
  }

  // The points of a run: the most a strip statement computes at once (a float accumulator of 64 is
  // 256 bytes, in L1 beside the rows it reads).
  static constexpr int StripWidth = 64;

private:
  void openRun(CodeWriter &w) const {
    w.openBlock("for (" + indexType() + " polyc_r = 0; polyc_r < polyc_run; ++polyc_r)");
    w.line("const " + indexType() + " " + stripDim + " = polyc_first + polyc_r;");
  }

  static std::string reductionClause(ast::ReductionOp op, const std::string &accumulators) {
    const char *name = op == ast::ReductionOp::Sum ? "+" : op == ast::ReductionOp::Max ? "max" : "min";
    return "reduction(" + std::string(name) + " : " + accumulators + ")";
  }
  static std::string reductionClause(const ReductionParts &parts) {
    return reductionClause(parts.reduction->op, parts.accumulator);
  }

  // Whether the reduction's one loop may run as SIMD lanes: its terms read and write nothing but the
  // accumulator, so any order is allowed, and no reduction nested in its terms runs its own loop.
  static bool vectorisable(const ReductionParts &parts) {
    return parts.loops.size() == 1 && outerReductions(*parts.reduction->body).empty();
  }

  static std::string simdPragma(const ReductionParts &parts) {
    return vectorisable(parts) ? "#pragma omp simd " + reductionClause(parts) : "";
  }

  bool threadsReduce(const ReductionParts &parts) const { return parallelReductions && !parts.nested; }

  bool printsPackages() const override { return stripDim.empty(); }
  // A package's sum of one variable whose terms hold no loop of their own: SIMD lanes, as one sum's.
  std::string packageLoopPragma(const ast::Reduction &red, const std::vector<std::string> &accumulators) const override {
    if (red.bindings.size() != 1 || red.bindings.front().vars.size() != 1 || !outerReductions(*red.body).empty())
      return "";
    return "#pragma omp simd " + reductionClause(red.op, llvm::join(accumulators, ", "));
  }

  std::string reductionLoopPragma(const ReductionParts &parts) const override {
    if (!threadsReduce(parts))
      return simdPragma(parts);
    return "#pragma omp parallel for" + std::string(vectorisable(parts) ? " simd " : " ") + reductionClause(parts);
  }

  // An OpenMP reduction over one loop is printed twice, behind a test of its terms' array reads against
  // MinParallelAccesses, as a parallel loop of calls only is (CpuAstPrinter::printFor): trisolv's sum
  // over j < i entered a parallel region of one thread for each i.
  std::string printScalarReduction(const ReductionParts &parts, CodeWriter &w) {
    if (!threadsReduce(parts) && vectorisable(parts) && parts.reduction->bindings.front().rowArray)
      return printRowReduction(parts, w);
    if (!threadsReduce(parts) || parts.loops.size() != 1)
      return ExprPrinter::printReduction(parts, w);
    const ReductionLoop &loop = parts.loops.front();
    std::string terms = loop.lo == "0" ? loop.hi : "(" + loop.hi + ") - (" + loop.lo + ")";
    w.line(typeName(parts.type) + " " + parts.accumulator + " = " + parts.identity + ";");
    w.openBlock("if (" + std::to_string(std::max<size_t>(1, arrayReads(*parts.reduction->body))) + " * (" + terms +
                ") >= polyc::rt::cpu::MinParallelAccesses)");
    printReductionLoops(parts, reductionLoopPragma(parts), w);
    w.elseBlock();
    printReductionLoops(parts, simdPragma(parts), w);
    w.closeBlock();
    return parts.accumulator;
  }

  // A sum over a row read from an index array: SIMD lanes for rows of MinSimdRowTerms terms or more,
  // a plain loop for shorter ones (Parallel.h says why).
  std::string printRowReduction(const ReductionParts &parts, CodeWriter &w) {
    const ReductionLoop &loop = parts.loops.front();
    w.line(typeName(parts.type) + " " + parts.accumulator + " = " + parts.identity + ";");
    w.openBlock("if ((" + loop.hi + ") - (" + loop.lo + ") >= polyc::rt::cpu::MinSimdRowTerms)");
    printReductionLoops(parts, simdPragma(parts), w);
    w.elseBlock();
    printReductionLoops(parts, "", w);
    w.closeBlock();
    return parts.accumulator;
  }

  static size_t arrayReads(const ast::Expr &e) {
    if (auto *read = llvm::dyn_cast<ast::ArrayRead>(&e)) {
      size_t n = 1;
      for (const ast::ExprPtr &index : read->indices)
        n += arrayReads(*index);
      return n;
    }
    if (auto *u = llvm::dyn_cast<ast::Unary>(&e))
      return arrayReads(*u->operand);
    if (auto *b = llvm::dyn_cast<ast::Binary>(&e))
      return arrayReads(*b->lhs) + arrayReads(*b->rhs);
    size_t n = 0;
    if (auto *c = llvm::dyn_cast<ast::Call>(&e))
      for (const ast::ExprPtr &arg : c->args)
        n += arrayReads(*arg);
    if (auto *t = llvm::dyn_cast<ast::Tuple>(&e))
      for (const ast::ExprPtr &element : t->elements)
        n += arrayReads(*element);
    if (auto *r = llvm::dyn_cast<ast::Reduction>(&e))
      n += arrayReads(*r->body);
    return n;
  }
};

// What the loop printer learned about each statement, for printing the statement functions after.
struct StatementUse {
  bool called = false;
  bool calledInParallel = false; // inside a parallel loop or a wavefront worker
  std::optional<allocate::AllocationKind> kind; // the allocation of the band around its calls
  bool stripped = false;  // called as Sk_strip over runs of its last dimension (see printStrip)
  bool pointwise = false; // called as Sk at single points
};

// Whether `statement` is computed in runs of its last dimension (CpuExprPrinter's strip mode), and gains
// from it: its value has a reduction whose terms read an array along that dimension's contiguous
// direction (B[k, j] in gemm, j last) and none across it (A[j, k] in syrk: 64 rows at once); no
// reduction's range uses the dimension (the reduction's loops run outside the run); and no gather
// outside reductions (its index is read into a local before the value, outside the run).
static bool stripsAlongLastDimension(const model::Statement &statement) {
  const ast::Equation &eq = *statement.equation;
  const ast::IndexVar *last = nullptr;
  for (const std::unique_ptr<ast::IndexVar> &var : eq.indexVars)
    if (var)
      last = var.get();
  if (!last || statement.dimNames.size() <= statement.repeatDims || statement.dimNames.back() != last->name)
    return false;
  bool contiguous = false, fits = true;
  unsigned depth = 0; // reductions around the expression being visited
  std::function<void(const ast::Expr &)> visit = [&](const ast::Expr &e) {
    if (auto *r = llvm::dyn_cast<ast::Reduction>(&e)) {
      for (const ast::RangeBinding &b : r->bindings)
        fits = fits && (depth > 0 || (!mentionsAny(*b.lo, {last}) && !mentionsAny(*b.hi, {last})));
      ++depth;
      visit(*r->body);
      --depth;
      return;
    }
    if (auto *a = llvm::dyn_cast<ast::ArrayRead>(&e)) {
      fits = fits && (depth > 0 || !llvm::is_contained(a->isGather, true));
      for (size_t d = 0; d < a->indices.size(); ++d) {
        bool along = mentionsAny(*a->indices[d], {last});
        if (along && depth > 0 && d + 1 < a->indices.size())
          fits = false; // across rows
        contiguous = contiguous || (along && depth > 0 && d + 1 == a->indices.size());
        visit(*a->indices[d]);
      }
    } else if (auto *u = llvm::dyn_cast<ast::Unary>(&e)) {
      visit(*u->operand);
    } else if (auto *b = llvm::dyn_cast<ast::Binary>(&e)) {
      visit(*b->lhs);
      visit(*b->rhs);
    } else if (auto *c = llvm::dyn_cast<ast::Call>(&e)) {
      for (const ast::ExprPtr &arg : c->args)
        visit(*arg);
    } else if (auto *t = llvm::dyn_cast<ast::Tuple>(&e)) {
      for (const ast::ExprPtr &element : t->elements)
        visit(*element);
    }
  };
  visit(*eq.rhs);
  return contiguous && fits;
}

class CpuAstPrinter : public IslAstPrinter {
public:
  CpuAstPrinter(const CodegenInput &input, CodeWriter &w, const ExprPrinter &exprs,
                std::vector<StatementUse> &uses, const map::Decomposition *decomposition)
      : IslAstPrinter(input, w), exprs_(exprs), uses_(uses), decomposition_(decomposition) {}

  std::optional<std::string> error; // the first band this target could not print

  // --mpi: rank 0 collects the rows of the outputs that only halos shared (map::Decomposition::gathers).
  void printGathers();

protected:
  void printBand(const BandView &band, const isl::ast_node &body) override;
  void printFor(const LoopView &loop, const isl::ast_node_for &node) override;
  bool printsStepHooks() const override { return true; }
  void printLoopPragma(const LoopView &loop) override;
  void printStatementCall(const StatementCall &call) override;
  bool tilesBands() const override { return true; }
  void narrowLoop(LoopView &loop) const override;
  std::string statementFunction(unsigned statement) const override;
  std::string stopsNow(const LoopView &) const override {
    return input_.mpi ? "!polyc::rt::mpi::onAnyRank(polyc_changed)" : "!polyc_changed";
  }

private:
  bool printsParallel(const LoopView &loop) const;
  std::optional<std::string> leafLoopAccesses(const LoopView &loop, const isl::ast_node_for &node) const;
  bool printStrip(const LoopView &loop, const isl::ast_node_for &node);
  void printVariant(allocate::AllocationKind kind, const BandView &band, const isl::ast_node &body);
  void printFlexible(const BandView &band);
  void recordCall(unsigned statement, bool parallel);
  void printShared(const BandView &band, const isl::ast_node &body, const map::BandDecomposition &shared);
  void printPipelineStrip(const map::Pipeline &pipeline);
  void printSplitBand(const BandView &band, const isl::ast_node &body);
  void printForBody(const LoopView &loop, const isl::ast_node_for &node);
  MpiArrays mpiArrays() const {
    MpiArrays arrays{input_.model, exprs_, [this](const model::ArrayInfo &a) { return exprs_.arrayRef(a); }};
    arrays.overlap = {"polyc::rt::mpi::HaloExchanges polyc_halos;", "polyc_halos.begin(",
                      "polyc_halos.finish();"};
    return arrays;
  }
  bool inSharedBlock(const LoopView &loop) const {
    return sharedBand_ >= 0 && loop.band && int(loop.band->index) == sharedBand_ && loop.member == 0;
  }

  const ExprPrinter &exprs_;
  std::vector<StatementUse> &uses_;
  const map::Decomposition *decomposition_;      // --mpi: the bands the ranks share; null otherwise
  int sharedBand_ = -1;                          // the distributed band being printed
  unsigned ownedLoops_ = 0; // the shared band's member-0 point loops (this rank's block) around the code
  std::optional<allocate::AllocationKind> kind_; // the allocation of the branch being printed
  bool printingSmallLoop_ = false; // the plain branch of a loop printed twice (printFor)
  // A band whose reductions the ranks split by their terms is printed twice: its partial values, then,
  // after they are combined, the statements that finish with them.
  bool printingSplit_ = false, partialPass_ = false;
};

} // namespace

void CpuAstPrinter::recordCall(unsigned statement, bool parallel) {
  StatementUse &use = uses_[statement];
  use.called = true;
  use.calledInParallel = use.calledInParallel || parallel;
  if (kind_ && (!use.kind || *use.kind != allocate::AllocationKind::Reduction))
    use.kind = kind_;
}

// Allocations the CPU target prints the same way.
static bool sameCpuLoops(allocate::AllocationKind a, allocate::AllocationKind b) {
  auto parallelLoops = [](allocate::AllocationKind k) {
    return k == allocate::AllocationKind::DataParallel || k == allocate::AllocationKind::Reduction;
  };
  return a == b || (parallelLoops(a) && parallelLoops(b));
}

void CpuAstPrinter::printBand(const BandView &band, const isl::ast_node &body) {
  if (decomposition_ && sharedBand_ < 0 && !insideParallel() && band.index < decomposition_->bands.size() &&
      decomposition_->bands[band.index].distributed)
    return printShared(band, body, decomposition_->bands[band.index]);
  if (!printingSplit_ && !bandSplits(decomposition_, band.index).empty())
    return printSplitBand(band, body);
  std::optional<allocate::AllocationKind> saved = kind_;
  const allocate::BandAllocation *a = band.allocation;
  if (!a) {
    kind_.reset();
    printNode(body);
  } else if (!a->runtimeCondition.empty() && a->otherwise && sameCpuLoops(a->kind, *a->otherwise)) {
    // A GPU target prints these two differently; on the CPU both are OpenMP over the parallel
    // dimensions with reductions inline, so the run-time choice would pick between equal branches.
    w_.comment("Band " + std::to_string(band.index) + ": " + describeKind(a->kind) + " if " +
               a->runtimeCondition + ", else " + describeKind(*a->otherwise) + "; the same loops on the CPU.");
    printVariant(allocate::AllocationKind::Reduction, band, body);
  } else if (!a->runtimeCondition.empty() && a->otherwise) {
    w_.comment("Band " + std::to_string(band.index) + ": the allocation is chosen at run time, " +
               describeKind(a->kind) + " if " + a->runtimeCondition + ", else " + describeKind(*a->otherwise) +
               ".");
    w_.openBlock("if (" + spellParams(a->runtimeCondition, *input_.model.program) + ")");
    printVariant(a->kind, band, body);
    w_.elseBlock();
    printVariant(*a->otherwise, band, body);
    w_.closeBlock();
  } else {
    printVariant(a->kind, band, body);
  }
  kind_ = saved;
}

// A band the MPI ranks share (map::Decomposition): this rank runs its block of member 0 (narrowLoop), then
// every rank's rows of the arrays the band wrote go to the others.
void CpuAstPrinter::printShared(const BandView &band, const isl::ast_node &body,
                                const map::BandDecomposition &shared) {
  if (shared.pipeline)
    return printSharedBand(w_, band.index, shared, mpiArrays(), [&] {
      printPipelineStrips(w_, shared, mpiArrays(), [&] { printPipelineStrip(*shared.pipeline); });
    });
  sharedBand_ = int(band.index);
  printSharedBand(w_, band.index, shared, mpiArrays(), [&] { printBand(band, body); });
  sharedBand_ = -1;
}

// A strip of a pipeline (printPipelineStrips): the flexible wavefront over this rank's block of rows and
// the strip's columns, its workers taking the block's rows as their columns (a worker walks down the
// array's contiguous index, as printFlexible's); every point it reads outside them is in an earlier strip
// or was received (map::Pipeline: its distances are >= 0 in both dimensions).
void CpuAstPrinter::printPipelineStrip(const map::Pipeline &pipeline) {
  const std::string columnFirst = spellParams(pipeline.columnFirst, *input_.model.program);
  NameScope saved = names();
  const std::string point = names().fresh("point"), row = names().fresh("row");
  const std::string type = exprs_.indexType();
  w_.openBlock("polyc::rt::cpu::runFlexibleWavefront(polyc_columnEnd - polyc_column, polyc_rank.end - "
               "polyc_rank.first, 0, [&](" +
               type + " " + point + ", " + type + " " + row + ")");
  recordCall(pipeline.statement, true);
  uses_[pipeline.statement].pointwise = true;
  w_.line(statementFunction(pipeline.statement) + "(polyc_rank.first + " + row + ", " +
          (columnFirst == "0" ? "" : columnFirst + " + ") + "polyc_column + " + point + ");");
  w_.closeBlock(");");
  names() = saved;
}

void CpuAstPrinter::printGathers() {
  if (decomposition_)
    codegen::printGathers(w_, *decomposition_, mpiArrays());
}

// A band whose reductions the ranks split by their terms (map::TermSplit): each rank's partial values
// into the buffers, the buffers combined across the ranks, then the statements with the combined values.
void CpuAstPrinter::printSplitBand(const BandView &band, const isl::ast_node &body) {
  std::vector<const map::TermSplit *> splits = bandSplits(decomposition_, band.index);
  w_.comment("Band " + std::to_string(band.index) + ": the MPI ranks split its reductions by their terms; " +
             "each rank's partial values first, combined across the ranks, then the statements with them.");
  printingSplit_ = partialPass_ = true;
  printBand(band, body);
  for (const map::TermSplit *split : splits) {
    const model::Statement &statement = input_.model.statements[split->statement];
    w_.line("polyc::rt::mpi::combineValues(" + splitBufferName(statement) + ", " +
            splitBufferSize(*split, input_.model, exprs_) + ", " +
            combineOperation(*statement.reductions[0].reduction) + ");");
  }
  partialPass_ = false;
  printBand(band, body);
  printingSplit_ = false;
}

std::string CpuAstPrinter::statementFunction(unsigned statement) const {
  std::string name = IslAstPrinter::statementFunction(statement);
  return partialPass_ ? partialFunctionName(name) : name;
}

// The loops of member 0 of the shared band run this rank's block.
void CpuAstPrinter::narrowLoop(LoopView &loop) const {
  if (inSharedBlock(loop))
    narrowToRankBlock(loop);
}

void CpuAstPrinter::printVariant(allocate::AllocationKind kind, const BandView &band, const isl::ast_node &body) {
  kind_ = kind;
  if (kind == allocate::AllocationKind::FlexibleWavefront)
    return printFlexible(band);
  if (kind == allocate::AllocationKind::FixedWavefront)
    w_.comment("Band " + std::to_string(band.index) +
               ": fixed wavefront, one parallel loop per hyperplane (a barrier between hyperplanes).");
  printNode(body);
}

void CpuAstPrinter::printFlexible(const BandView &band) {
  auto fail = [&](const std::string &why) {
    if (!error)
      error = "band " + std::to_string(band.index) + ": the CPU target cannot print a flexible wavefront " + why;
  };
  if (band.statements.size() != 1)
    return fail("over more than one statement (use --allocation=fixed)");
  unsigned s = band.statements.front();
  const model::Statement &statement = input_.model.statements[s];
  if (statement.dimNames.size() != 2)
    return fail("over a statement that is not two-dimensional (use --allocation=fixed)");
  allocate::WavefrontMapping mapping;
  if (band.allocation && band.allocation->wavefront)
    mapping = *band.allocation->wavefront;
  unsigned r = mapping.rowDim, c = mapping.columnDim;
  if (r > 1 || c > 1 || r == c)
    return fail("with a row/column mapping outside the statement's two dimensions");

  isl::set domain = statement.domain;
  if (!input_.model.context.is_null())
    domain = domain.intersect_params(input_.model.context);
  isl::set flat = resetTupleId(domain);
  isl::set rows = projectOutDim(flat, c), columns = projectOutDim(flat, r);
  if (!(r < c ? flatProduct(rows, columns) : flatProduct(columns, rows)).is_equal(flat))
    return fail("over a domain that is not a rectangle");

  isl::set context = input_.model.context.is_null() ? isl::set(domain.ctx(), "{ : }") : input_.model.context;
  isl::ast_build build = isl::ast_build::from_context(context);
  isl::pw_aff rowLo = dimMin(domain, r), colLo = dimMin(domain, c);
  std::string rowCount = expr(build.expr_from(dimMax(domain, r).sub(rowLo).add_constant(1)));
  std::string colCount = expr(build.expr_from(dimMax(domain, c).sub(colLo).add_constant(1)));
  std::string rowFirst = expr(build.expr_from(rowLo)), colFirst = expr(build.expr_from(colLo));

  NameScope saved = names();
  std::string row = names().fresh("row"), column = names().fresh("column");
  std::vector<std::string> args(2);
  args[r] = rowFirst == "0" ? row : rowFirst + " + " + row;
  args[c] = colFirst == "0" ? column : colFirst + " + " + column;
  const std::vector<std::string> &dims = statement.dimNames;
  w_.comment("Band " + std::to_string(band.index) + ": flexible wavefront (seed 004) over " + statement.name +
             ". Rows are " + dims[r] + ", columns are " + dims[c] +
             "; instead of one barrier per hyperplane, each worker takes the lowest column whose next row is "
             "ready (the column to its left is ahead) under that column's lock, and computes rows while it "
             "stays ready (polyc/cpu/Wavefront.h). Threads: OpenMP's default.");
  w_.openBlock("polyc::rt::cpu::runFlexibleWavefront(" + rowCount + ", " + colCount + ", 0, [this](" +
               exprs_.indexType() + " " + row + ", " + exprs_.indexType() + " " + column + ")");
  recordCall(s, true);
  uses_[s].pointwise = true;
  w_.line(statementFunction(s) + "(" + llvm::join(args, ", ") + ");");
  w_.closeBlock(");");
  names() = saved;
}

bool CpuAstPrinter::printsParallel(const LoopView &loop) const {
  return !loop.insideParallel && loop.coincident && loop.band && loop.band->band &&
         !loop.band->band->isSequentialRepeat && !(kind_ && *kind_ == allocate::AllocationKind::Sequential);
}

// The array accesses of a loop whose body is statement calls only, as C text evaluated before the loop:
// its trip count times the accesses of the statements in its body (reads and the write, each branch of
// an `if` counted). None when the body has a loop, a reduction or a read of many elements a point (then
// the work is assumed to be enough), or the loop does not step by 1.
std::optional<std::string> CpuAstPrinter::leafLoopAccesses(const LoopView &loop,
                                                          const isl::ast_node_for &node) const {
  if (loop.inc != "1")
    return std::nullopt;
  isl::ast_expr_op cond = node.cond().as<isl::ast_expr_op>();
  bool inclusive = cond.isa<isl::ast_expr_op_le>();
  if (!inclusive && !cond.isa<isl::ast_expr_op_lt>())
    return std::nullopt;
  size_t accesses = 0;
  std::function<bool(const isl::ast_node &)> count = [&](const isl::ast_node &n) {
    if (n.isa<isl::ast_node_user>()) {
      isl::ast_expr_op call = n.as<isl::ast_node_user>().expr().as<isl::ast_expr_op>();
      unsigned s = statementIndex(call.arg(0).as<isl::ast_expr_id>().id().name());
      if (s == ~0u || !input_.model.statements[s].reductions.empty())
        return false;
      for (const model::Access &read : input_.model.statements[s].reads)
        if (!read.relation.is_null() && !read.relation.is_single_valued())
          return false; // a window (the IIR's M x M) or a gather's range: many elements a point
      accesses += input_.model.statements[s].reads.size() + 1;
      return true;
    }
    if (n.isa<isl::ast_node_block>()) {
      isl::ast_node_list children = n.as<isl::ast_node_block>().children();
      for (unsigned c = 0; c < children.size(); ++c)
        if (!count(children.at(c)))
          return false;
      return true;
    }
    if (n.isa<isl::ast_node_if>()) {
      isl::ast_node_if branch = n.as<isl::ast_node_if>();
      return count(branch.then_node()) && (!branch.has_else_node() || count(branch.else_node()));
    }
    return false;
  };
  if (!count(node.body()))
    return std::nullopt;
  std::string trips = expr(cond.arg(1));
  if (loop.init != "0")
    trips += " - " + (loop.init.find(' ') == std::string::npos ? loop.init : "(" + loop.init + ")");
  if (inclusive)
    trips += " + 1";
  return std::to_string(accesses) + " * " + (trips.find(' ') == std::string::npos ? trips : "(" + trips + ")");
}

void CpuAstPrinter::printLoopPragma(const LoopView &loop) {
  if (!printsParallel(loop) || printingSmallLoop_)
    return;
  w_.line("#pragma omp parallel for");
  markParallel();
}

// A parallel loop of calls only is printed twice, behind a test of its accesses: OpenMP's threads when
// it makes at least MinParallelAccesses, a plain loop otherwise. (An `if` clause on the pragma would
// still enter a parallel region of one thread, which costs as much as the steps of jacobi-1d.)
void CpuAstPrinter::printFor(const LoopView &loop, const isl::ast_node_for &node) {
  bool owned = inSharedBlock(loop) && !loop.tileLoop;
  ownedLoops_ += owned;
  printForBody(loop, node);
  ownedLoops_ -= owned;
}

void CpuAstPrinter::printForBody(const LoopView &loop, const isl::ast_node_for &node) {
  // A strip reads its bounds from the AST, not from the narrowed loop, and calls its statements
  // unguarded: none in a shared band outside this rank's block (printStatementCall).
  bool unowned = sharedBand_ >= 0 && ownedLoops_ == 0;
  if (!inSharedBlock(loop) && !unowned && printStrip(loop, node))
    return;
  std::optional<std::string> accesses =
      printsParallel(loop) && !printingSmallLoop_ ? leafLoopAccesses(loop, node) : std::nullopt;
  if (!accesses)
    return IslAstPrinter::printFor(loop, node);
  w_.openBlock("if (" + *accesses + " >= polyc::rt::cpu::MinParallelAccesses)");
  IslAstPrinter::printFor(loop, node);
  w_.elseBlock();
  printingSmallLoop_ = true;
  IslAstPrinter::printFor(loop, node);
  printingSmallLoop_ = false;
  w_.closeBlock();
}

// A parallel loop over the last dimension of the statements in its body, calls only, one of which has a
// reduction that gains from runs (gemm's j: C[i, j] = ... sum(k) A[i, k] * B[k, j]): the loop goes in
// runs of StripWidth points; such a statement computes a run in one Sk_strip call (the run's terms of
// each k together), the others point by point over the run. The loop carries no dependence, so the
// points of a run may be computed in any order, and each statement's run before the next statement's
// keeps the order of every dependence inside an iteration. False when the loop is not one.
bool CpuAstPrinter::printStrip(const LoopView &loop, const isl::ast_node_for &node) {
  if (!loop.coincident || loop.inc != "1")
    return false;
  std::vector<isl::ast_node> children;
  if (node.body().isa<isl::ast_node_block>()) {
    isl::ast_node_list list = node.body().as<isl::ast_node_block>().children();
    for (unsigned c = 0; c < list.size(); ++c)
      children.push_back(list.at(c));
  } else {
    children.push_back(node.body());
  }
  isl::ast_expr_op cond = node.cond().as<isl::ast_expr_op>();
  std::string iterator = node.iterator().as<isl::ast_expr_id>().id().name();
  auto isIterator = [&](const isl::ast_expr &e) {
    return e.isa<isl::ast_expr_id>() && e.as<isl::ast_expr_id>().id().name() == iterator;
  };
  bool upTo = cond.isa<isl::ast_expr_op_le>() || cond.isa<isl::ast_expr_op_lt>();
  if (!upTo || !isIterator(cond.arg(0)))
    return false;
  // Each call: its statement, the arguments before the last (which is the iterator), whether it strips.
  struct Call {
    unsigned statement;
    std::vector<std::string> args;
    bool strips;
  };
  std::vector<Call> calls;
  for (const isl::ast_node &child : children) {
    if (!child.isa<isl::ast_node_user>())
      return false;
    isl::ast_expr_op call = child.as<isl::ast_node_user>().expr().as<isl::ast_expr_op>();
    if (call.n_arg() < 2 || !isIterator(call.arg(call.n_arg() - 1)))
      return false;
    Call c{statementIndex(call.arg(0).as<isl::ast_expr_id>().id().name()), {}, false};
    if (c.statement == ~0u)
      return false;
    for (unsigned a = 1; a + 1 < call.n_arg(); ++a) {
      c.args.push_back(expr(call.arg(a)));
      if (usesIdentifier(c.args.back(), loop.iterator))
        return false;
    }
    c.strips = stripsAlongLastDimension(input_.model.statements[c.statement]);
    calls.push_back(std::move(c));
  }
  if (llvm::none_of(calls, [](const Call &c) { return c.strips; }))
    return false;

  std::string bound = expr(cond.arg(1));
  bool inclusive = cond.isa<isl::ast_expr_op_le>();
  std::string run = "std::min<int64_t>(" + std::to_string(CpuExprPrinter::StripWidth) + ", (" + bound + ") - " +
                    loop.iterator + (inclusive ? " + 1)" : ")");
  w_.comment(loopComment(loop) + "; in runs of " + std::to_string(CpuExprPrinter::StripWidth) + " points");
  bool parallel = printsParallel(loop);
  if (parallel)
    w_.line("#pragma omp parallel for");
  w_.openBlock("for (int64_t " + loop.iterator + " = " + loop.init + "; " + loop.iterator +
               (inclusive ? " <= " : " < ") + bound + "; " + loop.iterator + " += " +
               std::to_string(CpuExprPrinter::StripWidth) + ")");
  for (Call &c : calls) {
    recordCall(c.statement, parallel || insideParallel());
    if (c.strips) {
      uses_[c.statement].stripped = true;
      c.args.push_back(loop.iterator);
      c.args.push_back(run);
      w_.line(statementFunction(c.statement) + "_strip(" + llvm::join(c.args, ", ") + ");");
      continue;
    }
    uses_[c.statement].pointwise = true;
    std::string point = names().fresh(loop.iterator + "_point");
    w_.openBlock("for (int64_t " + point + " = " + loop.iterator + "; " + point + " < " + loop.iterator + " + " +
                 run + "; ++" + point + ")");
    c.args.push_back(point);
    w_.line(statementFunction(c.statement) + "(" + llvm::join(c.args, ", ") + ");");
    w_.closeBlock();
  }
  w_.closeBlock();
  return true;
}

// In a shared band outside the loops of this rank's block (isl gives a value of member 0 a piece of its
// own, such as a boundary row), an instance runs only on the rank whose block holds it: the owner of the
// rows it writes, whose copy of the rows it reads is current.
void CpuAstPrinter::printStatementCall(const StatementCall &call) {
  recordCall(call.statement, insideParallel());
  uses_[call.statement].pointwise = true;
  if (sharedBand_ < 0 || ownedLoops_ > 0)
    return IslAstPrinter::printStatementCall(call);
  const std::string &row = call.args.at(decomposition_->bands[sharedBand_].statementDims.at(call.statement));
  w_.openBlock("if (" + ownsRowCondition(row) + ")");
  IslAstPrinter::printStatementCall(call);
  w_.closeBlock();
}

// ---------------------------------------------------------------------------------------------
// The file

static const char *roleWord(ast::ArrayKind kind) {
  switch (kind) {
  case ast::ArrayKind::Input: return "input";
  case ast::ArrayKind::Output: return "output";
  case ast::ArrayKind::InOut: return "inout, updated in place";
  case ast::ArrayKind::Local: return "local";
  }
  return "";
}

static std::string shapeComment(const ast::ArrayDecl &decl, const ExprPrinter &exprs, const model::ArrayInfo &a) {
  if (decl.shape.empty())
    return "scalar";
  std::vector<std::string> extents;
  for (auto &e : decl.shape)
    extents.push_back(exprText(*e));
  std::string text = "[" + llvm::join(extents, ", ") + "]";
  for (unsigned d = 0; d < decl.rank(); ++d)
    if (auto *f = exprs.folding(a.name, d))
      text += ", dimension " + std::to_string(d) + " folded modulo " +
              (f->windowValue > 0 ? std::to_string(f->windowValue) : f->window);
  return text;
}

// The arrays a statement function's body uses, as local __restrict__ copies of the members of the same
// names: without them the compiler reloads `this->A` in every iteration of a reduction's loop, and that
// stops it vectorising (syrk: 0.24 -> 0.054 s with the SIMD reductions). polyc allocates every array
// apart, and the C interface requires arrays that do not overlap (ProgramInterface).
static void printRestrictedArrays(const model::Model &model, const CpuExprPrinter &exprs, const std::string &body,
                                  CodeWriter &w) {
  for (const model::ArrayInfo &a : model.arrays) {
    std::string name = exprs.arrayRef(a);
    if (!usesIdentifier(body, name))
      continue;
    bool readOnly = a.decl->kind == ast::ArrayKind::Input;
    w.line(std::string(readOnly ? "const " : "") + exprs.typeName(a.decl->elemType) + " *__restrict__ " + name +
           " = this->" + name + ";");
  }
}

// Sk_strip(..., polyc_first, polyc_run): the statement at the points polyc_first .. polyc_first +
// polyc_run - 1 of its last dimension (CpuExprPrinter's strip mode, CpuAstPrinter::printStrip).
static void printStripFunction(const model::Model &model, const model::Statement &statement, CpuExprPrinter &exprs,
                               const std::string &function, CodeWriter &w) {
  std::vector<std::string> dims = exprs.dimNames(statement);
  CodeWriter body;
  body.indent();
  body.indent();
  exprs.stripDim = dims.back();
  bool savedReductions = exprs.parallelReductions;
  exprs.parallelReductions = false;
  exprs.printStatement(statement, body);
  exprs.stripDim.clear();
  exprs.parallelReductions = savedReductions;
  std::string params;
  for (size_t k = 0; k + 1 < dims.size(); ++k)
    params += exprs.indexType() + " " + (usesIdentifier(body.str(), dims[k]) ? dims[k] : "/*" + dims[k] + "*/") + ", ";
  params += exprs.indexType() + " polyc_first, " + exprs.indexType() + " polyc_run";
  w.openBlock("void " + function + "_strip(" + params + ") const");
  printRestrictedArrays(model, exprs, body.str(), w);
  w.append(body);
  w.closeBlock();
}

// The member functions that compute one instance of `statement` (`function`), or a run of its points
// (`function`_strip), as the loops call them.
static void printStatementFunctions(const model::Model &model, const model::Statement &statement,
                                    CpuExprPrinter &exprs, const StatementUse &use, const std::string &function,
                                    CodeWriter &w) {
  std::vector<std::string> dims = exprs.dimNames(statement);
  CodeWriter body;
  body.indent();
  body.indent();
  exprs.printStatement(statement, body);
  // A dimension the body does not use (the repeat variable, mostly) keeps its name as a comment.
  std::string params;
  for (const std::string &d : dims)
    params += (params.empty() ? "" : ", ") + exprs.indexType() + " " +
              (usesIdentifier(body.str(), d) ? d : "/*" + d + "*/");
  // Only the strip form when no single point is computed alone (an unused function is noise).
  if (use.pointwise || !use.stripped) {
    w.openBlock("void " + function + "(" + params + ") const");
    printRestrictedArrays(model, exprs, body.str(), w);
    w.append(body);
    w.closeBlock();
  }
  if (use.stripped)
    printStripFunction(model, statement, exprs, function, w);
}

// An OpenMP reduction where the reduction is the only parallelism left: the statement runs outside
// parallel loops and its band is a reduction, or it has no dimensions but repeat ones (a scalar like
// loss[e] = sum(...)).
static bool threadsReduceIn(const model::Statement &statement, const StatementUse &use) {
  bool onlyRepeatDims = statement.dimNames.size() == statement.repeatDims;
  return use.called && !use.calledInParallel &&
         (onlyRepeatDims || (use.kind && *use.kind == allocate::AllocationKind::Reduction));
}

// The packages whose members a thread computes a point of at a time: called pointwise only (strips keep
// vector accumulators of their own) and not reducing over threads.
static std::vector<Package> pointwisePackages(const model::Model &model, const schedule::Schedule &schedule,
                                              const std::vector<StatementUse> &uses) {
  std::vector<Package> kept;
  for (const Package &package : findPackages(model, schedule))
    if (llvm::all_of(package.statements, [&](unsigned s) {
          return uses[s].pointwise && !uses[s].stripped && !threadsReduceIn(model.statements[s], uses[s]);
        }))
      kept.push_back(package);
  return kept;
}

// A streamed build's run (polyc/Stream.h): the streamed arrays in host rings that the loop's hooks fill
// and drain one slice per step, the others in `context`.
static void printStreamedRun(const CodegenInput &input, const ExprPrinter &exprs, const std::string &type,
                             CodeWriter &w) {
  const ast::Program &program = *input.model.program;
  w.comment(
      "A streamed run: the streamed arrays' slices come from `slices` and go to it one step at a time.");
  w.openBlock("double polyc_runStreamed(polyc::rt::RunContext &context, polyc::rt::StreamSlices &slices)");
  w.line(type + " polyc_program;");
  for (unsigned k = 0; k < program.params.size(); ++k) {
    std::string name = cIdentifier(program.params[k]->name);
    w.line("[[maybe_unused]] const int64_t " + name + " = context.params[" + std::to_string(k) + "];");
    w.line("polyc_program." + name + " = " + name + ";");
  }
  w.line("polyc::rt::HostRings polyc_rings;");
  std::vector<const model::ArrayInfo *> arrays = interfaceArrays(input.model);
  for (unsigned k = 0; k < arrays.size(); ++k) {
    const model::ArrayInfo &a = *arrays[k];
    std::string member = "polyc_program." + exprs.arrayRef(a), type = exprs.typeName(a.decl->elemType);
    std::string index = std::to_string(k);
    const schedule::StreamedArray *streamed = streamedArray(input.schedule, a.name);
    if (!streamed) {
      w.line(member + " = context.arrays[" + index + "].data<" + type + ">();");
      continue;
    }
    std::string slots = std::to_string(streamed->slots);
    if (streamed->isInput) {
      w.line(member + " = polyc_rings.input<" + type + ">(std::move(slices.readers[" + index + "]), " +
             slots + ");");
      continue;
    }
    std::vector<std::string> extents = exprs.wholeExtents(a);
    std::string slice = "int64_t(1)";
    for (size_t d = 1; d < extents.size(); ++d)
      slice += " * int64_t(" + extents[d] + ")";
    w.line(member + " = polyc_rings.output<" + type + ">(std::move(slices.writers[" + index + "]), " + slots +
           ", " + slice + ");");
  }
  w.line("polyc_program.polyc_steps = &polyc_rings;");
  w.line("polyc::rt::Timer polyc_timer;");
  w.line("polyc_program.run();");
  w.line("polyc_rings.finish();");
  w.line("return polyc_timer.seconds();");
  w.closeBlock();
  w.blank();
}

llvm::Expected<std::vector<GeneratedFile>> polyc::codegen::emitCpu(const CodegenInput &input) {
  const model::Model &model = input.model;
  const ast::Program &program = *model.program;
  std::string prog = programName(input);
  CpuExprPrinter exprs(model, input.schedule);
  std::vector<StatementUse> uses(model.statements.size());

  // The loops first: they tell which statements run in parallel, which the statement bodies need.
  CodeWriter loops; // at the level of run()'s body
  loops.indent();
  loops.indent();
  std::optional<map::Decomposition> decomposition;
  if (input.mpi)
    decomposition = map::decompose(model, input.schedule, input.allocation,
                                   {.recompute = input.mpiRecompute, .pipelines = input.mpiPipelines});
  CpuAstPrinter printer(input, loops, exprs, uses, decomposition ? &*decomposition : nullptr);
  if (llvm::Error e = printer.printSchedule())
    return e;
  if (printer.error)
    return llvm::createStringError(*printer.error);
  printer.printGathers();
  std::vector<Package> packages = pointwisePackages(model, input.schedule, uses);
  if (decomposition) {
    exprs.setSplitReductions(splitReductions(*decomposition, model));
    dropSplitPackages(packages, *decomposition);
  }
  exprs.setPackages(std::move(packages));

  std::string type = programTypeName(program, prog, "");
  CodeWriter w;
  printBanner(input, prog + ".cpp", "C++17 + OpenMP code for the CPU", w);
  w.blank();
  w.line("#include \"" + prog + ".h\"");
  w.blank();
  w.line("#include <polyc/Runtime.h>");
  if (input.mpi)
    w.line("#include <polyc/mpi/Mpi.h>");
  if (input.schedule.streaming)
    w.line("#include <polyc/Stream.h>");
  w.line("#include <polyc/Timer.h>");
  w.line("#include <polyc/cpu/Parallel.h>");
  w.line("#include <polyc/cpu/Wavefront.h>");
  w.blank();
  for (const char *header : {"algorithm", "cfloat", "chrono", "cmath", "cstdint", "cstdio", "cstdlib", "cstring",
                             "stdexcept", "string", "vector"})
    w.line(std::string("#include <") + header + ">");
  w.blank();
  w.line("namespace {");
  w.blank();
  printConstants(program, w);
  w.blank();
  exprs.printHelpers(w);
  w.blank();
  exprs.printUserFunctions(w);
  w.blank();

  // The struct: params, arrays, statements, run().
  w.comment("The params and arrays of one call of " + prog + "_run, and one member function per statement.");
  w.openBlock("struct " + type);
  w.comment("Params.");
  for (auto &p : program.params)
    w.line("int64_t " + cIdentifier(p->name) + " = 0;");
  w.comment("Arrays, dense and row-major; locals are allocated by run().");
  for (const model::ArrayInfo &a : model.arrays) {
    bool readOnly = a.decl->kind == ast::ArrayKind::Input;
    w.line(std::string(readOnly ? "const " : "") + exprs.typeName(a.decl->elemType) + " *" + exprs.arrayRef(a) +
           " = nullptr; // " + roleWord(a.decl->kind) + " " + shapeComment(*a.decl, exprs, a));
  }
  if (input.schedule.streaming)
    w.line(
        "polyc::rt::StepHooks *polyc_steps = nullptr; // moves the streamed arrays' slices around each step");
  if (model.anyLoopStopsEarly())
    w.line("mutable int polyc_changed = 0; // an iteration of a repeat loop that stops early changed an "
           "element");
  for (const map::TermSplit &split : decomposition ? decomposition->splits : std::vector<map::TermSplit>()) {
    const model::Statement &statement = model.statements[split.statement];
    w.line("polyc::rt::mpi::Block " + splitBlockName(statement) + "{}; // MPI: this rank's terms of " +
           statement.name + "'s reduction");
    if (split.band >= 0)
      w.line(exprs.typeName(statement.equation->array->elemType) + " *" + splitBufferName(statement) +
             " = nullptr; // MPI: " + statement.name + "'s partial values, then the ranks' combined ones");
  }
  for (unsigned s = 0; s < model.statements.size(); ++s) {
    const model::Statement &statement = model.statements[s];
    w.blank();
    w.comment(statement.name + ": " + equationText(*statement.equation) + "  (" +
              equationLocation(input, *statement.equation) + ")");
    exprs.parallelReductions = threadsReduceIn(statement, uses[s]);
    const map::TermSplit *split = splitOf(decomposition ? &*decomposition : nullptr, s);
    if (split && split->band >= 0) {
      // Its reduction's partial value on this rank's terms, into the buffer; the functions below finish
      // the statement with the ranks' combined values.
      exprs.splitPass = ExprPrinter::SplitPass::Partial;
      printStatementFunctions(model, statement, exprs, uses[s], partialFunctionName(statement.name), w);
      exprs.splitPass = ExprPrinter::SplitPass::Finish;
    }
    printStatementFunctions(model, statement, exprs, uses[s], statement.name, w);
    exprs.splitPass = ExprPrinter::SplitPass::Whole;
  }
  w.blank();
  w.comment("Runs every statement instance in the order of the schedule.");
  w.openBlock("void run()");
  printRowArrayChecks(input, exprs, w, [&](const model::ArrayInfo &a) { return exprs.arrayRef(a); });
  bool anyLocal = false;
  // The storage vectors are named apart from the program's names (a param named rStorage: fuzz seed
  // 601668), which run()'s body may use.
  NameScope runNames = programNames(program);
  for (const model::ArrayInfo &a : model.arrays)
    if (a.decl->kind == ast::ArrayKind::Local) {
      if (!anyLocal)
        w.comment("Local arrays (a folded dimension holds only its window).");
      anyLocal = true;
      std::string storage = runNames.fresh(exprs.arrayRef(a) + "Storage");
      // static_cast, not size_t(N): `std::vector<float> v(size_t(N));` would declare a function.
      w.line("std::vector<" + exprs.typeName(a.decl->elemType) + "> " + storage + "(static_cast<size_t>(" +
             exprs.checkedStorageSize(a) + "));");
      w.line(exprs.arrayRef(a) + " = " + storage + ".data();");
    }
  if (anyLocal)
    w.blank();
  if (decomposition && !decomposition->splits.empty()) {
    w.comment("MPI: the blocks of the terms of the reductions the ranks split, and their partial values.");
    printSplitBlocks(w, *decomposition, model);
    for (const map::TermSplit &split : decomposition->splits) {
      if (split.band < 0)
        continue;
      const model::Statement &statement = model.statements[split.statement];
      std::string storage = runNames.fresh(splitBufferName(statement) + "Storage");
      w.line("std::vector<" + exprs.typeName(statement.equation->array->elemType) + "> " + storage +
             "(static_cast<size_t>(" + splitBufferSize(split, model, exprs, /*checked=*/true) + "));");
      w.line(splitBufferName(statement) + " = " + storage + ".data();");
    }
    w.blank();
  }
  for (size_t k = 0; k < input.schedule.timeTiled.size(); ++k) {
    const schedule::TimeTiledRegion &region = input.schedule.timeTiled[k];
    std::vector<std::string> terms;
    for (const std::vector<isl::pw_aff> &extents : region.stepExtents) {
      std::vector<std::string> factors;
      for (const isl::pw_aff &extent : extents)
        factors.push_back("double(" + printer.paramExpr(extent) + ")");
      terms.push_back(factors.empty() ? "1.0" : llvm::join(factors, " * "));
    }
    w.comment("Time tiling of " + region.description + " (polyc/cpu/Parallel.h):");
    w.line("const int64_t " + printer.switchName(static_cast<unsigned>(k)) + " = polyc::rt::cpu::timeTiled(" +
           llvm::join(terms, " + ") + ") ? 1 : 0;");
  }
  w.append(loops);
  w.closeBlock();
  w.closeBlock(";");
  w.blank();
  if (input.schedule.streaming)
    printStreamedRun(input, exprs, type, w);

  w.line("} // namespace");
  w.blank();

  // The C interface.
  w.openBlock("extern \"C\" " + runFunctionSignature(input));
  if (input.schedule.streaming) {
    if (llvm::Error e = printContextFromArguments(input, exprs, w))
      return e;
    w.openBlock("try");
    w.line("polyc::rt::StreamSlices slices = polyc::rt::memorySlices(context);");
    w.line("polyc_runStreamed(context, slices);");
    w.elseBlock("catch (const std::exception &failure)");
    w.line("std::fprintf(stderr, \"" + prog + "_run: %s\\n\", failure.what());");
    w.line("std::exit(3);");
    w.closeBlock();
    printArgumentsFromContext(input, w);
  } else {
    w.line(type + " program;");
    for (auto &p : program.params)
      w.line("program." + cIdentifier(p->name) + " = p->" + cIdentifier(p->name) + ";");
    for (const model::ArrayInfo *a : interfaceArrays(model))
      w.line("program." + exprs.arrayRef(*a) + " = " + cIdentifier(a->name) + ";");
    w.line("program.run();");
  }
  w.closeBlock();
  w.blank();

  // What each band does with the given params, for POLYC_VERBOSE.
  CodeWriter describe;
  describe.comment("The allocation of each band with these params; main() prints it when POLYC_VERBOSE is set.");
  describe.openBlock("std::string describeAllocation([[maybe_unused]] const " + prog + "_params &p)");
  for (auto &p : program.params)
    describe.line("[[maybe_unused]] const int64_t " + cIdentifier(p->name) + " = p." + cIdentifier(p->name) + ";");
  describe.line("std::string text;");
  for (unsigned b = 0; b < input.allocation.bands.size(); ++b) {
    const allocate::BandAllocation &a = input.allocation.bands[b];
    std::string stmts;
    if (a.band < input.schedule.bands.size())
      for (unsigned s : input.schedule.bands[a.band].statements)
        stmts += (stmts.empty() ? "" : ", ") + model.statements[s].name;
    std::string head = "\"" + prog + ": band " + std::to_string(a.band) + " (" + stmts + "): ";
    if (!a.runtimeCondition.empty() && a.otherwise)
      describe.line("text += std::string(" + head + "\") + (" + spellParams(a.runtimeCondition, *input.model.program) + " ? \"" +
                    describeKind(a.kind) + " (" + a.runtimeCondition + ")\" : \"" + describeKind(*a.otherwise) +
                    " (not " + a.runtimeCondition + ")\") + \"\\n\";");
    else
      describe.line("text += " + head + describeKind(a.kind) + "\\n\";");
  }
  describe.line("return text;");
  describe.closeBlock();

  // main(): the executable's command line, through the runtime.
  w.comment("The executable: polyc::rt::runMain parses the command line, loads and checks the .npy inputs, "
            "times compute() and writes the outputs. Define POLYC_NO_MAIN to use this file as a library.");
  w.line("#ifndef POLYC_NO_MAIN");
  w.line("namespace {");
  w.blank();
  w.append(describe);
  w.blank();
  std::string computeType = type + "Compute";
  w.openBlock("class " + computeType + " final : public polyc::rt::Compute");
  w.dedent();
  w.line("public:");
  w.indent();
  w.comment("The runtime resets inouts and outputs between timed runs; the data stays in its host arrays.");
  w.line("void upload(polyc::rt::RunContext &) override {}");
  w.line("void download(polyc::rt::RunContext &) override {}");
  w.blank();
  w.openBlock("double compute(polyc::rt::RunContext &context) override");
  w.line(prog + "_params p = paramsOf(context);");
  w.line("polyc::rt::Timer timer;");
  std::vector<std::string> args = {"&p"};
  std::vector<const model::ArrayInfo *> arrays = interfaceArrays(model);
  for (unsigned k = 0; k < arrays.size(); ++k)
    args.push_back("context.arrays[" + std::to_string(k) + "].data<" +
                   exprs.typeName(arrays[k]->decl->elemType) + ">()");
  w.line(prog + "_run(" + llvm::join(args, ", ") + ");");
  w.line("return timer.seconds();");
  w.closeBlock();
  if (input.schedule.streaming) {
    w.blank();
    w.openBlock(
        "double computeStreamed(polyc::rt::RunContext &context, polyc::rt::StreamSlices &slices) override");
    w.line("paramsOf(context);");
    w.line("return polyc_runStreamed(context, slices);");
    w.closeBlock();
  }
  w.blank();
  w.dedent();
  w.line("private:");
  w.indent();
  w.comment("The params of a run, checked against those fixed when compiling; the allocation printed once if "
            "POLYC_VERBOSE is set.");
  w.openBlock(prog + "_params paramsOf(const polyc::rt::RunContext &context)");
  w.line(prog + "_params p;");
  for (unsigned k = 0; k < program.params.size(); ++k)
    w.line("p." + cIdentifier(program.params[k]->name) + " = context.params[" + std::to_string(k) + "];");
  if (program.params.empty())
    w.line("p.unused = 0;");
  // Params fixed when compiling (polyc --param) shaped the loops: other values would compute garbage.
  for (auto &[name, value] : model.paramValues) {
    std::string member = "p." + cIdentifier(name);
    w.openBlock("if (" + member + " != " + std::to_string(value) + ")");
    w.line("throw std::runtime_error(\"" + prog + " was built for " + name + " = " + std::to_string(value) +
           " (polyc --param " + name + "=" + std::to_string(value) + "), got " + name + " = \" + std::to_string(" +
           member + "));");
    w.closeBlock();
  }
  w.line("const char *verbose = std::getenv(\"POLYC_VERBOSE\");");
  w.openBlock("if (verbose && *verbose && std::strcmp(verbose, \"0\") != 0 && !reported_)");
  w.line("std::fprintf(stderr, \"%s\", describeAllocation(p).c_str());");
  w.line("reported_ = true;");
  w.closeBlock();
  w.line("return p;");
  w.closeBlock();
  w.blank();
  w.line("bool reported_ = false;");
  w.closeBlock(";");
  w.blank();
  w.line("} // namespace");
  w.blank();
  w.openBlock("int main(int argc, char **argv)");
  w.line("polyc::rt::ProgramInfo info;");
  if (llvm::Error e = printProgramInfo(input, "info", w))
    return e;
  w.line(computeType + " compute;");
  w.line(std::string("return polyc::rt::") + (input.mpi ? "mpi::runMainMpi" : "runMain") +
         "(argc, argv, info, compute);");
  w.closeBlock();
  w.line("#endif");

  std::vector<GeneratedFile> files;
  files.push_back({prog + ".cpp", w.str()});
  files.push_back(emitLibraryHeader(input));
  return files;
}
