// Unit tests of the parser (dsl/Parser.h): precedence, reduction bodies, max/min disambiguation,
// tuples, source ranges, statement order, `until unchanged`, recovery and the nesting limit.
#include "dsl/Parser.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace polyc;
using namespace polyc::ast;
using namespace polyc::dsl;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

struct Parsed {
  llvm::SourceMgr sm;
  std::string diagnostics;
  std::unique_ptr<Program> program;
  unsigned errors = 0;
  llvm::StringRef text(llvm::SMRange r) const {
    return llvm::StringRef(r.Start.getPointer(), r.End.getPointer() - r.Start.getPointer());
  }
};

std::unique_ptr<Parsed> parse(const std::string &source) {
  auto out = std::make_unique<Parsed>();
  unsigned id = out->sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "t.poly"), llvm::SMLoc());
  llvm::raw_string_ostream os(out->diagnostics);
  DiagnosticEngine diags(out->sm, os);
  out->program = parseProgram(out->sm, id, diags);
  out->errors = diags.errorCount();
  return out;
}

// The right-hand side of the only top-level equation of `y = <expr>;`.
const Expr &rhsOf(const Parsed &p) {
  EXPECT_EQ(p.errors, 0u) << p.diagnostics;
  EXPECT_EQ(p.program->equations.size(), 1u);
  return *p.program->equations.front()->rhs;
}

TEST(Parser, Precedence) {
  auto p = parse("y = 1 + 2 * 3 - 4;");
  // (1 + (2 * 3)) - 4
  const auto &sub = cast<Binary>(rhsOf(*p));
  EXPECT_EQ(sub.op, BinaryOp::Sub);
  const auto &add = cast<Binary>(*sub.lhs);
  EXPECT_EQ(add.op, BinaryOp::Add);
  EXPECT_EQ(cast<Binary>(*add.rhs).op, BinaryOp::Mul);
  EXPECT_EQ(cast<IntLit>(*sub.rhs).value, 4);
}

TEST(Parser, LogicalPrecedence) {
  auto p = parse("y = a < 1 || b >= 2 && !c == 3;");
  const auto &orE = cast<Binary>(rhsOf(*p));
  EXPECT_EQ(orE.op, BinaryOp::Or);
  EXPECT_EQ(cast<Binary>(*orE.lhs).op, BinaryOp::Lt);
  const auto &andE = cast<Binary>(*orE.rhs);
  EXPECT_EQ(andE.op, BinaryOp::And);
  const auto &eq = cast<Binary>(*andE.rhs);
  EXPECT_EQ(eq.op, BinaryOp::Eq);
  EXPECT_EQ(cast<Unary>(*eq.lhs).op, UnaryOp::Not); // unary binds tighter than ==
}

TEST(Parser, UnaryMinusBindsTighterThanMul) {
  auto p = parse("y = -a * b;");
  const auto &mul = cast<Binary>(rhsOf(*p));
  EXPECT_EQ(mul.op, BinaryOp::Mul);
  EXPECT_TRUE(isa<Unary>(*mul.lhs));
}

TEST(Parser, ChainedComparisonIsAnError) {
  auto p = parse("y = 1 < 2 < 3;");
  EXPECT_EQ(p->errors, 1u);
  EXPECT_NE(p->diagnostics.find("comparisons cannot be chained"), std::string::npos);
}

TEST(Parser, ReductionBodyIsMultiplicative) {
  auto p = parse("y = sum(k in 0..N) a[k] * b[k] + c;");
  const auto &add = cast<Binary>(rhsOf(*p));
  EXPECT_EQ(add.op, BinaryOp::Add);
  const auto &red = cast<Reduction>(*add.lhs);
  EXPECT_EQ(red.op, ReductionOp::Sum);
  EXPECT_EQ(cast<Binary>(*red.body).op, BinaryOp::Mul);
  EXPECT_EQ(p->text(red.range), "sum(k in 0..N) a[k] * b[k]");
  EXPECT_EQ(cast<VarRef>(*add.rhs).name, "c");
}

