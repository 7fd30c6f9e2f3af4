// The abstract syntax tree of a .poly program: what the parser builds and semantic analysis annotates.
// Later stages (compiler/model) read it through these types only; names are resolved by Sema
// (the `binding`, `array` and `func` members), so no later stage looks names up again.
#pragma once

#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace polyc::ast {

enum class ElemType { F32, F64, I32 };
enum class Boundary { Zero, Clamp, Mirror };
enum class ArrayKind { Input, Output, InOut, Local };
enum class AssignOp { Assign, AddAssign, SubAssign };
enum class UnaryOp { Neg, Not };
enum class BinaryOp { Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
enum class ReductionOp { Sum, Max, Min };
enum class Builtin { Exp, Log, Sqrt, Abs, Tanh, Min, Max, Pow, Select };

const char *spelling(ElemType);
const char *spelling(Boundary);
const char *spelling(ArrayKind);
const char *spelling(AssignOp);
const char *spelling(UnaryOp);
const char *spelling(BinaryOp);
const char *spelling(ReductionOp);
const char *spelling(Builtin);

struct ParamDecl;
struct ConstDecl;
struct FuncDecl;
struct ArrayDecl;
struct Equation;
struct RepeatBlock;

// An index variable: bound by an equation's left-hand side, a reduction binding or a repeat block.
struct IndexVar {
  std::string name;
  llvm::SMRange range;
};

// ---------------------------------------------------------------------------------------------
// Expressions

class Expr {
public:
  enum class Kind { IntLit, FloatLit, VarRef, ArrayRead, Unary, Binary, Call, Reduction, Tuple };
  Kind kind() const { return kind_; }
  llvm::SMRange range;
  virtual ~Expr() = default;

protected:
  Expr(Kind kind, llvm::SMRange range) : range(range), kind_(kind) {}

private:
  Kind kind_;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : Expr {
  int64_t value;
  IntLit(int64_t value, llvm::SMRange range) : Expr(Kind::IntLit, range), value(value) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::IntLit; }
};

struct FloatLit : Expr {
  double value;
  FloatLit(double value, llvm::SMRange range) : Expr(Kind::FloatLit, range), value(value) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::FloatLit; }
};

// What a bare identifier refers to, filled in by Sema.
struct IndexVarRef { const IndexVar *var; };       // equation, reduction or repeat index variable
struct FuncArgRef { const FuncDecl *func; unsigned position; };
using Binding = std::variant<std::monostate, const ParamDecl *, const ConstDecl *, const ArrayDecl *,
                             IndexVarRef, FuncArgRef>;

struct VarRef : Expr {
  std::string name;
  Binding binding; // resolved by Sema; ArrayDecl only for scalar (rank 0) arrays
  VarRef(std::string name, llvm::SMRange range) : Expr(Kind::VarRef, range), name(std::move(name)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::VarRef; }
};

struct ArrayRead : Expr {
  std::string name;
  std::vector<ExprPtr> indices;
  const ArrayDecl *array = nullptr; // resolved by Sema
  // Per index, whether it is a gather (reads an i32 array), filled in by Sema.
  std::vector<bool> isGather;
  // `sample(A, e1, ..., en)`: the indices that are not integer expressions are positions between
  // elements, interpolated (multilinear); Sema marks them as gathers, data-dependent indices that may
  // read anywhere along their dimension.
  bool sampled = false;
  ArrayRead(std::string name, std::vector<ExprPtr> indices, llvm::SMRange range)
      : Expr(Kind::ArrayRead, range), name(std::move(name)), indices(std::move(indices)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::ArrayRead; }
};

struct Unary : Expr {
  UnaryOp op;
  ExprPtr operand;
  Unary(UnaryOp op, ExprPtr operand, llvm::SMRange range)
      : Expr(Kind::Unary, range), op(op), operand(std::move(operand)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Unary; }
};

struct Binary : Expr {
  BinaryOp op;
  ExprPtr lhs, rhs;
  Binary(BinaryOp op, ExprPtr lhs, ExprPtr rhs, llvm::SMRange range)
      : Expr(Kind::Binary, range), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Binary; }
};

struct Call : Expr {
  std::string callee;
  std::vector<ExprPtr> args;
  // Resolved by Sema: exactly one of these is set.
  std::optional<Builtin> builtin;
  const FuncDecl *func = nullptr;
  Call(std::string callee, std::vector<ExprPtr> args, llvm::SMRange range)
      : Expr(Kind::Call, range), callee(std::move(callee)), args(std::move(args)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Call; }
};

// `k1, k2 in lo..hi`: several variables over one range.
// A place an index variable indexes directly: dimension `dim` of `array` (col[c]).
struct DirectIndex {
  const ArrayDecl *array = nullptr;
  unsigned dim = 0;
};

struct RangeBinding {
  std::vector<std::unique_ptr<IndexVar>> vars;
  ExprPtr lo, hi;
  // A range read from an index array, CSR's `c in row[e]..row[e + 1]` (filled in by Sema): the i32 input
  // `row`, and where the body indexes with `c` directly, whose extents bound row's values (checked at run
  // time with row non-decreasing). Null for affine bounds.
  const ArrayDecl *rowArray = nullptr;
  std::vector<DirectIndex> rowTargets;
};

struct Reduction : Expr {
  ReductionOp op;
  std::vector<RangeBinding> bindings;
  ExprPtr where; // may be null
  ExprPtr body;
  Reduction(ReductionOp op, llvm::SMRange range) : Expr(Kind::Reduction, range), op(op) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Reduction; }
};

