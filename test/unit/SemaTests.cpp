// Unit tests of semantic analysis (dsl/Sema.h) through loadProgramFromBuffer: the resolved members
// later stages rely on, and the affine forms of indices (dsl/Affine.h).
#include "dsl/Affine.h"
#include "dsl/Frontend.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace polyc;
using namespace polyc::ast;
using namespace polyc::dsl;
using llvm::cast;

namespace {

struct Checked {
  llvm::SourceMgr sm;
  std::string diagnostics;
  std::unique_ptr<Program> program;
};

std::unique_ptr<Checked> check(const std::string &source) {
  auto out = std::make_unique<Checked>();
  unsigned id = out->sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "t.poly"), llvm::SMLoc());
  llvm::raw_string_ostream os(out->diagnostics);
  out->program = loadProgramFromBuffer(out->sm, id, os);
  return out;
}

TEST(Sema, ResolvesNamesOfAnEquation) {
  auto c = check("param N, M;\nconst K = 2;\nboundary clamp;\ninput f32 x[N, M] boundary zero;\n"
                 "input i32 idx[N];\noutput f32 y[N];\n"
                 "y[i] = sum(k in 0..M) x[idx[i] + K, k] * N;\n");
  ASSERT_TRUE(c->program) << c->diagnostics;
  const Program &p = *c->program;
  const ArrayDecl *x = p.findArray("x");
  const ArrayDecl *idx = p.findArray("idx");
  const ArrayDecl *y = p.findArray("y");
  ASSERT_TRUE(x && idx && y);
  EXPECT_EQ(x->effectiveBoundary, Boundary::Zero);
  EXPECT_EQ(y->effectiveBoundary, Boundary::Clamp);
  EXPECT_EQ(p.findArray("N"), nullptr);
  EXPECT_EQ(p.findParam("M"), p.params[1].get());
  EXPECT_EQ(std::get<int64_t>(p.consts[0]->value), 2);

  const Equation &eq = *p.equations[0];
  EXPECT_EQ(eq.array, y);
  EXPECT_EQ(eq.enclosingRepeat, nullptr);
  ASSERT_EQ(eq.indexVars.size(), 1u);
  const IndexVar *i = eq.indexVars[0].get();
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->name, "i");
  // The left-hand VarRef is bound to the equation's own index variable.
  EXPECT_EQ(std::get<IndexVarRef>(cast<VarRef>(*eq.lhsIndices[0]).binding).var, i);

  const auto &mul = cast<Reduction>(*eq.rhs).body;
  const auto &body = cast<Binary>(*mul);
  const auto &read = cast<ArrayRead>(*body.lhs);
  EXPECT_EQ(read.array, x);
  EXPECT_EQ(read.isGather, (std::vector<bool>{true, false}));
  const IndexVar *k = cast<Reduction>(*eq.rhs).bindings[0].vars[0].get();
  EXPECT_EQ(std::get<IndexVarRef>(cast<VarRef>(*read.indices[1]).binding).var, k);
  const auto &gather = cast<Binary>(*read.indices[0]);
  EXPECT_EQ(cast<ArrayRead>(*gather.lhs).array, idx);
  EXPECT_EQ(std::get<const ConstDecl *>(cast<VarRef>(*gather.rhs).binding), p.consts[0].get());
  EXPECT_EQ(std::get<const ParamDecl *>(cast<VarRef>(*body.rhs).binding), p.params[0].get());
}

TEST(Sema, ResolvesCallsFunctionsAndRepeatBlocks) {
  auto c = check("param N, E;\nfunc sq(v) = v * v;\ninput f32 eta;\ninout f32 w[N];\noutput f32 loss[E];\n"
                 "repeat e in 0..E {\n  loss[e] = sq(eta) + exp(e);\n  w[j] -= eta;\n}\n");
  ASSERT_TRUE(c->program) << c->diagnostics;
  const Program &p = *c->program;
  const RepeatBlock &block = *p.repeats[0];
  const Equation &loss = *block.body[0];
  EXPECT_EQ(loss.enclosingRepeat, &block);
  EXPECT_EQ(loss.indexVars[0], nullptr); // a fixed position
  EXPECT_EQ(std::get<IndexVarRef>(cast<VarRef>(*loss.lhsIndices[0]).binding).var, block.var.get());
  const auto &add = cast<Binary>(*loss.rhs);
  const auto &sq = cast<Call>(*add.lhs);
  EXPECT_EQ(sq.func, p.funcs[0].get());
  EXPECT_FALSE(sq.builtin.has_value());
  EXPECT_EQ(std::get<const ArrayDecl *>(cast<VarRef>(*sq.args[0]).binding), p.findArray("eta"));
  const auto &ex = cast<Call>(*add.rhs);
  EXPECT_EQ(ex.builtin, Builtin::Exp);
  EXPECT_EQ(ex.func, nullptr);
  const auto &body = cast<Binary>(*p.funcs[0]->body);
  FuncArgRef arg = std::get<FuncArgRef>(cast<VarRef>(*body.lhs).binding);
  EXPECT_EQ(arg.func, p.funcs[0].get());
  EXPECT_EQ(arg.position, 0u);
  EXPECT_EQ(block.body[1]->op, AssignOp::SubAssign);
  EXPECT_EQ(block.body[1]->array, p.findArray("w"));
}

