// The CPU target (see CodeGenCpu.h): prints the schedule's loops with OpenMP pragmas chosen from the
// allocation, the flexible wavefront as a runtime call, each statement as a member function of a
// struct that holds the params and arrays, the C interface function and a main() for runMain.
#include "compiler/codegen/cpu/CodeGenCpu.h"

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/ExprPrinter.h"
#include "compiler/codegen/IslAstPrinter.h"
#include "compiler/codegen/IslCalls.h"
#include "compiler/codegen/Names.h"
#include "compiler/codegen/ProgramInterface.h"

#include "llvm/ADT/StringExtras.h"

#include <isl/aff.h>
#include <isl/set.h>

#include <optional>
#include <set>

using namespace polyc;
using namespace polyc::codegen;

namespace {

// Statement bodies for the CPU: OpenMP reductions on statements that run outside any parallel loop
// and whose band the allocation made a reduction (a scalar `loss[e] = sum(...)`).
class CpuExprPrinter : public ExprPrinter {
public:
  using ExprPrinter::ExprPrinter;
  bool parallelReductions = false;

  std::string reductionLoopPragma(const ReductionParts &parts) const override {
    if (!parallelReductions || parts.nested)
      return "";
    const char *op = parts.reduction->op == ast::ReductionOp::Sum   ? "+"
                     : parts.reduction->op == ast::ReductionOp::Max ? "max"
                                                                    : "min";
    return "#pragma omp parallel for reduction(" + std::string(op) + " : " + parts.accumulator + ")";
  }
};

// What the loop printer learned about each statement, for printing the statement functions after.
struct StatementUse {
  bool called = false;
  bool calledInParallel = false; // inside a parallel loop or a wavefront worker
  std::optional<allocate::AllocationKind> kind; // the allocation of the band around its calls
};

class CpuAstPrinter : public IslAstPrinter {
public:
  CpuAstPrinter(const CodegenInput &input, CodeWriter &w, const ExprPrinter &exprs,
                std::vector<StatementUse> &uses)
      : IslAstPrinter(input, w), exprs_(exprs), uses_(uses) {}

  std::optional<std::string> error; // the first band this target could not print

protected:
  void printBand(const BandView &band, const isl::ast_node &body) override;
  void printLoopPragma(const LoopView &loop) override;
  void printStatementCall(const StatementCall &call) override;

private:
  void printVariant(allocate::AllocationKind kind, const BandView &band, const isl::ast_node &body);
  void printFlexible(const BandView &band);
  void recordCall(unsigned statement, bool parallel);

