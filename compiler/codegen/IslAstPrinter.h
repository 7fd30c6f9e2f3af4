// Prints the isl AST of the chosen schedule as C-family loops, with hooks for each target. The schedule
// tree's bands are marked before AST generation, so each loop is known as "dimension m of band b":
// loops get readable names from the band's dimension names and a comment naming the statements and
// the schedule dimension; statement instances become calls with named loop variables.
//
// How a target uses it: subclass, override the hooks it needs, call printSchedule().
//   printBand(band, body)     a marked band's subtree; the default prints a comment and printNode(body).
//                             A target replaces a whole band here (the CPU's flexible wavefront, a GPU
//                             kernel launch), possibly printing printNode(body) in one branch of a
//                             run-time choice.
//   printLoopPragma(loop)     lines above a `for` (e.g. `#pragma omp parallel for` on a coincident loop).
//   printFor(loop, node)      the whole loop; the default is comment, pragma, `for (...) {`, body, `}`.
//                             A GPU target can print a grid-mapped index instead of a loop.
//   printStatementCall(call)  one statement instance; the default is `S0(i, j);`.
//   minFunction()/maxFunction()/floorDivFunction()  names used in printed bounds (helpers of
//                             ExprPrinter::printHelpers by default); idName() prints a param.
// expr(e) prints any isl AST expression with the current loop names, for use inside hooks.
#pragma once

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/CodegenInput.h"
#include "compiler/codegen/Names.h"

#include "llvm/Support/Error.h"

#include <isl/cpp.h>

#include <map>
#include <string>
#include <vector>

namespace polyc::codegen {

// A band of the schedule as the printer meets it: its index in Schedule::bands (and
// Allocation::bands) and its allocation, if the allocation has an entry for it.
struct BandView {
  unsigned index = 0;
  const schedule::Band *band = nullptr;
  const allocate::BandAllocation *allocation = nullptr;
  std::vector<unsigned> statements; // the statements under the band in the tree
  isl::multi_union_pw_aff partialSchedule; // the tree band's schedule, one member per dimension
  unsigned firstScheduleDim = 0;           // schedule depth of its first member (isl's c<k> iterators)
  // Tiled (Band::tileSizes, for a printer whose tilesBands() is true): the tile loops are the members at
  // firstScheduleDim .., the point loops the next as many.
  bool tiled = false;
};

// Whether a group of threads computing a point of a kernel band may read, in a later statement instance
// of the point, what an earlier one stored: the instance is inside a loop of the kernel's own (a
// sequential member), or a statement of the band reads an array another one writes. Each store must then
// be visible to the group before the next instance runs.
bool readsEarlierInstances(const model::Model &model, const BandView *band, bool insideKernelLoop);

// One `for` loop about to be printed.
struct LoopView {
  std::string iterator;            // the loop variable's C name
  std::string init, cond, inc;     // C text: `iterator = init; cond; iterator += inc`
  const BandView *band = nullptr;  // null when the loop is not inside a marked band
  unsigned member = 0;             // which dimension of the band
  bool tileLoop = false;           // the loop over the band's tiles along `member` (BandView::tiled)
  bool coincident = false;         // the band says this dimension carries no dependence
  bool insideParallel = false;     // an enclosing loop was printed parallel (see markParallel)
  unsigned depth = 0;              // number of enclosing loops
  std::vector<unsigned> statements; // statements executed in the loop's body
};

// One statement instance: `statement` indexes Model::statements; `args` are its dimensions' values.
struct StatementCall {
  unsigned statement = 0;
  std::vector<std::string> args;
};

class IslAstPrinter {
public:
  IslAstPrinter(const CodegenInput &input, CodeWriter &w);
  virtual ~IslAstPrinter() = default;