TEST(Parser, ReductionBindingsAndWhere) {
  auto p = parse("y = min(k1, k2 in 0..M, j in k1..N where (k1, k2) != (0, 0)) (x + 1);");
  const auto &red = cast<Reduction>(rhsOf(*p));
  EXPECT_EQ(red.op, ReductionOp::Min);
  ASSERT_EQ(red.bindings.size(), 2u);
  ASSERT_EQ(red.bindings[0].vars.size(), 2u);
  EXPECT_EQ(red.bindings[0].vars[1]->name, "k2");
  EXPECT_EQ(cast<VarRef>(*red.bindings[1].lo).name, "k1");
  const auto &ne = cast<Binary>(*red.where);
  EXPECT_EQ(ne.op, BinaryOp::Ne);
  EXPECT_EQ(cast<Tuple>(*ne.lhs).elements.size(), 2u);
  EXPECT_EQ(cast<Binary>(*red.body).op, BinaryOp::Add);
}

TEST(Parser, MaxMinDisambiguation) {
  {
    auto p = parse("y = max(a, b);");
    const auto &call = cast<Call>(rhsOf(*p));
    EXPECT_EQ(call.callee, "max");
    EXPECT_EQ(call.args.size(), 2u);
  }
  {
    auto p = parse("y = max(a, b in 0..N) a;");
    const auto &red = cast<Reduction>(rhsOf(*p));
    EXPECT_EQ(red.op, ReductionOp::Max);
    EXPECT_EQ(red.bindings[0].vars.size(), 2u);
  }
  {
    auto p = parse("y = min(sum(k in 0..N) x[k], 0.0);");
    const auto &call = cast<Call>(rhsOf(*p));
    EXPECT_EQ(call.callee, "min");
    EXPECT_TRUE(isa<Reduction>(*call.args[0]));
  }
  {
    auto p = parse("y = max(a + 1, b);");
    EXPECT_TRUE(isa<Call>(rhsOf(*p)));
  }
  {
    auto p = parse("y = max(k in 0..N) max(x[k], 0);");
    const auto &red = cast<Reduction>(rhsOf(*p));
    EXPECT_TRUE(isa<Call>(*red.body));
  }
}

TEST(Parser, ParenthesesAndTuples) {
  auto p = parse("y = (1 + 2) * 3 + (a, b, c) == (1, 2, 3);");
  const auto &eq = cast<Binary>(rhsOf(*p));
  EXPECT_EQ(eq.op, BinaryOp::Eq);
  const auto &add = cast<Binary>(*eq.lhs);
  EXPECT_TRUE(isa<Tuple>(*add.rhs));
  const auto &mul = cast<Binary>(*add.lhs);
  // A parenthesised expression's range includes its parentheses.
  EXPECT_EQ(p->text(mul.lhs->range), "(1 + 2)");
  EXPECT_EQ(p->text(mul.range), "(1 + 2) * 3");
}

