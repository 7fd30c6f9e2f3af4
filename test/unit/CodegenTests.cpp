// Unit tests of code generation's shared printers and the CPU target, on models built by hand from
// isl strings (so they do not depend on the middle end). Expected texts are written out by hand.
#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/ExprPrinter.h"
#include "compiler/codegen/IslAstPrinter.h"
#include "compiler/codegen/Names.h"
#include "compiler/codegen/ProgramInterface.h"
#include "compiler/codegen/TermTables.h"
#include "compiler/codegen/cpu/CodeGenCpu.h"
#include "compiler/support/IslContext.h"
#include "dsl/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

using namespace polyc;
using namespace polyc::codegen;

namespace {

// A parsed program and a model of it assembled by hand. A source that does not load throws (the test fails
// with the diagnostics) rather than leaving a null program for the test to dereference.
struct Fixture {
  IslContext islContext;
  llvm::SourceMgr sm;
  std::unique_ptr<ast::Program> program;
  model::Model model;
  analysis::DependenceGraph deps;
  schedule::Schedule schedule;
  allocate::Allocation allocation;

  explicit Fixture(const std::string &source) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(source, "test.poly");
    unsigned id = sm.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    program = dsl::loadProgramFromBuffer(sm, id, os);
    if (!program)
      throw std::runtime_error("the test's program does not load:\n" + diagnostics);
    model.program = program.get();
    model.ctx = isl::ctx(islContext.get());
    for (auto &p : program->params)
      model.params.push_back(p->name);
    for (auto &a : program->arrays) {
      model::ArrayInfo info;
      info.decl = a.get();
      info.name = a->name;
      info.extent = isl::set(ctx(), "{ : }"); // not read by code generation; copies need a set
      model.arrays.push_back(info);
    }
  }
  isl::ctx ctx() { return model.ctx; }
  std::string params() {
    std::string text = "[";
    for (size_t k = 0; k < model.params.size(); ++k)
      text += (k ? ", " : "") + model.params[k];
    return text + "]";
  }
  void setContext(const std::string &constraints) {
    model.context = isl::set(ctx(), params() + " -> { : " + constraints + " }");
  }
  // Adds statement `name` for the equation at `index`, with its domain and its reads, each given as
  // (array read in source order, relation).
  model::Statement &addStatement(unsigned index, const std::vector<std::string> &dims, const std::string &domain,
                                 const std::string &write, const std::vector<std::string> &reads) {
    model::Statement s;
    s.name = "S" + std::to_string(model.statements.size());
    s.equation = program->equations[index].get();
    s.op = s.equation->op;
    s.dimNames = dims;
    s.domain = isl::set(ctx(), params() + " -> " + domain);
    s.write.array = s.equation->array->name;
    s.write.relation = isl::map(ctx(), params() + " -> " + write);
    std::vector<const ast::ArrayRead *> sourceReads;
    std::function<void(const ast::Expr &)> visit = [&](const ast::Expr &e) {
      if (auto *r = llvm::dyn_cast<ast::ArrayRead>(&e)) {
        sourceReads.push_back(r);
        for (auto &i : r->indices)
          visit(*i);
      } else if (auto *b = llvm::dyn_cast<ast::Binary>(&e)) {
        visit(*b->lhs);
        visit(*b->rhs);
      } else if (auto *u = llvm::dyn_cast<ast::Unary>(&e)) {
        visit(*u->operand);
      } else if (auto *red = llvm::dyn_cast<ast::Reduction>(&e)) {
        visit(*red->body);
      } else if (auto *c = llvm::dyn_cast<ast::Call>(&e)) {
        for (auto &a : c->args)
          visit(*a);
      }
    };
    visit(*s.equation->rhs);
    for (size_t k = 0; k < reads.size() && k < sourceReads.size(); ++k) {
      model::Access a;
      a.array = sourceReads[k]->name;
      a.read = sourceReads[k];
      a.relation = isl::map(ctx(), params() + " -> " + reads[k]);
      s.reads.push_back(a);
    }
    model.statements.push_back(s);
    return model.statements.back();
  }
  CodegenInput input() {
    return CodegenInput{model, deps, schedule, allocation, "test.poly", "polyc emit test.poly --target=cpu", &sm};
  }
};

const char *const IirSource = R"(param H, W, M;
boundary zero;
input  f32 x[H, W];
input  f32 a[M, M];
input  f32 b[M, M];
output f32 y[H, W];
y[i, j] = sum(r1, r2 in 0..M) a[r1, r2] * x[i - r1, j - r2]
        + sum(k1, k2 in 0..M where (k1, k2) != (0, 0)) b[k1, k2] * y[i - k1, j - k2];
)";

