// The CUDA dialect of statement bodies, for CodeGenCuda: host+device helpers, read-only inputs
// through the read-only data path (__ldg), and three ways to compute one statement instance:
//   Thread         one thread computes it, reductions as loops (the shared default);
//   Group          the G lanes of a group compute it together: each reduction's flattened index space
//                  is dealt out to the lanes (lane, lane + G, ...) and combined with
//                  polyc::rt::cuda::reduceInGroup; lane 0 stores;
//   FlexibleValue  as Group, but the instance's value is returned (the flexible wavefront's strip
//                  stores it), and reads of windowed arrays go to the strip's shared-memory windows;
//                  a window sum with a term table (termTables) deals out the table's terms instead;
//   FlexibleTerms  builds those term tables, once per block: the point at the origin, each window
//                  read replaced by 1 (leaving the term's coefficient) and its offset from the point
//                  recorded; nothing is stored.
//   ProductStore   the store of one instance of a matrix product's statement (map::ProductForm) from
//                  its sum, computed by the product's tiles and given as polyc_sum;
//   Rows           one thread computes polyc_R consecutive instances along one dimension (from
//                  polyc_first, polyc_rows of them) of a statement whose one sum slides along it
//                  (TermTables.h, slidingWindow): the sum as polyc::rt::cuda::SlidingSum, a cell read
//                  per step for all of them, then the store once per instance (printRowsStatement).
#pragma once

#include "compiler/codegen/ExprPrinter.h"
#include "compiler/codegen/TermTables.h"

#include <map>
#include <optional>
#include <string>

namespace polyc::codegen {

enum class CudaStatementMode { Thread, Group, FlexibleValue, FlexibleTerms, Rows, ProductStore };

// A 2D array read through a strip window: `view(row, col)`, with the array's dimensions `rowDim` and
// `colDim` as the strip's rows and columns.
struct CudaWindowRead {
  std::string view;
  unsigned rowDim = 0, colDim = 1;
};

// A window sum computed from a term table (polyc::rt::cuda::Term): table `index` of the statement, its
// one window read going to the view `view`.
struct CudaTermTable {
  unsigned index = 0;
  std::string view;
};

// Rows: the statement dimension a thread's instances follow, and the sum that slides along it.
struct CudaRowsPlan {
  std::string dim; // the dimension's C name
  const ast::Reduction *sum = nullptr;
  SlidingWindow window;
  // When some of a thread's runs need no bounds test: the condition on a run (its first instance's
  // value of `dim` as polyc_first, the other dimensions by name, and polyc_R) under which none of its
  // instances does, so that the Interior variant computes it.
  std::optional<std::string> interior;
};

class CudaExprPrinter : public ExprPrinter {
public:
  using ExprPrinter::ExprPrinter;

  CudaStatementMode mode = CudaStatementMode::Thread;
  std::string groupSize = "G"; // the group size (a template parameter of the statement's function)
  std::string lane = "lane";   // the thread's lane in its group
  std::map<std::string, CudaWindowRead> windows; // FlexibleValue: arrays read through windows
  bool convergedGroups = false; // FlexibleValue: every lane of the warp computes (full-warp shuffles)
  std::map<const ast::Reduction *, CudaTermTable> termTables; // FlexibleValue, FlexibleTerms
  CudaRowsPlan rows;                                          // Rows
  // Rows: print the Interior variant, for a thread whose polyc_R instances, and every cell they read,
  // are inside their arrays (the caller has checked): no bounds tests, and no test of the count.
  bool rowsInterior = false;
  // Rows: the names of the template parameter (instances a thread), of the first instance's value of
  // rows.dim and of the count of instances the thread computes (at most polyc_R).
  static constexpr const char *RowsParam = "polyc_R";
  static constexpr const char *RowsFirst = "polyc_first";
  static constexpr const char *RowsCount = "polyc_rows";
  // The sliding run's length when the kernel is instantiated for it, else 0
  // (polyc::rt::cuda::withSlidingRun).
  static constexpr const char *RowsRun = "polyc_Run";
  // A block's copy of a privatised scatter's array, in shared memory.
  static constexpr const char *PrivateCopy = "polyc_private";
  // Rows: prints the statement for the thread's instances (the sliding sum, then a loop storing each).
  void printRowsStatement(const model::Statement &statement, CodeWriter &w);
  // The term tables' parameter in the value function (an array of LaneTerms) and the terms function (an
  // array of TermTable), by table index.
  static constexpr const char *TermTablesParam = "terms";

  // ProductStore: the sum whose value is given, and the name of the parameter that holds it.
  const ast::Reduction *givenSum = nullptr;
  static constexpr const char *GivenSum = "polyc_sum";

