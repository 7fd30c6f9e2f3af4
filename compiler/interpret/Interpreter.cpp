// The reference interpreter behind `polyc run` (see Interpreter.h). Statements run in textual order,
// moved only where data requires it (a value read before the statement that defines it, reads and
// updates of an inout array). An element of an output or local array is computed when first needed and
// kept; needed elements go on an explicit stack, so recurrences of any length use constant C++ stack.
#include "compiler/interpret/Interpreter.h"

#include "compiler/support/SourceError.h"
#include "dsl/Affine.h"

#include "polyc/Runtime.h"
#include "polyc/Timer.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

using namespace polyc;
using namespace polyc::ast;
using llvm::cast;
using llvm::dyn_cast;
using polyc::interpret::InterpretOptions;

namespace {

// ---------------------------------------------------------------------------------------------
// The order of statements

// A top-level statement (an equation or a repeat block) or an equation of a block, with the arrays it
// reads, defines with '=' and updates with '+=' or '-='.
struct Item {
  const Equation *equation = nullptr;
  const RepeatBlock *block = nullptr;
  std::set<const ArrayDecl *> reads, defines, updates;
};

// One step of a region (the top level, or one iteration of a repeat block): '=' equations whose
// elements may need each other's (computed together, on demand), one update, or one repeat block.
struct Step {
  std::vector<const Equation *> equations;
  const RepeatBlock *block = nullptr;
};

struct Plan {
  std::vector<Step> top;
  std::map<const RepeatBlock *, std::vector<Step>> blocks;
};

// Every array `e` may read, gathers and the untaken side of a select included.
void collectReads(const Expr &e, std::set<const ArrayDecl *> &reads) {
  if (const auto *read = dyn_cast<ArrayRead>(&e))
    reads.insert(read->array);
  if (const auto *ref = dyn_cast<VarRef>(&e))
    if (auto *scalar = std::get_if<const ArrayDecl *>(&ref->binding))
      reads.insert(*scalar);
  forEachChild(e, [&](const Expr &child) { collectReads(child, reads); });
}

Item itemOf(const Equation &eq) {
  Item item;
  item.equation = &eq;
  collectReads(*eq.rhs, item.reads);
  if (eq.isScatter()) { // its computed indices and its condition read data too
    for (const auto &index : eq.lhsIndices)
      collectReads(*index, item.reads);
    if (eq.where)
      collectReads(*eq.where, item.reads);
  }
  (eq.op == AssignOp::Assign ? item.defines : item.updates).insert(eq.array);
  return item;
}

Item itemOf(const RepeatBlock &block) {
  Item item;
  item.block = &block;
  for (const auto &eq : block.body) {
    Item member = itemOf(*eq);
    item.reads.insert(member.reads.begin(), member.reads.end());
    item.defines.insert(member.defines.begin(), member.defines.end());
    item.updates.insert(member.updates.begin(), member.updates.end());
  }
  return item;
}

bool intersects(const std::set<const ArrayDecl *> &a, const std::set<const ArrayDecl *> &b) {
  return std::any_of(a.begin(), a.end(), [&](const ArrayDecl *x) { return b.count(x) != 0; });
}

// Whether item `i` must run before item `j`: `j` reads what `i` defines, or both access an inout array
// that one of them updates and `i` comes first in the text (updates apply in textual order, and a read
// sees the updates that precede it).
bool mustPrecede(const Item &i, const Item &j, bool iFirst) {
  if (intersects(j.reads, i.defines))
    return true;
  return iFirst && (intersects(i.updates, j.reads) || intersects(i.updates, j.updates) ||
                    intersects(j.updates, i.reads));
}

// The strongly connected components of a graph given by successor lists (Tarjan's algorithm with an
// explicit stack): the component of each node, numbered from 0.
std::vector<unsigned> componentsOf(const std::vector<std::vector<unsigned>> &next, unsigned &count) {
  size_t n = next.size();
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<bool> onStack(n, false);
  std::vector<unsigned> stack, component(n, 0);
  struct Frame {
    unsigned node;
    size_t edge;
  };
  int counter = 0;
  count = 0;
  for (unsigned root = 0; root < n; ++root) {
    if (index[root] >= 0)
      continue;
    std::vector<Frame> calls;
    auto enter = [&](unsigned v) {
      index[v] = low[v] = counter++;
      stack.push_back(v);
      onStack[v] = true;
      calls.push_back({v, 0});
    };
    enter(root);
    while (!calls.empty()) {
      Frame &frame = calls.back();
      unsigned v = frame.node;
      if (frame.edge < next[v].size()) {
        unsigned w = next[v][frame.edge++];
        if (index[w] < 0)
          enter(w);
        else if (onStack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      if (low[v] == index[v]) {
        unsigned w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = false;
          component[w] = count;
        } while (w != v);
        ++count;
      }
      calls.pop_back();
      if (!calls.empty())
        low[calls.back().node] = std::min(low[calls.back().node], low[v]);
    }
  }
  return component;
}

std::string describeItem(const Item &item) {
  if (item.block)
    return "the repeat block over '" + item.block->var->name + "'";
  if (item.equation->op != AssignOp::Assign)
    return "the update of '" + item.equation->target + "'";
  return "the equation of '" + item.equation->target + "'";
}

llvm::Error cycleError(const std::vector<Item> &items, const std::vector<unsigned> &members,
                       unsigned culprit) {
  std::string others;
  for (unsigned m : members)
    if (m != culprit)
      others += (others.empty() ? "" : ", ") + describeItem(items[m]);
  const Item &item = items[culprit];
  llvm::SMRange range = item.block ? item.block->range : item.equation->range;
  return makeSourceError(range, "polyc run cannot order " + describeItem(item) + ": it and " + others +
                                    " each need a value the other computes (a cycle through an in-place "
                                    "update or a repeat block)");
}

// Orders the items of one region: text order, except that an item runs after those it must follow.
// Items that need each other become one step, which is allowed only for '=' equations.
llvm::Expected<std::vector<Step>> orderRegion(const std::vector<Item> &items) {
  size_t n = items.size();
  std::vector<std::vector<unsigned>> next(n);
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j = 0; j < n; ++j)
      if (i != j && mustPrecede(items[i], items[j], i < j))
        next[i].push_back(j);
  unsigned count = 0;
  std::vector<unsigned> component = componentsOf(next, count);
  std::vector<std::vector<unsigned>> members(count);
  for (unsigned i = 0; i < n; ++i)
    members[component[i]].push_back(i);
  for (const std::vector<unsigned> &group : members)
    if (group.size() > 1)
      for (unsigned i : group)
        if (items[i].block || items[i].equation->op != AssignOp::Assign)
          return cycleError(items, group, i);

  std::vector<std::set<unsigned>> successors(count);
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j : next[i])
      if (component[i] != component[j])
        successors[component[i]].insert(component[j]);
  std::vector<unsigned> waiting(count, 0);
  for (const std::set<unsigned> &s : successors)
    for (unsigned c : s)
      ++waiting[c];
  // Among the steps that may run, the one earliest in the text.
  using Entry = std::pair<unsigned, unsigned>; // first item, component
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (unsigned c = 0; c < count; ++c)
    if (waiting[c] == 0)
      ready.push({members[c].front(), c});
  std::vector<Step> steps;
  while (!ready.empty()) {
    unsigned c = ready.top().second;
    ready.pop();
    Step step;
    for (unsigned i : members[c]) {
      step.block = items[i].block;
      if (items[i].equation)
        step.equations.push_back(items[i].equation);
    }
    steps.push_back(std::move(step));
    for (unsigned d : successors[c])
      if (--waiting[d] == 0)
        ready.push({members[d].front(), d});
  }
  return steps;
}