void addIirStatement(Fixture &f) {
  f.setContext("H >= 0 and W >= 0 and M >= 0");
  f.addStatement(0, {"i", "j"}, "{ S0[i, j] : 0 <= i < H and 0 <= j < W }", "{ S0[i, j] -> y[i, j] }",
                 {"{ S0[i, j] -> a[r1, r2] : 0 <= i < H and 0 <= j < W and 0 <= r1 < M and 0 <= r2 < M }",
                  "{ S0[i, j] -> x[p, q] : 0 <= i < H and 0 <= j < W and 0 <= i - p < M and 0 <= j - q < M }",
                  "{ S0[i, j] -> b[k1, k2] : 0 <= i < H and 0 <= j < W and 0 <= k1 < M and 0 <= k2 < M and "
                  "(k1 > 0 or k2 > 0) }",
                  "{ S0[i, j] -> y[p, q] : 0 <= i < H and 0 <= j < W and 0 <= i - p < M and 0 <= j - q < M "
                  "and (p < i or q < j) }"});
}

// The IIR's hyperplane schedule: band (t = i + j, j), j coincident.
void addWavefrontSchedule(Fixture &f) {
  isl::union_set domain(f.model.statements[0].domain);
  isl::multi_union_pw_aff partial(f.ctx(), f.params() + " -> [{ S0[i, j] -> [(i + j)] }, { S0[i, j] -> [(j)] }]");
  isl::schedule_node node = isl::schedule_node::from_domain(domain).child(0).insert_partial_schedule(partial);
  node = node.as<isl::schedule_node_band>().member_set_coincident(1, 1);
  f.schedule.tree = node.schedule();
  schedule::Band band;
  band.statements = {0};
  band.dimNames = {"t", "j"};
  band.coincident = {false, true};
  band.hyperplane = {1, 1};
  band.hyperplaneCount = "H + W - 1";
  f.schedule.bands.push_back(band);
}

std::string printStatement(Fixture &f, unsigned s) {
  ExprPrinter printer(f.model, f.schedule);
  CodeWriter w;
  printer.printStatement(f.model.statements[s], w);
  return w.str();
}

// slidingWindow on equation `index` of `source` (its one sum), along the point variable `along`, with
// every array but the written one unchanging: "variable read" (the sliding variable, the window read's
// array), or "none".
std::string slidingOf(const std::string &source, unsigned index, const std::string &along) {
  Fixture f(source);
  const ast::Equation &eq = *f.program->equations.at(index);
  std::vector<const ast::IndexVar *> pointVars;
  const ast::IndexVar *alongVar = nullptr;
  for (const auto &var : eq.indexVars) {
    pointVars.push_back(var.get());
    if (var->name == along)
      alongVar = var.get();
  }
  std::set<std::string> invariant;
  for (const auto &array : f.program->arrays)
    if (array->name != eq.array->name)
      invariant.insert(array->name);
  auto *sum = llvm::dyn_cast<ast::Reduction>(eq.rhs.get());
  if (!sum || !alongVar)
    return "not a sum";
  std::optional<SlidingWindow> window = slidingWindow(*sum, pointVars, alongVar, invariant, *f.program);
  return window ? window->variable->name + " " + window->read->name : "none";
}

std::string slidingOf(const std::string &equation, const std::string &along) {
  return slidingOf("param H, W, M;\ninput f32 x[H, W];\ninput f32 a[M, M];\ninput f32 g[H, M];\n"
                   "output f32 y[H, W];\n" +
                       equation + "\n",
                   0, along);
}

// boxRecurrence on `equation` (equation 0 of a small program), with a and b staged and g not: "sum C X E"
// (the coefficients' array, the extent, and E's array if E is one read, "expr" otherwise), or "none".
std::string boxOf(const std::string &equation) {
  const std::string source = "param H, W, M;\ninput f32 x[H, W];\ninput f32 u[H, W];\ninput f32 a[M, M];\n"
                             "input f32 b[M, M];\ninput f32 g[H, M];\noutput f32 y[H, W];\n" +
                             equation + "\n";
  llvm::SourceMgr sm;
  unsigned id =
      sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "test.poly"), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  std::unique_ptr<ast::Program> program = dsl::loadProgramFromBuffer(sm, id, os);
  if (!program)
    return "not a program: " + diagnostics; // every input must pass Sema
  const ast::Equation &eq = *program->equations.at(0);
  std::vector<const ast::IndexVar *> pointVars;
  for (const auto &var : eq.indexVars)
    pointVars.push_back(var.get());
  std::optional<BoxRecurrence> box = boxRecurrence(*eq.rhs, eq.array->name, pointVars, {"a", "b"});
  if (!box)
    return "none";
  // The parts are the equation's own: the sum and E are the two operands of its top-level +.
  auto *add = llvm::cast<ast::Binary>(eq.rhs.get());
  bool operands = (box->sum == add->lhs.get() && box->pointPart == add->rhs.get()) ||
                  (box->sum == add->rhs.get() && box->pointPart == add->lhs.get());
  std::string extent = "?";
  if (auto *ref = llvm::dyn_cast<ast::VarRef>(box->extent))
    extent = ref->name;
  else if (auto *lit = llvm::dyn_cast<ast::IntLit>(box->extent))
    extent = std::to_string(lit->value);
  auto *pointRead = llvm::dyn_cast<ast::ArrayRead>(box->pointPart);
  return std::string(operands ? "sum " : "misplaced ") + box->coefficients->name + " " + extent + " " +
         (pointRead ? pointRead->name : "expr");
}

} // namespace

