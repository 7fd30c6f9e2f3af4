// Prints a statement's right-hand side (ast::Expr) as C-family source: typed arithmetic, boundary rules
// on out-of-range reads, gathers, reductions as accumulation loops, user funcs, select, comparisons as
// 0/1. Shared by every target; a target changes the dialect through the virtual hooks below.
//
// How targets use it:
//   - printHelpers() and printUserFunctions() once per file, before any statement code;
//   - printStatement(S, w) where the statement's dimensions are in scope under dimNames(S) (the CPU
//     target emits one function per statement with those parameters; a GPU kernel derives them from
//     its thread index);
//   - elementIndex()/storageSize() to address and allocate arrays the same way the statements do.
// Hooks (override in a subclass): type names, the index type, math function names per type,
// literals, conversions (convert), the limits used as identities of max/min, the qualifier of helper functions, how a
// param or an array's storage is named, and how a reduction is computed (printReduction: default an
// accumulation loop nest; a GPU target can print a block reduction instead) with an optional pragma on
// its outermost loop (reductionLoopPragma: the CPU target's OpenMP `reduction(...)`).
//
// Typing follows docs/language.md: every equation computes in its left-hand array's element type;
// params, index variables and reads of other types are converted; i32 equations divide truncating
// (helpers that yield 0 for a zero divisor instead of trapping). Index expressions (array indices,
// reduction bounds, where conditions) are computed in the index type, with floor division.
#pragma once

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/Names.h"
#include "compiler/codegen/Packages.h"
#include "compiler/schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace polyc::codegen {

// One variable of a reduction: `var` runs from `lo` to `hi - 1` (C expressions in the index type).
struct ReductionLoop {
  std::string var, lo, hi;
};

// A reduction, ready to print: what printReduction receives.
struct ReductionParts {
  const ast::Reduction *reduction = nullptr;
  ast::ElemType type = ast::ElemType::F32; // the accumulator's type
  std::string accumulator;                 // a fresh local name (sum0, max1, ...)
  std::string identity;                    // 0, the type's lowest or highest value
  std::vector<ReductionLoop> loops;        // outermost first
  std::string condition;                   // the `where` clause as a C condition; empty if none
  bool nested = false;                     // inside another reduction's body
  // Prints what the body needs (nested reductions, gather indices) into `w` and returns its value.
  // Call it inside the innermost loop, where the loop variables are in scope.
  std::function<std::string(CodeWriter &)> body;
  // The statement that folds `value` into the accumulator, e.g. "sum0 += v;" or
  // "max0 = fmaxf(max0, v);".
  std::function<std::string(const std::string &value)> update;
  // The same into another accumulator (an element of an array of them: "sum0[polyc_r] += v;").
  std::function<std::string(const std::string &accumulator, const std::string &value)> combine;
};

class ExprPrinter {
public:
  ExprPrinter(const model::Model &model, const schedule::Schedule &schedule);
  virtual ~ExprPrinter() = default;
  const model::Model &model() const { return model_; }

  // Prints one instance of `statement`: locals for its reductions, then the assignment to its
  // left-hand element (`=`, `+=`, `-=`). Reads of an array listed in setReadStorage go to that storage.
  void printStatement(const model::Statement &statement, CodeWriter &w);
  // Prints `expr`, a part of `statement`'s right-hand side, as printStatement would print it there (the
  // statement's dimensions in scope under dimNames) and returns its value in the statement's type. The
  // variables of `around`, a reduction of the statement whose body holds `expr`, are in scope under their
  // own names, with their ranges. For a target that computes a statement in parts (the CUDA decoupled
  // step).
  std::string printPart(const model::Statement &statement, const ast::Expr &expr, CodeWriter &w,
                        const ast::Reduction *around = nullptr);
  // The C names of the statement's dimensions, in model::Statement::dimNames order (repeat variable
  // first). These are the parameters the printed statement code expects in scope.
  std::vector<std::string> dimNames(const model::Statement &statement) const;
  // Reads of `array` (not its writes) use `storage` instead of arrayRef(array): for a target that
  // stages the values a statement reads in other memory (CUDA shared memory, OpenCL local memory).
  void setReadStorage(const std::string &array, const std::string &storage);
  void clearReadStorage() { readStorage_.clear(); }
  // Round tiles (map::RoundTiles): while set, reads of `array` and of `snapshot` go to the block's buffer
  // `from`, and the update's store reads its old value there, stores the new one into `to` and sets the
  // bool `changed` (declared by the caller) to whether the element changed. The buffers hold the points
  // from `origin` (names in scope), row-major in rows of `stride` points along each dimension (the first's
  // unused); every index read is one the block holds (RoundTileKernel.h).
  // With `interior`, the point's reads are inside the array (their boundary rules print no test).
  struct RoundTileStorage {
    std::string array, snapshot, from, to, changed;
    std::vector<std::string> origin, stride;
    bool interior = false;
  };
  std::optional<RoundTileStorage> roundTile;
  // The offset in a round tile's buffer of the element at `indices` (C expressions).
  std::string roundTileOffset(llvm::ArrayRef<std::string> indices) const;

