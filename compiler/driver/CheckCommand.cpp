// polyc check: runs the front end only (parse, Sema, the exactly-once rule) and reports diagnostics;
// prints nothing on success unless asked for a summary (-v) or the AST (--dump-ast).
#include "Commands.h"

#include "dsl/ASTDump.h"
#include "dsl/Frontend.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace polyc;

static cl::opt<std::string> checkInput(cl::Positional, cl::Required, cl::desc("<file.poly>"),
                                       cl::sub(driver::CheckCommand));
static cl::opt<bool> checkVerbose("v", cl::desc("Print a summary of the program"), cl::sub(driver::CheckCommand));
static cl::opt<bool> checkDumpAst("dump-ast", cl::desc("Print the resolved AST"), cl::sub(driver::CheckCommand));

static std::string affineText(const ast::Expr &e);

static void printSummary(const ast::Program &p, raw_ostream &os) {
  os << p.fileName << ": " << p.params.size() << (p.params.size() == 1 ? " param" : " params");
  for (size_t i = 0; i < p.params.size(); ++i)
    os << (i ? ", " : " (") << p.params[i]->name << (i + 1 == p.params.size() ? ")" : "");
  os << "\n";
  for (const auto &a : p.arrays) {
    os << "  " << ast::spelling(a->kind) << " " << ast::spelling(a->elemType) << " " << a->name;
    if (!a->shape.empty()) {
      os << "[";
      for (size_t i = 0; i < a->shape.size(); ++i)
        os << (i ? ", " : "") << affineText(*a->shape[i]);
      os << "]";
    }
    os << "\n";
  }
  size_t inBlocks = 0;
  for (const auto &r : p.repeats)
    inBlocks += r->body.size();
  size_t equations = p.equations.size() + inBlocks;
  os << "  " << equations << (equations == 1 ? " equation, " : " equations, ") << p.repeats.size() << " repeat "
     << (p.repeats.size() == 1 ? "block" : "blocks") << "\n";
}

// Shapes are affine: a compact source-like spelling is enough for the summary.
static std::string affineText(const ast::Expr &e) {
  using namespace ast;
  if (auto *i = dyn_cast<IntLit>(&e))
    return std::to_string(i->value);
  if (auto *v = dyn_cast<VarRef>(&e))
    return v->name;
  if (auto *u = dyn_cast<Unary>(&e))
    return std::string(spelling(u->op)) + affineText(*u->operand);
  if (auto *b = dyn_cast<Binary>(&e))
    return "(" + affineText(*b->lhs) + " " + spelling(b->op) + " " + affineText(*b->rhs) + ")";
  return "?";
}

int polyc::driver::runCheck() {
  SourceMgr sm;
  std::unique_ptr<ast::Program> program = loadProgram(sm, checkInput);
  if (!program)
    return 1;
  if (checkVerbose)
    printSummary(*program, outs());
  if (checkDumpAst)
    dsl::dumpProgram(*program, outs());
  return 0;
}