// ---------------------------------------------------------------------------------------------
// boxRecurrence: which recurrences the CUDA flexible wavefront's decoupled step computes

TEST(FixtureTest, AProgramThatDoesNotLoadThrowsWithItsDiagnostics) {
  try {
    Fixture f("param N;\noutput f32 y[N];\ny[i] = z[i];\n");
    ADD_FAILURE() << "loaded";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("'z'"), std::string::npos) << e.what();
  }
}

TEST(BoxRecurrenceTest, TheIirRecurrenceIsABox) {
  const std::string window = "b[k1, k2] * y[i - k1, j - k2]";
  const std::string where = " where (k1, k2) != (0, 0)";
  EXPECT_EQ(boxOf("y[i, j] = u[i, j] + sum(k1, k2 in 0..M" + where + ") " + window + ";"), "sum b M u");
  // The sum first, the window's read first, two bindings, the condition's sides swapped.
  EXPECT_EQ(boxOf("y[i, j] = sum(k1, k2 in 0..M" + where + ") " + window + " + u[i, j];"), "sum b M u");
  EXPECT_EQ(boxOf("y[i, j] = u[i, j] + sum(k1, k2 in 0..M" + where + ") y[i - k1, j - k2] * b[k1, k2];"),
            "sum b M u");
  EXPECT_EQ(boxOf("y[i, j] = u[i, j] + sum(k1 in 0..M, k2 in 0..M" + where + ") " + window + ";"),
            "sum b M u");
  EXPECT_EQ(boxOf("y[i, j] = u[i, j] + sum(k1, k2 in 0..M where (0, 0) != (k1, k2)) " + window + ";"),
            "sum b M u");
  // E an expression of other arrays, the other staged array, a literal extent.
  EXPECT_EQ(boxOf("y[i, j] = 2.0 * u[i, j] + x[i, j] + sum(k1, k2 in 0..M" + where + ") " + window + ";"),
            "sum b M expr");
  EXPECT_EQ(boxOf("y[i, j] = x[i, j] + sum(k1, k2 in 0..M" + where + ") a[k1, k2] * y[i - k1, j - k2];"),
            "sum a M x");
  EXPECT_EQ(boxOf("y[i, j] = u[i, j] + sum(k1, k2 in 0..5" + where + ") " + window + ";"), "sum b 5 u");
}

TEST(BoxRecurrenceTest, OtherFormsAreNotBoxes) {
  const std::string window = "b[k1, k2] * y[i - k1, j - k2]";
  const std::string where = " where (k1, k2) != (0, 0)";
  auto box = [](const std::string &sum) { return boxOf("y[i, j] = u[i, j] + " + sum + ";"); };
  // The condition: missing (the (0, 0) term reads the point itself), another one, the variables swapped,
  // another excluded term.
  EXPECT_EQ(box("sum(k1, k2 in 0..M) " + window), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..M where k1 + k2 > 0) " + window), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..M where (k2, k1) != (0, 0)) " + window), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..M where (k1, k2) != (0, 1)) " + window), "none");
  // The ranges: different extents, from 1, an extent that depends on the point, three variables.
  EXPECT_EQ(box("sum(k1 in 0..M, k2 in 0..W" + where + ") " + window), "none");
  EXPECT_EQ(box("sum(k1 in 1..M, k2 in 0..M" + where + ") " + window), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..i" + where + ") " + window), "none");
  EXPECT_EQ(box("sum(k1, k2, k3 in 0..M" + where + ") " + window), "none");
  // The coefficients: indices swapped, an array that is not staged.
  EXPECT_EQ(box("sum(k1, k2 in 0..M" + where + ") b[k2, k1] * y[i - k1, j - k2]"), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..M" + where + ") g[k1, k2] * y[i - k1, j - k2]"), "none");
  // The window: indices swapped, an offset, an array other than the written one.
  EXPECT_EQ(box("sum(k1, k2 in 0..M" + where + ") b[k1, k2] * y[i - k2, j - k1]"), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..M" + where + ") b[k1, k2] * y[i - k1 + 1, j - k2]"), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..M" + where + ") b[k1, k2] * x[i - k1, j - k2]"), "none");
  // The body: a third factor either side.
  EXPECT_EQ(box("sum(k1, k2 in 0..M" + where + ") 2.0 * b[k1, k2] * y[i - k1, j - k2]"), "none");
  EXPECT_EQ(box("sum(k1, k2 in 0..M" + where + ") b[k1, k2] * y[i - k1, j - k2] * b[k1, k2]"), "none");
  // A max, and E reading the written array, directly or in a second sum.
  EXPECT_EQ(box("max(k1, k2 in 0..M" + where + ") " + window), "none");
  EXPECT_EQ(boxOf("y[i, j] = y[i, j - 1] + sum(k1, k2 in 0..M" + where + ") " + window + ";"), "none");
  EXPECT_EQ(boxOf("y[i, j] = sum(k1, k2 in 0..M" + where + ") " + window + " + sum(k1, k2 in 0..M" + where +
                  ") " + window + ";"),
            "none");
  // Not a sum added to E.
  EXPECT_EQ(boxOf("y[i, j] = u[i, j] * sum(k1, k2 in 0..M" + where + ") " + window + ";"), "none");
  EXPECT_EQ(boxOf("y[i, j] = sum(k1, k2 in 0..M" + where + ") " + window + ";"), "none");
}