  // The linear offset of an element, row-major over the array's extents; a folded dimension is
  // indexed modulo its window and has the window as its extent. Indices are C expressions.
  std::string elementIndex(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices) const;
  // The number of elements to allocate for the array (windows for folded dimensions).
  std::string storageSize(const model::ArrayInfo &array) const;
  // The array's extents, whole (no window for a folded dimension), as C expressions of the params.
  std::vector<std::string> wholeExtents(const model::ArrayInfo &array) const;
  // Host code: storageSize(array) computed through polyc::rt::localElements, which fails the run with the
  // array's name when the size overflows 64 bits for the params given.
  std::string checkedStorageSize(const model::ArrayInfo &array) const;
  // The array's declared extent of dimension `dim`, as a C expression of params.
  std::string extent(const model::ArrayInfo &array, unsigned dim) const;
  // An index expression that mentions params alone (an array's extent, a sum's bound), as a C expression.
  std::string paramIndex(const ast::Expr &expr) const;
  // The folding of (array, dim), if the schedule folds it.
  const schedule::FoldedStorage *folding(const std::string &array, unsigned dim) const;

  // Index helpers used by printed code (polyc_min/max, polyc_floord, polyc_clamp, polyc_mirror, i32
  // division), qualified by functionQualifier(). Once per file, before statement code.
  void printHelpers(CodeWriter &w) const;
  // One definition per user func and element type the program's statements use (`sigmoid` or, when
  // used in two types, `sigmoid_f32` and `sigmoid_f64`). Params a func reads become extra arguments.
  void printUserFunctions(CodeWriter &w);

  // Package execution (Packages.h): where printsPackages() holds, printStatement prints a package's
  // members together at its first member (one loop nest, an accumulator each) and only a comment at the
  // others, which the caller still calls, for the same point and in order.
  void setPackages(std::vector<Package> packages) { packages_ = std::move(packages); }
  // Whether statements are printed for one thread computing a whole point (not a group's lanes or a
  // strip of points): a target overrides it for the modes where that holds.
  virtual bool printsPackages() const { return false; }
  // The pragma above the loops of a package's sum `red`, whose members fold into `accumulators` (the
  // package's reductionLoopPragma); none by default.
  virtual std::string packageLoopPragma(const ast::Reduction &, const std::vector<std::string> &) const {
    return "";
  }

  // --mpi: reductions the ranks split by their terms (map::TermSplit). Each rank's loop over `variable`
  // runs only its `block` of it (a polyc::rt::mpi::Block the statement code can read, computed once). With a `buffer`, the
  // partial values go to the buffer's element of the written element (SplitPass::Partial) and the statement
  // later reads it back, combined (SplitPass::Finish); without one each instance combines its own value
  // right away (polyc::rt::mpi::combineValue with `combine`, a polyc::rt::mpi::Combine). A buffer of
  // `oneValue` holds the value of the one instance being computed (element 0), not one per element.
  struct SplitReduction {
    const ast::IndexVar *variable = nullptr;
    std::string block, buffer, combine;
    bool oneValue = false;
  };
  void setSplitReductions(std::map<const ast::Reduction *, SplitReduction> splits) {
    splitReductions_ = std::move(splits);
  }
  enum class SplitPass { Whole, Partial, Finish };
  // Which part of a statement whose reduction has a buffer printStatement prints: all of it (Whole, no
  // split), its reduction's partial value into the buffer (Partial), or the statement with the combined
  // value read from the buffer (Finish).
  SplitPass splitPass = SplitPass::Whole;

  // Records, while the caller prints statements, the statement points at which a bounds test that the
  // printer keeps can fail: for each test, the points of the statement's domain where, for some values
  // of the reductions around the read, its index crosses that end (or its extent is empty). The record
  // is a set in the statement domain's space without its tuple name.
  struct GuardRecord {
    // False when some test could not be placed (a gathered index, an extent or index isl cannot
    // express): any point may need it.
    bool placed = true;
    std::optional<isl::set> points; // none: the printer kept no test
  };
  void startGuardRecord();
  GuardRecord finishGuardRecord();

