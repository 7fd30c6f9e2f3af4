// Unit tests of dsl/Unparse.h: printed expressions parse back to the same tree (printed again, the text
// is the same), with only the parentheses the grammar needs.
#include "dsl/Frontend.h"
#include "dsl/Unparse.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace polyc;

namespace {

// The right-hand side of the last equation of `program` + "y[i] = " + `rhs` + ";", printed.
std::string printed(const std::string &rhs) {
  std::string source =
      "param N;\ninput f32 a[N];\ninput f32 b[N, N];\noutput f32 y[N];\ny[i] = " + rhs + ";\n";
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "t.poly"), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  auto program = dsl::loadProgramFromBuffer(sm, id, os);
  if (!program)
    return "error: " + diagnostics;
  return dsl::unparse(*program->equations.back()->rhs);
}

// Printing is a fixed point: the printed text parses to a tree that prints the same.
void expectRoundTrip(const std::string &rhs, const std::string &expected) {
  std::string once = printed(rhs);
  EXPECT_EQ(once, expected) << "from " << rhs;
  EXPECT_EQ(printed(once), once);
}

TEST(Unparse, KeepsOnlyTheParenthesesPrecedenceNeeds) {
  expectRoundTrip("(a[i] + a[i + 1]) * 2", "(a[i] + a[i + 1]) * 2");
  expectRoundTrip("a[i] + (a[i + 1] * 2)", "a[i] + a[i + 1] * 2");
  expectRoundTrip("a[i] - (a[i + 1] - a[i - 1])", "a[i] - (a[i + 1] - a[i - 1])");
  expectRoundTrip("(a[i] - a[i + 1]) - a[i - 1]", "a[i] - a[i + 1] - a[i - 1]");
  expectRoundTrip("-(a[i] + 1.5)", "-(a[i] + 1.5)");
  expectRoundTrip("select(a[i] > 0 && !(a[i] > 1), 1e-9, 2.0)",
                  "select(a[i] > 0 && !(a[i] > 1), 1e-09, 2.0)");
}

TEST(Unparse, ClosesAReductionWhereSomethingFollowsIt) {
  // A reduction's body runs to the end of its multiplicative expression.
  expectRoundTrip("sum(k in 0..N) a[k] * b[i, k] + 1", "sum(k in 0..N) a[k] * b[i, k] + 1");
  expectRoundTrip("(sum(k in 0..N) a[k]) * 2", "(sum(k in 0..N) a[k]) * 2");
  expectRoundTrip("2 * sum(k in 0..N) a[k] * sum(j in 0..k) b[k, j]",
                  "2 * sum(k in 0..N) a[k] * sum(j in 0..k) b[k, j]");
  expectRoundTrip("sum(k in 0..N) (a[k] + 1)", "sum(k in 0..N) (a[k] + 1)");
  expectRoundTrip("-(sum(k in 0..N) a[k]) * 2", "-(sum(k in 0..N) a[k]) * 2");
  expectRoundTrip("max(k, j in 0..N where (k, j) != (0, 0)) b[k, j]",
                  "max(k, j in 0..N where (k, j) != (0, 0)) b[k, j]");
}

TEST(Unparse, SamplesAndQuasiAffineIndices) {
  expectRoundTrip("sample(b, i + 0.5, a[i] * 2) + sample(a, (i - 1) / 2)",
                  "sample(b, i + 0.5, a[i] * 2) + sample(a, (i - 1) / 2)");
  expectRoundTrip("b[(i + 1) % 3, i / 2]", "b[(i + 1) % 3, i / 2]");
}

} // namespace