// ---------------------------------------------------------------------------------------------
// slidingWindow: which sums a CUDA data-parallel kernel computes for several points at once

TEST(SlidingWindowTest, AFirSumSlidesAlongBothOfItsDimensions) {
  const std::string fir = "y[i, j] = sum(r1, r2 in 0..M) a[r1, r2] * x[i - r1, j - r2];";
  EXPECT_EQ(slidingOf(fir, "i"), "r1 x");
  EXPECT_EQ(slidingOf(fir, "j"), "r2 x");
  // An offset, a sum from 1 and a point-invariant condition keep the form.
  EXPECT_EQ(slidingOf("y[i, j] = sum(k in 1..M where k != 2) a[k, 0] * x[i - k + 1, j];", "i"), "k x");
  // So does a recurrence's sum over earlier rows, its own array being the window (only data-parallel
  // bands, which a recurrence is not, ask).
  EXPECT_EQ(
      slidingOf("y[i, j] = sum(k1, k2 in 0..M where (k1, k2) != (0, 0)) a[k1, k2] * y[i - k1, j - k2];", "i"),
      "k1 y");
}

TEST(SlidingWindowTest, OtherFormsDoNotSlide) {
  // Reading ahead of the point, a coefficient that varies with it, a stride of 2, the point in two
  // indices, the variable in two indices, a coefficient reading the window's array, two windows.
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..M) a[r, 0] * x[i + r, j];", "i"), "none");
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..M) g[i, r] * x[i - r, j];", "i"), "none");
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..M) a[r, 0] * x[2 * i - r, j];", "i"), "none");
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..M) a[r, 0] * x[i - r, i];", "i"), "none");
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..M) a[r, 0] * x[i - r, j - r];", "i"), "none");
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..M) x[0, r] * x[i - r, j];", "i"), "none");
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..M) x[i - r, j] * x[i - r, j];", "i"), "none");
  // Bounds that depend on the point, and a max.
  EXPECT_EQ(slidingOf("y[i, j] = sum(r in 0..i) a[r, 0] * x[i - r, j];", "i"), "none");
  EXPECT_EQ(slidingOf("y[i, j] = max(r in 0..M) a[r, 0] * x[i - r, j];", "i"), "none");
}

// ---------------------------------------------------------------------------------------------
// CodeWriter

TEST(CodeWriterTest, BlocksIndentAndBlankLinesCollapse) {
  CodeWriter w;
  w.blank(); // nothing before the first line
  w.openBlock("void f()");
  w.blank(); // nothing right after an opening brace
  w.line("int a = 0;");
  w.blank();
  w.blank();
  w.openBlock("if (a)");
  w.line("a = 1;");
  w.elseBlock();
  w.line("a = 2;");
  w.blank();
  w.closeBlock(); // the blank line before a closing brace is dropped
  w.closeBlock(";");
  EXPECT_EQ(w.str(), "void f() {\n"
                     "  int a = 0;\n"
                     "\n"
                     "  if (a) {\n"
                     "    a = 1;\n"
                     "  } else {\n"
                     "    a = 2;\n"
                     "  }\n"
                     "};\n");
}

TEST(CodeWriterTest, CommentsWrapAtTheColumnLimit) {
  CodeWriter w;
  w.indent();
  std::string words;
  for (int k = 0; k < 40; ++k)
    words += "word" + std::to_string(k) + " ";
  w.comment(words + "\n\n  indented");
  std::string out = w.str();
  size_t start = 0;
  unsigned lines = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    std::string line = out.substr(start, end - start);
    EXPECT_LE(line.size(), CodeWriter::ColumnLimit) << line;
    EXPECT_EQ(line.substr(0, 4), "  //") << line;
    start = end + 1;
    ++lines;
  }
  EXPECT_GE(lines, 5u);
  EXPECT_NE(out.find("\n  //\n"), std::string::npos);       // the empty paragraph
  EXPECT_NE(out.find("\n  //   indented\n"), std::string::npos); // keeps leading spaces
}

TEST(CodeWriterTest, LongStatementsBreakAtOutermostOperators) {
  CodeWriter w;
  std::string rhs;
  for (int k = 0; k < 12; ++k)
    rhs += (k ? " + " : "") + std::string("f(alpha") + std::to_string(k) + ", beta)";
  w.line("total = " + rhs + ";");
  std::string out = w.str();
  EXPECT_NE(out.find('\n'), out.size() - 1) << "expected several lines";
  EXPECT_EQ(out.find("f(alpha0,\n"), std::string::npos) << "broke inside a call";
  size_t start = 0;
  bool first = true;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    std::string line = out.substr(start, end - start);
    EXPECT_LE(line.size(), CodeWriter::ColumnLimit);
    if (!first) {
      EXPECT_EQ(line.substr(0, 6), "    + ") << "continuation lines start with the operator: " << line;
    }
    first = false;
    start = end + 1;
  }
}