  // ---- Dialect hooks; the defaults are C++17.
  virtual std::string typeName(ast::ElemType type) const;    // float, double, int32_t
  virtual std::string indexType() const { return "int64_t"; } // loop variables, params, indices
  virtual std::string reductionIndexType() const { return indexType(); }       // a reduction's variables
  virtual std::string mathFunction(ast::Builtin fn, ast::ElemType type) const; // expf, fmaxf, ...
  virtual std::string fmodFunction(ast::ElemType type) const;                 // `%` on floats
  virtual std::string floorFunction(ast::ElemType type) const;                // floorf, floor
  virtual std::string literal(double value, ast::ElemType type) const;        // 0.5f, 0.5, 2
  virtual std::string lowest(ast::ElemType type) const;  // identity of max: -FLT_MAX, ...
  virtual std::string highest(ast::ElemType type) const; // identity of min: FLT_MAX, ...
  virtual std::string convert(const std::string &expr, ast::ElemType to) const; // float(x)
  virtual std::string indexCast(const std::string &expr) const;              // int64_t(x)
  virtual std::string functionQualifier() const { return "static inline"; }
  // Whether the index helpers (polyc_min, polyc_clamp, ...) are templates over their arguments' types,
  // computing in the wider signed one: CUDA's kernels index in int or int64_t.
  virtual bool genericIndexHelpers() const { return false; }
  virtual std::string paramRef(const std::string &param) const { return cIdentifier(param); }
  virtual std::string arrayRef(const model::ArrayInfo &array) const { return cIdentifier(array.name); }
  // Where a statement's store goes: the array's storage, or a copy of it (a GPU block's privatised
  // histogram, at the same offsets).
  virtual std::string storeRef(const model::ArrayInfo &array) const { return arrayRef(array); }
  // Computes a reduction and returns an expression holding its value. Default: declares the
  // accumulator, prints reductionLoopPragma (if not empty) and a loop nest calling parts.body.
  virtual std::string printReduction(const ReductionParts &parts, CodeWriter &w);
  virtual std::string reductionLoopPragma(const ReductionParts &) const { return ""; }
  // The reduction's loop nest (`pragma` above it when not empty), folding parts.body into the accumulator.
  void printReductionLoops(const ReductionParts &parts, const std::string &pragma, CodeWriter &w);
  // The element of `array` (held in `storage`) at `indices`, as read by a statement. Default:
  // storage[elementIndex(array, indices)]. A target may read from a cache instead (the OpenCL flexible
  // wavefront reads the recurrence from a ring of recent rows in local memory).
  virtual std::string elementRef(const model::ArrayInfo &array, const std::string &storage,
                                 llvm::ArrayRef<std::string> indices) const;
  // Whether the storage a read of `array` goes to already holds the boundary rule's values around the
  // array (a GPU strip's window staged with its zeros), so that the read needs no bounds test.
  virtual bool storageHoldsBoundary(const model::ArrayInfo &) const { return false; }
  // Prints the store of one statement instance, `target op rhs;` by default (`op` is " = ", " += " or
  // " -= "). A GPU target whose work-group computes one instance together can reduce the value across
  // the group and store it from one work-item.
  virtual void printStore(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices,
                          const std::string &target, const std::string &op, const std::string &rhs,
                          CodeWriter &w);

  // A scatter's update of one element, which other points update at the same time: `target op rhs`
  // atomically (`op` is " += " or " -= "). Default: OpenMP's `#pragma omp atomic`.
  virtual void printAtomicUpdate(const std::string &target, const std::string &op, const std::string &rhs,
                                 ast::ElemType type, CodeWriter &w) const;

protected:
  // Prints the store `target op rhs;`, a scatter's atomically (printAtomicUpdate), or, for a statement that signals a change (an update of an
  // array that its repeat block watches, model::Statement::signalsChange), the same store in a block
  // that also sets the changed flag (changedStore) when the element's value changes: any difference
  // counts but one NaN against another.
  void printStoreLine(const std::string &target, const std::string &op, const std::string &rhs,
                      CodeWriter &w) const;
  // The statement that sets the changed flag in the repeat loop's iteration `iteration` (the C name of the
  // statement's repeat dimension); the default, the CPU program's member.
  virtual std::string changedStore(const std::string & /*iteration*/) const {
    return "__atomic_store_n(&polyc_changed, 1, __ATOMIC_RELAXED)";
  }

  // Declares the reduction's variables at position `flat` of its index space flattened in row-major
  // order (the innermost variable fastest), the variables' ranges having `extents` values each; the
  // variables of type `type`.
  static void declareFlatReductionIndex(const ReductionParts &parts, const std::vector<std::string> &extents,
                                        const std::string &flat, CodeWriter &w,
                                        const std::string &type = "int");
  // A term table's candidate `flat` (inside the caller's bounds test): declares the reduction's
  // variables, and where the sum's condition holds sets polyc_coefficient and polyc_offset (the window
  // offset the subclass's elementRef leaves in termOffset_) and polyc_keep = `kept`.
  void printTermCandidate(const ReductionParts &parts, const std::vector<std::string> &extents,
                          const std::string &flat, const std::string &kept, CodeWriter &w);

