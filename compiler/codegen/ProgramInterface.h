// The parts of emitted code that describe the program rather than compute it, shared by every target:
// the opening comment (source, polyc version, command line, statements, schedule, allocation), the
// library header `<prog>.h` with `void <prog>_run(const <prog>_params *p, const float *x, ..., float *y)`,
// named constants, and the polyc::rt::ProgramInfo that main() hands to runMain.
#pragma once

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/CodegenInput.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace polyc::codegen {

// An integer expression affine in the params: constant + sum(coefficient * params[index]), params
// indexed in declaration order (the same as polyc::rt::AffineExtent).
struct AffineForm {
  int64_t constant = 0;
  std::vector<std::pair<unsigned, int64_t>> terms;
  // In isl syntax over the given param names ("2*H + 1").
  std::string toIsl(const std::vector<std::string> &paramNames) const;
};

// The affine form of a shape or index expression made of integer literals, params, integer constants,
// + - * and division of a constant by a constant; nullopt for anything else.
std::optional<AffineForm> affineForm(const ast::Expr &expr, const ast::Program &program);

// The statement's equation in .poly syntax on one line, e.g. "y[i, j] = sum(r1, r2 in 0..M) ...".
std::string equationText(const ast::Equation &equation);
std::string exprText(const ast::Expr &expr);
// "file.poly:12" for the equation when a SourceMgr is available, else the file name.
std::string equationLocation(const CodegenInput &input, const ast::Equation &equation);

// Words for comments and --verbose output.
std::string describeKind(allocate::AllocationKind kind);
std::string describeBand(const CodegenInput &input, unsigned band); // dims, parallelism, hyperplane
std::string describeAllocation(const CodegenInput &input, unsigned band);

// The opening comment of every emitted file. `what` says what the file is ("C++17 + OpenMP code").
void printBanner(const CodegenInput &input, const std::string &fileName, const std::string &what,
                 CodeWriter &w);

// Arrays the run function takes, in declaration order: inputs, outputs and inouts (not locals).
std::vector<const model::ArrayInfo *> interfaceArrays(const model::Model &model);
// The C type of an element (float, double, int32_t) as the library header spells it.
std::string headerTypeName(ast::ElemType type);
// `void iir2d_run(const iir2d_params *p, const float *x, ..., float *y)` (no semicolon).
std::string runFunctionSignature(const CodegenInput &input);
// `<prog>.h`: the params struct and the run function, C-callable (extern "C" under C++).
GeneratedFile emitLibraryHeader(const CodegenInput &input);
// `constexpr int64_t N = 15;` per integer constant, `constexpr double tau = 10.0;` per float constant.
// `qualifier` replaces "constexpr" for dialects without it.
void printConstants(const ast::Program &program, CodeWriter &w, const std::string &qualifier = "constexpr");
// The ring of `array` in a streamed build (Schedule::streaming), or null.
const schedule::StreamedArray *streamedArray(const schedule::Schedule &schedule, const std::string &array);
class ExprPrinter;
// The C interface's body around a run through a Compute: `info` and `context` from the run function's
// arguments (params, the input arrays copied in, whole), then after the run `printArgumentsFromContext`
// copies the outputs back.
llvm::Error printContextFromArguments(const CodegenInput &input, const ExprPrinter &exprs, CodeWriter &w);
void printArgumentsFromContext(const CodegenInput &input, CodeWriter &w);
// The checks of the program's CSR row arrays before a run (polyc::rt::checkRowArray), `pointer(array)` the C
// expression of an array's host data.
void printRowArrayChecks(const CodegenInput &input, const ExprPrinter &exprs, CodeWriter &w,
                         const std::function<std::string(const model::ArrayInfo &)> &pointer);
// The GPU targets' form: the row arrays as the run's `context` holds them on the host.
void printRowArrayChecksOfContext(const CodegenInput &input, const ExprPrinter &exprs, CodeWriter &w);
// Statements that fill `polyc::rt::ProgramInfo <var>` for runMain (needs <polyc/Runtime.h>).
llvm::Error printProgramInfo(const CodegenInput &input, const std::string &var, CodeWriter &w);

} // namespace polyc::codegen