TEST(NamesTest, KeywordsAndReservedPrefixGetASuffix) {
  EXPECT_EQ(cIdentifier("x"), "x");
  EXPECT_EQ(cIdentifier("float"), "float_");
  EXPECT_EQ(cIdentifier("kernel"), "kernel_");
  EXPECT_EQ(cIdentifier("polyc_min"), "polyc_min_");
  NameScope scope;
  scope.take("t");
  EXPECT_EQ(scope.fresh("t"), "t1");
  EXPECT_EQ(scope.fresh("t"), "t2");
  EXPECT_EQ(scope.fresh("int"), "int1_"); // int1 is a CUDA vector type
  EXPECT_EQ(scope.fresh("size"), "size");
  // The vector types of CUDA and OpenCL C and the CUDA printer's own names are spelled with a '_'.
  EXPECT_EQ(cIdentifier("half2"), "half2_");
  EXPECT_EQ(cIdentifier("float4"), "float4_");
  EXPECT_EQ(cIdentifier("float5"), "float5");
  EXPECT_EQ(cIdentifier("graphKey"), "graphKey_");
  EXPECT_EQ(cIdentifier("runAs"), "runAs_");
  EXPECT_EQ(cIdentifier("indexFitsInt"), "indexFitsInt_");
  EXPECT_EQ(cIdentifier("polyc_index"), "polyc_index_");
}

// ---------------------------------------------------------------------------------------------
// ExprPrinter

TEST(ExprPrinterTest, IirStatementChecksOnlyBoundsThatCanFail) {
  Fixture f(IirSource);
  addIirStatement(f);
  // a[r1, r2] is always in range; x and y are read before their first row and column, never past
  // the last; the where clause compares integers.
  EXPECT_EQ(printStatement(f, 0), "float sum0 = 0.0f;\n"
                                  "for (int64_t r1 = 0; r1 < M; ++r1) {\n"
                                  "  for (int64_t r2 = 0; r2 < M; ++r2) {\n"
                                  "    sum0 += a[r1 * M + r2] * (i - r1 >= 0 && j - r2 >= 0 ? "
                                  "x[(i - r1) * W + (j - r2)] : 0.0f);\n"
                                  "  }\n"
                                  "}\n"
                                  "float sum1 = 0.0f;\n"
                                  "for (int64_t k1 = 0; k1 < M; ++k1) {\n"
                                  "  for (int64_t k2 = 0; k2 < M; ++k2) {\n"
                                  "    if (k1 != 0 || k2 != 0) {\n"
                                  "      sum1 += b[k1 * M + k2] * (i - k1 >= 0 && j - k2 >= 0 ? "
                                  "y[(i - k1) * W + (j - k2)] : 0.0f);\n"
                                  "    }\n"
                                  "  }\n"
                                  "}\n"
                                  "y[i * W + j] = sum0 + sum1;\n");
}

TEST(ExprPrinterTest, APartPrintsAsTheStatementWouldPrintIt) {
  Fixture f(IirSource);
  addIirStatement(f);
  const model::Statement &statement = f.model.statements[0];
  auto *add = llvm::cast<ast::Binary>(statement.equation->rhs.get());
  auto *recurrence = llvm::cast<ast::Reduction>(add->rhs.get());
  auto *coefficient = llvm::cast<ast::Binary>(recurrence->body.get())->lhs.get();
  ExprPrinter printer(f.model, f.schedule);
  CodeWriter w;
  // The coefficient b[k1, k2] with the sum's variables in scope: in range over their ranges, no test.
  EXPECT_EQ(printer.printPart(statement, *coefficient, w, recurrence), "b[k1 * M + k2]");
  // The window read outside its sum, at the point's own dimensions: tested as the statement tests it.
  auto *cell = llvm::cast<ast::Binary>(recurrence->body.get())->rhs.get();
  EXPECT_EQ(printer.printPart(statement, *cell, w, recurrence),
            "(i - k1 >= 0 && j - k2 >= 0 ? y[(i - k1) * W + (j - k2)] : 0.0f)");
  // A part with a sum declares its accumulator in `w` and returns its name.
  EXPECT_EQ(printer.printPart(statement, *add->lhs, w), "sum0");
  EXPECT_NE(w.str().find("float sum0 = 0.0f;"), std::string::npos);
}

TEST(ExprPrinterTest, TheDomainDecidesWhichEndsAreChecked) {
  Fixture f("param N;\ninput f32 x[N];\noutput f32 y[N];\ny[i] = x[i + 1] + x[i - 2] + x[5];\n");
  f.addStatement(0, {"i"}, "{ S0[i] : 0 <= i < N }", "{ S0[i] -> y[i] }", {});
  EXPECT_EQ(printStatement(f, 0), "y[i] = (i + 1 < N ? x[i + 1] : 0.0f) + (i - 2 >= 0 ? x[i - 2] : 0.0f) + "
                                  "(5 < N ? x[5] : 0.0f);\n");
}