  // The value of one array read of the statement being printed, as a read in its body would give it
  // (boundary rule applied, in the array's element type): for a target that reads a term's cell apart
  // from its coefficient. Lines it needs go to `w`.
  std::string readValue(const ast::ArrayRead &read, CodeWriter &w);

  // Set by a GPU printer's elementRef while a term table's coefficient is printed: the offset of the
  // window cell the term reads, from the point's own cell (elementRef is const).
  mutable std::string termOffset_;

  const model::Model &model_;
  const schedule::Schedule &schedule_;

private:
  struct Scope; // names and access facts of the statement or func being printed
  Scope statementScope(const model::Statement &statement) const;
  struct Code;  // printed text with its C precedence
  Code value(const ast::Expr &expr, ast::ElemType type, CodeWriter &w);
  Code condition(const ast::Expr &expr, ast::ElemType type, CodeWriter &w);
  Code comparison(const ast::Binary &cmp, ast::ElemType type, CodeWriter &w);
  Code index(const ast::Expr &expr, CodeWriter &w);
  std::string computedIndex(const ast::Expr &expr, const model::ArrayInfo &array, unsigned dim,
                            std::vector<std::string> &tests, CodeWriter &w);
  Code floorDivision(const ast::Binary &b, CodeWriter &w);
  Code arrayRead(const ast::ArrayRead &read, CodeWriter &w);
  Code sampledRead(const ast::ArrayRead &read, ast::ElemType type, CodeWriter &w);
  Code reduction(const ast::Reduction &red, ast::ElemType type, CodeWriter &w);
  // A reduction's starting value, and the statement that folds a value into an accumulator.
  std::string reductionIdentity(ast::ReductionOp op, ast::ElemType type) const;
  std::function<std::string(const std::string &, const std::string &)> reductionCombine(ast::ReductionOp op,
                                                                                       ast::ElemType type) const;
  const Package *packageOf(const model::Statement &statement) const;
  void printPackage(const Package &package, CodeWriter &w);
  // The values of the package members' corresponding nodes, member by member, the sums among them
  // sharing their loops (`scopes` are the members' scopes).
  std::vector<Code> packageValues(const std::vector<const ast::Expr *> &nodes, ast::ElemType type,
                                  std::vector<Scope> &scopes, CodeWriter &w);
  std::vector<Code> packageReduction(const std::vector<const ast::Expr *> &nodes, ast::ElemType type,
                                     std::vector<Scope> &scopes, CodeWriter &w);
  Code call(const ast::Call &call, ast::ElemType type, CodeWriter &w);
  Code varRef(const ast::VarRef &ref, ast::ElemType type) const;
  struct BoundsCheck {
    bool low = true, high = true; // whether the index can fall below 0 / reach the extent
    bool emptyExtent = true;      // whether the dimension's extent can be 0 where the read happens
  };
  std::vector<BoundsCheck> boundsChecks(const ast::ArrayRead &read) const;
  Code boundedRead(const ast::ArrayRead &read, const model::ArrayInfo &array, std::vector<Code> indices,
                   const std::vector<BoundsCheck> &checks, CodeWriter &w);
  // boundsChecks' share of the guard record (startGuardRecord): `crossing` (domain dims, then the
  // reductions' variables) projected onto the domain.
  void recordGuard(const isl::set &crossing, unsigned domainDims) const;
  void recordUnplacedGuard() const;
  std::string funcName(const ast::FuncDecl &func, ast::ElemType type) const;
  void collectFuncUses(const ast::Expr &expr, ast::ElemType type);
  void computeFuncParams();

  std::map<std::string, std::string> readStorage_;
  // User funcs in use: (func, type), in first-use order; and the params each func reads.
  std::vector<std::pair<const ast::FuncDecl *, ast::ElemType>> funcUses_;
  std::map<const ast::FuncDecl *, std::vector<std::string>> funcParams_;
  NameScope globalNames_; // params, arrays, constants, funcs, helpers
  std::vector<Package> packages_;
  Scope *scope_ = nullptr;
  std::map<const ast::Reduction *, SplitReduction> splitReductions_;
  std::string splitElement_; // the written element's offset, while a statement is printed
  const model::Statement *storing_ = nullptr; // the statement being printed (storeText)
  // The guard record: whether one is being taken, its points so far, and whether a test was unplaced.
  // (boundsChecks, which adds to it, is const.)
  bool recordingGuards_ = false;
  mutable std::optional<isl::set> guardedPoints_;
  mutable bool unplacedGuard_ = false;
};

} // namespace polyc::codegen