struct Tuple : Expr {
  std::vector<ExprPtr> elements;
  Tuple(std::vector<ExprPtr> elements, llvm::SMRange range)
      : Expr(Kind::Tuple, range), elements(std::move(elements)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Tuple; }
};

// ---------------------------------------------------------------------------------------------
// Declarations

struct ParamDecl {
  std::string name;
  llvm::SMRange range;
};

struct ConstDecl {
  std::string name;
  ExprPtr init;
  llvm::SMRange range;
  std::variant<std::monostate, int64_t, double> value; // evaluated by Sema
};

struct FuncDecl {
  std::string name;
  std::vector<std::string> params;
  std::vector<llvm::SMRange> paramRanges;
  ExprPtr body;
  llvm::SMRange range;
};

struct ArrayDecl {
  std::string name;
  ArrayKind kind = ArrayKind::Local;
  ElemType elemType = ElemType::F32;
  std::vector<ExprPtr> shape; // affine in params and integer constants; empty for a scalar
  std::optional<Boundary> boundary; // as written; see effectiveBoundary
  Boundary effectiveBoundary = Boundary::Zero; // the array's own or the program's, filled in by Sema
  llvm::SMRange range;
  unsigned rank() const { return static_cast<unsigned>(shape.size()); }
};

struct Equation {
  std::string target;
  // Each a VarRef naming a fresh index variable, an affine constant, or (in a scatter) a computed index.
  std::vector<ExprPtr> lhsIndices;
  AssignOp op = AssignOp::Assign;
  ExprPtr rhs;
  // A scatter's `for y in 0..H, x in 0..W`: variables that range over points of their own, not over the
  // target's dimensions; each point adds to the element its computed indices name. Empty otherwise.
  std::vector<RangeBinding> scatterBindings;
  ExprPtr where; // may be null
  llvm::SMRange range;     // the whole equation
  llvm::SMRange lhsRange;  // the left-hand side
  // Filled in by Sema.
  const ArrayDecl *array = nullptr;
  // Per left-hand index position: the index variable it binds, or null for a fixed position.
  std::vector<std::unique_ptr<IndexVar>> indexVars;
  const RepeatBlock *enclosingRepeat = nullptr;
  // A scatter (filled in by Sema): per left-hand position, whether its index is computed at each point
  // (data: any element along that dimension may be updated); and whether the where condition reads
  // data, so that it is tested at each point rather than bounding the points.
  std::vector<bool> computedIndex;
  bool dataCondition = false;
  bool isScatter() const { return !scatterBindings.empty(); }
  // Set by the middle-end rewrite compiler/model/HoistInputTerms (null otherwise): on the equation it
  // adds, the equation whose leading input-only terms it computes; on that equation, the added one.
  const Equation *hoistedFrom = nullptr;
  const Equation *hoistedInto = nullptr;
  // Set by the middle-end rewrite compiler/model/SnapshotUpdates (null otherwise): on the equation it
  // adds (a copy of an inout array's old values), the update whose reads of that array it serves.
  const Equation *snapshotFor = nullptr;
  // Set by the middle-end rewrites compiler/model/FactorSums and PointTerms: what they changed in this
  // equation, one note each, for polyc explain; and on an equation PointTerms adds, the equation whose
  // term it computes once per point.
  std::vector<std::string> rewrites;
  const Equation *pointTermOf = nullptr;
};

struct RepeatBlock {
  std::unique_ptr<IndexVar> var;
  ExprPtr lo, hi;
  // `until unchanged(A, ...)`: the block stops after the first iteration that leaves every element of
  // these arrays as it was. Empty: every iteration runs.
  std::vector<std::string> untilUnchanged;
  std::vector<llvm::SMRange> untilRanges;
  std::vector<const ArrayDecl *> watched; // the arrays of untilUnchanged, filled in by Sema
  std::vector<std::unique_ptr<Equation>> body;
  llvm::SMRange range;
  bool stopsWhenUnchanged() const { return !untilUnchanged.empty(); }
};

// A top-level statement in textual order.
using Statement = std::variant<Equation *, RepeatBlock *>;

// Whether `e` holds a reduction (indices and bounds, which are affine, hold none).
bool holdsReduction(const Expr &e);
// Calls `visit` on each direct sub-expression of `e`: indices, operands, arguments, a reduction's bounds,
// condition and body, a tuple's elements.
void forEachChild(const Expr &e, const std::function<void(const Expr &)> &visit);

struct Program {
  std::string fileName;
  std::vector<std::unique_ptr<ParamDecl>> params;
  std::vector<std::unique_ptr<ConstDecl>> consts;
  std::vector<std::unique_ptr<FuncDecl>> funcs;
  std::vector<std::unique_ptr<ArrayDecl>> arrays;
  std::vector<std::unique_ptr<Equation>> equations;    // top-level equations
  std::vector<std::unique_ptr<RepeatBlock>> repeats;
  std::vector<Statement> statements;                   // both of the above, in textual order
  Boundary defaultBoundary = Boundary::Zero;

  const ArrayDecl *findArray(const std::string &name) const;
  const ParamDecl *findParam(const std::string &name) const;
};

// A row array of CSR ranges (RangeBinding::rowArray) and every dimension its ranges' variables index:
// before a run its values must be non-decreasing, from 0, at most the smallest of those extents.
struct RowArrayUse {
  const ArrayDecl *row = nullptr;
  std::vector<DirectIndex> targets;
};
std::vector<RowArrayUse> rowArrays(const Program &program);

// Whether `expr` mentions any of `vars` (in an index, a reduction's bound or condition, a value); true
// for an expression it cannot look into.
bool mentionsAny(const Expr &expr, const std::vector<const IndexVar *> &vars);

} // namespace polyc::ast