TEST(ExprPrinterTest, ClampMirrorAndTypes) {
  Fixture f("param N;\nconst K = 3;\nconst s = 0.5;\ninput f64 x[N] boundary clamp;\n"
            "input f64 z[N] boundary mirror;\ninput i32 n[N];\noutput f64 y[N];\noutput i32 q[N];\n"
            "y[i] = x[i - K] * s + z[i + 1] / 3 + n[i] + select(i > 0, 1.5, -2);\n"
            "q[i] = n[i] / 2 + n[i] % 3 - N;\n");
  f.setContext("N >= 0");
  f.addStatement(0, {"i"}, "{ S0[i] : 0 <= i < N }", "{ S0[i] -> y[i] }",
                 {"{ S0[i] -> x[k] : k = i - 3 and 0 <= i < N }", "{ S0[i] -> z[k] : k = i + 1 and 0 <= i < N }",
                  "{ S0[i] -> n[i] : 0 <= i < N }"});
  f.addStatement(1, {"i"}, "{ S1[i] : 0 <= i < N }", "{ S1[i] -> q[i] }",
                 {"{ S1[i] -> n[i] : 0 <= i < N }", "{ S1[i] -> n[i] : 0 <= i < N }"});
  // clamp only at the end that can be crossed; the f64 constant without conversion; the i32 read and
  // the index variable converted; the comparison of integers in the index type.
  EXPECT_EQ(printStatement(f, 0), "y[i] = x[polyc_clamp(i - K, N)] * s + z[polyc_mirror(i + 1, N)] / 3.0 + "
                                  "double(n[i]) + (i > 0 ? 1.5 : -2.0);\n");
  EXPECT_EQ(printStatement(f, 1), "q[i] = polyc_div_i32(n[i], 2) + polyc_mod_i32(n[i], 3) - int32_t(N);\n");
}

TEST(ExprPrinterTest, ClampOfAPossiblyEmptyArrayIsGuarded) {
  // x may have no elements at all (K = 0) while y has some: there is nothing to clamp to, the read is 0.
  Fixture f("param N, K;\ninput f32 x[K] boundary clamp;\noutput f32 y[N];\ny[i] = x[i - 1];\n");
  f.setContext("N >= 0 and K >= 0");
  f.addStatement(0, {"i"}, "{ S0[i] : 0 <= i < N }", "{ S0[i] -> y[i] }", {});
  EXPECT_EQ(printStatement(f, 0), "y[i] = (K > 0 ? x[polyc_clamp(i - 1, K)] : 0.0f);\n");
}

// A max over r read at gathered indices pre[j, c].
const char *const GatherSource = "param N, C;\ninput f32 r[N];\ninput i32 pre[N, C];\noutput f32 s[N];\n"
                                 "s[j] = max(c in 0..C) r[pre[j, c]];\n";

void addGatherStatement(Fixture &f) {
  f.setContext("N >= 0 and C >= 0");
  f.addStatement(0, {"j"}, "{ S0[j] : 0 <= j < N }", "{ S0[j] -> s[j] }",
                 {"{ S0[j] -> r[k] : 0 <= j < N and 0 <= k < N and C > 0 }",
                  "{ S0[j] -> pre[j, c] : 0 <= j < N and 0 <= c < C }"});
  f.model.statements[0].reads[0].isMay = true;
}

TEST(ExprPrinterTest, GatherIndexIsReadOnceAndChecked) {
  Fixture f(GatherSource);
  addGatherStatement(f);
  EXPECT_EQ(printStatement(f, 0), "float max0 = -FLT_MAX;\n"
                                  "for (int64_t c = 0; c < C; ++c) {\n"
                                  "  const int64_t rIndex0 = pre[j * C + c];\n"
                                  "  max0 = fmaxf(max0, (rIndex0 >= 0 && rIndex0 < N ? r[rIndex0] : 0.0f));\n"
                                  "}\n"
                                  "s[j] = max0;\n");
}

// The points where a kept bounds test can fail, as the guard record has them, against `expected` (an
// isl set over the statement's dimensions, written by hand).
// The guard record of printing statement `s` once.
ExprPrinter::GuardRecord guardRecordOf(Fixture &f, unsigned s) {
  ExprPrinter printer(f.model, f.schedule);
  CodeWriter w;
  printer.startGuardRecord();
  printer.printStatement(f.model.statements[s], w);
  return printer.finishGuardRecord();
}

void expectGuardedPoints(Fixture &f, unsigned s, const std::string &expected) {
  ExprPrinter::GuardRecord record = guardRecordOf(f, s);
  ASSERT_TRUE(record.placed);
  ASSERT_TRUE(record.points.has_value());
  isl::set want(isl::ctx(f.islContext.get()), expected);
  EXPECT_TRUE(record.points->is_equal(want)) << *record.points << " is not " << expected;
}