llvm::Expected<Plan> planProgram(const Program &program) {
  Plan plan;
  std::vector<Item> items;
  for (const Statement &statement : program.statements) {
    if (auto *eq = std::get_if<Equation *>(&statement))
      items.push_back(itemOf(**eq));
    else
      items.push_back(itemOf(*std::get<RepeatBlock *>(statement)));
  }
  llvm::Expected<std::vector<Step>> top = orderRegion(items);
  if (!top)
    return top.takeError();
  plan.top = std::move(*top);
  for (const auto &block : program.repeats) {
    std::vector<Item> body;
    for (const auto &eq : block->body)
      body.push_back(itemOf(*eq));
    llvm::Expected<std::vector<Step>> steps = orderRegion(body);
    if (!steps)
      return steps.takeError();
    plan.blocks[block.get()] = std::move(*steps);
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// The runtime's description of the program

rt::DType dtypeOf(ElemType type) {
  switch (type) {
  case ElemType::F32: return rt::DType::F32;
  case ElemType::F64: return rt::DType::F64;
  case ElemType::I32: return rt::DType::I32;
  }
  return rt::DType::F32;
}

rt::ArrayRole roleOf(ArrayKind kind) {
  switch (kind) {
  case ArrayKind::Input: return rt::ArrayRole::Input;
  case ArrayKind::Output: return rt::ArrayRole::Output;
  default: return rt::ArrayRole::InOut;
  }
}

unsigned paramIndex(const Program &program, const ParamDecl *param) {
  for (unsigned k = 0; k < program.params.size(); ++k)
    if (program.params[k].get() == param)
      return k;
  return 0;
}

// Params, and the input, output and inout arrays in declaration order, as generated code describes them.
llvm::Expected<rt::ProgramInfo> programInfo(const Program &program, const std::string &name) {
  rt::ProgramInfo info;
  info.name = name;
  for (const auto &param : program.params)
    info.params.push_back(param->name);
  for (const auto &array : program.arrays) {
    if (array->kind == ArrayKind::Local)
      continue;
    rt::ArraySpec spec{array->name, roleOf(array->kind), dtypeOf(array->elemType), {}};
    for (const ExprPtr &extent : array->shape) {
      std::optional<dsl::AffineExpr> value = dsl::toAffine(*extent, "a shape extent");
      std::optional<dsl::ExtentForm> form = value ? dsl::extentForm(*value) : std::nullopt;
      if (!form)
        return makeSourceError(extent->range,
                               "the extent of array '" + array->name + "' is not affine in the params");
      rt::AffineExtent affine;
      affine.constant = form->numerator.constant;
      for (const auto &[param, coefficient] : form->numerator.params)
        affine.terms.push_back({paramIndex(program, param), coefficient});
      affine.divisor = form->divisor;
      spec.shape.push_back(affine);
    }
    info.arrays.push_back(std::move(spec));
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

enum ElementState : uint8_t { kUnknown = 0, kPending = 1, kDone = 2 };

// One array's values: doubles for f32 and f64, int64 for i32 (held in the declared type with
// --exact-types), and for an output or local a state per element.
struct Store {
  const ArrayDecl *decl = nullptr;
  int spec = -1;         // index in ProgramInfo::arrays; -1 for a local
  bool integer = false;  // i32
  bool computed = false; // defined by '=' equations: an output or a local
  std::vector<const Equation *> definitions;
  std::vector<int64_t> extents, strides;
  int64_t size = 1;
  std::vector<double> reals;
  std::vector<int64_t> integers;
  std::vector<uint8_t> state;
};

// An affine expression with the params' values folded in: constant + sum(coefficient * slot value).
struct Linear;

// coefficient * floor(numerator / denominator): a quasi-affine index's floor division (i / 2, i % 2).
struct LinearDiv {
  std::shared_ptr<const Linear> numerator;
  int64_t denominator = 2;
  int64_t coefficient = 1;
};

struct Linear {
  int64_t constant = 0;
  llvm::SmallVector<std::pair<unsigned, int64_t>, 4> terms;
  std::vector<LinearDiv> divs;
};

// How one index of a read is computed: affine, or a gather (a read of an i32 array) plus or minus an
// affine offset.
struct IndexPlan {
  const Linear *affine = nullptr;
  const ArrayRead *gather = nullptr;
  const Linear *offset = nullptr;
  int64_t sign = 1;
};

struct ReadPlan {
  unsigned store = 0;
  llvm::SmallVector<IndexPlan, 4> indices;
};

struct ElementRef {
  unsigned store;
  int64_t offset;
};

// Where a read lands after the boundary rule: an element, nothing (the value 0), or not known yet (a
// gather index that is still to be computed).
enum class Landing { Element, Zero, Unknown };

// An equation's value at one point, in the equation's type.
struct Number {
  double real = 0;
  int64_t integer = 0;
};

// One evaluation of an equation's right-hand side at one point: the element it defines, or a point of an
// update (store -1), with the elements it found missing at its last attempt.
struct Task {
  const Equation *equation = nullptr;
  int64_t repeatValue = 0;
  llvm::SmallVector<int64_t, 4> point; // the left-hand index variables' values, in position order
  int store = -1;
  int64_t offset = 0;
  std::vector<ElementRef> pending;
  size_t next = 0;
};

bool isComparison(BinaryOp op) {
  return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
         op == BinaryOp::Eq || op == BinaryOp::Ne;
}

template <typename U> bool holds(BinaryOp op, U a, U b) {
  switch (op) {
  case BinaryOp::Lt: return a < b;
  case BinaryOp::Le: return a <= b;
  case BinaryOp::Gt: return a > b;
  case BinaryOp::Ge: return a >= b;
  case BinaryOp::Eq: return a == b;
  case BinaryOp::Ne: return a != b;
  default: return false;
  }
}

using dsl::isIntegerExpr;

// Wrapping int64 arithmetic: overflow is not undefined here.
int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

std::string numberText(double v) {
  char buffer[64];
  snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

// The interpreter as the runtime's Compute: upload loads the arrays, compute runs the plan, download
// writes the outputs and inouts back in their declared types.
class Machine : public rt::Compute {
public:
  Machine(const Program &program, const Plan &plan, const rt::ProgramInfo &info,
          const InterpretOptions &options);
  void upload(rt::RunContext &context) override;
  double compute(rt::RunContext &context) override;
  void checkRowArrays() const;
  void download(rt::RunContext &context) override;

private:
  // Set-up
  void addSlot(const IndexVar *var);
  void assignSlots(const Expr &e);
  unsigned slotOf(const IndexVar *var) const { return slots_.at(var); }
  unsigned storeOf(const ArrayDecl *decl) const { return storeIndex_.at(decl); }
  const Linear &linear(const Expr &e);
  Linear lower(const dsl::AffineExpr &form);
  const ReadPlan &readPlan(const ArrayRead &read);
  void planGather(const Expr &index, IndexPlan &plan);
  int64_t evaluate(const Linear &l) const;
  void allocateStores(const rt::RunContext &context);
  void loadArray(Store &store, const rt::HostArray &host);

  // Running the plan
  llvm::Error runSteps(const std::vector<Step> &steps);
  llvm::Error runBlock(const RepeatBlock &block);
  llvm::Error defineAll(const Equation &eq, int64_t repeatValue);
  llvm::Error applyUpdate(const Equation &eq, int64_t repeatValue);
  llvm::Error applyScatter(const Equation &eq, int64_t repeatValue);
  llvm::Expected<Number> valueAt(const Equation &eq, int64_t repeatValue, llvm::ArrayRef<int64_t> point);
  int64_t scatterElement(const Equation &eq);
  int64_t computedIndex(const Expr &index, const Store &store, unsigned dim);
  llvm::Error forEachPoint(const Equation &eq, int64_t repeatValue,
                           llvm::function_ref<llvm::Error(llvm::ArrayRef<int64_t>, int64_t)> body);
  llvm::Error run(Task root, Number *result);
  llvm::Expected<Task> definer(ElementRef element);
  std::optional<int64_t> solveRepeatValue(const Equation &eq, llvm::ArrayRef<int64_t> coords, bool &usesVar);
  bool matches(const Equation &eq, int64_t repeatValue, llvm::ArrayRef<int64_t> coords);
  void bind(const Task &task);
  Number attempt(const Equation &eq);
  void setRepeatVar(const Equation &eq, int64_t value);

  // Messages
  std::string elementName(ElementRef element) const;
  std::string locationOf(llvm::SMRange range) const;
  std::string taskName(const Task &task);
  void fail(const std::string &message) {
    if (error_.empty())
      error_ = message;
  }

  // Values, in the equation's type: T is double for f32 and f64, int64_t for i32.
  template <typename T> T value(const Expr &e);
  template <typename T> T varValue(const VarRef &ref);
  template <typename T> T readValue(const ArrayRead &read);
  template <typename T> T storedValue(ElementRef element);
  template <typename T> T binary(const Binary &b);
  template <typename T> T arithmetic(BinaryOp op, T l, T r);
  template <typename T> T call(const Call &c);
  template <typename T> T builtin(Builtin fn, T x, T y);
  template <typename T> T reduction(const Reduction &red);
  template <typename T> void reduceOver(const Reduction &red, size_t binding, size_t var, T &acc);
  template <typename T> bool condition(const Expr &e);
  template <typename T> bool compare(BinaryOp op, const Expr &lhs, const Expr &rhs);
  template <typename T> T round(T v) const;
  template <typename T> T fromInteger(int64_t v) { return round(static_cast<T>(v)); }
  template <typename T> T fromReal(double v);
  template <typename T> std::vector<T> &argStack();
  int64_t toInteger(double v);
  double math(Builtin fn, double x, double y) const;
  int64_t integerValue(const Expr &e);
  bool affineCondition(const Expr &e);
  Landing locate(const ArrayRead &read, ElementRef &element);
  Landing land(unsigned store, llvm::ArrayRef<int64_t> indices, ElementRef &element);
  template <typename T> T sampledValue(const ArrayRead &read);
  bool readInteger(const ArrayRead &read, int64_t &value);
  bool available(ElementRef element);

  const Program &program_;
  const Plan &plan_;
  InterpretOptions options_;
  llvm::DenseMap<const IndexVar *, unsigned> slots_;
  llvm::DenseMap<const ArrayDecl *, unsigned> storeIndex_;
  llvm::DenseMap<const ParamDecl *, unsigned> paramIndex_;
  std::vector<Store> stores_;
  std::vector<int64_t> params_;
  // Node-based, so that the ReadPlans' pointers into them stay valid.
  std::unordered_map<const Expr *, Linear> linears_;
  std::unordered_map<const ArrayRead *, ReadPlan> reads_;

  // Evaluation state: the values of index variables by slot, the repeat block running, and of the
  // current attempt its type, function arguments, missing elements and first error.
  std::vector<int64_t> env_;
  const RepeatBlock *activeBlock_ = nullptr;
  bool changed_ = false; // an update of an array the active block watches changed an element
  int64_t activeIteration_ = 0;
  int64_t scatterElement_ = -1; // set by attempt() for a scatter: the element its point adds to, or -1
  ElemType type_ = ElemType::F64;
  std::vector<double> realArgs_;
  std::vector<int64_t> integerArgs_;
  size_t argBase_ = 0;
  std::vector<ElementRef> missing_;
  std::string error_;
};

Machine::Machine(const Program &program, const Plan &plan, const rt::ProgramInfo &info,
                 const InterpretOptions &options)
    : program_(program), plan_(plan), options_(options) {
  for (unsigned k = 0; k < program.params.size(); ++k)
    paramIndex_[program.params[k].get()] = k;
  for (const auto &array : program.arrays) {
    Store store;
    store.decl = array.get();
    store.integer = array->elemType == ElemType::I32;
    store.computed = array->kind == ArrayKind::Output || array->kind == ArrayKind::Local;
    for (unsigned s = 0; s < info.arrays.size(); ++s)
      if (info.arrays[s].name == array->name)
        store.spec = int(s);
    unsigned index = stores_.size();
    storeIndex_[array.get()] = index;
    stores_.push_back(std::move(store));
  }
  auto addEquation = [&](const Equation &eq) {
    for (const auto &var : eq.indexVars)
      if (var)
        addSlot(var.get());
    for (const RangeBinding &binding : eq.scatterBindings)
      for (const auto &var : binding.vars)
        addSlot(var.get());
    assignSlots(*eq.rhs);
    if (eq.isScatter()) {
      for (const auto &index : eq.lhsIndices)
        assignSlots(*index);
      if (eq.where)
        assignSlots(*eq.where);
    }
    if (eq.op == AssignOp::Assign)
      stores_[storeOf(eq.array)].definitions.push_back(&eq);
  };
  for (const Statement &statement : program.statements) {
    if (auto *eq = std::get_if<Equation *>(&statement)) {
      addEquation(**eq);
      continue;
    }
    const RepeatBlock &block = *std::get<RepeatBlock *>(statement);
    addSlot(block.var.get());
    for (const auto &eq : block.body)
      addEquation(*eq);
  }
  env_.assign(slots_.size(), 0);
}

// Every index variable gets a slot in env_, which holds its value while an expression is evaluated.
void Machine::addSlot(const IndexVar *var) {
  unsigned slot = slots_.size();
  slots_[var] = slot;
}

void Machine::assignSlots(const Expr &e) {
  if (const auto *red = dyn_cast<Reduction>(&e))
    for (const RangeBinding &binding : red->bindings)
      for (const auto &var : binding.vars)
        addSlot(var.get());
  forEachChild(e, [&](const Expr &child) { assignSlots(child); });
}

const Linear &Machine::linear(const Expr &e) {
  auto [it, inserted] = linears_.try_emplace(&e);
  Linear &l = it->second;
  if (!inserted)
    return l;
  std::optional<dsl::AffineExpr> form = dsl::toAffine(e, "an index");
  assert(form && "the front end checks that indices, bounds, shapes and conditions are affine");
  if (form)
    l = lower(*form);
  return l;
}

Linear Machine::lower(const dsl::AffineExpr &form) {
  Linear l;
  l.constant = form.constant;
  for (const auto &[param, coefficient] : form.params)
    l.constant = wrapAdd(l.constant, wrapMul(coefficient, params_[paramIndex_.at(param)]));
  for (const auto &[var, coefficient] : form.vars)
    l.terms.push_back({slotOf(var), coefficient});
  for (const auto &[div, coefficient] : form.divs)
    l.divs.push_back({std::make_shared<const Linear>(lower(div->numerator)), div->denominator, coefficient});
  return l;
}

int64_t Machine::evaluate(const Linear &l) const {
  int64_t value = l.constant;
  for (const auto &[slot, coefficient] : l.terms)
    value = wrapAdd(value, wrapMul(coefficient, env_[slot]));
  for (const LinearDiv &div : l.divs)
    value =
        wrapAdd(value, wrapMul(div.coefficient, dsl::floorDiv(evaluate(*div.numerator), div.denominator)));
  return value;
}

// A gather index is `g[...]`, `g[...] + e`, `e + g[...]` or `g[...] - e` with g an i32 array (Sema).
void Machine::planGather(const Expr &index, IndexPlan &plan) {
  auto gatherRead = [](const Expr &x) -> const ArrayRead * {
    const auto *read = dyn_cast<ArrayRead>(&x);
    return read && read->array->elemType == ElemType::I32 ? read : nullptr;
  };
  if ((plan.gather = gatherRead(index)))
    return;
  const auto &b = cast<Binary>(index);
  if ((plan.gather = gatherRead(*b.lhs))) {
    plan.offset = &linear(*b.rhs);
    plan.sign = b.op == BinaryOp::Sub ? -1 : 1;
    return;
  }
  plan.gather = gatherRead(*b.rhs);
  plan.offset = &linear(*b.lhs);
}

const ReadPlan &Machine::readPlan(const ArrayRead &read) {
  auto [it, inserted] = reads_.try_emplace(&read);
  ReadPlan &plan = it->second;
  if (!inserted)
    return plan;
  plan.store = storeOf(read.array);
  for (size_t d = 0; d < read.indices.size(); ++d) {
    IndexPlan index; // none for a position between elements: sampledValue computes it
    if (!read.isGather[d])
      index.affine = &linear(*read.indices[d]);
    else if (!read.sampled)
      planGather(*read.indices[d], index);
    plan.indices.push_back(index);
  }
  return plan;
}

void Machine::upload(rt::RunContext &context) {
  if (params_ != context.params) {
    params_ = context.params;
    linears_.clear();
    reads_.clear();
  }
  allocateStores(context);
}

void Machine::allocateStores(const rt::RunContext &context) {
  for (Store &store : stores_) {
    const ArrayDecl &decl = *store.decl;
    store.extents.assign(decl.rank(), 0);
    store.strides.assign(decl.rank(), 1);
    store.size = 1;
    for (unsigned d = 0; d < decl.rank(); ++d) {
      int64_t extent = evaluate(linear(*decl.shape[d]));
      if (extent < 0)
        throw std::runtime_error("array '" + decl.name + "' has a negative extent (" +
                                 std::to_string(extent) + ") in dimension " + std::to_string(d) +
                                 " for these params");
      store.extents[d] = extent;
    }
    for (unsigned d = decl.rank(); d-- > 0;) {
      store.strides[d] = store.size;
      if (__builtin_mul_overflow(store.size, store.extents[d], &store.size))
        throw std::runtime_error("array '" + decl.name + "' has too many elements for these params");
    }
    size_t size = size_t(store.size);
    store.reals.assign(store.integer ? 0 : size, 0.0);
    store.integers.assign(store.integer ? size : 0, 0);
    store.state.assign(store.computed ? size : 0, kUnknown);
    if (store.spec >= 0 && decl.kind != ArrayKind::Output)
      loadArray(store, context.arrays[size_t(store.spec)]);
  }
}

void Machine::loadArray(Store &store, const rt::HostArray &host) {
  const unsigned char *bytes = host.bytes.data();
  for (int64_t i = 0; i < store.size; ++i) {
    switch (store.decl->elemType) {
    case ElemType::F32: {
      float v;
      std::memcpy(&v, bytes + 4 * i, 4);
      store.reals[size_t(i)] = v;
      break;
    }
    case ElemType::F64: std::memcpy(&store.reals[size_t(i)], bytes + 8 * i, 8); break;
    case ElemType::I32: {
      int32_t v;
      std::memcpy(&v, bytes + 4 * i, 4);
      store.integers[size_t(i)] = v;
      break;
    }
    }
  }
}

double Machine::compute(rt::RunContext &) {
  activeBlock_ = nullptr;
  checkRowArrays();
  rt::Timer timer;
  llvm::Error err = runSteps(plan_.top);
  double seconds = timer.seconds();
  // The runtime's contract: a failed computation throws, and runMain reports it with exit status 3.
  if (err)
    throw std::runtime_error(llvm::toString(std::move(err)));
  return seconds;
}

// The CSR row arrays, checked as the executables check them before a run (polyc::rt::checkRowArray).
void Machine::checkRowArrays() const {
  for (const RowArrayUse &use : rowArrays(program_)) {
    const Store &row = stores_[storeOf(use.row)];
    int64_t bound = INT64_MAX;
    std::string names;
    for (const DirectIndex &target : use.targets) {
      bound = std::min(bound, stores_[storeOf(target.array)].extents[target.dim]);
      if (names.find(target.array->name) == std::string::npos)
        names += (names.empty() ? "" : " and ") + target.array->name;
    }
    std::vector<int32_t> values(row.integers.begin(), row.integers.end());
    rt::checkRowArray(use.row->name.c_str(), values.data(), int64_t(values.size()), bound,
                      "the extent of " + names + " that its ranges index");
  }
}

// Outputs and inouts back into the host arrays in their declared types. An output element that no
// equation instance computed (in a repeat block that runs no iteration) is 0, as in the executables.
void Machine::download(rt::RunContext &context) {
  for (const Store &store : stores_) {
    if (store.spec < 0 || store.decl->kind == ArrayKind::Input)
      continue;
    rt::HostArray &host = context.arrays[size_t(store.spec)];
    unsigned char *bytes = host.bytes.data();
    for (int64_t i = 0; i < store.size; ++i) {
      bool known = !store.computed || store.state[size_t(i)] == kDone;
      switch (store.decl->elemType) {
      case ElemType::F32: {
        float v = known ? float(store.reals[size_t(i)]) : 0.0f;
        std::memcpy(bytes + 4 * i, &v, 4);
        break;
      }
      case ElemType::F64: {
        double v = known ? store.reals[size_t(i)] : 0.0;
        std::memcpy(bytes + 8 * i, &v, 8);
        break;
      }
      case ElemType::I32: {
        int64_t v = known ? store.integers[size_t(i)] : 0;
        if (v < INT32_MIN || v > INT32_MAX)
          throw std::runtime_error(elementName({storeOf(store.decl), i}) + " = " + std::to_string(v) +
                                   " does not fit i32");
        int32_t narrow = int32_t(v);
        std::memcpy(bytes + 4 * i, &narrow, 4);
        break;
      }
      }
    }
  }
}

// --- Running the plan ---------------------------------------------------------------------------

llvm::Error Machine::runSteps(const std::vector<Step> &steps) {
  int64_t repeatValue = activeBlock_ ? activeIteration_ : 0;
  for (const Step &step : steps) {
    if (step.block) {
      if (llvm::Error err = runBlock(*step.block))
        return err;
      continue;
    }
    if (step.equations.front()->isScatter()) {
      if (llvm::Error err = applyScatter(*step.equations.front(), repeatValue))
        return err;
      continue;
    }
    if (step.equations.front()->op != AssignOp::Assign) {
      if (llvm::Error err = applyUpdate(*step.equations.front(), repeatValue))
        return err;
      continue;
    }
    for (const Equation *eq : step.equations)
      if (llvm::Error err = defineAll(*eq, repeatValue))
        return err;
  }
  return llvm::Error::success();
}

// Every iteration defines the block's '=' elements afresh: they are forgotten before its steps run.
llvm::Error Machine::runBlock(const RepeatBlock &block) {
  int64_t lo = evaluate(linear(*block.lo)), hi = evaluate(linear(*block.hi));
  for (int64_t v = lo; v < hi; ++v) {
    activeBlock_ = &block;
    activeIteration_ = v;
    for (const auto &eq : block.body) {
      if (eq->op != AssignOp::Assign)
        continue;
      Store &store = stores_[storeOf(eq->array)];
      llvm::Error err = forEachPoint(*eq, v, [&](llvm::ArrayRef<int64_t>, int64_t offset) -> llvm::Error {
        store.state[size_t(offset)] = kUnknown;
        return llvm::Error::success();
      });
      if (err)
        return err;
    }
    changed_ = false;
    if (llvm::Error err = runSteps(plan_.blocks.at(&block)))
      return err;
    if (block.stopsWhenUnchanged() && !changed_)
      break;
  }
  activeBlock_ = nullptr;
  return llvm::Error::success();
}

llvm::Error Machine::defineAll(const Equation &eq, int64_t repeatValue) {
  unsigned s = storeOf(eq.array);
  return forEachPoint(eq, repeatValue, [&](llvm::ArrayRef<int64_t> point, int64_t offset) -> llvm::Error {
    if (stores_[s].state[size_t(offset)] == kDone)
      return llvm::Error::success();
    Task task;
    task.equation = &eq;
    task.repeatValue = repeatValue;
    task.point.assign(point.begin(), point.end());
    task.store = int(s);
    task.offset = offset;
    return run(std::move(task), nullptr);
  });
}

// A simultaneous update: every point's right-hand side is computed from the old values, then applied.
llvm::Error Machine::applyUpdate(const Equation &eq, int64_t repeatValue) {
  std::vector<std::pair<int64_t, Number>> results;
  llvm::Error err =
      forEachPoint(eq, repeatValue, [&](llvm::ArrayRef<int64_t> point, int64_t offset) -> llvm::Error {
        llvm::Expected<Number> n = valueAt(eq, repeatValue, point);
        if (!n)
          return n.takeError();
        results.push_back({offset, *n});
        return llvm::Error::success();
      });
  if (err)
    return err;
  Store &target = stores_[storeOf(eq.array)];
  BinaryOp op = eq.op == AssignOp::AddAssign ? BinaryOp::Add : BinaryOp::Sub;
  type_ = eq.array->elemType;
  const bool watched = eq.enclosingRepeat && llvm::is_contained(eq.enclosingRepeat->watched, eq.array);
  for (const auto &[offset, n] : results) {
    if (target.integer) {
      int64_t &element = target.integers[size_t(offset)];
      int64_t next = arithmetic<int64_t>(op, element, n.integer);
      changed_ |= watched && next != element;
      element = next;
    } else {
      double &element = target.reals[size_t(offset)];
      double next = arithmetic<double>(op, element, n.real);
      changed_ |= watched && next != element && !(std::isnan(next) && std::isnan(element));
      element = next;
    }
  }
  return llvm::Error::success();
}

// The right-hand side of `eq` at `point` (its index variables' values, the repeat variable's), computing
// first the elements it needs.
llvm::Expected<Number> Machine::valueAt(const Equation &eq, int64_t repeatValue,
                                        llvm::ArrayRef<int64_t> point) {
  Task task;
  task.equation = &eq;
  task.repeatValue = repeatValue;
  task.point.assign(point.begin(), point.end());
  Number n;
  if (llvm::Error err = run(std::move(task), &n))
    return std::move(err);
  return n;
}

// A scatter: every point (the left-hand index variables over their dimensions, then the `for`
// variables over their ranges, in order) computes its condition, its element and its value from the old
// values of everything it reads; then the values are added to their elements.
llvm::Error Machine::applyScatter(const Equation &eq, int64_t repeatValue) {
  const Store &target = stores_[storeOf(eq.array)];
  std::vector<const IndexVar *> vars;
  std::vector<std::pair<int64_t, int64_t>> ranges; // the left-hand variables'; the for variables' below
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p)
    if (eq.indexVars[p]) {
      vars.push_back(eq.indexVars[p].get());
      ranges.push_back({0, target.extents[p]});
    }
  std::vector<const RangeBinding *> bindingOf(vars.size(), nullptr);
  for (const RangeBinding &binding : eq.scatterBindings)
    for (const auto &var : binding.vars) {
      vars.push_back(var.get());
      bindingOf.push_back(&binding);
    }
  ranges.resize(vars.size());
  std::vector<std::pair<int64_t, Number>> additions;
  llvm::SmallVector<int64_t, 8> point(vars.size(), 0);
  // Depth-first over the variables: a for variable's bounds may use the ones before it.
  std::function<llvm::Error(size_t)> visit = [&](size_t k) -> llvm::Error {
    if (k == vars.size()) {
      setRepeatVar(eq, repeatValue);
      for (size_t j = 0; j < k; ++j)
        env_[slotOf(vars[j])] = point[j];
      if (eq.where && !eq.dataCondition && !affineCondition(*eq.where))
        return llvm::Error::success();
      llvm::Expected<Number> n = valueAt(eq, repeatValue, point);
      if (!n)
        return n.takeError();
      if (scatterElement_ >= 0)
        additions.push_back({scatterElement_, *n});
      return llvm::Error::success();
    }
    if (bindingOf[k]) {
      setRepeatVar(eq, repeatValue);
      for (size_t j = 0; j < k; ++j)
        env_[slotOf(vars[j])] = point[j];
      ranges[k] = {evaluate(linear(*bindingOf[k]->lo)), evaluate(linear(*bindingOf[k]->hi))};
    }
    for (point[k] = ranges[k].first; point[k] < ranges[k].second; ++point[k])
      if (llvm::Error err = visit(k + 1))
        return err;
    return llvm::Error::success();
  };
  if (llvm::Error err = visit(0))
    return err;
  Store &store = stores_[storeOf(eq.array)];
  BinaryOp op = eq.op == AssignOp::AddAssign ? BinaryOp::Add : BinaryOp::Sub;
  type_ = eq.array->elemType;
  for (const auto &[offset, n] : additions) {
    if (store.integer)
      store.integers[size_t(offset)] = arithmetic<int64_t>(op, store.integers[size_t(offset)], n.integer);
    else
      store.reals[size_t(offset)] = arithmetic<double>(op, store.reals[size_t(offset)], n.real);
  }
  return llvm::Error::success();
}

// The offset of the element the bound scatter point adds to, or -1 where it adds nothing (its condition
// is false, or a computed index names no element). The condition and the computed indices compute in
// double (integer expressions in integers).
int64_t Machine::scatterElement(const Equation &eq) {
  const Store &store = stores_[storeOf(eq.array)];
  const ElemType saved = type_;
  type_ = ElemType::F64;
  int64_t offset = 0;
  if (eq.dataCondition && !condition<double>(*eq.where))
    offset = -1;
  for (unsigned p = 0; p < eq.lhsIndices.size() && offset >= 0; ++p) {
    int64_t at = eq.indexVars[p]          ? env_[slotOf(eq.indexVars[p].get())]
                 : eq.computedIndex[p]     ? computedIndex(*eq.lhsIndices[p], store, p)
                                           : evaluate(linear(*eq.lhsIndices[p]));
    offset = at < 0 || at >= store.extents[p] ? -1 : offset + at * store.strides[p];
  }
  type_ = saved;
  return offset;
}

// A computed index, rounded down and moved inside by the array's boundary rule (docs/language.md,
// "Scatters"): -1 where it names no element.
int64_t Machine::computedIndex(const Expr &index, const Store &store, unsigned dim) {
  const int64_t n = store.extents[dim];
  const Boundary rule = store.decl->effectiveBoundary;
  if (n == 0)
    return -1;
  if (isIntegerExpr(index)) {
    int64_t i = integerValue(index);
    if (rule == Boundary::Zero)
      return i < 0 || i >= n ? -1 : i;
    if (rule == Boundary::Mirror && (i < 0 || i >= n))
      i = i < 0 ? wrapSub(0, i) : wrapSub(2 * (n - 1), i);
    return std::clamp<int64_t>(i, 0, n - 1);
  }
  double x = std::floor(value<double>(index));
  if (std::isnan(x))
    return -1;
  const double last = double(n - 1);
  if (rule == Boundary::Zero)
    return x < 0 || x > last ? -1 : int64_t(x);
  if (rule == Boundary::Mirror)
    x = x < 0 ? -x : x > last ? 2 * last - x : x;
  return x <= 0 ? 0 : x >= last ? n - 1 : int64_t(x);
}

void Machine::setRepeatVar(const Equation &eq, int64_t value) {
  if (eq.enclosingRepeat)
    env_[slotOf(eq.enclosingRepeat->var.get())] = value;
}

// The points of an equation's domain in lexicographic order: left-hand positions within the shape, the
// where condition true. `body` gets the index variables' values and the element's offset.
llvm::Error Machine::forEachPoint(const Equation &eq, int64_t repeatValue,
                                  llvm::function_ref<llvm::Error(llvm::ArrayRef<int64_t>, int64_t)> body) {
  const Store &store = stores_[storeOf(eq.array)];
  setRepeatVar(eq, repeatValue);
  llvm::SmallVector<unsigned, 4> varPositions;
  int64_t base = 0;
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p) {
    if (eq.indexVars[p]) {
      if (store.extents[p] == 0)
        return llvm::Error::success();
      varPositions.push_back(p);
      continue;
    }
    int64_t fixed = evaluate(linear(*eq.lhsIndices[p]));
    if (fixed < 0 || fixed >= store.extents[p])
      return llvm::Error::success();
    base += fixed * store.strides[p];
  }
  llvm::SmallVector<int64_t, 4> point(varPositions.size(), 0);
  while (true) {
    // Evaluating a point may rebind every variable: bind this point's again.
    setRepeatVar(eq, repeatValue);
    int64_t offset = base;
    for (size_t k = 0; k < point.size(); ++k) {
      env_[slotOf(eq.indexVars[varPositions[k]].get())] = point[k];
      offset += point[k] * store.strides[varPositions[k]];
    }
    if (!eq.where || affineCondition(*eq.where))
      if (llvm::Error err = body(point, offset))
        return err;
    size_t k = point.size();
    while (k > 0 && ++point[k - 1] == store.extents[varPositions[k - 1]]) {
      point[k - 1] = 0;
      --k;
    }
    if (k == 0)
      return llvm::Error::success();
  }
}

void Machine::bind(const Task &task) {
  const Equation &eq = *task.equation;
  setRepeatVar(eq, task.repeatValue);
  size_t j = 0;
  for (const auto &var : eq.indexVars)
    if (var)
      env_[slotOf(var.get())] = task.point[j++];
  for (const RangeBinding &binding : eq.scatterBindings)
    for (const auto &var : binding.vars)
      env_[slotOf(var.get())] = task.point[j++];
}

Number Machine::attempt(const Equation &eq) {
  missing_.clear();
  error_.clear();
  type_ = eq.array->elemType;
  Number n;
  if (eq.isScatter() && (scatterElement_ = scatterElement(eq)) < 0)
    return n; // adds nothing: its value is not needed
  if (type_ == ElemType::I32)
    n.integer = value<int64_t>(*eq.rhs);
  else
    n.real = value<double>(*eq.rhs);
  return n;
}

// Computes `root` and every element it needs first, depth first on an explicit stack. An attempt that
// reads elements not computed yet goes on with 0 in their place and lists them; they are computed (the
// first one listed is certainly needed, the others maybe, after a 0 chose a path) and it is attempted
// again. Each attempt computes at least its first missing element, so this ends.
llvm::Error Machine::run(Task root, Number *result) {
  std::vector<Task> stack;
  if (root.store >= 0)
    stores_[size_t(root.store)].state[size_t(root.offset)] = kPending;
  stack.push_back(std::move(root));
  while (!stack.empty()) {
    Task &top = stack.back();
    if (top.next < top.pending.size()) {
      ElementRef needed = top.pending[top.next++];
      bool certain = top.next == 1;
      uint8_t state = stores_[needed.store].state[size_t(needed.offset)];
      if (state == kDone)
        continue;
      if (state == kPending) {
        if (!certain)
          continue;
        std::string cycle;
        for (const Task &task : stack)
          if (!cycle.empty() || (task.store == int(needed.store) && task.offset == needed.offset))
            cycle += (cycle.empty() ? "" : " -> ") + taskName(task);
        return makeError(elementName(needed) + " depends on itself: " + cycle + " -> " + elementName(needed));
      }
      llvm::Expected<Task> task = definer(needed);
      if (!task) {
        if (certain)
          return task.takeError();
        llvm::consumeError(task.takeError());
        continue;
      }
      stores_[needed.store].state[size_t(needed.offset)] = kPending;
      stack.push_back(std::move(*task));
      continue;
    }
    bind(top);
    Number n = attempt(*top.equation);
    if (!missing_.empty()) {
      top.pending = std::move(missing_);
      missing_.clear();
      top.next = 0;
      continue;
    }
    if (!error_.empty())
      return makeError(taskName(top) + " (" + locationOf(top.equation->range) + "): " + error_);
    if (top.store < 0) {
      *result = n;
    } else {
      Store &store = stores_[size_t(top.store)];
      if (store.integer)
        store.integers[size_t(top.offset)] = n.integer;
      else
        store.reals[size_t(top.offset)] = n.real;
      store.state[size_t(top.offset)] = kDone;
    }
    stack.pop_back();
  }
  return llvm::Error::success();
}

// The repeat variable's value for which `eq`'s fixed left-hand positions hit `coords`, if a fixed
// position uses it (`loss[e]`); `usesVar` says whether one does.
std::optional<int64_t> Machine::solveRepeatValue(const Equation &eq, llvm::ArrayRef<int64_t> coords,
                                                 bool &usesVar) {
  usesVar = false;
  unsigned slot = slotOf(eq.enclosingRepeat->var.get());
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p) {
    if (eq.indexVars[p])
      continue;
    const Linear &l = linear(*eq.lhsIndices[p]);
    int64_t coefficient = 0;
    for (const auto &[s, c] : l.terms)
      if (s == slot)
        coefficient = c;
    if (coefficient == 0)
      continue;
    usesVar = true;
    env_[slot] = 0;
    int64_t rest = coords[p] - evaluate(l);
    if (rest % coefficient != 0)
      return std::nullopt;
    return rest / coefficient;
  }
  return std::nullopt;
}

bool Machine::matches(const Equation &eq, int64_t repeatValue, llvm::ArrayRef<int64_t> coords) {
  setRepeatVar(eq, repeatValue);
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p)
    if (eq.indexVars[p])
      env_[slotOf(eq.indexVars[p].get())] = coords[p];
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p)
    if (!eq.indexVars[p] && evaluate(linear(*eq.lhsIndices[p])) != coords[p])
      return false;
  return !eq.where || affineCondition(*eq.where);
}