  // Helpers and user functions serve host and device code; unused ones are not worth a warning.
  std::string functionQualifier() const override { return "[[maybe_unused]] __host__ __device__ inline"; }
  bool genericIndexHelpers() const override { return true; }
  bool printsPackages() const override { return mode == CudaStatementMode::Thread && !roundTile; }
  // The program's `__device__ int polyc_changed[3]`, a slot an iteration in turn (ChangedFlag.cuh).
  // A privatised scatter's array (CodeGenCuda): its stores go to the block's copy, PrivateCopy.
  std::string privateArray;
  std::string storeRef(const model::ArrayInfo &array) const override {
    return !privateArray.empty() && array.name == privateArray ? std::string(PrivateCopy) : arrayRef(array);
  }
  void printAtomicUpdate(const std::string &target, const std::string &op, const std::string &rhs, ast::ElemType,
                         CodeWriter &w) const override {
    w.line("atomicAdd(&" + target + ", " + (op == " += " ? rhs : "-(" + rhs + ")") + ");");
  }
  std::string changedStore(const std::string &iteration) const override {
    return "polyc_changed[polyc::rt::cuda::changedSlot(" + iteration + ")] = 1";
  }
  // The flexible wavefront's value function and the Rows variant compute in int (their host code checks
  // that the params, and the strip's rows and columns or the arrays' sizes, fit): 64-bit index arithmetic
  // costs GPUs several instructions a term.
  std::string indexType() const override { return inInt() ? "int" : threadIndexType; }
  // The index type of the other modes: int64_t in helpers and user functions, the device struct's
  // template parameter (int or int64_t, chosen at run time) in its member functions.
  std::string threadIndexType = "int64_t";
  // The variables of a reduction that one thread runs in order are 64-bit in the other modes whatever the
  // index type: an access that moves with one (gemm's A[i * NK + k]) then advances a 64-bit address by a
  // constant, where an int index is recomputed and sign-extended for every term (gemm's inner loop, 4
  // terms: 36 SASS instructions in int, 31 in int64_t, 26 so). A group's lanes keep the index type: their
  // loops are short, and 64-bit ones cost the rate network's persistent kernel 1.1 to 1.2x.
  // A round tile's update indexes in the kernel's type (int where the sizes fit), reductions too.
  std::string reductionIndexType() const override {
    return inInt() ? "int" : roundTile ? threadIndexType : "int64_t";
  }
  std::string paramRef(const std::string &param) const override {
    return inInt() ? "int(" + ExprPrinter::paramRef(param) + ")" : ExprPrinter::paramRef(param);
  }
  // A strip's window holds the zeros around the array: its reads need no bounds test. Nor does the
  // window read that a Rows coefficient takes as 1, nor any read of the Rows Interior variant.
  bool storageHoldsBoundary(const model::ArrayInfo &array) const override {
    return (flexible() && windows.count(array.name)) || isRowsCellTakenAsOne(array) ||
           (mode == CudaStatementMode::Rows && rowsInterior);
  }
  std::string mathFunction(ast::Builtin fn, ast::ElemType type) const override;
  std::string elementRef(const model::ArrayInfo &array, const std::string &storage,
                         llvm::ArrayRef<std::string> indices) const override;
  std::string printReduction(const ReductionParts &parts, CodeWriter &w) override;
  void printStore(const model::ArrayInfo &array, llvm::ArrayRef<std::string> indices, const std::string &target,
                  const std::string &op, const std::string &rhs, CodeWriter &w) override;

private:
  bool flexible() const {
    return mode == CudaStatementMode::FlexibleValue || mode == CudaStatementMode::FlexibleTerms;
  }
  bool inInt() const { return flexible() || mode == CudaStatementMode::Rows; }
  bool isRowsCellTakenAsOne(const model::ArrayInfo &array) const {
    return rowsCoefficient_ && array.name == rows.window.read->name;
  }
  std::string printSlidingSum(const ReductionParts &parts, CodeWriter &w);
  bool rowsCoefficient_ = false; // Rows: printing a step's coefficient, the window's cell taken as 1
  bool rowsLoopOpen_ = false;    // Rows: printSlidingSum opened the loop over the instances
  std::string combineLanes(const ReductionParts &parts, CodeWriter &w) const;
  void printLaneLoops(const ReductionParts &parts, CodeWriter &w);
  void printTermLoop(const ReductionParts &parts, const CudaTermTable &table, CodeWriter &w);
  std::string printTermTable(const ReductionParts &parts, const CudaTermTable &table, CodeWriter &w);
};

} // namespace polyc::codegen