TEST(ExprPrinterTest, GuardRecordHoldsThePointsWhereATestCanFail) {
  Fixture f(IirSource);
  addIirStatement(f);
  // x[i - r1, j - r2] and y[i - k1, j - k2] leave their arrays, for some r or k, in the first M - 1 rows
  // or columns (for M >= 2); a[r1, r2] and b[k1, k2] never do.
  expectGuardedPoints(f, 0,
                      "[H, W, M] -> { [i, j] : 0 <= i < H and 0 <= j < W and M >= 2 and (i <= M - 2 or j <= M - 2) "
                      "and H >= 0 and W >= 0 }");
}

TEST(ExprPrinterTest, GuardRecordKeepsBothEndsAndTheDomain) {
  Fixture f("param N;\ninput f32 x[N];\noutput f32 y[N];\ny[i] = x[i + 1] + x[i - 2] + x[5];\n");
  f.addStatement(0, {"i"}, "{ S0[i] : 0 <= i < N }", "{ S0[i] -> y[i] }", {});
  // x[i + 1] fails at the last point, x[i - 2] at the first two, x[5] everywhere when N <= 5.
  expectGuardedPoints(f, 0, "[N] -> { [i] : 0 <= i < N and (i = N - 1 or i <= 1 or N <= 5) }");
}

TEST(ExprPrinterTest, GuardRecordWithAGatheredIndexIsNotPlaced) {
  Fixture f(GatherSource);
  addGatherStatement(f);
  EXPECT_FALSE(guardRecordOf(f, 0).placed);
  // Without a record being taken, printing records nothing.
  ExprPrinter printer(f.model, f.schedule);
  CodeWriter w;
  printer.printStatement(f.model.statements[0], w);
  ExprPrinter::GuardRecord none = printer.finishGuardRecord();
  EXPECT_TRUE(none.placed);
  EXPECT_FALSE(none.points.has_value());
}

TEST(ExprPrinterTest, FoldedDimensionIsIndexedModuloItsWindow) {
  Fixture f("param T, N;\ninput f32 r0[N];\nf32 r[T, N];\noutput f32 o[N];\n"
            "r[0, j] = r0[j];\nr[t, j] = r[t - 1, j] * 2 where t >= 1;\no[j] = r[T - 1, j];\n");
  f.setContext("T >= 1 and N >= 0");
  f.addStatement(1, {"t", "j"}, "{ S0[t, j] : 1 <= t < T and 0 <= j < N }", "{ S0[t, j] -> r[t, j] }",
                 {"{ S0[t, j] -> r[u, j] : u = t - 1 and 1 <= t < T and 0 <= j < N }"});
  f.schedule.folded.push_back({"r", 0, "2", 2});
  EXPECT_EQ(printStatement(f, 0), "r[(t % 2) * N + j] = r[((t - 1) % 2) * N + j] * 2.0f;\n");
  ExprPrinter printer(f.model, f.schedule);
  EXPECT_EQ(printer.storageSize(f.model.arrays[1]), "2 * N");
}

TEST(ExprPrinterTest, UserFunctionsGetParamsAsArguments) {
  Fixture f("param N, gain;\nfunc sigmoid(z) = 1 / (1 + exp(-z * gain));\ninput f32 x[N];\noutput f32 y[N];\n"
            "y[i] = sigmoid(x[i]);\n");
  f.setContext("N >= 0 and gain >= 0");
  f.addStatement(0, {"i"}, "{ S0[i] : 0 <= i < N }", "{ S0[i] -> y[i] }", {"{ S0[i] -> x[i] : 0 <= i < N }"});
  ExprPrinter printer(f.model, f.schedule);
  CodeWriter w;
  printer.printUserFunctions(w);
  EXPECT_NE(w.str().find("static inline float sigmoid(float z, int64_t gain) {\n"
                         "  return 1.0f / (1.0f + expf(-z * float(gain)));\n"
                         "}\n"),
            std::string::npos)
      << w.str();
  EXPECT_EQ(printStatement(f, 0), "y[i] = sigmoid(x[i], gain);\n");
}

TEST(ExprPrinterTest, LiteralsAreShortestRoundTrip) {
  Fixture f("param N;\noutput f32 y[N];\ny[i] = 0.1;\n");
  ExprPrinter printer(f.model, f.schedule);
  EXPECT_EQ(printer.literal(0.1, ast::ElemType::F32), "0.1f");
  EXPECT_EQ(printer.literal(0.1, ast::ElemType::F64), "0.1");
  EXPECT_EQ(printer.literal(2, ast::ElemType::F32), "2.0f");
  EXPECT_EQ(printer.literal(1e-9, ast::ElemType::F64), "1e-09");
  EXPECT_EQ(printer.literal(2.7, ast::ElemType::I32), "2");
}

// ---------------------------------------------------------------------------------------------
// ProgramInterface

TEST(ProgramInterfaceTest, HeaderDeclaresTheRunFunction) {
  Fixture f(IirSource);
  addIirStatement(f);
  CodegenInput input = f.input();
  EXPECT_EQ(programName(input), "test");
  EXPECT_EQ(runFunctionSignature(input),
            "void test_run(const test_params *p, const float *x, const float *a, const float *b, float *y)");
  GeneratedFile header = emitLibraryHeader(input);
  EXPECT_EQ(header.name, "test.h");
  EXPECT_NE(header.contents.find("typedef struct test_params {\n  int64_t H;\n  int64_t W;\n  int64_t M;\n} "
                                 "test_params;\n"),
            std::string::npos)
      << header.contents;
  EXPECT_NE(header.contents.find("extern \"C\" {"), std::string::npos);
}