  // Marks the bands of input.schedule.tree, generates the AST over input.model.context and prints
  // it. isl errors come back as llvm::Error.
  llvm::Error printSchedule();
  // Prints one AST node (and its subtree) at the writer's current position.
  void printNode(const isl::ast_node &node);
  // An isl AST expression as C text, loop iterators by their readable names.
  std::string expr(const isl::ast_expr &e) const;
  // Fills loop.init, cond and inc from `node`, each parenthesised where needed so that printers can
  // write `init + first`, `i >= init && cond` and `k * inc` (an isl bound may be a conditional).
  void setBounds(LoopView &loop, const isl::ast_node_for &node) const;
  // The statement name for a statement index ("S0"); targets may override to rename.
  virtual std::string statementFunction(unsigned statement) const;
  // A one-line description of a band dimension for comments: "t = i + j, Lamport hyperplane (1, 1)".
  std::string describeDimension(const BandView &band, unsigned member) const;
  // The statements (indices into Model::statements) whose instances occur under `node`.
  std::vector<unsigned> statementsUnder(const isl::ast_node &node) const;
  // Names in use in emitted code (params, arrays, constants, functions); targets may add theirs.
  NameScope &names() { return names_; }
  // The C name of the param that picks the form of Schedule::timeTiled[region] (1: time-tiled), which
  // the target declares before the loops.
  const std::string &switchName(unsigned region) const { return switchNames_[region]; }
  // A function of the params as C text (with the names the loops print).
  std::string paramExpr(const isl::pw_aff &value) const;

protected:
  virtual void printBand(const BandView &band, const isl::ast_node &body);
  // Whether the band's loops are generated atomic (isl_ast_loop_atomic): each statement printed once
  // per loop, a non-convex domain as one guard, instead of one copy per convex piece.
  virtual bool printsStatementsOnce(const BandView &) const { return false; }
  // Whether the band's outer loop is generated separate (isl_ast_loop_separate): its iterations split
  // into runs over which the same statements execute, each printed apart, so that a guard such as the
  // first step's `t == 1` is decided once for a run instead of at every instance inside it. Not taken
  // where a band inside would be printed more than MaxSeparatedCopies times.
  // The default: a host loop of the GPU mapping (CodegenInput::mapping, which only the GPU targets have).
  virtual bool separatesIterations(const BandView &band) const;
  static constexpr unsigned MaxSeparatedCopies = 3;
  // Whether this target applies the schedule's tile sizes (Band::tileSizes; the CPU's caches).
  virtual bool tilesBands() const { return false; }
  // Whether a GPU target may compute each point of the band with a whole work-group (thread block):
  // a reduction band. Its statements are printed once (printsStatementsOnce), because PoCL 3.1
  // miscompiles a work-group barrier inside one of several branches that every work-item takes alike:
  // the statement after it ran once per work-item (fuzz seed 90045).
  static bool mayComputePointsByGroups(const BandView &band);
  virtual void printFor(const LoopView &loop, const isl::ast_node_for &node);
  // Whether this printer prints a streamed build's outer loop (Schedule::streaming), which then calls
  // polyc_steps->beforeStep(t) and afterStep(t) around each step (polyc/Stream.h).
  virtual bool printsStepHooks() const { return false; }
  bool isStreamedStep(const LoopView &loop) const;
  // The loop of a repeat block that stops early (`until unchanged(...)`): printed after untilSetup()'s
  // lines (in a block of their own when there are some), each iteration beginning with resetChanged()
  // (none when empty) and ending with `if (stopsNow(loop)) break;`; the statements that signal a
  // change (model::Statement::signalsChange) set the flag (ExprPrinter::changedStore). The defaults: a
  // member `polyc_changed` of the CPU program, or a variable the loop's own code reaches.
  static bool stopsWhenUnchanged(const LoopView &loop);
  virtual std::vector<std::string> untilSetup(const LoopView &) const { return {}; }
  virtual std::string resetChanged(const LoopView &) const { return "polyc_changed = 0;"; }
  virtual std::string stopsNow(const LoopView &) const { return "!polyc_changed"; }
  // Whether an iteration after one that changed nothing would change nothing either: every update of
  // the loop's block is watched, so its state is the watched arrays and its '=' arrays are computed
  // from them, and no equation of the block reads the repeat variable. A GPU target may then run a few
  // iterations ahead of the host's test of the flag.
  bool mayRunAhead(const LoopView &loop) const;
  virtual void printLoopPragma(const LoopView &) {}
  virtual void printStatementCall(const StatementCall &call);
  virtual std::string minFunction() const { return "polyc_min"; }
  virtual std::string maxFunction() const { return "polyc_max"; }
  virtual std::string floorDivFunction() const { return "polyc_floord"; }
  // How an isl identifier that is not a loop iterator (a param) is printed; default cIdentifier.
  virtual std::string idName(const std::string &islName) const;
  // Called by a printLoopPragma that made its loop parallel, so nested loops see insideParallel.
  void markParallel() { markParallel_ = true; }
  // Whether the code being printed runs inside a loop printed parallel (for printStatementCall).
  bool insideParallel() const { return parallelDepth_ > 0; }
  // A target may narrow a loop's range before it is printed (the MPI ranks' blocks): `init` and `cond`.
  virtual void narrowLoop(LoopView &) const {}
  // The innermost marked band around the code being printed, or null.
  const BandView *currentBand() const { return currentBand_; }
  // A printer that goes on from where `outer` is (its loop names, the band being printed, the names
  // in use) but writes to `w`: a GPU target prints a band's loops into a kernel with it. `outer`
  // must outlive it.
  IslAstPrinter(const IslAstPrinter &outer, CodeWriter &w);
  // The type of the loop iterators that printFor declares: int64_t; a GPU kernel's may be its template's.
  virtual std::string loopIndexType() const { return "int64_t"; }
  // The default `for` header text: "for (int64_t t = 0; t <= H + W - 2; ++t)".
  std::string forHeader(const LoopView &loop, const std::string &indexType) const;
  std::string forHeader(const LoopView &loop) const { return forHeader(loop, loopIndexType()); }
  // A comment line for a loop: its statements and schedule dimension.
  std::string loopComment(const LoopView &loop) const;
  // The index in Model::statements of the statement named `name` (isl's tuple name), or ~0u.
  unsigned statementIndex(const std::string &name) const;

  const CodegenInput &input_;
  CodeWriter &w_;

private:
  void printFor(const isl::ast_node_for &node);
  void printIf(const isl::ast_node_if &node);
  void printUser(const isl::ast_node_user &node);
  void printMark(const isl::ast_node_mark &node);
  std::string expr(const isl::ast_expr &e, int &precedence) const;

  NameScope names_;
  std::vector<BandView> bandViews_;                // by mark id
  std::map<std::string, std::string> iteratorNames_; // isl iterator id -> C name
  std::vector<std::string> switchNames_;             // by index into Schedule::timeTiled
  const BandView *currentBand_ = nullptr;
  unsigned bandMember_ = 0; // the next loop inside currentBand_ is this dimension
  unsigned depth_ = 0;
  unsigned parallelDepth_ = 0;
  unsigned stepLoops_ = 0; // streamed outer loops printed with their hooks (one, or the build is refused)
  bool markParallel_ = false;
};

} // namespace polyc::codegen