// The equation instance that defines an element now: a top-level equation, or one of the repeat block
// that is running, in its current iteration (or the iteration a `loss[e]`-like position names).
llvm::Expected<Task> Machine::definer(ElementRef element) {
  const Store &store = stores_[element.store];
  llvm::SmallVector<int64_t, 4> coords(store.extents.size(), 0);
  for (size_t d = 0, rest = size_t(element.offset); d < coords.size(); ++d) {
    coords[d] = int64_t(rest / size_t(store.strides[d]));
    rest %= size_t(store.strides[d]);
  }
  for (const Equation *eq : store.definitions) {
    const RepeatBlock *block = eq->enclosingRepeat;
    int64_t repeatValue = 0;
    bool running = true;
    std::string when;
    if (block) {
      int64_t lo = evaluate(linear(*block->lo)), hi = evaluate(linear(*block->hi));
      bool usesVar = false;
      std::optional<int64_t> solved = solveRepeatValue(*eq, coords, usesVar);
      if (usesVar) {
        if (!solved || *solved < lo || *solved >= hi)
          continue;
        repeatValue = *solved;
        running = activeBlock_ == block && activeIteration_ == repeatValue;
        when = " in the iteration " + block->var->name + " = " + std::to_string(repeatValue);
      } else {
        running = activeBlock_ == block;
        repeatValue = running ? activeIteration_ : lo;
        when = lo < hi ? " in a repeat block that has not run" : " in a repeat block that runs no iteration";
      }
    }
    if (!matches(*eq, repeatValue, coords))
      continue;
    if (!running)
      return makeError(elementName(element) + " is read before it is defined (by the equation at " +
                       locationOf(eq->range) + when + ")");
    Task task;
    task.equation = eq;
    task.repeatValue = repeatValue;
    for (unsigned p = 0; p < coords.size(); ++p)
      if (eq->indexVars[p])
        task.point.push_back(coords[p]);
    task.store = int(element.store);
    task.offset = element.offset;
    return task;
  }
  return makeError(elementName(element) + " is read but no equation defines it");
}