TEST(Sema, AffineForms) {
  auto c = check("param N, M;\nconst K = 3;\ninput f32 x[N];\noutput f32 y[N, M];\n"
                 "y[i, j] = x[2 * (i - j) + K * N - 1 + j];\n");
  ASSERT_TRUE(c->program) << c->diagnostics;
  const Equation &eq = *c->program->equations[0];
  const auto &read = cast<ArrayRead>(*eq.rhs);
  std::optional<AffineExpr> a = toAffine(*read.indices[0], "an index");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->coefficient(eq.indexVars[0].get()), 2);
  EXPECT_EQ(a->coefficient(eq.indexVars[1].get()), -1);
  EXPECT_EQ(a->coefficient(c->program->params[0].get()), 3);
  EXPECT_EQ(a->coefficient(c->program->params[1].get()), 0);
  EXPECT_EQ(a->constant, -1);
  EXPECT_EQ(a->params.size(), 1u); // zero coefficients are dropped
}

TEST(Sema, QuasiAffineFormsDivideWithFloor) {
  auto c = check("param N;\ninput f32 x[N];\noutput f32 y[N];\n"
                 "y[i] = x[3 * ((i - 5) / 2) + (i + 1) % 4 + (-7) / 2 + 7 % -3];\n");
  ASSERT_TRUE(c->program) << c->diagnostics;
  const Equation &eq = *c->program->equations[0];
  const IndexVar *i = eq.indexVars[0].get();
  std::optional<AffineExpr> a = toAffine(*cast<ArrayRead>(*eq.rhs).indices[0], "an index");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->isStrictlyAffine());
  // (i + 1) % 4 is (i + 1) - 4 * floor((i + 1) / 4); the constants fold with floor: -4 and -2.
  EXPECT_EQ(a->coefficient(i), 1);
  EXPECT_EQ(a->constant, 1 - 4 - 2);
  ASSERT_EQ(a->divs.size(), 2u);
  EXPECT_EQ(a->divs[0].second, 3);
  EXPECT_EQ(a->divs[0].first->denominator, 2);
  EXPECT_EQ(a->divs[0].first->numerator.coefficient(i), 1);
  EXPECT_EQ(a->divs[0].first->numerator.constant, -5);
  EXPECT_EQ(a->divs[1].second, -4);
  EXPECT_EQ(a->divs[1].first->denominator, 4);
  EXPECT_EQ(a->divs[1].first->numerator.constant, 1);
}

TEST(Sema, FloorDivisionAndModulo) {
  EXPECT_EQ(floorDiv(7, 2), 3);
  EXPECT_EQ(floorDiv(-7, 2), -4);
  EXPECT_EQ(floorDiv(-8, 2), -4);
  EXPECT_EQ(floorDiv(7, -2), -4);
  EXPECT_EQ(floorDiv(-7, -2), 3);
  EXPECT_EQ(floorMod(-7, 3), 2);
  EXPECT_EQ(floorMod(7, 3), 1);
  EXPECT_EQ(floorMod(-6, 3), 0);
  EXPECT_EQ(floorMod(INT64_MIN, 2), 0);
}

TEST(Sema, IntegerExpressionsIncludeFloorDivisionsByPositiveConstants) {
  auto c = check("param N;\nconst K = 3;\ninput f32 x[N];\noutput f32 y[N];\n"
                 "y[i] = select(i % 2 == 0, i / K, x[i] / 2) + (i - N) / (K - 1) + i / (2 - K);\n");
  ASSERT_TRUE(c->program) << c->diagnostics;
  const Expr &sum = *c->program->equations[0]->rhs;
  const auto &outer = cast<Binary>(sum); // (select(...) + (i - N) / (K - 1)) + i / (2 - K)
  const auto &inner = cast<Binary>(*outer.lhs);
  const auto &select = cast<Call>(*inner.lhs);
  const auto &parity = cast<Binary>(*select.args[0]);
  EXPECT_TRUE(isIntegerExpr(*parity.lhs));      // i % 2
  EXPECT_TRUE(isIntegerExpr(*select.args[1]));  // i / K
  EXPECT_FALSE(isIntegerExpr(*select.args[2])); // x[i] / 2: x is f32
  EXPECT_TRUE(isIntegerExpr(*inner.rhs));       // (i - N) / (K - 1): a divisor of 2
  EXPECT_FALSE(isIntegerExpr(*outer.rhs));      // i / (2 - K): a negative divisor
  EXPECT_EQ(positiveDivisor(cast<Binary>(*inner.rhs)), 2);
  EXPECT_EQ(positiveDivisor(cast<Binary>(*outer.rhs)), std::nullopt);
}

TEST(Sema, ReportsErrorsAndReturnsNull) {
  auto c = check("param N;\noutput f32 y[N];\ny[i] = q;\n");
  EXPECT_EQ(c->program, nullptr);
  EXPECT_NE(c->diagnostics.find("t.poly:3:8: error: unknown name 'q'"), std::string::npos) << c->diagnostics;
}

TEST(Sema, ExactlyOnce) {
  EXPECT_TRUE(check("param N;\noutput f32 y[N];\ny[0] = 1;\ny[i] = 2 where i > 0;\n")->program);
  auto gap = check("param N;\noutput f32 y[N];\ny[i] = 2 where i > 0;\n");
  EXPECT_EQ(gap->program, nullptr);
  EXPECT_NE(gap->diagnostics.find("array 'y' is not defined at y[0]"), std::string::npos) << gap->diagnostics;
  auto twice = check("param N;\noutput f32 y[N];\ny[i] = 1;\ny[N - 1] = 2;\n");
  EXPECT_EQ(twice->program, nullptr);
  EXPECT_NE(twice->diagnostics.find("array 'y' is defined twice"), std::string::npos) << twice->diagnostics;
}

} // namespace