TEST(ProgramInterfaceTest, AffineExtentsAndProgramInfo) {
  Fixture f("param H, W;\nconst K = 4;\ninput f32 x[2 * H + K, W - 1];\noutput f32 y[H];\ny[i] = x[i, 0];\n");
  auto form = affineForm(*f.program->arrays[0]->shape[0], *f.program);
  ASSERT_TRUE(form);
  EXPECT_EQ(form->constant, 4);
  ASSERT_EQ(form->terms.size(), 1u);
  EXPECT_EQ(form->terms[0], (std::pair<unsigned, int64_t>{0, 2}));
  EXPECT_EQ(form->toIsl({"H", "W"}), "2*H + 4");
  CodeWriter w;
  llvm::Error e = printProgramInfo(f.input(), "info", w);
  ASSERT_FALSE(e) << llvm::toString(std::move(e));
  // Compare without the whitespace (line breaks) the writer may add.
  auto squeeze = [](const std::string &in) {
    std::string out;
    for (char c : in)
      if (!isspace(static_cast<unsigned char>(c)))
        out += c;
    return out;
  };
  std::string text = squeeze(w.str());
  EXPECT_NE(text.find(squeeze("info.arrays.push_back({\"x\", polyc::rt::ArrayRole::Input, polyc::rt::DType::F32, "
                              "{{4, {{0, 2}}}, {-1, {{1, 1}}}}});")),
            std::string::npos)
      << text;
}

// ---------------------------------------------------------------------------------------------
// IslAstPrinter and the CPU target

TEST(CpuTargetTest, FixedWavefrontIsASequentialLoopAroundAParallelOne) {
  Fixture f(IirSource);
  addIirStatement(f);
  addWavefrontSchedule(f);
  allocate::BandAllocation a;
  a.band = 0;
  a.kind = allocate::AllocationKind::FixedWavefront;
  f.allocation.bands.push_back(a);
  auto files = emitCpu(f.input());
  ASSERT_TRUE(bool(files)) << llvm::toString(files.takeError());
  const std::string &cpp = (*files)[0].contents;
  EXPECT_NE(cpp.find("for (int64_t t = 0; t < H + W - 1; ++t) {\n"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("#pragma omp parallel for\n"), std::string::npos);
  EXPECT_NE(cpp.find("S0(t - j, j);"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("// S0, band 0 dimension 0: t = i + j (Lamport hyperplane pi = (1, 1))"), std::string::npos)
      << cpp;
  EXPECT_EQ(cpp.find("runFlexibleWavefront("), std::string::npos);
}

TEST(CpuTargetTest, RuntimeChoiceEmitsBothVariants) {
  Fixture f(IirSource);
  addIirStatement(f);
  addWavefrontSchedule(f);
  allocate::BandAllocation a;
  a.band = 0;
  a.kind = allocate::AllocationKind::FlexibleWavefront;
  a.otherwise = allocate::AllocationKind::FixedWavefront;
  a.runtimeCondition = "M > 1"; // as CostModel decides for the IIR (docs/scheduling.md, section 4)
  a.wavefront = allocate::WavefrontMapping{0, 1, "M"};
  f.allocation.bands.push_back(a);
  auto files = emitCpu(f.input());
  ASSERT_TRUE(bool(files)) << llvm::toString(files.takeError());
  const std::string &cpp = (*files)[0].contents;
  size_t choice = cpp.find("if (M > 1) {");
  size_t flexible = cpp.find("polyc::rt::cpu::runFlexibleWavefront(H, W, 0, [this](int64_t row, int64_t column) {");
  size_t otherwise = cpp.find("} else {", choice);
  size_t fixed = cpp.find("#pragma omp parallel for", choice);
  ASSERT_NE(choice, std::string::npos) << cpp;
  ASSERT_NE(flexible, std::string::npos) << cpp;
  EXPECT_LT(choice, flexible);
  EXPECT_LT(flexible, otherwise);
  EXPECT_LT(otherwise, fixed);
  EXPECT_NE(cpp.find("S0(row, column);"), std::string::npos);
}

TEST(CpuTargetTest, FlexibleWavefrontNeedsARectangle) {
  Fixture f(IirSource);
  f.setContext("H >= 0 and W >= 0 and M >= 0");
  f.addStatement(0, {"i", "j"}, "{ S0[i, j] : 0 <= j <= i < H and j < W }", "{ S0[i, j] -> y[i, j] }", {});
  addWavefrontSchedule(f);
  allocate::BandAllocation a;
  a.kind = allocate::AllocationKind::FlexibleWavefront;
  f.allocation.bands.push_back(a);
  auto files = emitCpu(f.input());
  ASSERT_FALSE(bool(files));
  EXPECT_EQ(llvm::toString(files.takeError()),
            "band 0: the CPU target cannot print a flexible wavefront over a domain that is not a rectangle");
}