// --- Messages -------------------------------------------------------------------------------------

std::string Machine::elementName(ElementRef element) const {
  const Store &store = stores_[element.store];
  std::string text = store.decl->name;
  if (store.extents.empty())
    return text;
  int64_t rest = element.offset;
  for (size_t d = 0; d < store.extents.size(); ++d) {
    text += (d ? ", " : "[") + std::to_string(rest / store.strides[d]);
    rest %= store.strides[d];
  }
  return text + "]";
}

std::string Machine::locationOf(llvm::SMRange range) const {
  std::string file = llvm::sys::path::filename(program_.fileName).str();
  const llvm::SourceMgr *sm = options_.sourceMgr;
  if (!sm || !range.Start.isValid())
    return file;
  unsigned buffer = sm->FindBufferContainingLoc(range.Start);
  if (buffer == 0)
    return file;
  return file + ":" + std::to_string(sm->getLineAndColumn(range.Start, buffer).first);
}

std::string Machine::taskName(const Task &task) {
  if (task.store >= 0)
    return elementName({unsigned(task.store), task.offset});
  // A point of an update: name the element it updates.
  const Equation &eq = *task.equation;
  const Store &store = stores_[storeOf(eq.array)];
  bind(task);
  int64_t offset = 0;
  for (unsigned p = 0; p < eq.lhsIndices.size(); ++p) {
    int64_t x = eq.indexVars[p] ? env_[slotOf(eq.indexVars[p].get())] : evaluate(linear(*eq.lhsIndices[p]));
    offset += x * store.strides[p];
  }
  return "the update of " + elementName({storeOf(eq.array), offset});
}