  const ExprPrinter &exprs_;
  std::vector<StatementUse> &uses_;
  std::optional<allocate::AllocationKind> kind_; // the allocation of the branch being printed
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
  w_.line(statementFunction(s) + "(" + llvm::join(args, ", ") + ");");
  w_.closeBlock(");");
  names() = saved;
}

void CpuAstPrinter::printLoopPragma(const LoopView &loop) {
  if (loop.insideParallel || !loop.coincident || !loop.band || !loop.band->band ||
      loop.band->band->isSequentialRepeat)
    return;
  if (kind_ && *kind_ == allocate::AllocationKind::Sequential)
    return;
  w_.line("#pragma omp parallel for");
  markParallel();
}

void CpuAstPrinter::printStatementCall(const StatementCall &call) {
  recordCall(call.statement, insideParallel());
  IslAstPrinter::printStatementCall(call);
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

// Whether `name` occurs in `text` as a whole identifier.
static bool usesIdentifier(const std::string &text, const std::string &name) {
  auto isIdent = [](char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
    if ((at == 0 || !isIdent(text[at - 1])) && (at + name.size() >= text.size() || !isIdent(text[at + name.size()])))
      return true;
  return false;
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
  CpuAstPrinter printer(input, loops, exprs, uses);
  if (llvm::Error e = printer.printSchedule())
    return e;
  if (printer.error)
    return llvm::createStringError(*printer.error);

  std::string type = programTypeName(program, prog, "");
  CodeWriter w;
  printBanner(input, prog + ".cpp", "C++17 + OpenMP code for the CPU", w);
  w.blank();
  w.line("#include \"" + prog + ".h\"");
  w.blank();
  w.line("#include <polyc/Runtime.h>");
  w.line("#include <polyc/Timer.h>");
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
  for (unsigned s = 0; s < model.statements.size(); ++s) {
    const model::Statement &statement = model.statements[s];
    w.blank();
    w.comment(statement.name + ": " + equationText(*statement.equation) + "  (" +
              equationLocation(input, *statement.equation) + ")");
    std::vector<std::string> dims = exprs.dimNames(statement);
    CodeWriter body;
    body.indent();
    body.indent();
    // An OpenMP reduction where the reduction is the only parallelism left: the statement runs
    // outside parallel loops and its band is a reduction, or it has no dimensions but repeat ones
    // (a scalar like loss[e] = sum(...)).
    bool onlyRepeatDims = statement.dimNames.size() == statement.repeatDims;
    exprs.parallelReductions =
        uses[s].called && !uses[s].calledInParallel &&
        (onlyRepeatDims || (uses[s].kind && *uses[s].kind == allocate::AllocationKind::Reduction));
    exprs.printStatement(statement, body);
    // A dimension the body does not use (the repeat variable, mostly) keeps its name as a comment.
    std::string params;
    for (const std::string &d : dims)
      params += (params.empty() ? "" : ", ") + exprs.indexType() + " " +
                (usesIdentifier(body.str(), d) ? d : "/*" + d + "*/");
    w.openBlock("void " + statement.name + "(" + params + ") const");
    w.append(body);
    w.closeBlock();
  }
  w.blank();
  w.comment("Runs every statement instance in the order of the schedule.");
  w.openBlock("void run()");
  bool anyLocal = false;
  for (const model::ArrayInfo &a : model.arrays)
    if (a.decl->kind == ast::ArrayKind::Local) {
      if (!anyLocal)
        w.comment("Local arrays (a folded dimension holds only its window).");
      anyLocal = true;
      std::string storage = exprs.arrayRef(a) + "Storage";
      // static_cast, not size_t(N): `std::vector<float> v(size_t(N));` would declare a function.
      w.line("std::vector<" + exprs.typeName(a.decl->elemType) + "> " + storage + "(static_cast<size_t>(" +
             exprs.checkedStorageSize(a) + "));");
      w.line(exprs.arrayRef(a) + " = " + storage + ".data();");
    }
  if (anyLocal)
    w.blank();
  w.append(loops);
  w.closeBlock();
  w.closeBlock(";");
  w.blank();

  w.line("} // namespace");
  w.blank();

  // The C interface.
  w.openBlock("extern \"C\" " + runFunctionSignature(input));
  w.line(type + " program;");
  for (auto &p : program.params)
    w.line("program." + cIdentifier(p->name) + " = p->" + cIdentifier(p->name) + ";");
  for (const model::ArrayInfo *a : interfaceArrays(model))
    w.line("program." + exprs.arrayRef(*a) + " = " + cIdentifier(a->name) + ";");
  w.line("program.run();");
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
  w.line("polyc::rt::Timer timer;");
  std::vector<std::string> args = {"&p"};
  std::vector<const model::ArrayInfo *> arrays = interfaceArrays(model);
  for (unsigned k = 0; k < arrays.size(); ++k)
    args.push_back("context.arrays[" + std::to_string(k) + "].data<" + exprs.typeName(arrays[k]->decl->elemType) +
                   ">()");
  w.line(prog + "_run(" + llvm::join(args, ", ") + ");");
  w.line("return timer.seconds();");
  w.closeBlock();
  w.blank();
  w.dedent();
  w.line("private:");
  w.indent();
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
  w.line("return polyc::rt::runMain(argc, argv, info, compute);");
  w.closeBlock();
  w.line("#endif");

  std::vector<GeneratedFile> files;
  files.push_back({prog + ".cpp", w.str()});
  files.push_back(emitLibraryHeader(input));
  return files;
}
