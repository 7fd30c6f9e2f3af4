// The polytope model of a checked program: one statement per equation with its iteration domain,
// its write and read access relations (gathers as may-reads), its reduction ranges, and the initial
// schedule from textual order. Built by buildModel (Model.cpp); read by every later stage.
#pragma once

#include "dsl/AST.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <isl/cpp.h>

#include <map>
#include <string>
#include <vector>

namespace polyc::model {

struct ArrayInfo {
  const ast::ArrayDecl *decl = nullptr;
  std::string name;
  // [params] -> { Name[d0, ..., dn-1] : 0 <= dk < extent_k }
  isl::set extent;
};

struct Access {
  std::string array;
  // [params] -> { S[x] -> A[a] }; for a reduction operand the reduction dims are projected out,
  // so a read over a window is one relation (S[i, j] -> y[i - k1, j - k2] : 0 <= k1, k2 < M ...).
  isl::map relation;
  bool isMay = false;                  // a gather: may-read of the range the index can take
  const ast::ArrayRead *read = nullptr; // the read in the source; null for the write
  const ast::VarRef *scalarRead = nullptr; // the read of a scalar (rank 0) array, when it is one
  bool implicitUpdateRead = false;         // the old value read by `+=` / `-=` (same points as the write)
};

// A reduction inside a statement's right-hand side: its bound variables form extra dimensions.
struct ReductionInfo {
  const ast::Reduction *reduction = nullptr;
  // [params] -> { S[x] -> R[k] : the binding ranges and the where condition }
  isl::map range;
};

struct Statement {
  std::string name; // the isl tuple name: S0, S1, ... in textual order
  const ast::Equation *equation = nullptr;
  // Dimension names: the repeat variable first when inside a repeat block, then the equation's
  // index variables; a fixed left-hand position (r[0, j]) is not a dimension.
  std::vector<std::string> dimNames;
  unsigned repeatDims = 0; // 0 or 1 leading sequential repeat dimensions
  isl::set domain;         // [params] -> { S[dims] : ... }
  Access write;            // S[x] -> A[...]; must-write, or may-write along a scatter's computed indices
  std::vector<Access> reads;
  std::vector<ReductionInfo> reductions;
  // Set by buildModel from the equation; models built directly (unit tests) set them by hand.
  ast::AssignOp op = ast::AssignOp::Assign;
  llvm::SMRange range;         // the equation's source range, for diagnostics (invalid without source)
  int repeatBlock = -1;        // index into Model::repeats, or -1 at top level
  unsigned topPosition = 0;    // position of the statement (or its repeat block) among top-level items
  unsigned blockPosition = 0;  // position inside its repeat block (textual)
  // For an update: whether some instance reads an element of the updated array that another instance (of
  // the same repeat iteration) overwrites. False for w[0] -= w[idx[0]] or w[i] += w[i]: each instance
  // reads before it writes, so it needs neither an order nor a copy. Set by buildModel (true, the safe
  // answer, in models built by hand).
  bool readsOtherInstances = true;
  bool isUpdate() const { return op != ast::AssignOp::Assign; }
  // A scatter (`H[bin[y, x], t] += 1 for y in 0..H, x in 0..W`): an update whose points may add to one
  // element, in any order (atomically); its write is not a kill, and it has no self-dependences.
  bool scatter = false;
  // An update of an array that its repeat block watches (`until unchanged(A)`): each instance tells the
  // loop whether it changed its element. Set by buildModel.
  bool signalsChange = false;
};

// A repeat block: its statements share the leading (sequential) dimension.
struct RepeatInfo {
  const ast::RepeatBlock *block = nullptr;
  std::string var;
  std::vector<unsigned> statements;
  // `until unchanged(...)`: the loop stops after the first iteration that changed no element of the
  // watched arrays, which only its updates (signalsChange) write.
  bool stopsWhenUnchanged() const { return block && block->stopsWhenUnchanged(); }
};

struct Model {
  const ast::Program *program = nullptr;
  isl::ctx ctx{nullptr};
  std::vector<std::string> params; // in declaration order; the isl param space uses these names
  isl::set context;                // [params] -> { : params >= 0 and any fixed by --param }
  std::map<std::string, int64_t> paramValues; // the params fixed by --param
  std::vector<ArrayInfo> arrays;   // in declaration order
  std::vector<Statement> statements;
  std::vector<RepeatInfo> repeats;
  // Whether some repeat loop stops early (`until unchanged`): the program then has a changed flag.
  bool anyLoopStopsEarly() const {
    return std::any_of(repeats.begin(), repeats.end(),
                       [](const RepeatInfo &r) { return r.stopsWhenUnchanged(); });
  }
  isl::union_set domains() const;
  isl::union_map writes() const;
  isl::union_map mustReads() const;
  isl::union_map mayReads() const;
  isl::schedule initialSchedule; // textual order, repeat loops outermost
  const ArrayInfo *findArray(const std::string &name) const;
};

struct ModelOptions {
  std::map<std::string, int64_t> paramValues; // --param NAME=VALUE
};

// Whether the equation of `statement`, in a repeat block, mentions the block's variable anywhere (an
// index, a bound, a value): then an iteration depends on more than the state it starts from.
bool mentionsRepeatVariable(const Statement &statement);

// Lowers a program that Sema accepted. Errors (a param value that is unknown or negative, a
// program outside what the model supports) come back as llvm::Error with a message for the user.
llvm::Expected<Model> buildModel(const ast::Program &program, isl::ctx ctx, const ModelOptions &options);

} // namespace polyc::model