// --- Values ---------------------------------------------------------------------------------------

// With --exact-types every operation's result is rounded to the declared type: float for f32 (float64
// arithmetic then rounding gives C's float result for + - * / and sqrt), wrapping int32 for i32.
template <typename T> T Machine::round(T v) const {
  if (!options_.exactTypes)
    return v;
  if constexpr (std::is_same_v<T, double>)
    return type_ == ElemType::F32 ? double(float(v)) : v;
  else
    return int64_t(int32_t(uint32_t(uint64_t(v))));
}

// A C conversion to i32: truncation; a value it cannot represent is an error rather than undefined.
int64_t Machine::toInteger(double v) {
  double truncated = std::trunc(v);
  if (!(truncated >= double(INT32_MIN) && truncated <= double(INT32_MAX))) {
    fail("the value " + numberText(v) + " does not fit i32");
    return 0;
  }
  return int64_t(truncated);
}

template <typename T> T Machine::fromReal(double v) {
  if constexpr (std::is_same_v<T, double>)
    return round(v);
  else
    return round(toInteger(v));
}

template <typename T> std::vector<T> &Machine::argStack() {
  if constexpr (std::is_same_v<T, double>)
    return realArgs_;
  else
    return integerArgs_;
}

template <typename T> T Machine::value(const Expr &e) {
  switch (e.kind()) {
  case Expr::Kind::IntLit: return fromInteger<T>(cast<IntLit>(e).value);
  case Expr::Kind::FloatLit: return fromReal<T>(cast<FloatLit>(e).value);
  case Expr::Kind::VarRef: return varValue<T>(cast<VarRef>(e));
  case Expr::Kind::ArrayRead: return readValue<T>(cast<ArrayRead>(e));
  case Expr::Kind::Unary: {
    const auto &u = cast<Unary>(e);
    if (u.op == UnaryOp::Not)
      return fromInteger<T>(condition<T>(e) ? 1 : 0);
    T operand = value<T>(*u.operand);
    if constexpr (std::is_same_v<T, double>)
      return -operand;
    else
      return round(wrapSub(0, operand));
  }
  case Expr::Kind::Binary: return binary<T>(cast<Binary>(e));
  case Expr::Kind::Call: return call<T>(cast<Call>(e));
  case Expr::Kind::Reduction: return reduction<T>(cast<Reduction>(e));
  case Expr::Kind::Tuple: break;
  }
  fail("internal error: a tuple outside a comparison");
  return T(0);
}