TEST(Parser, Statements) {
  auto p = parse("param N, M;\nconst c = 2;\nboundary mirror;\nfunc f(a, b) = a;\n"
                 "input f32 x[N, M] boundary clamp;\ninout f64 w;\ni32 t[N];\n"
                 "t[i] = 1;\nrepeat e in 0..N { w += 1; w -= 2; }\nz[0, j] = 1 where j > 0;\n");
  ASSERT_EQ(p->errors, 0u) << p->diagnostics;
  const Program &prog = *p->program;
  EXPECT_EQ(prog.params.size(), 2u);
  EXPECT_EQ(prog.consts.size(), 1u);
  EXPECT_EQ(prog.defaultBoundary, Boundary::Mirror);
  ASSERT_EQ(prog.funcs.size(), 1u);
  EXPECT_EQ(prog.funcs[0]->params, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(prog.arrays.size(), 3u);
  EXPECT_EQ(prog.arrays[0]->kind, ArrayKind::Input);
  EXPECT_EQ(prog.arrays[0]->boundary, Boundary::Clamp);
  EXPECT_EQ(prog.arrays[0]->rank(), 2u);
  EXPECT_EQ(prog.arrays[1]->kind, ArrayKind::InOut);
  EXPECT_EQ(prog.arrays[1]->elemType, ElemType::F64);
  EXPECT_EQ(prog.arrays[1]->rank(), 0u);
  EXPECT_EQ(prog.arrays[2]->kind, ArrayKind::Local);
  EXPECT_EQ(prog.arrays[2]->elemType, ElemType::I32);
  ASSERT_EQ(prog.statements.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<Equation *>(prog.statements[0]));
  const RepeatBlock *block = std::get<RepeatBlock *>(prog.statements[1]);
  ASSERT_EQ(block->body.size(), 2u);
  EXPECT_EQ(block->body[0]->op, AssignOp::AddAssign);
  EXPECT_EQ(block->body[1]->op, AssignOp::SubAssign);
  const Equation *last = std::get<Equation *>(prog.statements[2]);
  EXPECT_EQ(last->target, "z");
  EXPECT_EQ(last->lhsIndices.size(), 2u);
  EXPECT_NE(last->where, nullptr);
  EXPECT_EQ(p->text(last->lhsRange), "z[0, j]");
  EXPECT_EQ(p->text(last->range), "z[0, j] = 1 where j > 0;");
}

TEST(Parser, RepeatUntilUnchanged) {
  auto p = parse("repeat k in 0..R until unchanged(a, until) { a += 1; }\n"
                 "repeat k in 0..R { until = 1; }\n");
  ASSERT_EQ(p->errors, 0u) << p->diagnostics;
  const RepeatBlock &stops = *p->program->repeats[0];
  EXPECT_TRUE(stops.stopsWhenUnchanged());
  EXPECT_EQ(stops.untilUnchanged, (std::vector<std::string>{"a", "until"}));
  ASSERT_EQ(stops.untilRanges.size(), 2u);
  EXPECT_EQ(p->text(stops.untilRanges[1]), "until");
  ASSERT_EQ(stops.body.size(), 1u);
  // `until` is a name where it is not after a repeat block's range.
  const RepeatBlock &plain = *p->program->repeats[1];
  EXPECT_FALSE(plain.stopsWhenUnchanged());
  ASSERT_EQ(plain.body.size(), 1u);
  EXPECT_EQ(plain.body[0]->target, "until");
}

TEST(Parser, ScatterFor) {
  auto p = parse("h[bin[y, x] + 1, t] += w[y] for y, x in 0..N, t2 in 0..t + 1 where e[y, x] > 0;\n"
                 "for[i] = for[i - 1] + 1;\n");
  ASSERT_EQ(p->errors, 0u) << p->diagnostics;
  const Equation &scatter = *p->program->equations[0];
  EXPECT_TRUE(scatter.isScatter());
  EXPECT_EQ(scatter.op, AssignOp::AddAssign);
  ASSERT_EQ(scatter.scatterBindings.size(), 2u);
  ASSERT_EQ(scatter.scatterBindings[0].vars.size(), 2u);
  EXPECT_EQ(scatter.scatterBindings[0].vars[1]->name, "x");
  EXPECT_EQ(scatter.scatterBindings[1].vars[0]->name, "t2");
  EXPECT_EQ(p->text(scatter.scatterBindings[1].hi->range), "t + 1");
  EXPECT_NE(scatter.where, nullptr);
  // `for` is a name where it does not follow a right-hand side.
  const Equation &plain = *p->program->equations[1];
  EXPECT_FALSE(plain.isScatter());
  EXPECT_EQ(plain.target, "for");
}

TEST(Parser, RecoversAtSemicolon) {
  auto p = parse("param ;\ny = 1 +;\nz = 2;\nw = (;\nv = 3;\n");
  EXPECT_EQ(p->errors, 3u) << p->diagnostics;
  ASSERT_EQ(p->program->equations.size(), 2u);
  EXPECT_EQ(p->program->equations[0]->target, "z");
  EXPECT_EQ(p->program->equations[1]->target, "v");
}

TEST(Parser, NestingLimit) {
  auto nested = [](unsigned depth) {
    return "y = " + std::string(depth, '(') + "1" + std::string(depth, ')') + ";";
  };
  // The right-hand side itself is one level; each parenthesis adds one.
  EXPECT_EQ(parse(nested(kMaxNestingDepth - 1))->errors, 0u);
  auto deep = parse(nested(kMaxNestingDepth));
  EXPECT_EQ(deep->errors, 1u);
  EXPECT_NE(deep->diagnostics.find("nested too deeply"), std::string::npos);
  // A long flat chain is shallow to parse but deep as a tree.
  std::string chain = "y = 1";
  for (int i = 0; i < 1000; ++i)
    chain += " + 1";
  auto c = parse(chain + ";");
  EXPECT_EQ(c->errors, 1u);
  EXPECT_NE(c->diagnostics.find("nested too deeply"), std::string::npos);
}

TEST(Parser, EmptyProgram) {
  auto p = parse("");
  EXPECT_EQ(p->errors, 0u);
  EXPECT_TRUE(p->program->statements.empty());
}

} // namespace