template <typename T> T Machine::varValue(const VarRef &ref) {
  const Binding &b = ref.binding;
  if (auto *param = std::get_if<const ParamDecl *>(&b))
    return fromInteger<T>(params_[paramIndex_.at(*param)]);
  if (auto *c = std::get_if<const ConstDecl *>(&b)) {
    if (auto *i = std::get_if<int64_t>(&(*c)->value))
      return fromInteger<T>(*i);
    return fromReal<T>(std::get<double>((*c)->value));
  }
  if (auto *scalar = std::get_if<const ArrayDecl *>(&b)) {
    ElementRef element{storeOf(*scalar), 0};
    return available(element) ? storedValue<T>(element) : T(0);
  }
  if (auto *var = std::get_if<IndexVarRef>(&b))
    return fromInteger<T>(env_[slotOf(var->var)]);
  if (auto *arg = std::get_if<FuncArgRef>(&b))
    return argStack<T>()[argBase_ + arg->position];
  fail("internal error: an unresolved name '" + ref.name + "'");
  return T(0);
}

template <typename T> T Machine::storedValue(ElementRef element) {
  const Store &store = stores_[element.store];
  if (store.integer)
    return fromInteger<T>(store.integers[size_t(element.offset)]);
  return fromReal<T>(store.reals[size_t(element.offset)]);
}

template <typename T> T Machine::readValue(const ArrayRead &read) {
  if (read.sampled)
    return sampledValue<T>(read);
  ElementRef element{0, 0};
  if (locate(read, element) != Landing::Element || !available(element))
    return T(0);
  return storedValue<T>(element);
}

// The index below a position: its floor, kept within +-2^62 (a NaN goes below), so that the corners'
// indices never overflow; the fraction (NaN for a NaN or an infinite position) carries the rest.
static int64_t floorIndex(double position) {
  constexpr double limit = 4611686018427387904.0; // 2^62
  if (position >= -limit && position <= limit)
    return int64_t(std::floor(position));
  return position > 0 ? int64_t(limit) : -int64_t(limit);
}

// sample(A, ...): the multilinear interpolation between the elements around the positions, each read
// under A's boundary rule (docs/language.md). Computed in the equation's type, as every value is: in an
// i32 equation the positions are integers and name elements.
template <typename T> T Machine::sampledValue(const ArrayRead &read) {
  const ReadPlan &plan = readPlan(read);
  size_t rank = read.indices.size();
  llvm::SmallVector<int64_t, 4> below(rank);
  llvm::SmallVector<double, 4> fraction(rank, 0.0);
  llvm::SmallVector<size_t, 4> between; // the interpolated dimensions
  for (size_t d = 0; d < rank; ++d) {
    if (!read.isGather[d]) {
      below[d] = evaluate(*plan.indices[d].affine);
      continue;
    }
    T position = value<T>(*read.indices[d]);
    if constexpr (std::is_same_v<T, double>) {
      below[d] = floorIndex(position);
      fraction[d] = position - std::floor(position);
    } else {
      below[d] = position;
    }
    between.push_back(d);
  }
  double sum = 0;
  for (unsigned corner = 0; corner < (1u << between.size()); ++corner) {
    llvm::SmallVector<int64_t, 4> at = below;
    double weight = 1;
    for (size_t k = 0; k < between.size(); ++k) {
      bool above = (corner >> k) & 1;
      at[between[k]] += above;
      weight *= above ? fraction[between[k]] : 1 - fraction[between[k]];
    }
    ElementRef element{0, 0};
    double v = land(plan.store, at, element) == Landing::Element && available(element)
                   ? storedValue<double>(element)
                   : 0.0;
    sum += weight * v;
  }
  return fromReal<T>(sum);
}

// Whether an element's value is there; an output or local element not computed yet is noted as missing.
bool Machine::available(ElementRef element) {
  const Store &store = stores_[element.store];
  if (!store.computed || store.state[size_t(element.offset)] == kDone)
    return true;
  missing_.push_back(element);
  return false;
}

Landing Machine::locate(const ArrayRead &read, ElementRef &element) {
  const ReadPlan &plan = readPlan(read);
  llvm::SmallVector<int64_t, 4> indices;
  for (const IndexPlan &index : plan.indices) {
    int64_t i = 0;
    if (index.gather) {
      if (!readInteger(*index.gather, i))
        return Landing::Unknown;
      if (index.offset)
        i = wrapAdd(i, wrapMul(index.sign, evaluate(*index.offset)));
    } else {
      i = evaluate(*index.affine);
    }
    indices.push_back(i);
  }
  return land(plan.store, indices, element);
}

// Where a read at `indices` lands: an element (after the boundary rule) or a zero outside the array.
Landing Machine::land(unsigned storeIndex, llvm::ArrayRef<int64_t> indices, ElementRef &element) {
  const Store &store = stores_[storeIndex];
  int64_t offset = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t i = indices[d];
    int64_t n = store.extents[d];
    if (i < 0 || i >= n) {
      Boundary rule = store.decl->effectiveBoundary;
      // An empty dimension has no element to clamp or mirror to: such a read yields 0.
      if (rule == Boundary::Zero || n == 0)
        return Landing::Zero;
      if (rule == Boundary::Mirror)
        i = i < 0 ? wrapSub(0, i) : wrapSub(2 * (n - 1), i);
      i = std::clamp<int64_t>(i, 0, n - 1);
    }
    offset += i * store.strides[d];
  }
  element = {storeIndex, offset};
  return Landing::Element;
}

// The value of an i32 read (a gather index), or false when it is not computed yet.
bool Machine::readInteger(const ArrayRead &read, int64_t &value) {
  ElementRef element{0, 0};
  switch (locate(read, element)) {
  case Landing::Zero: value = 0; return true;
  case Landing::Unknown: return false;
  case Landing::Element: break;
  }
  if (!available(element))
    return false;
  value = stores_[element.store].integers[size_t(element.offset)];
  return true;
}

template <typename T> T Machine::binary(const Binary &b) {
  if (isComparison(b.op) || b.op == BinaryOp::And || b.op == BinaryOp::Or)
    return fromInteger<T>(condition<T>(b) ? 1 : 0);
  T l = value<T>(*b.lhs);
  T r = value<T>(*b.rhs);
  return arithmetic<T>(b.op, l, r);
}

// i32 arithmetic is int64 (int32 with --exact-types) with C's truncating / and %; a zero divisor is an
// error (the executables give 0, see docs/running.md).
template <typename T> T Machine::arithmetic(BinaryOp op, T l, T r) {
  if constexpr (std::is_same_v<T, double>) {
    switch (op) {
    case BinaryOp::Add: return round(l + r);
    case BinaryOp::Sub: return round(l - r);
    case BinaryOp::Mul: return round(l * r);
    case BinaryOp::Div: return round(l / r);
    case BinaryOp::Mod: return round(std::fmod(l, r));
    default: break;
    }
  } else {
    switch (op) {
    case BinaryOp::Add: return round(wrapAdd(l, r));
    case BinaryOp::Sub: return round(wrapSub(l, r));
    case BinaryOp::Mul: return round(wrapMul(l, r));
    case BinaryOp::Div:
    case BinaryOp::Mod:
      if (r == 0) {
        fail(std::string("integer ") + (op == BinaryOp::Div ? "division" : "modulo") + " by zero");
        return 0;
      }
      if (r == -1) // INT64_MIN / -1 overflows in C++: negate by wrapping instead
        return op == BinaryOp::Div ? round(wrapSub(0, l)) : 0;
      return round(op == BinaryOp::Div ? l / r : l % r);
    default: break;
    }
  }
  fail("internal error: an operator that is not arithmetic");
  return T(0);
}

template <typename T> T Machine::call(const Call &c) {
  if (c.func) {
    llvm::SmallVector<T, 4> args;
    for (const ExprPtr &arg : c.args)
      args.push_back(value<T>(*arg));
    std::vector<T> &stack = argStack<T>();
    size_t savedBase = argBase_, base = stack.size();
    stack.insert(stack.end(), args.begin(), args.end());
    argBase_ = base;
    T result = value<T>(*c.func->body);
    stack.resize(base);
    argBase_ = savedBase;
    return result;
  }
  if (*c.builtin == Builtin::Select)
    return condition<T>(*c.args[0]) ? value<T>(*c.args[1]) : value<T>(*c.args[2]);
  T x = value<T>(*c.args[0]);
  T y = c.args.size() > 1 ? value<T>(*c.args[1]) : T(0);
  return builtin<T>(*c.builtin, x, y);
}

// The C library's functions; with --exact-types an f32 equation calls their float versions (expf, ...).
double Machine::math(Builtin fn, double x, double y) const {
  bool f32 = options_.exactTypes && type_ == ElemType::F32;
  float fx = float(x), fy = float(y);
  switch (fn) {
  case Builtin::Exp: return f32 ? double(expf(fx)) : std::exp(x);
  case Builtin::Log: return f32 ? double(logf(fx)) : std::log(x);
  case Builtin::Sqrt: return f32 ? double(sqrtf(fx)) : std::sqrt(x);
  case Builtin::Abs: return std::fabs(x);
  case Builtin::Tanh: return f32 ? double(tanhf(fx)) : std::tanh(x);
  case Builtin::Min: return std::fmin(x, y);
  case Builtin::Max: return std::fmax(x, y);
  case Builtin::Pow: return f32 ? double(powf(fx, fy)) : std::pow(x, y);
  case Builtin::Select: break;
  }
  return 0;
}

// Integer equations keep abs, min and max integral and compute the others in double, converting back.
template <typename T> T Machine::builtin(Builtin fn, T x, T y) {
  if constexpr (std::is_same_v<T, double>) {
    return round(math(fn, x, y));
  } else {
    switch (fn) {
    case Builtin::Abs: return round(x < 0 ? wrapSub(0, x) : x);
    case Builtin::Min: return std::min(x, y);
    case Builtin::Max: return std::max(x, y);
    default: return round(toInteger(math(fn, double(x), double(y))));
    }
  }
}

// An empty sum is 0, an empty max the lowest finite value of the equation's declared type, an empty min
// the highest. Terms are combined in the lexicographic order of the reduction variables.
template <typename T> T Machine::reduction(const Reduction &red) {
  T acc = T(0);
  if (red.op != ReductionOp::Sum) {
    bool low = red.op == ReductionOp::Max;
    if constexpr (std::is_same_v<T, double>)
      acc = type_ == ElemType::F32 ? (low ? -FLT_MAX : FLT_MAX) : (low ? -DBL_MAX : DBL_MAX);
    else
      acc = low ? INT32_MIN : INT32_MAX;
  }
  reduceOver<T>(red, 0, 0, acc);
  return acc;
}

template <typename T> void Machine::reduceOver(const Reduction &red, size_t binding, size_t var, T &acc) {
  if (binding == red.bindings.size()) {
    if (red.where && !affineCondition(*red.where))
      return;
    T term = value<T>(*red.body);
    switch (red.op) {
    case ReductionOp::Sum: acc = arithmetic<T>(BinaryOp::Add, acc, term); break;
    case ReductionOp::Max:
      if constexpr (std::is_same_v<T, double>)
        acc = std::fmax(acc, term);
      else
        acc = std::max(acc, term);
      break;
    case ReductionOp::Min:
      if constexpr (std::is_same_v<T, double>)
        acc = std::fmin(acc, term);
      else
        acc = std::min(acc, term);
      break;
    }
    return;
  }
  // The variables of one binding share its range, whose bounds see only enclosing variables.
  const RangeBinding &range = red.bindings[binding];
  bool lastVar = var + 1 == range.vars.size();
  unsigned slot = slotOf(range.vars[var].get());
  // A row range's bounds are reads of the row array (checked before the run: checkRowRanges).
  int64_t lo = range.rowArray ? integerValue(*range.lo) : evaluate(linear(*range.lo));
  int64_t hi = range.rowArray ? integerValue(*range.hi) : evaluate(linear(*range.hi));
  for (int64_t k = lo; k < hi && error_.empty(); ++k) {
    env_[slot] = k;
    reduceOver<T>(red, lastVar ? binding + 1 : binding, lastVar ? 0 : var + 1, acc);
  }
}

// A condition in a value (select's first argument, comparisons, && || !): comparisons of two integer
// expressions compare integers, others compare in the equation's type; a value is true when not 0.
template <typename T> bool Machine::condition(const Expr &e) {
  if (const auto *b = dyn_cast<Binary>(&e)) {
    if (b->op == BinaryOp::And)
      return condition<T>(*b->lhs) && condition<T>(*b->rhs);
    if (b->op == BinaryOp::Or)
      return condition<T>(*b->lhs) || condition<T>(*b->rhs);
    if (isComparison(b->op)) {
      const auto *lt = dyn_cast<Tuple>(b->lhs.get()), *rt = dyn_cast<Tuple>(b->rhs.get());
      if (!lt || !rt)
        return compare<T>(b->op, *b->lhs, *b->rhs);
      bool equal = true;
      for (size_t k = 0; k < lt->elements.size() && equal; ++k)
        equal = compare<T>(BinaryOp::Eq, *lt->elements[k], *rt->elements[k]);
      return b->op == BinaryOp::Eq ? equal : !equal;
    }
  }
  if (const auto *u = dyn_cast<Unary>(&e); u && u->op == UnaryOp::Not)
    return !condition<T>(*u->operand);
  if (isIntegerExpr(e))
    return integerValue(e) != 0;
  return value<T>(e) != T(0);
}

template <typename T> bool Machine::compare(BinaryOp op, const Expr &lhs, const Expr &rhs) {
  if (isIntegerExpr(lhs) && isIntegerExpr(rhs)) {
    int64_t l = integerValue(lhs);
    return holds(op, l, integerValue(rhs));
  }
  T l = value<T>(lhs);
  return holds(op, l, value<T>(rhs));
}

// The value of an integer expression (isIntegerExpr) in int64, whatever the equation's type.
int64_t Machine::integerValue(const Expr &e) {
  switch (e.kind()) {
  case Expr::Kind::IntLit: return cast<IntLit>(e).value;
  case Expr::Kind::VarRef: {
    const Binding &b = cast<VarRef>(e).binding;
    if (auto *param = std::get_if<const ParamDecl *>(&b))
      return params_[paramIndex_.at(*param)];
    if (auto *var = std::get_if<IndexVarRef>(&b))
      return env_[slotOf(var->var)];
    if (auto *c = std::get_if<const ConstDecl *>(&b))
      return std::get<int64_t>((*c)->value);
    break;
  }
  case Expr::Kind::ArrayRead: {
    int64_t v = 0;
    return readInteger(cast<ArrayRead>(e), v) ? v : 0;
  }
  case Expr::Kind::Unary: return wrapSub(0, integerValue(*cast<Unary>(e).operand));
  case Expr::Kind::Binary: {
    const auto &b = cast<Binary>(e);
    int64_t l = integerValue(*b.lhs), r = integerValue(*b.rhs);
    switch (b.op) {
    case BinaryOp::Add: return wrapAdd(l, r);
    case BinaryOp::Sub: return wrapSub(l, r);
    case BinaryOp::Mul: return wrapMul(l, r);
    default: // a floor division by an integer constant (dsl::isIntegerExpr)
      if (r == 0 || (l == INT64_MIN && r == -1)) {
        fail("integer division by zero or overflow in an integer expression");
        return 0;
      }
      return b.op == BinaryOp::Div ? dsl::floorDiv(l, r) : dsl::floorMod(l, r);
    }
  }
  default: break;
  }
  fail("internal error: not an integer expression");
  return 0;
}

// A where condition: affine comparisons joined by && || !, in integers (/ and % divide with floor).
bool Machine::affineCondition(const Expr &e) {
  if (const auto *u = dyn_cast<Unary>(&e))
    return !affineCondition(*u->operand);
  const auto &b = cast<Binary>(e);
  if (b.op == BinaryOp::And)
    return affineCondition(*b.lhs) && affineCondition(*b.rhs);
  if (b.op == BinaryOp::Or)
    return affineCondition(*b.lhs) || affineCondition(*b.rhs);
  const auto *lt = dyn_cast<Tuple>(b.lhs.get()), *rt = dyn_cast<Tuple>(b.rhs.get());
  if (!lt || !rt)
    return holds(b.op, evaluate(linear(*b.lhs)), evaluate(linear(*b.rhs)));
  bool equal = true;
  for (size_t k = 0; k < lt->elements.size() && equal; ++k)
    equal = evaluate(linear(*lt->elements[k])) == evaluate(linear(*rt->elements[k]));
  return b.op == BinaryOp::Eq ? equal : !equal;
}

} // namespace

llvm::Expected<int> polyc::interpret::interpretProgram(const Program &program, const std::string &name,
                                                       const std::vector<std::string> &args,
                                                       const InterpretOptions &options) {
  llvm::Expected<Plan> plan = planProgram(program);
  if (!plan)
    return plan.takeError();
  llvm::Expected<rt::ProgramInfo> info = programInfo(program, name);
  if (!info)
    return info.takeError();
  Machine machine(program, *plan, *info, options);
  std::vector<std::string> argStorage(args);
  std::vector<char *> argv;
  for (std::string &arg : argStorage)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  return rt::runMain(int(argStorage.size()), argv.data(), *info, machine);
}
