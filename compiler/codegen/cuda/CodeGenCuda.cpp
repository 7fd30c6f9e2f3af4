// The CUDA target (see CodeGenCuda.h): prints the schedule's host loops with kernel launches in place
// of the bands' parallel loops, the kernels (grid-stride loops over the parallel band dimensions, the
// innermost on threadIdx.x), the flexible wavefront's strip and persistent kernel, one device member
// function per statement and variant, and the Compute class, C interface and main around them.
#include "compiler/codegen/cuda/CodeGenCuda.h"

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/IndexExprs.h"
#include "compiler/codegen/IslAstPrinter.h"
#include "compiler/codegen/IslCalls.h"
#include "compiler/codegen/MpiCalls.h"
#include "compiler/codegen/Names.h"
#include "compiler/codegen/ProgramInterface.h"
#include "compiler/codegen/RoundTileKernel.h"
#include "compiler/codegen/TermTables.h"
#include "compiler/codegen/cuda/CudaExprPrinter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include <functional>
#include <optional>
#include <regex>
#include <set>

using namespace polyc;
using namespace polyc::codegen;
using allocate::AllocationKind;

// The flexible wavefront's shape: progress published every PublishInterval steps, by the block's
// coordinator warp, off the compute threads' path (docs/performance.md at 2c04002, CUDA, measured this); its
// strip's shape (lanes per point, strip width, terms held per lane: polyc::rt::cuda::StripShape) is chosen at
// run time, from the term tables' capacity (withTermTableShape) or else from the window sums' length
// (lanesFor, withLaneShape). GroupWidth: the fixed wavefront's lanes per point.
static constexpr int GroupWidth = 32;
static constexpr int PublishInterval = 2;
// Threads per block of a kernel with one thread per point.
static constexpr int ThreadsPerBlock = 256;
// A round tile's block: its points (2304 for 48 x 48) are few blocks' worth (300 at 640 x 480), so
// more threads a block give an SM more warps to hide the rounds' latency with (Canny's hysteresis at
// 640 x 480 on the H200: 46 us a launch with 256 threads).
static constexpr int RoundTileThreads = 512;
// Points a thread of a data-parallel kernel takes along a dimension that its sum slides along
// (CudaStatementMode::Rows): a cell load serves this many FMAs (docs/performance.md at 2c04002, CUDA,
// measured 4, 8 and 16).
static constexpr int RowsPerThread = 16;
// The template parameter of the device struct and the kernels: their index type, int or int64_t as the
// run's sizes allow (polyc::rt::cuda::indexFitsInt). No program's name is spelled with polyc_.
static constexpr const char *IndexType = "polyc_index";

// A kernel's template header: its own parameters, then the index type (last, so that a launch may give
// the others and let the device struct argument give the index type; launches here give it too).
static std::string kernelTemplate(std::vector<std::string> params) {
  params.push_back(std::string("typename ") + IndexType);
  return "template <" + llvm::join(params, ", ") + ">";
}
// `kernel`'s instance for `args` and the index type.
static std::string kernelInstance(const std::string &kernel, std::vector<std::string> args = {}) {
  args.push_back(IndexType);
  return kernel + "<" + llvm::join(args, ", ") + ">";
}

// A lane's view of a term table, its first `held` terms in registers.
static std::string laneTermsType(const std::string &elem, const std::string &held) {
  return "polyc::rt::cuda::LaneTerms<" + elem + ", " + held + ">";
}

namespace {

// A statement's flexible-wavefront variant: reads of `windows` arrays go to strip windows, reads of
// `staged` arrays to shared-memory copies.
struct FlexibleVariant {
  unsigned statement = 0;
  std::string function;                         // the device member function's name
  std::vector<std::string> windowArrays;        // template parameter order
  std::vector<std::string> stagedArrays;        // parameter order
  std::map<std::string, CudaWindowRead> windows; // array -> its view parameter
  // Whether every lane of the strip computes (reads only windows and staged arrays: see step()), so
  // that a point's lanes reduce with full-warp shuffles.
  bool convergedLanes = true;
  // The window sums computed from term tables, in table order, and each one's capacity: the extents
  // of its variables' bounding box (host expressions of the params).
  struct TermTable {
    const ast::Reduction *reduction = nullptr;
    std::string array; // the window's array
    std::string view;
    std::vector<std::string> extents;
  };
  std::vector<TermTable> termTables;
  std::string termsFunction; // builds them (empty when there are none)
  // When the statement is a recurrence over a full box window (TermTables.h, boxRecurrence): its parts for
  // the decoupled step (polyc/cuda/DecoupledWindow.cuh), and the window's extent (a host expression).
  std::optional<BoxRecurrence> box;
  std::string boxExtent;
};

struct FlexiblePlan; // planFlexible's

// A data-parallel kernel whose threads take RowsPerThread points each along statement dimension `dim`.
struct RowsKernel {
  unsigned statement = 0;
  unsigned dim = 0;     // among the statement's dimensions (dimNames)
  std::string iterator; // of the loop on the grid's y axis
  std::string count;    // the values that loop takes from its iterator on
  CudaRowsPlan plan;
  std::string runLength;     // host expression: the steps of a run of the sum's sliding variable
  std::string fits;          // host condition: the indices fit in int
  bool argsMismatch = false; // set by the kernel printer: the call's arguments are not the loops' iterators
};

// The host statements that run a band's launches from a member function of the Compute class.
struct CapturedCall {
  std::string replay;  // replays its CUDA graph (captured first when needed)
  std::string direct;  // launches directly
  std::string prepare; // captures it (Compute::prepare)
};

// A capture's guard in prepare when either of two uses may run (empty: always; "false": never, the graph
// captured when it first runs).
std::string eitherGuard(const std::string &a, const std::string &b) {
  if (a.empty() || b.empty())
    return "";
  if (a == "false")
    return b;
  if (b == "false")
    return a;
  return "(" + a + ") || (" + b + ")";
}

// What the printers collect for the file around the host code.
struct CudaProgram {
  CudaProgram(const CodegenInput &input, CudaExprPrinter &exprs) : input(input), exprs(exprs) {}
  const CodegenInput &input;
  CudaExprPrinter &exprs;
  std::string type;     // Iir2d
  std::string device;   // Iir2dDevice: the params and device arrays, as kernels see them (int64_t indices)
  std::string deviceOf; // Iir2dDeviceOf: the template of `device` over the index type
  std::string program;  // the name of the device view in host code and kernels
  std::string stream;   // the stream in host code
  CodeWriter kernels;   // kernels, strips and their argument structs
  CodeWriter members;   // member functions of the Compute class (graph bodies)
  std::vector<std::string> memberVariables; // of the Compute class
  struct GraphCapture {
    std::string guard; // when the capture is needed (empty: always)
    std::string call;
  };
  std::vector<GraphCapture> prepareLines; // graph captures for Compute::prepare
  std::set<unsigned> threadVariants, groupVariants;
  std::map<unsigned, CudaRowsPlan> rowsVariants;
  std::map<unsigned, const map::ProductForm *> productVariants; // by statement
  std::vector<std::string> viewLines; // in Compute::view, after the local arrays (product partial sums)
  std::map<std::string, CapturedCall> capturedCalls; // "band what" -> the statements that run its function
  std::vector<FlexibleVariant> flexibleVariants;
  // --mpi: the bands the ranks share; the device arrays' rows move between them through RankRows (polyc_rows).
  const map::Decomposition *decomposition = nullptr;
  // --mpi: while a band split by its terms is printed the first time, its statements' calls compute their
  // partial values (the functions partialFunctionName(name): partialThreadVariants, partialGroupVariants).
  bool partialPass = false;
  std::set<unsigned> partialThreadVariants, partialGroupVariants;
  // While a privatised scatter's kernel is printed (its block's copy of the array in shared memory,
  // CudaExprPrinter::privateArray): its statement's calls add into the copy (privateVariants, the
  // functions named S<n>Private, whose last argument is the copy).
  bool privatePass = false;
  std::set<unsigned> privateVariants;
  // Updates computed on round tiles (map::RoundTiles): the functions named S<n>Rounds.
  std::map<unsigned, const map::RoundTiles *> roundVariants;
  NameScope globalNames; // kernels, structs and members
  std::optional<std::string> error;

  // The device struct of the index type being printed: the kernels' and the host's templated code's.
  std::string indexedDevice() const { return deviceOf + "<" + IndexType + ">"; }

  void fail(const std::string &message) {
    if (!error)
      error = message;
  }

  // --mpi: the split of the statement's reduction by its terms, if the ranks split it.
  const map::TermSplit *splitOf(unsigned statement) const {
    return codegen::splitOf(decomposition, statement);
  }
  // The device function a thread (or, with `group`, a group of threads) calls for an instance of the
  // statement, recorded as one to print.
  std::string statementFunction(unsigned statement, bool group) {
    const std::string &name = input.model.statements[statement].name;
    if (privatePass && !group) {
      privateVariants.insert(statement);
      return name + "Private";
    }
    if (partialPass) {
      (group ? partialGroupVariants : partialThreadVariants).insert(statement);
      return partialFunctionName(name) + (group ? "Group" : "");
    }
    (group ? groupVariants : threadVariants).insert(statement);
    return name + (group ? "Group" : "");
  }
};

std::string statementList(const model::Model &model, const std::vector<unsigned> &statements) {
  std::string text;
  for (unsigned s : statements)
    text += (text.empty() ? "" : ", ") + model.statements[s].name;
  return text;
}

bool hasReduction(const model::Statement &statement) { return !statement.reductions.empty(); }

// ---------------------------------------------------------------------------------------------
// The kernel printer: a band's loops inside a kernel.

class CudaKernelPrinter : public IslAstPrinter {
public:
  // `axes` maps band members to the grid dimension they run on ("x", "y", "z"); `group` is "1" (a
  // thread per point) or the group size ("32", "G").
  // `rows`: the kernel's threads take RowsPerThread points each (the call's arguments are checked).
  CudaKernelPrinter(const IslAstPrinter &outer, CodeWriter &w, CudaProgram &program, const BandView *band,
                    std::map<unsigned, std::string> axes, std::string group, RowsKernel *rows = nullptr)
      : IslAstPrinter(outer, w), program_(program), band_(band), axes_(std::move(axes)),
        group_(std::move(group)), rows_(rows) {}

  void printKernelLoop(const LoopView &loop, const isl::ast_node_for &node) { printFor(loop, node); }
  void printKernelNode(const isl::ast_node &node) { printNode(node); }
  // The names of each grid axis' first index and stride, declared by the kernel's prologue.
  std::map<std::string, std::pair<std::string, std::string>> axisNames;
  // --mpi: the statement dimension of the shared band's member 0, when no loop of the rank's block encloses
  // the kernel (an instance isl puts outside them runs on the rank that owns its row).
  const std::map<unsigned, unsigned> *rowDims = nullptr;
  // The kernel has the `polyc_covers` instance (CudaHostPrinter::covering): its grid loops stop after one
  // iteration there.
  bool covering = false;

protected:
  std::string loopIndexType() const override { return IndexType; }
  // A repeat loop that stops early, in one thread: its slot of the program's ring of flags.
  std::string resetChanged(const LoopView &loop) const override {
    return "polyc_changed[polyc::rt::cuda::changedSlot(" + loop.iterator + ")] = 0;";
  }
  std::string stopsNow(const LoopView &loop) const override {
    return "!polyc_changed[polyc::rt::cuda::changedSlot(" + loop.iterator + ")]";
  }
  void printBand(const BandView &, const isl::ast_node &body) override { printNode(body); }
  void printFor(const LoopView &loop, const isl::ast_node_for &node) override {
    bool inBand = loop.band && band_ && loop.band->index == band_->index;
    auto axis = inBand ? axes_.find(loop.member) : axes_.end();
    if (axis == axes_.end()) {
      ++ownLoops_;
      IslAstPrinter::printFor(loop, node);
      --ownLoops_;
      return;
    }
    auto [first, stride] = axisNames.at(axis->second);
    std::string scale = loop.inc == "1" ? "" : " * " + loop.inc;
    w_.comment(loopComment(loop) + "; spread over the grid's " + axis->second + " dimension");
    w_.openBlock("for (" + std::string(IndexType) + " " + loop.iterator + " = " + loop.init + " + " + first + scale + "; " +
                 loop.cond + "; " + loop.iterator + " += " + stride + scale + ")");
    bound_.insert(loop.member);
    printNode(node.body());
    bound_.erase(loop.member);
    if (covering)
      w_.line("if constexpr (polyc_covers) break;");
    w_.closeBlock();
  }
  void printStatementCall(const StatementCall &call) override {
    if (rowDims) {
      w_.openBlock("if (" + ownsRowCondition(call.args.at(rowDims->at(call.statement))) + ")");
      printOwnedCall(call);
      w_.closeBlock();
      return;
    }
    printOwnedCall(call);
  }

private:
  void printOwnedCall(const StatementCall &call) {
    // A grid member with no loop on the way here took one value only (isl prints no loop for a
    // degenerate one, as for the t = 0 piece of `where t != 1`): the first thread along it runs the
    // instance, as the loop from that value to itself would, not every thread.
    std::vector<std::string> guards;
    for (auto &[member, axis] : axes_)
      if (!bound_.count(member))
        guards.push_back(axisNames.at(axis).first + " == 0");
    if (!guards.empty()) {
      w_.openBlock("if (" + llvm::join(guards, " && ") + ")");
      printCall(call);
      w_.closeBlock();
      return;
    }
    printCall(call);
  }

  void printCall(const StatementCall &call) {
    const std::string &name = input_.model.statements[call.statement].name;
    if (rows_)
      return printRowsCall(call, name);
    if (group_ == "1") {
      std::vector<std::string> args = call.args;
      if (program_.privatePass)
        args.push_back(std::string(CudaExprPrinter::PrivateCopy));
      w_.line(program_.program + "." + program_.statementFunction(call.statement, false) + "(" +
              llvm::join(args, ", ") + ");");
      return;
    }
    std::vector<std::string> args = call.args;
    args.push_back("lane");
    w_.line(program_.program + "." + program_.statementFunction(call.statement, true) + "<" + group_ + ">(" +
            llvm::join(args, ", ") + ");");
    if (readsEarlierInstances(input_.model, band_,
                              ownLoops_ > 0)) // the next instance may read what lane 0 stored
      w_.line("polyc::rt::cuda::syncGroup<" + group_ + ">();");
  }

  // The thread's points from the y loop's iterator on, as many as are left (at most RowsPerThread), in
  // int. The Rows variant needs the blocked argument to be that iterator and no other to mention it.
  void printRowsCall(const StatementCall &call, const std::string &name) {
    std::regex mention("\\b" + rows_->iterator + "\\b");
    for (size_t k = 0; k < call.args.size(); ++k) {
      bool expected =
          k == rows_->dim ? call.args[k] == rows_->iterator : !std::regex_search(call.args[k], mention);
      if (call.statement != rows_->statement || !expected)
        rows_->argsMismatch = true;
    }
    std::vector<std::string> args;
    for (const std::string &arg : call.args)
      args.push_back("int(" + arg + ")");
    args.push_back("int(polyc_min(int64_t(" + std::to_string(RowsPerThread) + "), " + rows_->count + "))");
    w_.line(program_.program + "." + name + "Rows<" + std::to_string(RowsPerThread) + ", " +
            CudaExprPrinter::RowsRun + ">(" + llvm::join(args, ", ") + ");");
  }

  CudaProgram &program_;
  const BandView *band_;
  std::map<unsigned, std::string> axes_;
  std::string group_;
  RowsKernel *rows_;
  std::set<unsigned> bound_; // grid members whose loop encloses the code printed now
  int ownLoops_ = 0;         // the kernel's own loops (not over the grid) around the code printed now
};

// ---------------------------------------------------------------------------------------------
// The persistent printer: a host loop's subtree as one cooperative kernel (map::PersistentForm).

class CudaPersistentPrinter : public IslAstPrinter {
public:
  // `extentOf(band, member)`: the extent of a band member over the params, as C text, if isl gives one.
  using ExtentOf = std::function<std::optional<std::string>(const BandView &, unsigned)>;
  CudaPersistentPrinter(const IslAstPrinter &outer, CodeWriter &w, CudaProgram &program, std::string grid,
                        ExtentOf extentOf)
      : IslAstPrinter(outer, w), program_(program), grid_(std::move(grid)), extentOf_(std::move(extentOf)) {}
  void printSubtree(const isl::ast_node &node) { printNode(node); }

protected:
  std::string loopIndexType() const override { return IndexType; }
  // A repeat loop that stops early, in every thread: iteration k's updates set slot k of the ring of
  // three flags; after the iteration's last barrier every thread reads it, and a thread clears slot k + 1
  // at the start of iteration k, a barrier away from its first setter (iteration k + 1) and from its
  // last readers (the end of iteration k - 2), so that every thread reads the same value.
  std::string resetChanged(const LoopView &loop) const override {
    return "if (blockIdx.x == 0 && threadIdx.x == 0) polyc_changed[polyc::rt::cuda::changedSlot(" +
           loop.iterator + " + 1)] = 0;";
  }
  std::string stopsNow(const LoopView &loop) const override {
    return "!polyc::rt::cuda::loadFlag(polyc_changed[polyc::rt::cuda::changedSlot(" + loop.iterator + ")])";
  }
  // A kernel band: its grid members spread over the grid, then a barrier before what follows.
  void printBand(const BandView &band, const isl::ast_node &body) override {
    const map::BandMapping &mapped = input_.mapping->bands.at(band.index);
    if (mapped.placement != map::Placement::Kernel || kernel_)
      return printNode(body);
    kernel_ = &mapped;
    kernelBandView_ = &band;
    group_ = mapped.persistentGroup;
    w_.comment("Band " + std::to_string(band.index) + " (" + statementList(input_.model, band.statements) + "): " +
               (group_ == 1 ? "a thread" : "a group of " + std::to_string(group_) + " threads") + " per point.");
    std::optional<std::string> extent;
    if (kernel_->gridMembers.size() >= 2)
      extent = extentOf_(band, rowsMember());
    if (extent) {
      // Where the member over the blocks has fewer points than the grid has blocks, several blocks share
      // each of its points and split the next member's points between them (heat-3d at N = 120: 120 of
      // 1056 resident blocks had work; the optical flow's 240 rows). Else a block a point, printed
      // apart: with its constant strides the loops ran faster (jacobi-2d folded, 1300^2: 1.67x).
      w_.openBlock("");
      w_.line("const " + std::string(IndexType) + " " + BlocksAPoint + " = polyc_max(int64_t(1), int64_t(gridDim.x) / " +
              "polyc_max(int64_t(1), " + *extent + "));");
      w_.openBlock("if (" + std::string(BlocksAPoint) + " == 1)");
      printNode(body);
      w_.elseBlock();
      w_.line("const " + std::string(IndexType) + " " + BlockRows + " = " + IndexType + "(gridDim.x) / " + BlocksAPoint +
              ";");
      rows_ = true;
      printNode(body);
      rows_ = false;
      w_.closeBlock();
      w_.closeBlock();
    } else {
      printNode(body);
    }
    kernel_ = nullptr;
    kernelBandView_ = nullptr;
    w_.line(barrier());
  }

  void printFor(const LoopView &loop, const isl::ast_node_for &node) override {
    if (!kernel_ || !loop.band || loop.band->index != kernel_->band)
      return IslAstPrinter::printFor(loop, node);
    const std::vector<unsigned> &grid = kernel_->gridMembers;
    if (grid.empty() || loop.member > grid.back())
      return IslAstPrinter::printFor(loop, node); // a thread's own loop
    if (loop.member < grid.front()) {
      // A sequential member of the kernel band: every iteration ends at a barrier.
      w_.comment(loopComment(loop) + "; in order, a grid barrier after each iteration");
      w_.openBlock(forHeader(loop));
      printNode(node.body());
      w_.line(barrier());
      w_.closeBlock();
      return;
    }
    auto [first, stride, where] = spread(loop.member);
    if (first.empty())
      return IslAstPrinter::printFor(loop, node);
    std::string scale = loop.inc == "1" ? "" : " * " + loop.inc;
    w_.comment(loopComment(loop) + "; spread over " + where);
    w_.openBlock("for (" + std::string(IndexType) + " " + loop.iterator + " = " + loop.init + " + " + first + scale +
                 "; " + loop.cond + "; " + loop.iterator + " += " + stride + scale + ")");
    bound_.insert(loop.member);
    printNode(node.body());
    bound_.erase(loop.member);
    w_.closeBlock();
  }

  void printStatementCall(const StatementCall &call) override {
    // A spread member with no loop on the way here (a degenerate one, see CudaKernelPrinter): the first
    // thread along it runs the instance.
    std::vector<std::string> guards;
    if (kernel_)
      for (unsigned member : kernel_->gridMembers)
        if (!bound_.count(member))
          if (std::string first = std::get<0>(spread(member)); !first.empty())
            guards.push_back(first + " == 0");
    if (!guards.empty()) {
      w_.openBlock("if (" + llvm::join(guards, " && ") + ")");
      printCall(call);
      w_.closeBlock();
      return;
    }
    printCall(call);
  }

private:
  void printCall(const StatementCall &call) {
    const std::string &name = input_.model.statements[call.statement].name;
    if (kernel_ && group_ > 1) {
      program_.groupVariants.insert(call.statement);
      std::vector<std::string> args = call.args;
      args.push_back("polyc::rt::cuda::GroupLayout<" + std::to_string(group_) + ">::lane()");
      w_.line(program_.program + "." + name + "Group<" + std::to_string(group_) + ">(" + llvm::join(args, ", ") +
              ");");
      if (readsEarlierInstances(input_.model, kernelBandView_,
                                false)) // the next instance may read what lane 0 stored
        w_.line("polyc::rt::cuda::syncGroup<" + std::to_string(group_) + ">();");
      return;
    }
    program_.threadVariants.insert(call.statement);
    std::string line = program_.program + "." + name + "(" + llvm::join(call.args, ", ") + ");";
    if (kernel_)
      return w_.line(line);
    // An instance between the kernel bands: one thread computes it, the others wait at the barrier.
    w_.line("if (" + grid_ + ".thread_rank() == 0)");
    w_.indent();
    w_.line(line);
    w_.dedent();
    w_.line(barrier());
  }

  // The barrier between bands: the grid's, or the block's when the kernel runs as one block.
  std::string barrier() const { return "polyc::rt::cuda::stepBarrier(" + grid_ + ");"; }

  // The names of the block-rows layout (reserved spellings: no program's name starts with polyc_).
  static constexpr const char *BlocksAPoint = "polyc_blocksAPoint";
  static constexpr const char *BlockRows = "polyc_blockRows";
  // Blocks, warps and lanes: three grid members, a thread a point.
  bool spreadsOverWarps() const { return kernel_ && kernel_->gridMembers.size() == 3 && group_ == 1; }
  // The member over the rows of blocks: the first of blocks, warps and lanes, else the next to last.
  unsigned rowsMember() const {
    const std::vector<unsigned> &grid = kernel_->gridMembers;
    return spreadsOverWarps() ? grid.front() : grid[grid.size() - 2];
  }

  // Where grid member `member` runs: with one grid member, over every point slot of the grid; else over
  // the blocks, or rows of blocks (BlocksAPoint blocks each; the blocks past the last full row get no
  // point), then the warps and lanes of a block (or row) when there are three members and a thread a
  // point (every thread has work in a step of a cube: heat-3d's innermost over a block's threads left
  // 14k of them working), else the innermost over the point slots of a block (or row), any member further
  // out as every thread's loop (empty `first`).
  std::tuple<std::string, std::string, std::string> spread(unsigned member) const {
    const std::vector<unsigned> &grid = kernel_->gridMembers;
    size_t position = std::find(grid.begin(), grid.end(), member) - grid.begin();
    std::string layout = "polyc::rt::cuda::GroupLayout<" + std::to_string(group_) + ">";
    if (grid.size() == 1)
      return {layout + "::point()", layout + "::points()", "the grid"};
    const std::string index(IndexType), block = index + "(blockIdx.x)", perPoint(BlocksAPoint), rows(BlockRows);
    // Slots of a block (warps or points): the calling thread's first and the stride, over its block or,
    // with rows, over its row of blocks.
    auto slots = [&](const std::string &inBlock, const std::string &perBlock, const std::string &what)
        -> std::tuple<std::string, std::string, std::string> {
      if (!rows_)
        return {inBlock, perBlock, what + " of a block"};
      return {"(" + block + " % " + perPoint + ") * " + perBlock + " + " + inBlock, perPoint + " * " + perBlock,
              what + " of a row of blocks"};
    };
    if (member == rowsMember()) {
      if (!rows_)
        return {block, index + "(gridDim.x)", "the blocks"};
      return {"(" + block + " < " + perPoint + " * " + rows + " ? " + block + " / " + perPoint +
                  " : polyc::rt::cuda::NoPoint<" + index + ">)",
              rows, "rows of blocks"};
    }
    if (spreadsOverWarps()) {
      const std::string warps = index + "(" + std::to_string(ThreadsPerBlock) + " / 32)";
      if (position == 1)
        return slots(index + "(threadIdx.x / 32)", warps, "the warps");
      return {index + "(threadIdx.x % 32)", index + "(32)", "the lanes of a warp"};
    }
    if (position + 1 == grid.size())
      return slots(index + (group_ == 1 ? "(threadIdx.x)" : "(threadIdx.x / " + std::to_string(group_) + ")"),
                   index + "(" + layout + "::PointsPerBlock)", "the point slots");
    return {"", "", ""};
  }

  CudaProgram &program_;
  std::string grid_;
  ExtentOf extentOf_;
  const map::BandMapping *kernel_ = nullptr; // the kernel band being printed
  const BandView *kernelBandView_ = nullptr; // its view
  unsigned group_ = 1;
  std::set<unsigned> bound_; // spread members whose loop encloses the code printed now
  bool rows_ = false;        // printing the rows-of-blocks layout (BlocksAPoint > 1)
};

// ---------------------------------------------------------------------------------------------
// The host printer: the schedule's loops on the host, kernel launches for the bands.

class CudaHostPrinter : public IslAstPrinter {
public:
  CudaHostPrinter(const CodegenInput &input, CodeWriter &w, CudaProgram &program)
      : IslAstPrinter(input, w), program_(program) {}
  CudaHostPrinter(const CudaHostPrinter &outer, CodeWriter &w)
      : IslAstPrinter(outer, w), program_(outer.program_), hostLoops_(outer.hostLoops_), gpu_(outer.gpu_),
        sharedBand_(outer.sharedBand_), ownedLoops_(outer.ownedLoops_) {}

  // --mpi: the arrays of the MPI calls: the device arrays of the run's view, exchanged by RankRows.
  MpiArrays mpiArrays() const {
    MpiArrays arrays{
        input_.model, program_.exprs,
        [this](const model::ArrayInfo &a) { return program_.program + "." + program_.exprs.arrayRef(a); },
        "polyc_rows.", "polyc_rows.hostCopies()"};
    arrays.overlap = {"", "polyc_rows.beginHalo(", "polyc_rows.finishHalos();"};
    return arrays;
  }

protected:
  void printBand(const BandView &band, const isl::ast_node &body) override;
  bool printsStatementsOnce(const BandView &band) const override { return mayComputePointsByGroups(band); }
  void printFor(const LoopView &loop, const isl::ast_node_for &node) override;
  bool printsStepHooks() const override { return true; }
  // The loop on the host: the program's `__device__ int polyc_changed`, cleared before the loop, each
  // iteration's value recorded on the device (polyc/cuda/ChangedFlag.cuh) and read back every iteration,
  // or, where later iterations may run ahead (mayRunAhead), every RunAhead iterations.
  static constexpr int RunAhead = 16;
  std::vector<std::string> untilSetup(const LoopView &) const override { return changedFlagSetup(); }
  std::vector<std::string> changedFlagSetup() const {
    return {"static const polyc::rt::cuda::ChangedFlag polyc_flag(polyc_changed);",
            "polyc_flag.start(" + program_.stream + ");"};
  }
  std::string resetChanged(const LoopView &) const override { return ""; }
  std::string stopsNow(const LoopView &loop) const override {
    std::string combine = input_.mpi ? "polyc::rt::mpi::largestOverRanks" : "polyc::rt::cuda::onThisRank";
    return "polyc_flag.stopAfter(" + loop.iterator + ", " + loop.iterator + " - " + loop.init + ", " +
           std::to_string(mayRunAhead(loop) ? RunAhead : 1) + ", " + program_.stream + ", " + combine + ")";
  }
  void printStatementCall(const StatementCall &call) override;
  void printInstance(const StatementCall &call);
  void narrowLoop(LoopView &loop) const override {
    if (inSharedBlock(loop))
      narrowToRankBlock(loop);
  }

private:
  struct GpuBand {
    const BandView *band;
    std::string group; // "1", a power of two, or "G" inside a run-time dispatch
    AllocationKind kind;
  };

  const map::BandMapping &mappingOf(const BandView &band) const { return input_.mapping->bands.at(band.index); }
  void printHostLoop(const BandView &band, const isl::ast_node &body, const map::BandMapping &mapping);
  void printHostLaunches(const BandView &band, const isl::ast_node &body);
  void printRoundsOrLaunches(const BandView &band, const isl::ast_node &body,
                             const map::BandMapping &mapping);
  void printRoundTiles(const BandView &band, const map::RoundTiles &tiles);
  void printPersistent(const BandView &band, const isl::ast_node &body, const map::PersistentForm &form);
  CapturedCall capturedCall(const BandView &band, const std::string &what, const std::string &prepareGuard,
                            const std::function<void(CudaHostPrinter &)> &print);
  void printReplayed(const BandView &band, const std::string &what,
                     const std::function<void(CudaHostPrinter &)> &launches);
  void printVariant(AllocationKind kind, const BandView &band, const isl::ast_node &body);
  void printFlexibleThenFixed(const BandView &band, const isl::ast_node &body, const std::string &fixedRuns);
  void printMapped(const BandView &band, const isl::ast_node &body, const std::string &group, AllocationKind kind);
  void printFixed(const BandView &band, const isl::ast_node &body);
  void printReduction(const BandView &band, const isl::ast_node &body);
  void printSequential(const BandView &band, const isl::ast_node &body);
  void printProduct(const BandView &band, const map::ProductForm &form);
  bool planFlexible(const BandView &band, FlexiblePlan &plan) const;
  std::string printDecoupledFunctor(unsigned band, const FlexibleVariant &variant);
  std::string decoupledFits(const FlexibleVariant &variant) const;
  void printPipeline(const BandView &band, const map::BandDecomposition &shared);
  void printPipelineStripLaunches(const BandView &band, const map::Pipeline &pipeline);
  bool printFlexible(const BandView &band);
  void launchKernel(const LoopView &loop, const isl::ast_node_for &node);
  std::optional<RowsKernel> planRows(const LoopView &loop, const std::map<unsigned, std::string> &axes);
  std::string slidingRunLength(const ast::Reduction &sum, const ast::IndexVar *slide) const;
  std::string fitInIntCall(const std::string &paramSlack, const std::vector<std::string> &arrays) const;

public:
  std::string indexFitsCall() const;

private:
  std::optional<std::string> interiorRunCondition(const model::Statement &statement, unsigned rowsDim,
                                                  const CudaRowsPlan &plan);
  // While interiorRunCondition prints its condition: the Rows function's names for the first instance
  // and the run's length print as they are (cIdentifier would rename a polyc_ name).
  std::string idName(const std::string &islName) const override {
    if (printingRowsNames_ && (islName == CudaExprPrinter::RowsFirst || islName == CudaExprPrinter::RowsParam))
      return islName;
    return IslAstPrinter::idName(islName);
  }
  std::string printKernel(const LoopView &loop, const isl::ast_node_for &node,
                          const std::map<unsigned, std::string> &axes, RowsKernel *rows, CodeWriter &kw);
  void printLaunch(const LoopView &loop, const std::map<unsigned, std::string> &axes, const std::string &name,
                   const RowsKernel *rows);
  std::string kernelPrologue(CodeWriter &kw, const std::string &group);
  std::string kernelParams() const;
  std::string kernelArgs() const;
  std::optional<std::string> boundingExtent(const BandView &band, unsigned member) const;
  std::string extentOf(const BandView &band, unsigned member);
  bool covering(const LoopView &loop, const std::map<unsigned, std::string> &axes, const RowsKernel *rows);
  std::string paramsExpr(const isl::pw_aff &aff) const;
  std::string wavefrontGroup(const BandView &band) const;
  std::optional<std::string> windowSumLength(const model::Statement &statement, const isl::set &domain) const;
  void planTermTables(FlexibleVariant &variant, const model::Statement &statement, const isl::set &domain,
                      const std::vector<const ast::IndexVar *> &pointVars, const std::vector<std::string> &windowOrder,
                      const std::set<std::string> &staged) const;

  void printShared(const BandView &band, const isl::ast_node &body, const map::BandDecomposition &shared);
  const model::Statement *privatisableScatter() const;
  void launchScatter(const LoopView &loop, const isl::ast_node_for &node,
                     const std::map<unsigned, std::string> &axes, const model::Statement &scatter);
  void printPrivateCopy(CodeWriter &kw, bool before);
  bool privateLaunch_ = false; // printLaunch: the privatised scatter's kernel
  void printSplitBand(const BandView &band, const isl::ast_node &body);
  bool inSharedBlock(const LoopView &loop) const {
    return sharedBand_ >= 0 && loop.band && int(loop.band->index) == sharedBand_ && loop.member == 0;
  }
  // Inside a shared band but outside the loops of the rank's block: instances run on their row's owner.
  bool outsideRankBlock() const { return sharedBand_ >= 0 && ownedLoops_ == 0; }

  CudaProgram &program_;
  std::vector<std::string> hostLoops_; // iterators of the host loops around the code being printed
  std::optional<GpuBand> gpu_;         // the band whose parallel loops become kernels
  int sharedBand_ = -1;                // --mpi: the distributed band being printed
  unsigned ownedLoops_ = 0;            // its member-0 loops (this rank's block) around the code
  bool printingRowsNames_ = false;
  bool printingSplit_ = false; // --mpi: printing a band split by its terms (printSplitBand)
  // The run-time choices around the code being printed (a variant's condition, or its negation): a graph
  // captured in Compute::prepare is captured only where they hold.
  std::vector<std::string> choiceGuards_;
  std::string guardWith(const std::string &condition) const {
    std::vector<std::string> all = choiceGuards_;
    if (!condition.empty())
      all.push_back(condition);
    return llvm::join(all, " && ");
  }
};

std::string CudaHostPrinter::paramsExpr(const isl::pw_aff &aff) const {
  const model::Model &model = input_.model;
  isl::set context = model.context.is_null() ? isl::set(aff.ctx(), "{ : }") : model.context;
  isl::ast_build build = isl::ast_build::from_context(context);
  return expr(build.expr_from(aff));
}

// An upper bound of the number of values band member `member` takes, over all statements of the band
// and all values of the other dimensions: a C expression of the params.
std::optional<std::string> CudaHostPrinter::boundingExtent(const BandView &band, unsigned member) const {
  try {
    isl::union_set domains = input_.model.domains();
    isl::union_map schedule = isl::union_map::from(band.partialSchedule);
    isl::set range = setFromUnion(domains.apply(schedule));
    if (!input_.model.context.is_null())
      range = range.intersect_params(input_.model.context);
    isl::pw_aff extent = dimMax(range, member).sub(dimMin(range, member)).add_constant(isl::val(range.ctx(), 1));
    return paramsExpr(extent);
  } catch (const isl::exception &) {
    return std::nullopt;
  }
}

std::string CudaHostPrinter::extentOf(const BandView &band, unsigned member) {
  if (std::optional<std::string> extent = boundingExtent(band, member))
    return "std::max<int64_t>(1, " + *extent + ")";
  return "int64_t(1) << 20"; // unknown: enough blocks to fill the device, the loop strides over the rest
}

std::string CudaHostPrinter::kernelParams() const {
  std::string params = "const " + program_.indexedDevice() + " " + program_.program;
  for (const std::string &loop : hostLoops_)
    params += ", const " + std::string(IndexType) + " " + loop;
  if (sharedBand_ >= 0)
    params += ", const polyc::rt::mpi::Block polyc_rank";
  return params;
}

std::string CudaHostPrinter::kernelArgs() const {
  std::string args = program_.program;
  for (const std::string &loop : hostLoops_)
    args += ", " + loop;
  if (sharedBand_ >= 0)
    args += ", polyc_rank";
  return args;
}

// The lines every kernel starts with: the params as locals, and the lane in the group.
std::string CudaHostPrinter::kernelPrologue(CodeWriter &kw, const std::string &group) {
  for (auto &param : input_.model.program->params)
    kw.line("[[maybe_unused]] const " + std::string(IndexType) + " " + cIdentifier(param->name) + " = " +
            program_.program + "." + cIdentifier(param->name) + ";");
  if (group != "1")
    kw.line("[[maybe_unused]] const unsigned lane = polyc::rt::cuda::GroupLayout<" + group + ">::lane();");
  return group == "1" ? std::to_string(ThreadsPerBlock) : "polyc::rt::cuda::GroupLayout<" + group + ">::Threads";
}

// The grid axes of a band's loop: the mapping's grid members from this loop on, the innermost on x,
// then y, then z (map::BandMapping::gridMembers).
static std::map<unsigned, std::string> gridAxes(const LoopView &loop, const map::BandMapping &mapping) {
  std::vector<unsigned> members;
  for (unsigned m : mapping.gridMembers)
    if (m >= loop.member)
      members.push_back(m);
  std::map<unsigned, std::string> axes;
  const char *axisNames[] = {"x", "y", "z"};
  for (unsigned k = 0; k < 3 && k < members.size(); ++k)
    axes[members[members.size() - 1 - k]] = axisNames[k];
  return axes;
}

// The bound E of `loop`'s condition when it is `iterator < E` or `iterator <= E` (isl's usual forms),
// and whether E is included.
struct LoopBound {
  std::string bound;
  bool inclusive = false;
};
static std::optional<LoopBound> loopBound(const LoopView &loop) {
  llvm::StringRef cond(loop.cond);
  for (const char *op : {" <= ", " < "})
    if (cond.consume_front(loop.iterator + op))
      return LoopBound{cond.str(), op[2] == '='};
  return std::nullopt;
}

// The values `loop` takes from its iterator's current value on, as a C expression.
static std::optional<std::string> valuesLeft(const LoopView &loop) {
  std::optional<LoopBound> end = loopBound(loop);
  if (!end)
    return std::nullopt;
  return "(" + end->bound + ") - " + loop.iterator + (end->inclusive ? " + 1" : "");
}

// `polyc::rt::cuda::fitInInt({...})` of the params (each plus `paramSlack` unless it is empty) and of the
// sizes of `arrays`, each value once: what generated code that indexes in int needs to fit.
std::string CudaHostPrinter::fitInIntCall(const std::string &paramSlack,
                                          const std::vector<std::string> &arrays) const {
  const model::Model &model = input_.model;
  std::vector<std::string> fit;
  for (auto &param : model.program->params)
    fit.push_back(cIdentifier(param->name) + (paramSlack.empty() ? "" : " + " + paramSlack));
  for (const std::string &name : arrays)
    if (std::string size = program_.exprs.storageSize(*model.findArray(name)); !llvm::is_contained(fit, size))
      fit.push_back(size);
  return "polyc::rt::cuda::fitInInt({" + llvm::join(fit, ", ") + "})";
}

// `polyc::rt::cuda::indexFitsInt({...}, {...})` for the Compute class: the params, the bounds of every
// statement's dimensions and of the schedule's, as host expressions of the params, and every array's
// size; "false" (kernels index in int64_t) where isl gives no finite bound.
std::string CudaHostPrinter::indexFitsCall() const {
  const model::Model &model = input_.model;
  std::vector<std::string> values, sizes;
  auto add = [](std::vector<std::string> &list, std::string text) {
    if (!llvm::is_contained(list, text))
      list.push_back(std::move(text));
  };
  for (auto &param : model.program->params)
    add(values, cIdentifier(param->name));
  auto addBounds = [&](isl::set set) {
    if (!model.context.is_null())
      set = set.intersect_params(model.context);
    if (set.is_empty())
      return true;
    for (unsigned d = 0; d < unsigned(set.tuple_dim()); ++d)
      for (isl::pw_aff bound : {dimMin(set, d), dimMax(set, d)}) {
        if (isl_pw_aff_involves_nan(bound.get()) != isl_bool_false)
          return false;
        add(values, paramsExpr(bound));
      }
    return true;
  };
  try {
    bool bounded = true;
    for (const model::Statement &statement : model.statements)
      bounded = bounded && addBounds(statement.domain);
    model.domains().apply(input_.schedule.scheduleMap).foreach_set([&](isl::set set) {
      bounded = bounded && addBounds(set);
    });
    if (!bounded)
      return "false";
  } catch (const isl::exception &) {
    return "false";
  }
  for (const model::ArrayInfo &array : model.arrays)
    add(sizes, program_.exprs.storageSize(array));
  return "polyc::rt::cuda::indexFitsInt({" + llvm::join(values, ", ") + "}, {" + llvm::join(sizes, ", ") + "})";
}

// Whether a data-parallel band's kernel computes RowsPerThread points a thread (CudaStatementMode::Rows):
// a band of one statement whose value is one sum that slides along the statement dimension of the loop
// mapped to the grid's y axis (TermTables.h, slidingWindow), over a box domain, so that the points a
// thread takes are consecutive and all in the domain.
std::optional<RowsKernel> CudaHostPrinter::planRows(const LoopView &loop,
                                                    const std::map<unsigned, std::string> &axes) {
  const BandView &band = *gpu_->band;
  auto y = axes.find(loop.member);
  if (gpu_->group != "1" || band.statements.size() != 1 || y == axes.end() || y->second != "y" ||
      loop.inc != "1" || program_.splitOf(band.statements.front()))
    return std::nullopt;
  const model::Model &model = input_.model;
  const model::Statement &statement = model.statements[band.statements.front()];
  auto *sum = llvm::dyn_cast<ast::Reduction>(statement.equation->rhs.get());
  std::optional<std::string> count = valuesLeft(loop);
  std::vector<std::string> dims = program_.exprs.dimNames(statement);
  auto dim = llvm::find(dims, loop.iterator);
  if (!sum || !count || dim == dims.end() || unsigned(dim - dims.begin()) < statement.repeatDims)
    return std::nullopt;
  isl::set domain = statement.domain;
  if (!model.context.is_null())
    domain = domain.intersect_params(model.context);
  if (isl_set_is_box(domain.coalesce().get()) != isl_bool_true)
    return std::nullopt;
  std::vector<const ast::IndexVar *> pointVars;
  for (const auto &var : statement.equation->indexVars)
    pointVars.push_back(var.get());
  unsigned d = unsigned(dim - dims.begin());
  std::set<std::string> invariant; // the arrays the kernel does not write
  for (const model::ArrayInfo &array : model.arrays)
    if (array.name != statement.write.array)
      invariant.insert(array.name);
  std::optional<SlidingWindow> window =
      slidingWindow(*sum, pointVars, pointVars[d - statement.repeatDims], invariant, *model.program);
  if (!window)
    return std::nullopt;
  // The Rows variant computes in int: the params (with room for a thread's points past the last) and
  // every array's size must fit.
  std::vector<std::string> arrays;
  for (const model::ArrayInfo &array : model.arrays)
    arrays.push_back(array.name);
  CudaRowsPlan plan{*dim, sum, *window, std::nullopt};
  plan.interior = interiorRunCondition(statement, d, plan);
  return RowsKernel{band.statements.front(),
                    d,
                    loop.iterator,
                    *count,
                    plan,
                    slidingRunLength(*sum, window->variable),
                    fitInIntCall(std::to_string(RowsPerThread), arrays)};
}

// The steps of a run of `slide`, one of `sum`'s variables, as a host expression: its range's bounds
// mention params alone (slidingWindow's condition).
std::string CudaHostPrinter::slidingRunLength(const ast::Reduction &sum, const ast::IndexVar *slide) const {
  for (const ast::RangeBinding &binding : sum.bindings)
    for (const auto &var : binding.vars)
      if (var.get() == slide)
        return "(" + program_.exprs.paramIndex(*binding.hi) + ") - (" +
               program_.exprs.paramIndex(*binding.lo) + ")";
  assert(false && "the sliding variable is one of the sum's");
  return "0";
}

// The condition under which all polyc_R instances of a thread's run (from polyc_first along dimension
// `rowsDim`) need none of the bounds tests that the Rows variant prints, in the terms of the Rows function
// (CudaRowsPlan::interior). isl decides it from the points where each test can fail, which the expression
// printer records while it prints the variant aside. None when every run may need a test, or no run does.
std::optional<std::string> CudaHostPrinter::interiorRunCondition(const model::Statement &statement,
                                                                 unsigned rowsDim, const CudaRowsPlan &plan) {
  CudaExprPrinter &exprs = program_.exprs;
  const CudaStatementMode mode = exprs.mode;
  const CudaRowsPlan rows = exprs.rows;
  exprs.mode = CudaStatementMode::Rows;
  exprs.rows = plan;
  CodeWriter aside;
  exprs.startGuardRecord();
  exprs.printRowsStatement(statement, aside);
  ExprPrinter::GuardRecord guards = exprs.finishGuardRecord();
  exprs.mode = mode;
  exprs.rows = rows;
  if (!guards.placed || !guards.points)
    return std::nullopt;
  const model::Model &model = input_.model;
  std::vector<std::string> names = exprs.dimNames(statement);
  names[rowsDim] = CudaExprPrinter::RowsFirst;
  try {
    isl::set domain = isl::manage(isl_set_reset_tuple_id(statement.domain.copy()));
    if (!model.context.is_null())
      domain = domain.intersect_params(model.context);
    std::vector<std::string> params;
    for (unsigned k = 0; k < unsigned(isl_set_dim(domain.get(), isl_dim_param)); ++k)
      params.push_back(isl_set_get_dim_name(domain.get(), isl_dim_param, k));
    if (llvm::is_contained(params, CudaExprPrinter::RowsParam) || llvm::is_contained(params, CudaExprPrinter::RowsFirst))
      return std::nullopt;
    // A run: from first instance p to p + q along rowsDim, for q in [0, polyc_R).
    std::string from, to, along;
    for (unsigned k = 0; k < names.size(); ++k) {
      std::string p = "p" + std::to_string(k), x = "x" + std::to_string(k);
      from += (k ? ", " : "") + p;
      to += (k ? ", " : "") + x;
      along += " and " + x + " = " + p + (k == rowsDim ? " + q" : "");
    }
    params.push_back(CudaExprPrinter::RowsParam);
    const std::string space = "[" + llvm::join(params, ", ") + "] -> ";
    isl::map run(domain.ctx(), space + "{ [" + from + "] -> [" + to + "] : exists (q : 0 <= q < " +
                                   CudaExprPrinter::RowsParam + along + ") }");
    isl::set outside = guards.points->intersect(domain).unite(domain.complement());
    isl::set longRuns(domain.ctx(), space + "{ : " + CudaExprPrinter::RowsParam + " >= 1 }");
    isl::set firsts = domain.subtract(run.intersect_range(outside).domain()).intersect_params(longRuns);
    if (firsts.is_empty())
      return std::nullopt;
    // The set's dimensions as params named as the Rows function names them, for isl to print the test.
    auto named = [&](isl::set set) {
      for (unsigned k = 0; k < names.size(); ++k)
        set = isl::manage(isl_set_set_dim_name(set.release(), isl_dim_set, k, names[k].c_str()));
      unsigned first = unsigned(isl_set_dim(set.get(), isl_dim_param));
      return isl::manage(isl_set_move_dims(set.release(), isl_dim_param, first, isl_dim_set, 0, unsigned(names.size())));
    };
    isl::ast_build build = isl::ast_build::from_context(named(domain).intersect_params(longRuns.params()));
    printingRowsNames_ = true;
    std::string condition = expr(build.expr_from(named(firsts)));
    printingRowsNames_ = false;
    return condition;
  } catch (const isl::exception &) {
    printingRowsNames_ = false;
    return std::nullopt;
  }
}

void CudaHostPrinter::launchKernel(const LoopView &loop, const isl::ast_node_for &node) {
  std::map<unsigned, std::string> axes = gridAxes(loop, mappingOf(*gpu_->band));
  if (const model::Statement *scatter = privatisableScatter())
    return launchScatter(loop, node, axes, *scatter);
  if (std::optional<RowsKernel> rows = planRows(loop, axes)) {
    CodeWriter kernel;
    std::string name = printKernel(loop, node, axes, &*rows, kernel);
    if (!rows->argsMismatch) {
      program_.rowsVariants[rows->statement] = rows->plan;
      program_.kernels.append(kernel);
      w_.comment("Points a thread: " + std::to_string(RowsPerThread) + " along " + rows->plan.dim +
                 " when the indices fit in int, else one.");
      w_.openBlock("if (" + rows->fits + ")");
      printLaunch(loop, axes, name, &*rows);
      w_.elseBlock();
      printLaunch(loop, axes, printKernel(loop, node, axes, nullptr, program_.kernels), nullptr);
      w_.closeBlock();
      return;
    }
  }
  printLaunch(loop, axes, printKernel(loop, node, axes, nullptr, program_.kernels), nullptr);
}

// A band of one scatter, a thread a point, at its loop's outermost member: it may add into a copy of its
// array a block (CudaProgram::privateVariants).
const model::Statement *CudaHostPrinter::privatisableScatter() const {
  const std::optional<unsigned> scatter = mappingOf(*gpu_->band).privatisedScatter;
  if (!scatter || gpu_->group != "1" || program_.partialPass)
    return nullptr;
  return &input_.model.statements[*scatter];
}

// A scatter's two kernels and the run-time choice between them (polyc::rt::cuda::privateHistogram):
// atomics on the array, or on a block's copy of it in shared memory, added to the array at the end.
void CudaHostPrinter::launchScatter(const LoopView &loop, const isl::ast_node_for &node,
                                    const std::map<unsigned, std::string> &axes,
                                    const model::Statement &scatter) {
  const model::ArrayInfo &array = *input_.model.findArray(scatter.write.array);
  const std::string direct = printKernel(loop, node, axes, nullptr, program_.kernels);
  program_.privatePass = true;
  const std::string copy = printKernel(loop, node, axes, nullptr, program_.kernels);
  program_.privatePass = false;
  const std::string elements = program_.exprs.storageSize(array);
  std::string points;
  for (auto &[member, axis] : axes)
    points += (points.empty() ? "" : " * ") + ("std::max<int64_t>(0, " + extentOf(*gpu_->band, member) + ")");
  w_.comment(scatter.name + " adds to " + scatter.write.array +
             " a block's copy at a time where the copy fits in shared memory and the points are many.");
  w_.openBlock("");
  w_.line("const int64_t polyc_bytes = int64_t(" + elements + ") * int64_t(sizeof(" +
          program_.exprs.typeName(array.decl->elemType) + "));");
  w_.openBlock("if (polyc::rt::cuda::privateHistogram(polyc_bytes, " + elements + ", " +
               (points.empty() ? "1" : points) + "))");
  privateLaunch_ = true;
  printLaunch(loop, axes, copy, nullptr);
  privateLaunch_ = false;
  w_.elseBlock();
  printLaunch(loop, axes, direct, nullptr);
  w_.closeBlock();
  w_.closeBlock();
}

// A privatised scatter's kernel (program_.privatePass): the block's copy of the array zeroed in shared
// memory before its points, added to the array after them, one atomic an element that changed.
void CudaHostPrinter::printPrivateCopy(CodeWriter &kw, bool before) {
  const model::Statement &scatter = *privatisableScatter();
  const model::ArrayInfo &array = *input_.model.findArray(scatter.write.array);
  const std::string type = program_.exprs.typeName(array.decl->elemType);
  const std::string copy = CudaExprPrinter::PrivateCopy;
  if (before) {
    kw.line("extern __shared__ __align__(16) unsigned char polyc_shared_bytes[];");
    kw.line(type + " *const " + copy + " = reinterpret_cast<" + type + " *>(polyc_shared_bytes);");
    kw.line("const int64_t polyc_elements = " + program_.exprs.storageSize(array) + ";");
    kw.line(
        "const unsigned polyc_thread = threadIdx.y * blockDim.x + threadIdx.x, polyc_threads = blockDim.x * "
        "blockDim.y;");
    kw.line("for (int64_t polyc_k = polyc_thread; polyc_k < polyc_elements; polyc_k += polyc_threads)");
    kw.line("  " + copy + "[polyc_k] = 0;");
    kw.line("__syncthreads();");
    return;
  }
  kw.line("__syncthreads();");
  kw.openBlock("for (int64_t polyc_k = polyc_thread; polyc_k < polyc_elements; polyc_k += polyc_threads)");
  kw.line("if (" + copy + "[polyc_k] != 0)");
  kw.line("  atomicAdd(&" + program_.program + "." + program_.exprs.arrayRef(array) + "[polyc_k], " + copy +
          "[polyc_k]);");
  kw.closeBlock();
}

// Whether a kernel of the group size `group` spreads its y member over the rows of 2-D blocks
// (polyc::rt::cuda::tileFor, when it has one): a thread a point, not the Rows variant.
static bool tiled(const std::string &group, const RowsKernel *rows) { return group == "1" && !rows; }

// How a kernel's threads share its points, for comments.
static std::string kernelThreads(const std::string &group, const RowsKernel *rows) {
  if (rows)
    return std::to_string(RowsPerThread) + " points a thread along " + rows->plan.dim;
  return group == "1" ? "one thread per point" : "a group of " + group + " threads per point";
}

// Prints the kernel of the band's loop `loop` into `kw` and returns its name.
std::string CudaHostPrinter::printKernel(const LoopView &loop, const isl::ast_node_for &node,
                                         const std::map<unsigned, std::string> &axes, RowsKernel *rows,
                                         CodeWriter &kw) {
  const BandView &band = *gpu_->band;
  const std::string &group = gpu_->group;
  std::string name = program_.globalNames.fresh("band" + std::to_string(band.index) +
                                                (rows                   ? "Rows"
                                                 : program_.privatePass ? "Private"
                                                                        : "Kernel"));
  kw.blank();
  std::string what = kernelThreads(group, rows);
  kw.comment("Band " + std::to_string(band.index) + " (" + statementList(input_.model, band.statements) + "), " +
             describeKind(gpu_->kind) + ": " + what + ".");
  bool templated = group != "1";
  // A privatised kernel's threads take many points each, on a grid capped at privateBlocks().
  const bool covers = !program_.privatePass && covering(loop, axes, rows);
  std::vector<std::string> templateParams;
  if (templated)
    templateParams.push_back("unsigned G");
  if (rows)
    templateParams.push_back("int " + std::string(CudaExprPrinter::RowsRun));
  if (covers)
    templateParams.push_back("bool polyc_covers");
  kw.line(kernelTemplate(templateParams));
  std::string kernelGroup = templated ? "G" : "1";
  std::string threads = kernelGroup == "1" ? std::to_string(ThreadsPerBlock)
                                           : "polyc::rt::cuda::GroupLayout<G>::Threads";
  kw.openBlock("__global__ void __launch_bounds__(" + threads + ") " + name + "(" + kernelParams() + ")");
  kernelPrologue(kw, kernelGroup);
  CudaKernelPrinter kp(*this, kw, program_, &band, axes, kernelGroup, rows);
  kp.covering = covers;
  if (covers)
    kw.comment(
        "polyc_covers: the grid has a thread for every point along each axis, so each loop over an axis "
        "runs once.");
  if (outsideRankBlock() && !inSharedBlock(loop))
    kp.rowDims = &program_.decomposition->bands.at(size_t(sharedBand_)).statementDims;
  for (auto &[member, axis] : axes) {
    std::string upper(1, llvm::toUpper(axis[0]));
    std::string first = kp.names().fresh("first" + upper);
    std::string stride = kp.names().fresh("stride" + upper);
    std::string index, step;
    if (axis == "x") {
      index = kernelGroup == "1" ? std::string(IndexType) + "(blockIdx.x) * blockDim.x + threadIdx.x"
                                 : "polyc::rt::cuda::GroupLayout<G>::point()";
      step = kernelGroup == "1" ? std::string(IndexType) + "(gridDim.x) * blockDim.x"
                                : "polyc::rt::cuda::GroupLayout<G>::points()";
    } else if (axis == "y" && tiled(kernelGroup, rows)) {
      index = std::string(IndexType) + "(blockIdx.y) * blockDim.y + threadIdx.y";
      step = std::string(IndexType) + "(gridDim.y) * blockDim.y";
    } else {
      index = std::string(IndexType) + "(blockIdx." + axis + ")";
      step = std::string(IndexType) + "(gridDim." + axis + ")";
      if (rows && member == loop.member) {
        index += " * " + std::to_string(RowsPerThread);
        step += " * " + std::to_string(RowsPerThread);
      }
    }
    kw.line("const " + std::string(IndexType) + " " + first + " = " + index + ", " + stride + " = " + step + ";");
    kp.axisNames[axis] = {first, stride};
  }
  if (program_.privatePass)
    printPrivateCopy(kw, true);
  kp.printKernelLoop(loop, node);
  if (program_.privatePass)
    printPrivateCopy(kw, false);
  kw.closeBlock();
  return name;
}

// The launch of kernel `name`. The outermost mapped loop's bounds use only host values: its exact trip
// count sizes the grid (one hyperplane's points for a fixed wavefront), divided by the points a thread
// takes along it; inner ones use the band's bounding box.
void CudaHostPrinter::printLaunch(const LoopView &loop, const std::map<unsigned, std::string> &axes,
                                  const std::string &name, const RowsKernel *rows) {
  const BandView &band = *gpu_->band;
  const std::string &group = gpu_->group;
  // The outermost mapped loop's exact trip count, when its condition has isl's usual form.
  auto tripCount = [&]() -> std::optional<std::string> {
    std::optional<LoopBound> end = loopBound(loop);
    if (!end)
      return std::nullopt;
    std::string count = "(" + end->bound + ") - (" + loop.init + ")" + (end->inclusive ? " + 1" : "");
    if (loop.inc != "1")
      count = "(" + count + " + " + loop.inc + " - 1) / " + loop.inc;
    return "std::max<int64_t>(1, " + count + ")";
  };
  auto extentFor = [&](const char *axis) -> std::string {
    for (auto &[member, a] : axes) {
      if (a != axis)
        continue;
      if (member != loop.member)
        return extentOf(band, member);
      std::optional<std::string> count = tripCount();
      std::string extent = count ? *count : extentOf(band, member);
      if (rows)
        extent =
            "(" + extent + " + " + std::to_string(RowsPerThread - 1) + ") / " + std::to_string(RowsPerThread);
      return extent;
    }
    return "1";
  };
  std::string pointsPerBlock = group == "1" ? std::to_string(ThreadsPerBlock)
                                            : "polyc::rt::cuda::GroupLayout<" + group + ">::PointsPerBlock";
  std::string launchThreads = group == "1" ? std::to_string(ThreadsPerBlock)
                                           : "polyc::rt::cuda::GroupLayout<" + group + ">::Threads";

  std::string what = kernelThreads(group, rows);
  w_.comment(loopComment(loop) + ": kernel " + name + " (" + what + ")");
  w_.openBlock("");
  std::string grid = "grid", covers;
  if (tiled(group, rows) && extentFor("y") != "1") {
    w_.line("const polyc::rt::cuda::Tile tile = polyc::rt::cuda::tileFor(" + extentFor("x") + ", " +
            extentFor("y") + ", " + extentFor("z") + ");");
    grid = "tile.grid";
    launchThreads = "tile.block";
    covers = "tile.covers";
  } else {
    w_.line("const dim3 grid = polyc::rt::cuda::gridFor(" + extentFor("x") + ", " + pointsPerBlock + ", " +
            extentFor("y") + ", " + extentFor("z") + ");");
    covers = "polyc::rt::cuda::gridCovers(grid, " + extentFor("x") + ", " + pointsPerBlock + ", " +
             extentFor("y") + ", " + extentFor("z") + ")";
  }
  std::string sharedBytes = "0";
  if (privateLaunch_) { // a privatised scatter: its copy in dynamic shared memory, a capped grid
    w_.line("const dim3 polyc_private_grid = polyc::rt::cuda::privateGrid(" + grid + ");");
    grid = "polyc_private_grid";
    sharedBytes = "size_t(polyc_bytes)";
  }
  auto launch = [&](const std::string &kernel) {
    w_.line(kernel + "<<<" + grid + ", " + launchThreads + ", " + sharedBytes + ", " + program_.stream +
            ">>>(" + kernelArgs() + ");");
    w_.line("POLYC_CUDA_CHECK_LAUNCH(\"" + name + "\");");
  };
  if (rows) {
    w_.comment(
        "The kernel built for the run's length when it has at most polyc::rt::cuda::SlidingRunMax steps.");
    w_.openBlock("polyc::rt::cuda::withSlidingRun(" + rows->runLength + ", [&](auto polyc_run)");
    std::vector<std::string> args{"decltype(polyc_run)::value"};
    launch(kernelInstance(name, args));
    w_.closeBlock(");");
  } else if (!privateLaunch_ && covering(loop, axes, rows)) {
    w_.openBlock("if (" + covers + ")");
    launch(kernelInstance(name, {"true"}));
    w_.elseBlock();
    launch(kernelInstance(name, {"false"}));
    w_.closeBlock();
  } else {
    launch(group != "1" ? kernelInstance(name, {group}) : kernelInstance(name));
  }
  w_.closeBlock();
}

// Whether the kernel at `loop` has an instance for a grid that covers its points (polyc::rt::cuda::
// gridCovers): a thread a point (not a group, not the Rows variant), and every axis' extent known (the
// outermost loop's trip count or the band's bounding box), so that the host can tell.
bool CudaHostPrinter::covering(const LoopView &loop, const std::map<unsigned, std::string> &axes,
                               const RowsKernel *rows) {
  if (gpu_->group != "1" || rows)
    return false;
  for (auto &[member, axis] : axes)
    if (!(member == loop.member && loopBound(loop)) && !boundingExtent(*gpu_->band, member))
      return false;
  return true;
}

void CudaHostPrinter::printFor(const LoopView &loop, const isl::ast_node_for &node) {
  if (gpu_ && loop.band && loop.band->index == gpu_->band->index && loop.coincident && gpu_->band->band)
    return launchKernel(loop, node);
  hostLoops_.push_back(loop.iterator);
  ownedLoops_ += inSharedBlock(loop);
  IslAstPrinter::printFor(loop, node);
  ownedLoops_ -= inSharedBlock(loop);
  hostLoops_.pop_back();
}

// A statement instance met on the host, outside every parallel loop: one block computes it. Under MPI,
// one whose sum the ranks split by its terms: its partial value first, combined across the ranks, then
// the statement with the combined value.
void CudaHostPrinter::printStatementCall(const StatementCall &call) {
  const map::TermSplit *split = program_.splitOf(call.statement);
  if (!split)
    return printInstance(call);
  if (split->band >= 0 || program_.partialPass)
    return program_.fail("internal error: statement " + input_.model.statements[call.statement].name +
                         ", split by its terms, met outside its band");
  const model::Statement &statement = input_.model.statements[call.statement];
  program_.partialPass = true;
  printInstance(call);
  program_.partialPass = false;
  w_.line("polyc_rows.combineValues(" + program_.program + "." + splitBufferName(statement) + ", 1, " +
          combineOperation(*statement.reductions[0].reduction) + ");");
  printInstance(call);
}

void CudaHostPrinter::printInstance(const StatementCall &call) {
  const model::Statement &statement = input_.model.statements[call.statement];
  std::string name = program_.globalNames.fresh(statement.name + (program_.partialPass ? "Partial" : "") + "Instance");
  // A split statement's instance after the combine has no sum left: one thread.
  bool grouped = hasReduction(statement) && (program_.partialPass || !program_.splitOf(call.statement));
  std::string group = grouped ? "256" : "1";
  CodeWriter &kw = program_.kernels;
  kw.blank();
  kw.comment(statement.name + ": one instance" + (program_.partialPass ? "'s partial value (this rank's terms)" : "") +
             ", " +
             (grouped ? std::string("its reductions over a block of 256 threads") : std::string("one thread")) +
             ".");
  std::string params = kernelParams();
  for (size_t k = 0; k < call.args.size(); ++k)
    params += ", const " + std::string(IndexType) + " polyc_arg" + std::to_string(k);
  kw.line(kernelTemplate({}));
  kw.openBlock("__global__ void __launch_bounds__(" + std::string(grouped ? "256" : "1") + ") " + name + "(" + params +
               ")");
  kernelPrologue(kw, group);
  std::vector<std::string> args;
  for (size_t k = 0; k < call.args.size(); ++k)
    args.push_back("polyc_arg" + std::to_string(k));
  if (grouped)
    args.push_back("lane");
  kw.line(program_.program + "." + program_.statementFunction(call.statement, grouped) + (grouped ? "<256>" : "") +
          "(" + llvm::join(args, ", ") + ");");
  kw.closeBlock();
  std::string launchArgs = kernelArgs();
  for (const std::string &a : call.args)
    launchArgs += ", " + a;
  const bool guarded = outsideRankBlock();
  if (guarded)
    w_.openBlock("if (" +
                 ownsRowCondition(call.args.at(
                     program_.decomposition->bands.at(size_t(sharedBand_)).statementDims.at(call.statement))) +
                 ")");
  w_.line(kernelInstance(name) + "<<<1, " + std::string(grouped ? "256" : "1") + ", 0, " + program_.stream + ">>>(" +
          launchArgs + ");");
  w_.line("POLYC_CUDA_CHECK_LAUNCH(\"" + name + "\");");
  if (guarded)
    w_.closeBlock();
}

void CudaHostPrinter::printBand(const BandView &band, const isl::ast_node &body) {
  const map::Decomposition *decomposition = program_.decomposition;
  if (decomposition && sharedBand_ < 0 && !gpu_ && band.index < decomposition->bands.size() &&
      decomposition->bands[band.index].distributed)
    return printShared(band, body, decomposition->bands[band.index]);
  if (!printingSplit_ && !gpu_ && !bandSplits(program_.decomposition, band.index).empty())
    return printSplitBand(band, body);
  const allocate::BandAllocation *a = band.allocation;
  const map::BandMapping &mapped = mappingOf(band);
  if (mapped.placement == map::Placement::HostLoop)
    return printHostLoop(band, body, mapped);
  if (mapped.placement == map::Placement::SingleThread)
    return printVariant(AllocationKind::Sequential, band, body);
  if (mapped.product)
    return printProduct(band, *mapped.product);
  if (mapped.computedIn >= 0)
    return w_.comment("Band " + std::to_string(band.index) + " (" +
                      statementList(input_.model, band.statements) + "): computed by band " +
                      std::to_string(mapped.computedIn) + "'s matrix product.");
  if (!a) {
    bool anyParallel = band.band && llvm::is_contained(band.band->coincident, true);
    return printVariant(anyParallel ? AllocationKind::DataParallel : AllocationKind::Sequential, band, body);
  }
  if (!a->runtimeCondition.empty() && a->otherwise) {
    bool wavefronts = (a->kind == AllocationKind::FlexibleWavefront && *a->otherwise == AllocationKind::FixedWavefront) ||
                      (a->kind == AllocationKind::FixedWavefront && *a->otherwise == AllocationKind::FlexibleWavefront);
    w_.comment("Band " + std::to_string(band.index) + ": " + describeKind(a->kind) + " if " + a->runtimeCondition +
               ", else " + describeKind(*a->otherwise) +
               (wavefronts ? " (POLYC_CUDA_WAVEFRONT=fixed|flexible overrides the choice)." : "."));
    std::string condition = "(" + spellParams(a->runtimeCondition, *input_.model.program) + ")";
    if (wavefronts) {
      std::string flexibleWhen = a->kind == AllocationKind::FlexibleWavefront ? condition : "!" + condition;
      condition = "wavefront == polyc::rt::cuda::WavefrontOverride::Flexible || (wavefront == "
                  "polyc::rt::cuda::WavefrontOverride::Auto && " +
                  flexibleWhen + ")";
      w_.openBlock("if (" + condition + ")");
      printFlexibleThenFixed(band, body, "!(" + condition + ")");
      return;
    }
    w_.openBlock("if " + condition);
    choiceGuards_.push_back(condition);
    printVariant(a->kind, band, body);
    choiceGuards_.back() = "!" + condition;
    w_.elseBlock();
    printVariant(*a->otherwise, band, body);
    choiceGuards_.pop_back();
    w_.closeBlock();
    return;
  }
  if (a->kind == AllocationKind::FlexibleWavefront) {
    w_.comment("Band " + std::to_string(band.index) +
               ": flexible wavefront (POLYC_CUDA_WAVEFRONT=fixed runs the fixed one instead).");
    w_.openBlock("if (wavefront != polyc::rt::cuda::WavefrontOverride::Fixed)");
    printFlexibleThenFixed(band, body, "wavefront == polyc::rt::cuda::WavefrontOverride::Fixed");
    return;
  }
  printVariant(a->kind, band, body);
}

// A band whose reductions the ranks split by their terms (map::TermSplit): its kernels compute each
// rank's partial values into the device buffers, the buffers are combined across the ranks (an
// all-reduce on the stream), then data-parallel kernels compute the statements with the combined values
// (no sum left in them).
void CudaHostPrinter::printSplitBand(const BandView &band, const isl::ast_node &body) {
  w_.comment("Band " + std::to_string(band.index) + ": the MPI ranks split its reductions by their terms; " +
             "each rank's partial values first, combined across the ranks, then the statements with them.");
  printingSplit_ = program_.partialPass = true;
  printBand(band, body);
  program_.partialPass = false;
  for (const map::TermSplit *split : bandSplits(program_.decomposition, band.index)) {
    const model::Statement &statement = input_.model.statements[split->statement];
    w_.line("polyc_rows.combineValues(" + program_.program + "." + splitBufferName(statement) + ", " +
            splitBufferSize(*split, input_.model, program_.exprs) + ", " +
            combineOperation(*statement.reductions[0].reduction) + ");");
  }
  printVariant(AllocationKind::DataParallel, band, body);
  printingSplit_ = false;
}

// A band the MPI ranks share (map::Decomposition): this rank's kernels cover its block of member 0
// (narrowLoop; the block is a kernel argument), then the rows they wrote go to the ranks that read them,
// through host memory.
void CudaHostPrinter::printShared(const BandView &band, const isl::ast_node &body,
                                  const map::BandDecomposition &shared) {
  sharedBand_ = int(band.index);
  printSharedBand(w_, band.index, shared, mpiArrays(), [&] {
    if (shared.pipeline)
      printPipeline(band, shared);
    else
      printBand(band, body);
  });
  sharedBand_ = -1;
}

// The branches of a wavefront band's choice, the flexible one's open: the flexible wavefront, then, under
// `fixedRuns`, the fixed one. Compute::prepare captures the fixed wavefront's graph only where
// `fixedRuns` holds, not a graph of H + W - 1 launches that never runs (its time and memory; the IIR's
// flexible run timed the same with it and without it, within run-to-run noise, on an H200). Where the
// flexible wavefront falls back on the fixed one (its windows do not fit), the graph is captured when it
// first runs.
void CudaHostPrinter::printFlexibleThenFixed(const BandView &band, const isl::ast_node &body,
                                             const std::string &fixedRuns) {
  choiceGuards_.push_back("false");
  printVariant(AllocationKind::FlexibleWavefront, band, body);
  choiceGuards_.back() = fixedRuns;
  w_.elseBlock();
  printVariant(AllocationKind::FixedWavefront, band, body);
  choiceGuards_.pop_back();
  w_.closeBlock();
}

void CudaHostPrinter::printVariant(AllocationKind kind, const BandView &band, const isl::ast_node &body) {
  auto verbose = [&](AllocationKind ran) {
    w_.verbatim("if (polyc::rt::cuda::verbose())\n  std::fprintf(stderr, \"polyc: band " + std::to_string(band.index) +
                " (" + statementList(input_.model, band.statements) + "): " + describeKind(ran) + "\\n\");");
  };
  switch (kind) {
  case AllocationKind::FlexibleWavefront:
    if (printFlexible(band)) {
      // printFlexible leaves the branch for windows that do not fit open: the fixed wavefront.
      verbose(AllocationKind::FixedWavefront);
      printFixed(band, body);
      w_.closeBlock();
      w_.closeBlock();
      return;
    }
    verbose(AllocationKind::FixedWavefront);
    return printFixed(band, body);
  case AllocationKind::FixedWavefront:
    verbose(kind);
    return printFixed(band, body);
  case AllocationKind::Reduction:
    verbose(kind);
    return printReduction(band, body);
  case AllocationKind::DataParallel:
    verbose(kind);
    return printMapped(band, body, "1", kind);
  case AllocationKind::Sequential:
    verbose(kind);
    return printSequential(band, body);
  }
}

// A kernel band. Its members before the grid members are loops on the host, a launch each: at the top
// level, captured into a CUDA graph when they have at most GraphIterationsMax iterations.
void CudaHostPrinter::printMapped(const BandView &band, const isl::ast_node &body, const std::string &group,
                                  AllocationKind kind) {
  if (!band.band)
    return printSequential(band, body);
  auto launches = [&](CudaHostPrinter &printer) {
    std::optional<GpuBand> saved = printer.gpu_;
    printer.gpu_ = GpuBand{&band, group, kind};
    printer.printNode(body);
    printer.gpu_ = saved;
  };
  // printFixed captures a fixed wavefront itself; a group size chosen at run time is the constant G of
  // the dispatch around this (printReduction), which a captured member function would not see.
  if (kind == AllocationKind::FixedWavefront || group == "G")
    return launches(*this);
  printReplayed(band, std::string(describeKind(kind)) + " (group " + group + ")", launches);
}

// Prints the launches of `launches`; for a band the mapping calls replayable, from a member function
// replayed as a CUDA graph when its host loops have at most GraphIterationsMax iterations.
void CudaHostPrinter::printReplayed(const BandView &band, const std::string &what,
                                    const std::function<void(CudaHostPrinter &)> &launches) {
  const map::BandMapping &mapping = mappingOf(band);
  if (!hostLoops_.empty() || !mapping.replayable)
    return launches(*this);
  std::string fits = "(" + spellParams(mapping.iterations, *input_.model.program) + ") <= polyc::rt::cuda::GraphIterationsMax";
  CapturedCall call = capturedCall(band, what, guardWith(fits), launches);
  w_.comment("The launches of the loops on the host replayed from a captured CUDA graph when they have at most "
             "polyc::rt::cuda::GraphIterationsMax iterations, unless POLYC_CUDA_GRAPH=0.");
  w_.openBlock("if (" + fits + ")");
  w_.line(call.replay);
  w_.elseBlock();
  w_.line(call.direct);
  w_.closeBlock();
}

// The group size of a wavefront band: the allocation's when it fits a warp, else a warp.
std::string CudaHostPrinter::wavefrontGroup(const BandView &band) const {
  bool reductions = llvm::any_of(band.statements, [&](unsigned s) { return hasReduction(input_.model.statements[s]); });
  if (!reductions)
    return "1";
  int64_t size = band.allocation ? band.allocation->reductionGroupSize : 0;
  if (size >= 2 && size <= 32 && (size & (size - 1)) == 0)
    return std::to_string(size);
  return std::to_string(GroupWidth);
}

// The longest loop that a point's lanes share in the flexible wavefront's value function (each
// reduction's innermost variable: CudaExprPrinter::printReduction), as a C expression of the params;
// nullopt when the statement has no reduction (a thread per point).
std::optional<std::string> CudaHostPrinter::windowSumLength(const model::Statement &statement,
                                                            const isl::set &domain) const {
  std::vector<std::string> lengths;
  for (const model::ReductionInfo &reduction : statement.reductions) {
    std::string text = "int64_t(" + std::to_string(GroupWidth) + ")"; // a warp when isl cannot bound it
    try {
      isl::set range = reduction.range.intersect_domain(domain).range();
      unsigned last = unsigned(range.tuple_dim()) - 1;
      isl::pw_aff length = dimMax(range, last).sub(dimMin(range, last)).add_constant(isl::val(range.ctx(), 1));
      text = "int64_t(" + paramsExpr(length) + ")";
    } catch (const isl::exception &) {
    }
    if (!llvm::is_contained(lengths, text))
      lengths.push_back(text);
  }
  if (lengths.empty())
    return std::nullopt;
  return lengths.size() == 1 ? lengths.front() : "std::max<int64_t>({" + llvm::join(lengths, ", ") + "})";
}

// The window sums of the flexible variant that take their terms from tables (TermTables.h), with
// each table's capacity: the bounding box of the sum's variables, which isl must be able to bound.
void CudaHostPrinter::planTermTables(FlexibleVariant &variant, const model::Statement &statement,
                                     const isl::set &domain, const std::vector<const ast::IndexVar *> &pointVars,
                                     const std::vector<std::string> &windowOrder,
                                     const std::set<std::string> &staged) const {
  std::set<std::string> windowed(windowOrder.begin(), windowOrder.end());
  for (const ast::Reduction *red : outerReductions(*statement.equation->rhs)) {
    std::optional<std::string> window = termTableWindow(*red, pointVars, windowed, staged);
    auto info = llvm::find_if(statement.reductions,
                              [&](const model::ReductionInfo &r) { return r.reduction == red; });
    if (!window || info == statement.reductions.end())
      continue;
    FlexibleVariant::TermTable table{red, *window, variant.windows.at(*window).view, {}};
    try {
      for (const isl::pw_aff &extent : boxExtents(info->range.intersect_domain(domain).range()))
        table.extents.push_back("int64_t(" + paramsExpr(extent) + ")");
    } catch (const isl::exception &) {
      continue; // unbounded for isl: the sum keeps its loops
    }
    variant.termTables.push_back(std::move(table));
  }
  if (!variant.termTables.empty())
    variant.termsFunction = statement.name + "Terms";
}

// Prints what `print` prints, through a printer of its own, into a member function of the Compute class,
// and returns the statements that run it: its launches replayed from a CUDA graph captured once (in
// Compute::prepare, under `prepareGuard` when it is not empty; directly when POLYC_CUDA_GRAPH=0), or
// launched directly. One function a band and `what`, however often the band is printed.
CapturedCall CudaHostPrinter::capturedCall(const BandView &band, const std::string &what,
                                                            const std::string &prepareGuard,
                                                            const std::function<void(CudaHostPrinter &)> &print) {
  std::string key = std::to_string(band.index) + " " + what;
  auto known = program_.capturedCalls.find(key);
  if (known != program_.capturedCalls.end()) {
    // Captured in prepare when any of its uses may run.
    for (CudaProgram::GraphCapture &capture : program_.prepareLines)
      if (capture.call == known->second.prepare)
        capture.guard = eitherGuard(capture.guard, prepareGuard);
    return known->second;
  }
  std::string function = program_.globalNames.fresh("enqueueBand" + std::to_string(band.index));
  std::string graph = program_.globalNames.fresh("band" + std::to_string(band.index) + "Graph_");
  CodeWriter fw;
  CudaHostPrinter nested(*this, fw);
  print(nested);
  CodeWriter &mw = program_.members;
  mw.blank();
  mw.comment("Band " + std::to_string(band.index) + " (" + statementList(input_.model, band.statements) + "), " +
             what + ".");
  mw.line(kernelTemplate({}));
  mw.openBlock("void " + function + "(const " + program_.indexedDevice() + " &" + program_.program + ", cudaStream_t " +
               program_.stream + ")");
  for (auto &param : input_.model.program->params)
    mw.line("[[maybe_unused]] const int64_t " + cIdentifier(param->name) + " = " + program_.program + "." +
            cIdentifier(param->name) + ";");
  mw.line("[[maybe_unused]] const polyc::rt::cuda::WavefrontOverride wavefront = "
          "polyc::rt::cuda::wavefrontOverride();");
  mw.verbatim(fw.str());
  mw.closeBlock();
  program_.memberVariables.push_back("polyc::rt::cuda::CapturedGraph " + graph + ";");
  auto call = [&](const char *prepareOnly) {
    return "polyc::rt::cuda::enqueueOrReplay(" + graph + ", graphKey(" + program_.program + "), " +
           program_.stream + ", " + prepareOnly + ", [&](cudaStream_t replayed) { " + function + "(" +
           program_.program + ", replayed); });";
  };
  program_.prepareLines.push_back({prepareGuard, call("true")});
  CapturedCall result{call("false"), function + "(" + program_.program + ", " + program_.stream + ");",
                      call("true")};
  program_.capturedCalls.emplace(key, result);
  return result;
}

// The fixed wavefront: the hyperplane loop on the host, one launch per hyperplane. At the top level
// the launches go into a function that a CUDA graph captures once and replays (POLYC_CUDA_GRAPH).
void CudaHostPrinter::printFixed(const BandView &band, const isl::ast_node &body) {
  std::string group = wavefrontGroup(band);
  if (!hostLoops_.empty() || !band.band)
    return printMapped(band, body, group, AllocationKind::FixedWavefront);
  CapturedCall call = capturedCall(band, "fixed wavefront: one launch per hyperplane", guardWith(""),
                                   [&](CudaHostPrinter &nested) {
                                     nested.gpu_ = GpuBand{&band, group, AllocationKind::FixedWavefront};
                                     nested.printNode(body);
                                   });
  w_.comment("One launch per hyperplane, replayed from a captured CUDA graph unless POLYC_CUDA_GRAPH=0.");
  w_.line(call.replay);
}

// A host loop (map::Placement::HostLoop): the band's loops on the host, the kernels of the bands inside
// launched on each iteration; or, where the mapping gives it a persistent form, that kernel when the cost
// model prefers it (POLYC_CUDA_PERSISTENT overrides).
void CudaHostPrinter::printHostLoop(const BandView &band, const isl::ast_node &body, const map::BandMapping &mapping) {
  // A loop that stops early under MPI asks every rank after each iteration: on the host.
  const bool stopsEarly = band.band && band.band->stopsWhenUnchanged;
  if (!mapping.persistent || (stopsEarly && input_.mpi))
    return printRoundsOrLaunches(band, body, mapping);
  const map::PersistentForm &form = *mapping.persistent;
  std::string when = form.gridWide ? "at least " + std::to_string(form.threadsMin) + " threads (or at most " +
                                         std::to_string(form.oneBlockThreadsMax) + ", as one block)"
                                   : "at most " + std::to_string(form.oneBlockThreadsMax) + " threads, as one block";
  w_.comment("Band " + std::to_string(band.index) + " (" + statementList(input_.model, band.statements) +
             "): one persistent kernel when the largest launch inside an iteration takes " + when +
             ", else a host loop (POLYC_CUDA_PERSISTENT=0|1 forces either).");
  std::string choice = "polyc::rt::cuda::persistentChoice(" + spellParams(form.condition, *input_.model.program) + ")";
  w_.openBlock("if (" + choice + ")");
  printPersistent(band, body, form);
  w_.elseBlock();
  choiceGuards_.push_back("!" + choice);
  printRoundsOrLaunches(band, body, mapping);
  choiceGuards_.pop_back();
  w_.closeBlock();
}

// The host loop's launches: a round a launch, or, where the mapping has round tiles (not under --mpi,
// whose ranks exchange rows between rounds), several rounds a launch unless POLYC_CUDA_ROUND_TILES=0.
void CudaHostPrinter::printRoundsOrLaunches(const BandView &band, const isl::ast_node &body,
                                            const map::BandMapping &mapping) {
  if (!mapping.roundTiles || input_.mpi)
    return printHostLaunches(band, body);
  w_.openBlock("if (polyc::rt::cuda::roundTiles())");
  printRoundTiles(band, *mapping.roundTiles);
  w_.elseBlock();
  choiceGuards_.push_back("!polyc::rt::cuda::roundTiles()");
  printHostLaunches(band, body);
  choiceGuards_.pop_back();
  w_.closeBlock();
}

// Round tiles (map::RoundTiles): a kernel that loads a block's tile and halo of the array into two
// buffers in shared memory, runs up to `rounds` rounds of the update on them and writes the tile's own
// points to the other of two arrays (the update's copy of old values, unused otherwise); the host
// launches it for each `rounds` rounds, the two arrays in turn, and copies the last into the array
// when it is the copy.
void CudaHostPrinter::printRoundTiles(const BandView &band, const map::RoundTiles &tiles) {
  const model::Model &model = input_.model;
  const model::ArrayInfo &array = *model.findArray(tiles.array);
  const model::ArrayInfo &snapshot = *model.findArray(tiles.snapshot);
  const std::string type = program_.exprs.typeName(array.decl->elemType);
  const bool stopsEarly = band.band && band.band->stopsWhenUnchanged;
  const model::Statement &update = model.statements[tiles.update];
  program_.roundVariants[tiles.update] = &tiles;
  std::string name = program_.globalNames.fresh("band" + std::to_string(band.index) + "Rounds");
  CodeWriter &kw = program_.kernels;
  kw.blank();
  kw.comment("Band " + std::to_string(band.index) + " (" + statementList(model, band.statements) +
             "), round tiles: " + describeRoundTileKernel(tiles, "block", "shared") + ".");
  kw.line(kernelTemplate({}));
  kw.openBlock("__global__ void __launch_bounds__(" + std::to_string(RoundTileThreads) + ") " + name + "(" +
               kernelParams() + ", const " + type + " *polyc_source, " + type + " *polyc_target, const " +
               IndexType + " polyc_first, const int polyc_rounds)");
  kernelPrologue(kw, "1");
  RoundTileDialect dialect;
  dialect.index = IndexType;
  dialect.buffers = "__shared__ " + type;
  dialect.bufferPointer = type;
  dialect.item = "threadIdx.x";
  dialect.items = "blockDim.x";
  dialect.group = "blockIdx.x";
  dialect.barrier = "__syncthreads();";
  dialect.source = "polyc_source";
  dialect.target = "polyc_target";
  dialect.update = [&](CodeWriter &w, const std::vector<std::string> &point, const std::string &inside) {
    std::vector<std::string> args{"polyc_first + polyc_j"};
    args.insert(args.end(), point.begin(), point.end());
    args.insert(args.end(), {"polyc_from", "polyc_to"});
    for (const std::string &origin : roundTileStorage(tiles).origin)
      args.push_back(origin);
    w.line("polyc_delta = " + inside + " ? " + program_.program + "." + update.name + "RoundsInterior(" +
           llvm::join(args, ", ") + ") : " + program_.program + "." + update.name + "Rounds(" +
           llvm::join(args, ", ") + ");");
  };
  if (stopsEarly)
    dialect.reportChange = "if (__syncthreads_or(polyc_moved) && threadIdx.x == 0) "
                           "polyc_changed[polyc::rt::cuda::changedSlot(polyc_first + polyc_rounds - 1)] = 1;";
  printRoundTileBody(tiles, program_.exprs, dialect, kw);
  kw.closeBlock();

  // The host: the launches, the two arrays in turn.
  const std::string device = program_.program + ".";
  const std::string first = program_.exprs.paramIndex(*tiles.block->lo);
  const std::string end = program_.exprs.paramIndex(*tiles.block->hi);
  const std::string rounds = std::to_string(tiles.rounds);
  w_.verbatim("if (polyc::rt::cuda::verbose())\n  std::fprintf(stderr, \"polyc: band " +
              std::to_string(band.index) + " (" + statementList(model, band.statements) + "): round tiles, " +
              rounds + " rounds a launch\\n\");");
  w_.openBlock("");
  if (stopsEarly)
    for (const std::string &line : changedFlagSetup())
      w_.line(line);
  w_.line("const int64_t polyc_tiles = " + roundTileBlocks(tiles, program_.exprs) + ";");
  w_.line(type + " *polyc_source = " + device + program_.exprs.arrayRef(array) + ";");
  w_.line(type + " *polyc_target = " + device + program_.exprs.arrayRef(snapshot) + ";");
  if (stopsEarly)
    w_.line("int64_t polyc_launch = 0; // the launches made");
  w_.openBlock("for (int64_t polyc_round = " + first + "; polyc_round < " + end +
               "; polyc_round += " + rounds + ")");
  w_.line("const int polyc_rounds = int(std::min<int64_t>(" + rounds + ", (" + end + ") - polyc_round));");
  w_.openBlock("if (polyc_tiles > 0)");
  w_.line(kernelInstance(name) + "<<<unsigned(polyc_tiles), " + std::to_string(RoundTileThreads) + ", 0, " +
          program_.stream + ">>>(" + kernelArgs() +
          ", polyc_source, polyc_target, polyc_round, polyc_rounds);");
  w_.line("POLYC_CUDA_CHECK_LAUNCH(\"" + name + "\");");
  w_.closeBlock();
  w_.line("std::swap(polyc_source, polyc_target);");
  if (stopsEarly)
    w_.line("if (polyc_flag.stopAfter(polyc_round + polyc_rounds - 1, polyc_launch++, " +
            std::to_string(launchesAhead(tiles)) + ", " + program_.stream +
            ", polyc::rt::cuda::onThisRank)) break;");
  w_.closeBlock();
  w_.line("if (polyc_source != " + device + program_.exprs.arrayRef(array) + ")");
  w_.line("  POLYC_CUDA_CHECK(cudaMemcpyAsync(" + device + program_.exprs.arrayRef(array) +
          ", polyc_source, size_t(" + program_.exprs.storageSize(array) + ") * sizeof(" + type +
          "), cudaMemcpyDeviceToDevice, " + program_.stream + "));");
  w_.closeBlock();
}

void CudaHostPrinter::printHostLaunches(const BandView &band, const isl::ast_node &body) {
  w_.verbatim("if (polyc::rt::cuda::verbose())\n  std::fprintf(stderr, \"polyc: band " + std::to_string(band.index) +
              " (" + statementList(input_.model, band.statements) + "): host loop\\n\");");
  auto launches = [&](CudaHostPrinter &printer) {
    std::optional<GpuBand> saved = printer.gpu_;
    printer.gpu_.reset();
    printer.printNode(body);
    printer.gpu_ = saved;
  };
  printReplayed(band, "host loop", launches);
}

// The persistent form of a host loop: the loop and every band under it in one cooperative kernel
// (CudaPersistentPrinter), launched with at most the blocks that can be resident at once.
void CudaHostPrinter::printPersistent(const BandView &band, const isl::ast_node &body, const map::PersistentForm &form) {
  std::string name = program_.globalNames.fresh("band" + std::to_string(band.index) + "Persistent");
  CodeWriter &kw = program_.kernels;
  kw.blank();
  kw.comment("Band " + std::to_string(band.index) + " (" + statementList(input_.model, band.statements) +
             "), persistent: the host loop as one cooperative kernel; its threads stride over each kernel band "
             "inside and meet at a grid barrier after it (" +
             std::to_string(form.barriersPerStep) + " an iteration).");
  kw.line(kernelTemplate({}));
  kw.openBlock("__global__ void __launch_bounds__(" + std::to_string(ThreadsPerBlock) + ") " + name + "(" +
               kernelParams() + ")");
  kernelPrologue(kw, "1");
  std::string grid = "polyc_grid";
  kw.line("cooperative_groups::grid_group " + grid + " = cooperative_groups::this_grid();");
  CudaPersistentPrinter persistent(*this, kw, program_, grid,
                                   [this](const BandView &b, unsigned member) { return boundingExtent(b, member); });
  persistent.printSubtree(body);
  kw.closeBlock();
  std::string threads = "int64_t(" + spellParams(form.pointsPerStep, *input_.model.program) + ")" +
                        (form.threadsPerPoint > 1 ? " * " + std::to_string(form.threadsPerPoint) : "");
  if (band.band && band.band->stopsWhenUnchanged) {
    w_.comment("The loop stops early: its ring of changed flags cleared before the launch.");
    for (const std::string &line : changedFlagSetup())
      w_.line(line);
  }
  w_.line("polyc::rt::cuda::launchPersistent(" + kernelInstance(name) + ", \"" + name + "\", " + threads + ", " +
          std::to_string(ThreadsPerBlock) + ", " + threads + " <= " + std::to_string(form.oneBlockThreadsMax) +
          ", " + program_.stream + ", " + kernelArgs() + ");");
  w_.line("POLYC_CUDA_CHECK_LAUNCH(\"" + name + "\");");
}

// A reduction band: a group of threads per point, its size from the allocation or, when that depends
// on the params, chosen at run time from the reduction's length.
void CudaHostPrinter::printReduction(const BandView &band, const isl::ast_node &body) {
  const allocate::BandAllocation *a = band.allocation;
  int64_t size = a ? a->reductionGroupSize : 0;
  if (size >= 1 && size <= 1024 && (size & (size - 1)) == 0)
    return printMapped(band, body, std::to_string(size), AllocationKind::Reduction);
  const ast::Program &program = *input_.model.program;
  std::string length = a && !a->reductionLength.empty() ? spellParams(a->reductionLength, program) : "1024";
  std::string outputs = a && !a->reductionOutputs.empty() ? spellParams(a->reductionOutputs, program) : "1";
  w_.comment("The group size from the reduction's length (" + length + " terms): the next power of two in [32, " +
             "1024], halved while the groups of its " + outputs + " outputs would still fill the device.");
  w_.openBlock("polyc::rt::cuda::dispatchGroupSize(polyc::rt::cuda::groupSizeFor(" + length + ", " + outputs +
               "), [&](auto polyc_groupSize)");
  w_.line("constexpr unsigned G = decltype(polyc_groupSize)::value;");
  printMapped(band, body, "G", AllocationKind::Reduction);
  w_.closeBlock(");");
}

// A band with no parallel dimension: one thread runs it (correct, not fast).
// A kernel band that is a matrix product (map::ProductForm): polyc::rt::cuda::enqueueProduct's tiles, which
// take the factors and the store from the statement's product functions (printProductFunctions) through
// an operands struct holding the device view and the host loops' iterators (the statement's repeat
// dimensions); the partial sums of split terms in a buffer that Compute::view sizes.
void CudaHostPrinter::printProduct(const BandView &band, const map::ProductForm &form) {
  const model::Model &model = input_.model;
  const model::Statement &statement = model.statements[form.statement];
  if (hostLoops_.size() != statement.repeatDims)
    return program_.fail("internal error: the matrix product of band " + std::to_string(band.index) +
                         " is not inside its statement's repeat loop alone");
  program_.productVariants[form.statement] = &form;
  const std::string index = std::to_string(band.index);
  const std::string type = program_.exprs.typeName(statement.equation->array->elemType);
  const std::string operands = program_.globalNames.fresh("band" + index + "Product");
  const std::string partials = program_.globalNames.fresh("band" + index + "Partials_");
  // The arguments of a statement function: its dimensions, the product's two as `row` and `column`.
  auto args = [&](const std::string &row, const std::string &column) {
    std::vector<std::string> list;
    for (unsigned d = 0; d < statement.dimNames.size(); ++d) {
      if (d < statement.repeatDims)
        list.push_back(hostLoops_[d]);
      else if (d == form.rowDim && !row.empty())
        list.push_back(row);
      else if (d == form.columnDim && !column.empty())
        list.push_back(column);
    }
    return list;
  };
  auto call = [&](const std::string &function, std::vector<std::string> list) {
    return program_.program + "." + statement.name + function + "(" + llvm::join(list, ", ") + ")";
  };
  const std::string row = "polyc_row", column = "polyc_column", term = "polyc_term",
                    sum = CudaExprPrinter::GivenSum;
  const std::string indexParam = "const " + std::string(IndexType) + " ";
  CodeWriter &kw = program_.kernels;
  kw.blank();
  kw.comment("Band " + index + " (" + statement.name +
             ") as a matrix product: the factors and the store that "
             "polyc::rt::cuda::enqueueProduct's tiles call.");
  kw.line(kernelTemplate({}));
  kw.openBlock("struct " + operands);
  kw.line(program_.indexedDevice() + " " + program_.program + ";");
  for (const std::string &loop : hostLoops_)
    kw.line(std::string(IndexType) + " " + loop + ";");
  // Whether each follower has instances for these params (ProductForm::followerConditions).
  std::vector<std::string> follows, followsValues;
  for (size_t f = 0; f < form.followers.size(); ++f) {
    if (form.followerConditions[f].empty())
      continue;
    follows.push_back("polyc_follows" + std::to_string(f));
    followsValues.push_back("bool(" + spellParams(form.followerConditions[f], *model.program) + ")");
    kw.line("bool " + follows.back() + ";");
  }
  std::vector<std::string> rowArgs = args(row, ""), columnArgs = args("", column);
  rowArgs.push_back(term);
  columnArgs.push_back(term);
  kw.line("__device__ " + type + " row(" + indexParam + row + ", " + indexParam + term + ") const { return " +
          call("Row", rowArgs) + "; }");
  kw.line("__device__ " + type + " column(" + indexParam + column + ", " + indexParam + term +
          ") const { return " + call("Column", columnArgs) + "; }");
  std::vector<std::string> storeArgs = args(row, column);
  storeArgs.push_back(sum);
  kw.openBlock("__device__ void store(" + indexParam + row + ", " + indexParam + column + ", const " + type +
               " " + sum + ") const");
  kw.line(call("FromSum", storeArgs) + ";");
  for (size_t f = 0, conditional = 0; f < form.followers.size(); ++f) {
    const model::Statement &follower = model.statements[form.followers[f]];
    program_.threadVariants.insert(form.followers[f]);
    std::string followerCall =
        program_.program + "." + follower.name + "(" + llvm::join(args(row, column), ", ") + ");";
    if (form.followerConditions[f].empty()) {
      kw.line(followerCall);
      continue;
    }
    kw.line("if (" + follows[conditional++] + ")");
    kw.indent();
    kw.line(followerCall);
    kw.dedent();
  }
  kw.closeBlock();
  kw.closeBlock(";");

  const ast::RangeBinding &range = form.sum->bindings.front();
  const std::string lo = program_.exprs.paramIndex(*range.lo), hi = program_.exprs.paramIndex(*range.hi);
  const ast::Program &source = *model.program;
  std::string shape = "polyc::rt::cuda::ProductShape{" + spellParams(form.rowFirst, source) + ", " +
                      spellParams(form.rows, source) + ", " + spellParams(form.columnFirst, source) + ", " +
                      spellParams(form.columns, source) + ", " + lo + ", " +
                      (lo == "0" ? hi : "(" + hi + ") - (" + lo + ")") + "}";
  program_.memberVariables.push_back("polyc::rt::cuda::DeviceBuffer " + partials + "; // band " + index +
                                     "'s partial sums of split terms");
  w_.comment("Band " + index + " (" + statement.name +
             "): a matrix product, tiles of outputs through shared memory.");
  w_.verbatim("if (polyc::rt::cuda::verbose())\n  std::fprintf(stderr, \"polyc: band " + index + " (" +
              statement.name + "): matrix product\\n\");");
  // --mpi: the rank's block of the rows (a band the ranks share: its member 0), or of the terms (a sum the
  // ranks split by its terms); its partial sums sized here, as the block is known only here.
  const bool rankRows = sharedBand_ == int(band.index);
  const bool rankTerms = program_.partialPass && program_.splitOf(form.statement);
  if (rankRows || rankTerms) {
    std::string block = program_.program + "." + splitBlockName(statement);
    std::string narrowed = rankRows ? "polyc::rt::cuda::rowsWithin(" + shape + ", polyc_rank.first, polyc_rank.end)"
                                    : "polyc::rt::cuda::termsWithin(" + shape + ", " + block + ".first, " + block +
                                          ".end)";
    shape = names().fresh("polyc_shape");
    w_.line("const polyc::rt::cuda::ProductShape " + shape + " = " + narrowed + ";");
    w_.line(partials + ".reserve(size_t(polyc::rt::cuda::productPartialElements(" + shape + ")) * sizeof(" + type +
            "));");
  } else {
    program_.viewLines.push_back(partials + ".resize(size_t(polyc::rt::cuda::productPartialElements(" + shape +
                                 ")) * sizeof(" + type + "));");
  }
  std::vector<std::string> fields{program_.program};
  for (const std::string &loop : hostLoops_)
    fields.push_back(std::string(IndexType) + "(" + loop + ")");
  fields.insert(fields.end(), followsValues.begin(), followsValues.end());
  w_.line("polyc::rt::cuda::enqueueProduct<" + std::string(form.rowAlongTerms ? "true" : "false") + ", " +
          (form.columnAlongTerms ? "true" : "false") + ", " + type + ", " + IndexType + ">(" + operands +
          "<" + IndexType + ">{" + llvm::join(fields, ", ") + "}, " + shape + ", " + partials + ".as<" +
          type + ">(), " + program_.stream + ");");
}

void CudaHostPrinter::printSequential(const BandView &band, const isl::ast_node &body) {
  std::string name = program_.globalNames.fresh("band" + std::to_string(band.index) + "Sequential");
  CodeWriter &kw = program_.kernels;
  kw.blank();
  kw.comment("Band " + std::to_string(band.index) + " (" + statementList(input_.model, band.statements) +
             "): no parallel dimension, one thread runs it in order.");
  kw.line(kernelTemplate({}));
  kw.openBlock("__global__ void __launch_bounds__(1) " + name + "(" + kernelParams() + ")");
  kernelPrologue(kw, "1");
  CudaKernelPrinter kp(*this, kw, program_, &band, {}, "1");
  kp.printKernelNode(body);
  kw.closeBlock();
  // Its instance in int64_t, whatever the run's index type: nvcc 13.0 miscompiled such a loop in int
  // (fuzz seed 7000008, regressions/backward-recurrence-int-cuda.poly: a backward recurrence unrolled by
  // four reloaded img2[f + 1] from the addresses of the iteration before), and one thread's loop is
  // bound by latency, not by its index arithmetic. The device view converts.
  w_.line(name + "<int64_t><<<1, 1, 0, " + program_.stream + ">>>(" + kernelArgs() + ");");
  w_.line("POLYC_CUDA_CHECK_LAUNCH(\"" + name + "\");");
}

// ---------------------------------------------------------------------------------------------
// The flexible wavefront

// How the flexible strip reads one array.
struct WindowPlan {
  const model::ArrayInfo *array = nullptr;
  bool recurrence = false;
  isl::set deltas; // read index - point, over (array dim 0, array dim 1)
};

// What the flexible wavefront of a band makes of its statement (planFlexible), or why it does not apply.
struct FlexiblePlan {
  std::string refusal;
  FlexibleVariant variant;
  unsigned r = 0, c = 1; // the statement dimensions along the strips' rows and columns
  isl::set domain;
  const model::ArrayInfo *target = nullptr;
  std::map<std::string, WindowPlan> windows;
  std::vector<std::string> windowOrder; // the recurrence's own array first
  std::set<std::string> staged, global;
};

// The decoupled step, for a floating-point recurrence over a full box window whose sum has a term table
// (the table's extents are the box's) and whose other part has no sum: one thread computes that part for
// each point of a strip column, on the step's path (a sum there, as the FIR's under --no-hoist, keeps
// the term tables). Its hand-over between strips marks cells not yet computed with a NaN
// (DecoupledWindow.cuh, PendingCell), which integers do not have.
static void planDecoupledStep(FlexibleVariant &variant, const model::Statement &statement, ast::ElemType type,
                              const std::vector<const ast::IndexVar *> &pointVars, const std::set<std::string> &staged) {
  if (type == ast::ElemType::I32)
    return;
  std::optional<BoxRecurrence> box = boxRecurrence(*statement.equation->rhs, statement.write.array, pointVars, staged);
  if (!box || !outerReductions(*box->pointPart).empty())
    return;
  auto table = llvm::find_if(variant.termTables,
                             [&](const FlexibleVariant::TermTable &t) { return t.reduction == box->sum; });
  if (table == variant.termTables.end() || table->extents.size() != 2)
    return;
  variant.box = box;
  variant.boxExtent = table->extents.front();
}

// The decoupled step's statement (polyc/cuda/DecoupledWindow.cuh, launchDecoupled) for the variant's
// recurrence: its rows from `rowBase` on (a pipeline's block of rows; 0 otherwise).
std::string CudaHostPrinter::printDecoupledFunctor(unsigned band, const FlexibleVariant &variant) {
  const model::Statement &statement = input_.model.statements[variant.statement];
  const std::string b = std::to_string(band), p = program_.program;
  const std::string functor = program_.globalNames.fresh("Band" + b + "Decoupled");
  CodeWriter &kw = program_.kernels;
  kw.blank();
  kw.comment("Band " + b + " (" + statement.name +
             "), the decoupled step (polyc/cuda/DecoupledWindow.cuh): " + statement.name +
             " is a recurrence over a full box window.");
  kw.openBlock("struct " + functor);
  kw.line("using Elem = " +
          program_.exprs.typeName(input_.model.findArray(statement.write.array)->decl->elemType) + ";");
  kw.line(program_.device + " " + p + ";");
  kw.line("int rowBase = 0; // the statement's row of row 0");
  kw.line("int rows = 0, cols = 0;");
  kw.line("__device__ Elem coefficient(int k1, int k2) const { return " + p + "." + statement.name +
          "Coefficient(k1, k2); }");
  kw.line("__device__ Elem pointPart(int i, int j) const { return " + p + "." + statement.name +
          "PointPart(rowBase + i, j); }");
  kw.line("__device__ Elem *cell(int i, int j) const { return " + p + "." + statement.name +
          "Cell(rowBase + i, j); }");
  kw.closeBlock(";");
  return functor;
}

// The decoupled step's parts compute in int (printDecoupledParts): the params and the sizes of the arrays
// they read and write must fit.
std::string CudaHostPrinter::decoupledFits(const FlexibleVariant &variant) const {
  const model::Statement &statement = input_.model.statements[variant.statement];
  std::vector<std::string> accessed{statement.write.array};
  for (const model::Access &read : statement.reads)
    accessed.push_back(read.array);
  return fitInIntCall("", accessed);
}

bool CudaHostPrinter::planFlexible(const BandView &band, FlexiblePlan &plan) const {
  const model::Model &model = input_.model;
  auto refuse = [&](const std::string &reason) {
    plan.refusal = reason;
    return false;
  };
  if (band.statements.size() != 1)
    return refuse("more than one statement");
  unsigned s = band.statements.front();
  const model::Statement &statement = model.statements[s];
  const ast::Equation &eq = *statement.equation;
  if (statement.dimNames.size() != 2 || statement.repeatDims != 0 || eq.indexVars.size() != 2 || !eq.indexVars[0] ||
      !eq.indexVars[1])
    return refuse("the statement is not a 2D equation over its whole array");
  if (statement.isUpdate())
    return refuse("the statement is an update");
  allocate::WavefrontMapping mapping;
  if (band.allocation && band.allocation->wavefront)
    mapping = *band.allocation->wavefront;
  unsigned &r = plan.r, &c = plan.c;
  r = mapping.rowDim, c = mapping.columnDim;
  if (r > 1 || c > 1 || r == c)
    return refuse("its row and column dimensions are not the statement's two");
  // The strips' columns are the arrays' contiguous (last) dimension, whatever the allocation's
  // mapping prefers: the row segment a step stages is then contiguous in memory (coalesced loads).
  // Either orientation is legal here, since every dependence looks back along both dimensions
  // (checked below).
  if (c != 1)
    std::swap(r, c);
  const model::ArrayInfo *target = plan.target = model.findArray(statement.write.array);
  if (!target || target->decl->rank() != 2 || target->decl->effectiveBoundary != ast::Boundary::Zero)
    return refuse("the recurrence array is not 2D with the zero boundary");

  isl::set &domain = plan.domain;
  domain = statement.domain;
  if (!model.context.is_null())
    domain = domain.intersect_params(model.context);
  isl::set flat = resetTupleId(domain);
  isl::set rowSet = projectOutDim(flat, c), colSet = projectOutDim(flat, r);
  if (!(r < c ? flatProduct(rowSet, colSet) : flatProduct(colSet, rowSet)).is_equal(flat))
    return refuse("the domain is not a rectangle");
  if (paramsExpr(dimMin(domain, r)) != "0" || paramsExpr(dimMin(domain, c)) != "0")
    return refuse("the domain does not start at 0");

  // The reads: windows (2D, each index the point's dimension plus a bounded offset), staged arrays
  // (an input read at indices that do not depend on the point), or global memory.
  std::vector<const ast::IndexVar *> pointVars = {eq.indexVars[0].get(), eq.indexVars[1].get()};
  std::map<std::string, WindowPlan> &windows = plan.windows;
  std::set<std::string> notWindowed, &staged = plan.staged, &global = plan.global;
  for (const model::Access &read : statement.reads) {
    if (!read.read || read.implicitUpdateRead)
      continue;
    const model::ArrayInfo *array = model.findArray(read.array);
    const ast::ArrayRead &ar = *read.read;
    bool gather = llvm::is_contained(ar.isGather, true);
    bool windowed = !gather && !read.isMay && array->decl->rank() == 2 &&
                    array->decl->effectiveBoundary == ast::Boundary::Zero;
    for (unsigned d = 0; windowed && d < 2; ++d)
      for (unsigned v = 0; windowed && v < 2; ++v) {
        auto k = coefficientOf(*ar.indices[d], pointVars[v], *model.program);
        windowed = k && *k == (d == v ? 1 : 0);
      }
    if (windowed) {
      // The access relation leaves out the elements outside the array (the boundary rule gives them);
      // the window holds them too (as zeros) and the point reads them unguarded, so the window's
      // offsets are taken without that limit (an array narrower than the window still has it whole).
      isl::map rel = read.relation;
      if (!array->extent.is_null())
        rel = gistRange(rel, array->extent);
      rel = rel.intersect_domain(domain);
      isl::set deltas = resetTupleIds(rel).deltas();
      WindowPlan &plan = windows[read.array];
      plan.array = array;
      plan.recurrence = read.array == statement.write.array;
      plan.deltas = plan.deltas.is_null() ? deltas : plan.deltas.unite(deltas);
      // A window must have bounded offsets (its size). The gist can leave them unbounded: with the
      // array's extent it also drops the bounds of a reduction's range that the extent implies (a sum
      // over d in 0..3 of idx[i - d, ...] where idx has 3 rows).
      if (!isBounded(plan.deltas) && !plan.deltas.is_empty())
        notWindowed.insert(read.array);
      continue;
    }
    notWindowed.insert(read.array);
    bool invariant = !gather && !llvm::any_of(ar.indices, [&](const ast::ExprPtr &e) { return mentionsAny(*e, pointVars); });
    if (invariant && array->decl->kind == ast::ArrayKind::Input && array->decl->rank() > 0)
      staged.insert(read.array);
    else
      global.insert(read.array);
  }
  for (const std::string &name : notWindowed) {
    windows.erase(name);
    if (global.count(name))
      staged.erase(name);
  }
  if (notWindowed.count(statement.write.array))
    return refuse("it reads its own array other than at a bounded distance before the point");
  // The recurrence's window must look only back: rows and columns at or before the point's.
  isl::ctx ctx = domain.ctx();
  std::vector<std::string> &windowOrder = plan.windowOrder;
  if (windows.count(statement.write.array)) {
    isl::set forward = isl::set(ctx, "{ [a, b] : a > 0 or b > 0 }");
    isl::set deltas = windows[statement.write.array].deltas;
    // Align with the statement's row and column order before checking.
    if (!deltas.intersect(forward).is_empty())
      return refuse("it reads its own array ahead of the point");
    windowOrder.push_back(statement.write.array);
  }
  for (auto &[name, plan] : windows)
    if (name != statement.write.array)
      windowOrder.push_back(name);

  // The statement's value function.
  FlexibleVariant &variant = plan.variant;
  variant.statement = s;
  variant.function = statement.name + "Value";
  for (const std::string &name : windowOrder) {
    std::string view = cIdentifier(name) + "Window";
    variant.windowArrays.push_back(name);
    variant.windows[name] = CudaWindowRead{view, r, c};
  }
  for (const std::string &name : staged)
    variant.stagedArrays.push_back(name);
  variant.convergedLanes = global.empty();
  planTermTables(variant, statement, domain, pointVars, windowOrder, staged);
  planDecoupledStep(variant, statement, target->decl->elemType, pointVars, staged);
  return true;
}

bool CudaHostPrinter::printFlexible(const BandView &band) {
  FlexiblePlan plan;
  if (!planFlexible(band, plan)) {
    w_.comment("Band " + std::to_string(band.index) + ": the flexible wavefront does not apply (" +
               plan.refusal + "); the fixed wavefront runs instead.");
    return false;
  }
  program_.flexibleVariants.push_back(plan.variant);
  const model::Model &model = input_.model;
  const FlexibleVariant &variant = plan.variant;
  const model::Statement &statement = model.statements[variant.statement];
  const unsigned r = plan.r, c = plan.c;
  const isl::set &domain = plan.domain;
  const model::ArrayInfo *target = plan.target;
  std::map<std::string, WindowPlan> &windows = plan.windows;
  const std::vector<std::string> &windowOrder = plan.windowOrder;
  const std::set<std::string> &staged = plan.staged, &global = plan.global;
  isl::ctx ctx = domain.ctx();

  // The strip: its windows, staged arrays, steps; the argument struct; the persistent kernel.
  std::string b = std::to_string(band.index);
  std::string strip = program_.globalNames.fresh("Band" + b + "Strip");
  std::string args = program_.globalNames.fresh("Band" + b + "FlexibleArgs");
  std::string kernel = program_.globalNames.fresh("band" + b + "Flexible");
  std::string elem = program_.exprs.typeName(target->decl->elemType);
  std::optional<std::string> lanes = windowSumLength(statement, domain);
  CodeWriter &kw = program_.kernels;
  const std::vector<std::string> dims = program_.exprs.dimNames(statement);
  kw.blank();
  kw.comment("Band " + b + " (" + statement.name + "), flexible wavefront (seed 004): the columns of " + dims[c] +
             " in strips of S columns, each strip walked along " + dims[r] +
             " by one block at a time; a step computes one point in each of the strip's columns, skewed (the "
             "lane group l at row step - l), with G threads per point" +
             (lanes ? " (G and S chosen at run time from the window sums' size)" : "") +
             ". What a step reads is staged in shared memory.");
  kw.openBlock("struct " + args);
  kw.line("static constexpr int PublishInterval = " + std::to_string(PublishInterval) +
          "; // steps between progress stores");
  kw.line(program_.device + " " + program_.program + ";");
  kw.line("int64_t rows = 0, cols = 0; // the domain: " + dims[r] + " in [0, rows), " + dims[c] + " in [0, cols)");
  for (const std::string &name : windowOrder)
    kw.line("polyc::rt::cuda::WindowGeometry<" + program_.exprs.typeName(model.findArray(name)->decl->elemType) +
            "> " + cIdentifier(name) + "Window;");
  for (const std::string &name : staged)
    kw.line("polyc::rt::cuda::StagedArray<" + program_.exprs.typeName(model.findArray(name)->decl->elemType) + "> " +
            cIdentifier(name) + "Staged;");
  const std::string tableCount = std::to_string(variant.termTables.size());
  if (!variant.termTables.empty())
    kw.line("polyc::rt::cuda::TermTableLayout terms[" + tableCount + "];");
  kw.closeBlock(";");
  kw.blank();
  kw.comment("G threads per point, S columns (polyc::rt::cuda::StripShape).");
  kw.line("template <typename Shape>");
  kw.openBlock("struct " + strip);
  kw.line("static constexpr unsigned G = Shape::Lanes;");
  kw.line("static constexpr int S = Shape::Width;");
  kw.line("static constexpr int Threads = S * G;");
  kw.line("const " + args + " &args;");
  kw.line("unsigned char *shared;");
  for (const std::string &name : windowOrder) {
    const model::ArrayInfo *a = model.findArray(name);
    kw.line("polyc::rt::cuda::StripWindow<" + program_.exprs.typeName(a->decl->elemType) + ", S, " +
            (name == statement.write.array ? "true" : "false") + "> " + cIdentifier(name) + ";");
  }
  for (const std::string &name : staged)
    kw.line("const " + program_.exprs.typeName(model.findArray(name)->decl->elemType) + " *" + cIdentifier(name) +
            "Staged = nullptr;");
  if (!variant.termTables.empty()) {
    kw.line("polyc::rt::cuda::TermTable<" + elem + "> terms[" + tableCount + "];");
    kw.line(laneTermsType(elem, "Shape::Held") + " laneTerms[" + tableCount + "]; // this lane's terms of each table");
  }
  kw.blank();
  kw.openBlock("__device__ " + strip + "(const " + args + " &args, unsigned char *shared) : args(args), shared(shared)");
  for (size_t i = 0; i < windowOrder.size(); ++i) {
    kw.line(cIdentifier(windowOrder[i]) + ".geometry = args." + cIdentifier(windowOrder[i]) + "Window;");
    kw.line(cIdentifier(windowOrder[i]) + ".bind(shared, Threads, " + std::to_string(i) + ", " +
            std::to_string(windowOrder.size()) + ");");
  }
  if (!variant.termTables.empty())
    kw.line("for (int t = 0; t < " + tableCount + "; ++t) terms[t].bind(args.terms[t], shared);");
  kw.closeBlock();
  kw.comment(variant.termTables.empty() ? "Once per block: the arrays every point reads whole."
                                        : "Once per block: the arrays every point reads whole, then the window "
                                          "sums' term tables (warp 0 builds them), then each lane's terms.");
  kw.openBlock("__device__ void start()");
  for (const std::string &name : staged)
    kw.line(cIdentifier(name) + "Staged = polyc::rt::cuda::stageArray(args." + cIdentifier(name) +
            "Staged, shared, Threads);");
  if (!variant.termTables.empty()) {
    std::vector<std::string> termArgs;
    for (const std::string &name : staged)
      termArgs.push_back(cIdentifier(name) + "Staged");
    for (const std::string &name : windowOrder)
      termArgs.push_back(cIdentifier(name) + ".geometry.ringCols");
    termArgs.push_back("terms");
    kw.line("__syncthreads(); // the staged arrays, before the tables read them");
    kw.line("if (threadIdx.x < polyc::rt::cuda::WarpSize)");
    kw.indent();
    kw.line("args." + program_.program + "." + variant.termsFunction + "(" + llvm::join(termArgs, ", ") + ");");
    kw.dedent();
    kw.line("__syncthreads(); // the tables, before the lanes load their terms");
    for (size_t t = 0; t < variant.termTables.size(); ++t) {
      const std::string index = std::to_string(t);
      kw.line("laneTerms[" + index + "].load(terms[" + index + "], polyc::rt::cuda::groupLane<G>(), G, " +
              cIdentifier(variant.termTables[t].array) + ".zeroCellBytes());");
    }
  }
  kw.closeBlock();
  kw.comment("When the block takes a strip, before the left neighbour allows its first step: the rows that step "
             "reads that do not come from other strips.");
  kw.openBlock("__device__ void prepare(int column, int step)");
  for (const std::string &name : windowOrder)
    kw.line(cIdentifier(name) + ".prepare(column, step);");
  kw.closeBlock();
  kw.comment("Once the left neighbour allows the first step: the rows that do.");
  kw.openBlock("__device__ void enter(int column, int step)");
  for (const std::string &name : windowOrder)
    kw.line(cIdentifier(name) + ".enter(step);");
  kw.closeBlock();
  kw.comment("One step: the next rows' loads go out first, the points are computed from shared memory, the "
             "rows loaded one step earlier are stored last.");
  kw.openBlock("__device__ void step(int column, int step)");
  for (const std::string &name : windowOrder)
    kw.line(cIdentifier(name) + ".prefetch(step);");
  kw.line("const int row = step - polyc::rt::cuda::stripLane<G>();");
  kw.line("const int col = column * S + polyc::rt::cuda::stripLane<G>();");
  kw.line("const bool inside = row >= 0 && row < args.rows && col < args.cols;");
  std::vector<std::string> callArgs(2);
  callArgs[r] = "row";
  callArgs[c] = "col";
  callArgs.push_back("polyc::rt::cuda::groupLane<G>()");
  for (const std::string &name : staged)
    callArgs.push_back(cIdentifier(name) + "Staged");
  for (const std::string &name : windowOrder)
    callArgs.push_back(cIdentifier(name) + ".view(row, col)");
  if (!variant.termTables.empty())
    callArgs.push_back("laneTerms");
  std::string value = "args." + program_.program + ".template " + variant.function + "<G>(" +
                      llvm::join(callArgs, ", ") + ")";
  std::string store = cIdentifier(statement.write.array) + ".store(value, args." + program_.program + "." +
                      cIdentifier(statement.write.array) + ");";
  if (variant.convergedLanes) {
    kw.comment("Every lane computes, so that a point's lanes reduce with the whole warp. A lane group outside "
               "the domain reads staged boundary values and cells no lane writes in this step (the skew), and "
               "stores nothing.");
    kw.line("const " + elem + " value = " + value + ";");
    kw.line("if (inside && polyc::rt::cuda::groupLane<G>() == 0)");
    kw.indent();
    kw.line(store);
    kw.dedent();
  } else {
    kw.comment("Only points inside the domain compute: the statement reads global memory at the point.");
    kw.openBlock("if (inside)");
    kw.line("const " + elem + " value = " + value + ";");
    kw.line("if (polyc::rt::cuda::groupLane<G>() == 0)");
    kw.indent();
    kw.line(store);
    kw.dedent();
    kw.closeBlock();
  }
  for (const std::string &name : windowOrder)
    kw.line(cIdentifier(name) + ".commit();");
  kw.closeBlock();
  kw.closeBlock(";");
  kw.blank();
  // The block is the strip's compute threads and the scheduler's coordinator warp, its registers fitted
  // for the blocks an SM that flexibleMinBlocks gives (without a minimum, ptxas held the 256-thread strip
  // to 40 registers and spilled).
  kw.line("template <typename Shape>");
  kw.openBlock("__global__ void __launch_bounds__(polyc::rt::cuda::flexibleBlockThreads(" + strip +
               "<Shape>::Threads), polyc::rt::cuda::flexibleMinBlocks(" + strip + "<Shape>::Threads, Shape::Held)) " +
               kernel + "(polyc::rt::cuda::FlexibleBoard board, const " + args +
               " args, int publishInterval)");
  kw.line("extern __shared__ __align__(16) unsigned char dynamicShared[];");
  kw.line("__shared__ polyc::rt::cuda::FlexibleShared scheduler;");
  kw.line(strip + "<Shape> strip(args, dynamicShared);");
  kw.line("polyc::rt::cuda::runFlexibleWavefront(board, strip, scheduler, publishInterval);");
  kw.closeBlock();

  // The host side: for the strip shape the window sums ask for, the window sizes from the params, the fit
  // check, the launch.
  std::string board = "band" + b + "Board_";
  program_.memberVariables.push_back("polyc::rt::cuda::FlexibleBoardStorage " + board + ";");
  auto extentText = [&](const model::ArrayInfo &a, unsigned d) { return program_.exprs.extent(a, d); };
  // The lambda's names are fresh: the params are locals of the same scope, and a param `S` was shadowed
  // by the strip's width (fuzz seed 3620470: 64 rows of a 52-row array written).
  const std::string launch = names().fresh("launch"), shape = names().fresh("shape"),
                    shapeType = names().fresh("Shape"), width = names().fresh("stripWidth");
  w_.openBlock("");
  w_.comment("Returns false, launching nothing, when the windows do not fit in shared memory or the indices "
             "and params not in int.");
  w_.openBlock("auto " + launch + " = [&](auto " + shape + ")");
  w_.line("using " + shapeType + " = decltype(" + shape + ");");
  w_.line("constexpr int " + width + " = " + shapeType + "::Width;");
  w_.line(args + " args;");
  w_.line("args." + program_.program + " = " + program_.program + ";");
  const std::string rows = paramsExpr(dimMax(domain, r).add_constant(isl::val(ctx, 1)));
  w_.line("args.rows = " + rows + ";");
  const std::string columns = paramsExpr(dimMax(domain, c).add_constant(isl::val(ctx, 1)));
  w_.line("args.cols = " + columns + ";");
  w_.line("size_t sharedBytes = 0;");
  for (const std::string &name : windowOrder) {
    const model::ArrayInfo &a = *model.findArray(name);
    const WindowPlan &plan = windows[name];
    std::string g = "args." + cIdentifier(name) + "Window";
    // Offsets along the strip's rows (array dimension r) and columns (array dimension c).
    auto bound = [&](unsigned d, bool low) {
      isl::pw_aff v = low ? dimMin(plan.deltas, d).neg() : dimMax(plan.deltas, d);
      return "int(std::max<int64_t>(0, " + paramsExpr(v) + "))";
    };
    std::vector<std::string> strides = {extentText(a, 1), "1"};
    w_.line(g + ".array = " + program_.program + "." + cIdentifier(name) + ";");
    w_.line(g + ".rows = " + extentText(a, r) + ";");
    w_.line(g + ".cols = " + extentText(a, c) + ";");
    w_.line(g + ".rowStride = " + strides[r] + ";");
    w_.line(g + ".colStride = " + strides[c] + ";");
    w_.line(g + ".back = " + bound(r, true) + ";");
    w_.line(g + ".left = " + bound(c, true) + ";");
    if (name != statement.write.array) {
      w_.line(g + ".ahead = " + bound(r, false) + ";");
      w_.line(g + ".right = " + bound(c, false) + ";");
    }
    w_.line("polyc::rt::cuda::layoutWindow(" + g + ", " + width + ", sharedBytes);");
  }
  for (const std::string &name : staged) {
    const model::ArrayInfo &a = *model.findArray(name);
    std::string g = "args." + cIdentifier(name) + "Staged";
    w_.line(g + ".array = " + program_.program + "." + cIdentifier(name) + ";");
    w_.line(g + ".count = " + program_.exprs.storageSize(a) + ";");
    w_.line("polyc::rt::cuda::layoutStaged(" + g + ", sharedBytes);");
  }
  for (size_t t = 0; t < variant.termTables.size(); ++t)
    w_.line("polyc::rt::cuda::layoutTerms<" + elem + ">(args.terms[" + std::to_string(t) + "], {" +
            llvm::join(variant.termTables[t].extents, ", ") + "}, sharedBytes);");
  // The value function computes in int: the params, and the element indices of the arrays it reads in
  // global memory (their sizes bound them), must fit.
  w_.openBlock("if (!polyc::rt::cuda::fitsInSharedMemory(sharedBytes) || args.rows + " + width +
               " >= INT32_MAX || args.cols "
               ">= INT32_MAX || !" + fitInIntCall("", {global.begin(), global.end()}) + ")");
  w_.line("return false;");
  w_.closeBlock();
  w_.line("polyc::rt::cuda::launchFlexible(" + kernel + "<" + shapeType + ">, " + board + ", args, " + strip + "<" +
          shapeType + ">::Threads, sharedBytes, int((args.cols + " + width + " - 1) / " + width +
          "), int(args.rows) + " + width + " - 1, " + width + " + 1, " + args + "::PublishInterval, " +
          program_.stream + ", \"" + kernel + "\");");
  w_.line("return true;");
  w_.closeBlock(";");
  bool afterDecoupled = false; // the alternatives below are else-ifs of the decoupled step's
  if (variant.box) {
    const std::string functor = printDecoupledFunctor(band.index, variant);
    w_.comment("A recurrence over a full box window: the decoupled step, for the window extents it is built for "
               "and indices in int (else as below).");
    w_.openBlock("if (" + decoupledFits(variant) + " && " + "polyc::rt::cuda::launchDecoupled(" + functor +
                 "{" + program_.program + "}, " + rows + ", " + columns + ", " + variant.boxExtent + ", " +
                 board + ", " + program_.stream + ", \"" +
                 program_.globalNames.fresh("band" + b + "Decoupled") + "\"))");
    w_.verbatim("if (polyc::rt::cuda::verbose())\n  std::fprintf(stderr, \"polyc: band " + b + " (" + statement.name +
                "): flexible wavefront, decoupled step\\n\");");
    afterDecoupled = true;
  }
  // The next alternative, after its comment: inside the block the alternative opens when it follows the
  // decoupled step's, so that the comment is not read as the decoupled branch's.
  auto openChoice = [&](const std::string &comment, const std::string &condition) {
    if (!afterDecoupled) {
      if (!comment.empty())
        w_.comment(comment);
      w_.openBlock("if (" + condition + ")");
    } else {
      w_.elseBlock("else if (" + condition + ")");
      if (!comment.empty())
        w_.comment(comment);
    }
  };
  if (!variant.termTables.empty()) {
    std::vector<std::string> capacities;
    for (const FlexibleVariant::TermTable &table : variant.termTables) {
      std::string capacity = "polyc::rt::cuda::termCapacity({" + llvm::join(table.extents, ", ") + "})";
      if (!llvm::is_contained(capacities, capacity))
        capacities.push_back(capacity);
    }
    openChoice("The strip's shape from the terms per point of its tables and the columns (wider strips where "
               "the narrow ones would not all be resident); the fixed wavefront runs when the flexible one does "
               "not fit.",
               "polyc::rt::cuda::withTermTableShape(" +
               (capacities.size() == 1 ? capacities.front()
                                       : "std::max<int64_t>({" + llvm::join(capacities, ", ") + "})") +
               ", " + columns + ", " + launch + ")");
  } else if (lanes) {
    openChoice("Threads per point from the length of the loop a point's lanes share; the fixed wavefront runs "
               "when the flexible one does not fit.",
               "polyc::rt::cuda::withLaneShape(polyc::rt::cuda::lanesFor(" + *lanes + "), " + launch + ")");
  } else {
    openChoice("", launch + "(polyc::rt::cuda::StripShape<1, polyc::rt::cuda::stripWidthFor(1), 0>())");
  }
  w_.verbatim("if (polyc::rt::cuda::verbose())\n  std::fprintf(stderr, \"polyc: band " + b + " (" + statement.name +
              "): flexible wavefront\\n\");");
  w_.elseBlock();
  return true;
}

// A band the ranks run as a pipeline (map::Pipeline) over their blocks of rows: where the statement takes
// the decoupled step, one kernel a rank whose strips hand the rows later blocks read straight to the
// later ranks' GPUs (polyc/cuda/PeerPipeline.h); otherwise, or where the GPUs cannot reach each other's
// memory, the strips of columns one after another, a launch per anti-diagonal of the block, with messages
// between the ranks (printPipelineStrips).
void CudaHostPrinter::printPipeline(const BandView &band, const map::BandDecomposition &shared) {
  const map::Pipeline &pipeline = *shared.pipeline;
  const std::string b = std::to_string(band.index);
  FlexiblePlan plan;
  const bool direct =
      planFlexible(band, plan) && plan.variant.box && plan.variant.statement == pipeline.statement;
  if (direct) {
    program_.flexibleVariants.push_back(plan.variant);
    const std::string functor = printDecoupledFunctor(band.index, plan.variant);
    const std::string peers = "band" + b + "Peers_", board = "band" + b + "Board_";
    program_.memberVariables.push_back("polyc::rt::cuda::FlexibleBoardStorage " + board + ";");
    program_.memberVariables.push_back("polyc::rt::cuda::PeerPipeline " + peers + ";");
    const std::string columns =
        paramsExpr(dimMax(plan.domain, plan.c).add_constant(isl::val(plan.domain.ctx(), 1)));
    w_.comment(
        "The decoupled step over this rank's block of rows, the rows before it arriving from the earlier "
        "ranks' GPUs and its last rows going to the later ones', strip by strip; where the GPUs cannot "
        "reach each other's memory, the step does not apply, or POLYC_CUDA_WAVEFRONT=fixed, the strips of "
        "columns in turn.");
    w_.openBlock("if (wavefront != polyc::rt::cuda::WavefrontOverride::Fixed && " + decoupledFits(plan.variant) +
                 " && polyc::rt::cuda::launchDecoupled(" + functor +
                 "{" + program_.program + ", int(polyc_rank.first)}, polyc_rank.end - polyc_rank.first, " +
                 columns + ", " + plan.variant.boxExtent + ", " + board + ", " + program_.stream + ", \"" +
                 program_.globalNames.fresh("band" + b + "Decoupled") + "\", " + peers + ".connector(" +
                 pipelineArguments(shared, mpiArrays()) + ", " + program_.stream + ")))");
    w_.verbatim("if (polyc::rt::cuda::verbose())\n  std::fprintf(stderr, \"polyc: band " + b + " (" +
                input_.model.statements[pipeline.statement].name +
                "): pipeline across the ranks, decoupled step\\n\");");
    w_.elseBlock();
  }
  printPipelineStrips(w_, shared, mpiArrays(), [&] { printPipelineStripLaunches(band, pipeline); });
  if (direct)
    w_.closeBlock();
}

// A strip of a pipeline (printPipelineStrips) on a GPU rank: the rank's block of rows and the strip's
// columns, one launch per anti-diagonal, a point per group of threads (as the fixed wavefront's).
void CudaHostPrinter::printPipelineStripLaunches(const BandView &band, const map::Pipeline &pipeline) {
  const std::string group = wavefrontGroup(band);
  const std::string kernel = program_.globalNames.fresh("band" + std::to_string(band.index) + "Strip");
  const std::string layout = "polyc::rt::cuda::GroupLayout<G>";
  CodeWriter &kw = program_.kernels;
  kw.blank();
  kw.comment(
      "Band " + std::to_string(band.index) + " (" + input_.model.statements[pipeline.statement].name +
      ") on a strip of the ranks' pipeline: anti-diagonal d of the rows [rowFirst, rowFirst + rows) and the "
      "columns [colFirst, colFirst + cols), " +
      (group == "1" ? "a thread" : "a group of G threads") + " a point.");
  kw.line(kernelTemplate({"unsigned G"}));
  kw.openBlock(
      "__global__ void __launch_bounds__(" + layout + "::Threads) " + kernel + "(const " +
      program_.indexedDevice() + " " + program_.program +
      ", const int64_t rowFirst, const int64_t rows, const int64_t colFirst, const int64_t cols, const "
      "int64_t d)");
  kw.openBlock("for (int64_t q = polyc_max(int64_t(0), d - rows + 1) + " + layout +
               "::point(); q <= polyc_min(cols - "
               "1, d); q += " +
               layout + "::points())");
  std::vector<std::string> args = {IndexType + std::string("(rowFirst + d - q)"),
                                   IndexType + std::string("(colFirst + q)")};
  if (group == "1") {
    kw.line(program_.program + "." + program_.statementFunction(pipeline.statement, false) + "(" +
            llvm::join(args, ", ") + ");");
  } else {
    args.push_back(layout + "::lane()");
    kw.line(program_.program + "." + program_.statementFunction(pipeline.statement, true) + "<G>(" +
            llvm::join(args, ", ") + ");");
  }
  kw.closeBlock();
  kw.closeBlock();

  const std::string columnFirst = spellParams(pipeline.columnFirst, *input_.model.program);
  const std::string used = "polyc::rt::cuda::GroupLayout<" + group + ">";
  w_.line("const int64_t polyc_blockRows = polyc_rank.end - polyc_rank.first, polyc_stripColumns = "
          "polyc_columnEnd - "
          "polyc_column;");
  w_.openBlock("for (int64_t polyc_d = 0; polyc_blockRows > 0 && polyc_d < polyc_blockRows + "
               "polyc_stripColumns - 1; ++polyc_d)");
  w_.line("const dim3 grid = polyc::rt::cuda::gridFor(std::min(polyc_stripColumns, polyc_d + 1), " + used +
          "::PointsPerBlock, 1, 1);");
  w_.line(kernelInstance(kernel, {group}) + "<<<grid, " + used + "::Threads, 0, " + program_.stream + ">>>(" +
          program_.program + ", polyc_rank.first, polyc_blockRows, " +
          (columnFirst == "0" ? "" : columnFirst + " + ") + "polyc_column, polyc_stripColumns, polyc_d);");
  w_.line("POLYC_CUDA_CHECK_LAUNCH(\"" + kernel + "\");");
  w_.closeBlock();
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The file

static const char *roleWord(ast::ArrayKind kind) {
  switch (kind) {
  case ast::ArrayKind::Input: return "input";
  case ast::ArrayKind::Output: return "output";
  case ast::ArrayKind::InOut: return "inout, updated in place";
  case ast::ArrayKind::Local: return "local";
  }
  return "";
}

// The function that fills a flexible variant's term tables: the statement printed with its point at
// the origin (so a window read's indices are its offset), by warp 0, once per block.
static void printTermsFunction(CudaProgram &cp, const FlexibleVariant &variant, const model::Statement &statement,
                               CodeWriter &w) {
  CudaExprPrinter &exprs = cp.exprs;
  const model::Model &model = cp.input.model;
  std::string type = exprs.typeName(model.findArray(statement.write.array)->decl->elemType);
  std::vector<std::string> params;
  for (const std::string &name : variant.stagedArrays)
    params.push_back("const " + exprs.typeName(model.findArray(name)->decl->elemType) + " *" + cIdentifier(name) +
                     "Staged");
  for (const std::string &name : variant.windowArrays)
    params.push_back("int " + variant.windows.at(name).view + "Cols");
  params.push_back("polyc::rt::cuda::TermTable<" + type + "> *" + CudaExprPrinter::TermTablesParam);
  w.blank();
  w.comment(statement.name + "'s window sums as term tables (coefficient, offset from the point's cell in a " +
            "window of ring rows of <view>Cols cells), built by warp 0 once per block.");
  w.openBlock("__device__ void " + variant.termsFunction + "(" + llvm::join(params, ", ") + ") const");
  std::vector<std::string> origin;
  for (const std::string &d : exprs.dimNames(statement))
    origin.push_back(d + " = 0");
  w.line("[[maybe_unused]] const int " + llvm::join(origin, ", ") + "; // the point at the origin");
  exprs.mode = CudaStatementMode::FlexibleTerms;
  exprs.printStatement(statement, w);
  exprs.mode = CudaStatementMode::FlexibleValue;
  w.closeBlock();
}

// A Rows statement's functions (exprs in Rows mode, its plan set): <name>Rows, which computes the polyc_rows
// instances from polyc_first on. With an interior condition, <name>Rows calls <name>RowsInterior, which
// tests no bounds, when the runs of all the warp's active lanes meet it, and <name>RowsEdge otherwise.
// `dims`: the statement's dimensions.
static void printRowsFunctions(CudaExprPrinter &exprs, const model::Statement &statement, const std::string &header,
                               const std::vector<std::string> &dims, CodeWriter &w) {
  const std::string &rowsDim = exprs.rows.dim;
  std::vector<std::string> args; // the dimensions as the functions name them, then the count
  for (const std::string &d : dims)
    args.push_back(d == rowsDim ? CudaExprPrinter::RowsFirst : d);
  args.push_back(CudaExprPrinter::RowsCount);
  // The parameters or the arguments of a call, without the count for the interior variant (its run is whole).
  auto list = [&](bool withCount, bool typed) {
    std::vector<std::string> items;
    for (size_t k = 0; k + (withCount ? 0 : 1) < args.size(); ++k)
      items.push_back((typed ? "int " : "") + args[k]);
    return llvm::join(items, ", ");
  };
  const std::string templateLine =
      "template <int " + std::string(CudaExprPrinter::RowsParam) + ", int " + CudaExprPrinter::RowsRun + ">";
  auto printVariant = [&](const std::string &name, bool interior) {
    w.line(templateLine);
    w.openBlock("__device__ void " + name + "(" + list(!interior, true) + ") const");
    exprs.rowsInterior = interior;
    exprs.printRowsStatement(statement, w);
    exprs.rowsInterior = false;
    w.closeBlock();
  };
  const std::string what = header + "; one thread computes the " + CudaExprPrinter::RowsCount + " instances from " +
                           rowsDim + " = " + CudaExprPrinter::RowsFirst + " on (at most " +
                           CudaExprPrinter::RowsParam + "), whose sum slides along " + rowsDim;
  w.blank();
  if (!exprs.rows.interior) {
    w.comment(what + ".");
    printVariant(statement.name + "Rows", false);
    return;
  }
  const std::string instantiate =
      "<" + std::string(CudaExprPrinter::RowsParam) + ", " + CudaExprPrinter::RowsRun + ">";
  w.comment(what +
            ": without bounds tests when all of them, and every cell they read, are in their arrays (" +
            statement.name + "RowsInterior), else with them (" + statement.name +
            "RowsEdge); the warp's active lanes take one of the two together.");
  w.line(templateLine);
  w.openBlock("__device__ void " + statement.name + "Rows(" + list(true, true) + ") const");
  // The lanes of a warp take one variant together: lanes that differ would make the warp run both
  // (docs/performance.md at 2c04002, CUDA: the FIR kernel 24% faster on a 2048^2 image at M = 17).
  w.line("if (__all_sync(__activemask(), " + *exprs.rows.interior + "))");
  w.indent();
  w.line(statement.name + "RowsInterior" + instantiate + "(" + list(false, false) + ");");
  w.dedent();
  w.line("else");
  w.indent();
  w.line(statement.name + "RowsEdge" + instantiate + "(" + list(true, false) + ");");
  w.dedent();
  w.closeBlock();
  printVariant(statement.name + "RowsInterior", true);
  printVariant(statement.name + "RowsEdge", false);
}

// The statement in the parts the decoupled step computes it from (DecoupledWindow.cuh, the Statement
// functor): the coefficient of the window's term (k1, k2), the rest of the value at a point, and the
// address of the point's cell. Reads go to global memory, as one thread's would. They compute in int, as
// the flexible value function does (the launch checks that the params and the arrays' sizes fit): 64-bit
// indices cost the step's chain several instructions a cell.
static void printDecoupledParts(CudaExprPrinter &exprs, const model::Statement &statement, const BoxRecurrence &box,
                                const model::ArrayInfo &target, CodeWriter &w) {
  exprs.mode = CudaStatementMode::FlexibleValue;
  const std::string type = exprs.typeName(target.decl->elemType);
  const std::vector<std::string> dims = exprs.dimNames(statement);
  std::vector<std::string> sumVars;
  for (const ast::RangeBinding &binding : box.sum->bindings)
    for (const auto &var : binding.vars)
      sumVars.push_back(cIdentifier(var->name));
  const std::string index = exprs.indexType();
  w.blank();
  w.comment(statement.name + " in parts, for the decoupled step: the coefficient of the window's term (" +
            llvm::join(sumVars, ", ") + "), the value without the window's sum, and the point's cell.");
  w.openBlock("__device__ " + type + " " + statement.name + "Coefficient(" + index + " " + sumVars[0] + ", " + index +
              " " + sumVars[1] + ") const");
  std::string coefficient = exprs.printPart(statement, *box.coefficients, w, box.sum);
  w.line("return " + coefficient + ";");
  w.closeBlock();
  w.openBlock("__device__ " + type + " " + statement.name + "PointPart(" + index + " " + dims[0] + ", " + index + " " +
              dims[1] + ") const");
  std::string pointPart = exprs.printPart(statement, *box.pointPart, w);
  w.line("return " + pointPart + ";");
  w.closeBlock();
  w.openBlock("__device__ " + type + " *" + statement.name + "Cell(" + index + " " + dims[0] + ", " + index + " " +
              dims[1] + ") const");
  w.line("return &" + exprs.arrayRef(target) + "[" + exprs.elementIndex(target, dims) + "];");
  w.closeBlock();
}

// The statement functions of the device struct, in the variants the kernels call.
// A matrix product's statement functions: its factors at a point and a term (Row without the column's
// dimension, Column without the row's), and its store from the sum (FromSum).
static void printProductFunctions(CudaExprPrinter &exprs, const model::Statement &statement,
                                  const map::ProductForm &form, const std::string &header,
                                  const std::vector<std::string> &dims, CodeWriter &w) {
  const std::string type = exprs.typeName(statement.equation->array->elemType);
  const std::string term = cIdentifier(form.sum->bindings.front().vars.front()->name);
  auto params = [&](unsigned without, const std::string &last) {
    std::vector<std::string> list;
    for (unsigned d = 0; d < dims.size(); ++d)
      if (d != without)
        list.push_back(exprs.indexType() + " " + dims[d]);
    list.push_back(last);
    return llvm::join(list, ", ");
  };
  auto factor = [&](const char *function, const ast::ArrayRead &read, unsigned without) {
    w.openBlock("__device__ " + type + " " + statement.name + function + "(" +
                params(without, exprs.indexType() + " " + term) + ") const");
    std::string value = exprs.printPart(statement, read, w, form.sum);
    w.line("return " + value + ";");
    w.closeBlock();
  };
  w.blank();
  w.comment(header + "; as a matrix product: a term's factors, and the store of an instance from its sum.");
  factor("Row", *form.rowFactor, form.columnDim);
  factor("Column", *form.columnFactor, form.rowDim);
  w.openBlock("__device__ void " + statement.name + "FromSum(" +
              params(unsigned(dims.size()), type + " " + CudaExprPrinter::GivenSum) + ") const");
  exprs.mode = CudaStatementMode::ProductStore;
  exprs.givenSum = form.sum;
  exprs.printStatement(statement, w);
  exprs.givenSum = nullptr;
  exprs.mode = CudaStatementMode::Thread;
  w.closeBlock();
}

static void printStatementFunctions(CudaProgram &cp, CodeWriter &w) {
  const model::Model &model = cp.input.model;
  CudaExprPrinter &exprs = cp.exprs;
  for (unsigned s = 0; s < model.statements.size(); ++s) {
    const model::Statement &statement = model.statements[s];
    std::vector<std::string> dims = exprs.dimNames(statement);
    exprs.mode = CudaStatementMode::Thread; // the thread and group variants' index type
    std::string params;
    for (const std::string &d : dims)
      params += (params.empty() ? "" : ", ") + exprs.indexType() + " " + d;
    std::string header = statement.name + ": " + equationText(*statement.equation) + "  (" +
                         equationLocation(cp.input, *statement.equation) + ")";
    const bool split = cp.splitOf(s);
    // --mpi: a statement whose sum the ranks split by its terms has functions for its partial value
    // (SplitPass::Partial), and its others finish with the combined value (SplitPass::Finish).
    auto printSimple = [&](bool partial) {
      w.blank();
      w.comment(header + (partial ? "; this rank's partial value of its sum" : "") + "; one thread computes an instance.");
      w.openBlock("__device__ void " + (partial ? partialFunctionName(statement.name) : statement.name) + "(" +
                  params + ") const");
      exprs.mode = CudaStatementMode::Thread;
      exprs.printStatement(statement, w);
      w.closeBlock();
    };
    auto printGroup = [&](bool partial) {
      w.blank();
      w.comment(header + (partial ? "; this rank's partial value of its sum" : "") +
                "; the G threads of a group compute an instance together, lane 0 stores it.");
      w.line("template <unsigned G>");
      w.openBlock("__device__ void " + (partial ? partialFunctionName(statement.name) : statement.name) + "Group(" +
                  params + (params.empty() ? "" : ", ") + "unsigned " + exprs.lane + ") const");
      exprs.mode = CudaStatementMode::Group;
      exprs.printStatement(statement, w);
      w.closeBlock();
    };
    exprs.splitPass = ExprPrinter::SplitPass::Partial;
    if (cp.partialThreadVariants.count(s))
      printSimple(true);
    if (cp.partialGroupVariants.count(s))
      printGroup(true);
    exprs.splitPass = split ? ExprPrinter::SplitPass::Finish : ExprPrinter::SplitPass::Whole;
    if (cp.threadVariants.count(s))
      printSimple(false);
    if (cp.privateVariants.count(s)) {
      const model::ArrayInfo *target = model.findArray(statement.write.array);
      w.blank();
      w.comment(header + "; one thread computes an instance, adding to its block's copy of " +
                statement.write.array + " in shared memory.");
      w.openBlock("__device__ void " + statement.name + "Private(" + params + (params.empty() ? "" : ", ") +
                  exprs.typeName(target->decl->elemType) + " *" + CudaExprPrinter::PrivateCopy + ") const");
      exprs.mode = CudaStatementMode::Thread;
      exprs.privateArray = statement.write.array;
      exprs.printStatement(statement, w);
      exprs.privateArray.clear();
      w.closeBlock();
    }
    if (auto rounds = cp.roundVariants.find(s); rounds != cp.roundVariants.end()) {
      const map::RoundTiles &tiles = *rounds->second;
      const std::string type = exprs.typeName(model.findArray(tiles.array)->decl->elemType);
      const ExprPrinter::RoundTileStorage storage = roundTileStorage(tiles);
      std::string tileParams = "const " + type + " *polyc_from, " + type + " *polyc_to";
      for (const std::string &name : storage.origin)
        tileParams += ", " + exprs.indexType() + " " + name;
      for (bool interior : {false, true}) {
        w.blank();
        w.comment(header + "; one thread computes an instance on a round tile: its reads of " + tiles.array +
                  "'s old values from polyc_from" + (interior ? ", all inside the array" : "") +
                  ", the new value into polyc_to; whether it changed.");
        w.openBlock("__device__ bool " + statement.name + (interior ? "RoundsInterior(" : "Rounds(") +
                    params + ", " + tileParams + ") const");
        exprs.mode = CudaStatementMode::Thread;
        exprs.roundTile = storage;
        exprs.roundTile->interior = interior;
        w.line("bool polyc_delta = false;");
        exprs.printStatement(statement, w);
        w.line("return polyc_delta;");
        exprs.roundTile.reset();
        w.closeBlock();
      }
    }
    if (auto product = cp.productVariants.find(s); product != cp.productVariants.end()) {
      // A split statement's product runs in the partial pass only: its store keeps the partial value.
      exprs.splitPass = split ? ExprPrinter::SplitPass::Partial : ExprPrinter::SplitPass::Whole;
      printProductFunctions(exprs, statement, *product->second, header, dims, w);
      exprs.splitPass = split ? ExprPrinter::SplitPass::Finish : ExprPrinter::SplitPass::Whole;
    }
    if (auto rows = cp.rowsVariants.find(s); rows != cp.rowsVariants.end()) {
      exprs.mode = CudaStatementMode::Rows;
      exprs.rows = rows->second;
      printRowsFunctions(exprs, statement, header, dims, w);
    }
    if (cp.groupVariants.count(s))
      printGroup(false);
    for (const FlexibleVariant &variant : cp.flexibleVariants) {
      if (variant.statement != s)
        continue;
      const model::ArrayInfo *target = model.findArray(statement.write.array);
      std::string type = exprs.typeName(target->decl->elemType);
      exprs.mode = CudaStatementMode::FlexibleValue;
      exprs.convergedGroups = variant.convergedLanes;
      std::string templateParams = "unsigned G";
      std::string args;
      for (const std::string &d : dims)
        args += exprs.indexType() + " " + d + ", ";
      args += "unsigned " + exprs.lane;
      for (const std::string &name : variant.stagedArrays)
        args += ", const " + exprs.typeName(model.findArray(name)->decl->elemType) + " *" + cIdentifier(name) +
                "Staged";
      for (const std::string &name : variant.windowArrays) {
        std::string windowType = cIdentifier(name) + "WindowView";
        templateParams += ", typename " + windowType;
        args += ", const " + windowType + " &" + variant.windows.at(name).view;
      }
      if (!variant.termTables.empty()) {
        templateParams += ", int K"; // deduced from the strip's lane terms
        args += ", const " + laneTermsType(type, "K") + " *" + CudaExprPrinter::TermTablesParam;
      }
      exprs.windows = variant.windows;
      for (unsigned t = 0; t < variant.termTables.size(); ++t)
        exprs.termTables[variant.termTables[t].reduction] = CudaTermTable{t, variant.termTables[t].view};
      for (const std::string &name : variant.stagedArrays)
        exprs.setReadStorage(name, cIdentifier(name) + "Staged");
      w.blank();
      w.comment(header + "; for the flexible wavefront: the G threads of a group compute the value of an "
                         "instance from the strip's windows and staged arrays, and every thread returns it.");
      w.line("template <" + templateParams + ">");
      w.openBlock("__device__ " + type + " " + variant.function + "(" + args + ") const");
      exprs.printStatement(statement, w);
      w.closeBlock();
      if (!variant.termTables.empty())
        printTermsFunction(cp, variant, statement, w);
      exprs.clearReadStorage();
      exprs.windows.clear();
      exprs.termTables.clear();
      if (variant.box)
        printDecoupledParts(exprs, statement, *variant.box, *target, w);
    }
    exprs.splitPass = ExprPrinter::SplitPass::Whole;
  }
  exprs.mode = CudaStatementMode::Thread;
}

// The runtime's headers that `code` uses, and the standard ones. The device-side headers are included
// only where the code names something they declare: nvcc's front ends take about 1.1 of the 3.0 s that a
// data-parallel program's build takes on the headers of the wavefronts and the persistent kernels.
static void printIncludes(const std::string &code, CodeWriter &w) {
  auto names = [&](std::initializer_list<const char *> identifiers) {
    return llvm::any_of(identifiers, [&](const char *id) { return code.find(id) != std::string::npos; });
  };
  // What the generated code names of each optional header (DecoupledWindow.cuh builds on Wavefront.cuh).
  bool decoupled = names({"polyc::rt::cuda::launchDecoupled", "polyc::rt::cuda::decoupled"});
  bool wavefront = decoupled || names({"polyc::rt::cuda::launchFlexible", "polyc::rt::cuda::StripWindow",
                                       "polyc::rt::cuda::StagedArray", "polyc::rt::cuda::WindowGeometry",
                                       "polyc::rt::cuda::Term", "polyc::rt::cuda::LaneTerms",
                                       "polyc::rt::cuda::Flexible", "polyc::rt::cuda::stripLane",
                                       "polyc::rt::cuda::groupLane", "polyc::rt::cuda::layout",
                                       "polyc::rt::cuda::termCapacity", "polyc::rt::cuda::fitsInSharedMemory",
                                       "polyc::rt::cuda::runFlexibleWavefront", "polyc::rt::cuda::flexibleBlockThreads",
                                       "polyc::rt::cuda::stageArray"});
  bool blockReduce = names({"polyc::rt::cuda::GroupLayout", "polyc::rt::cuda::reduceInGroup",
                            "polyc::rt::cuda::WarpSize", "polyc::rt::cuda::blockReduce",
                            "polyc::rt::cuda::groupReduce", "polyc::rt::cuda::warpGroupReduce"});
  bool persistent = names({"polyc::rt::cuda::stepBarrier", "polyc::rt::cuda::NoPoint"});
  bool changedFlag = names({"polyc::rt::cuda::ChangedFlag", "polyc::rt::cuda::changedSlot"});
  bool slidingSum = names({"polyc::rt::cuda::SlidingSum"});
  bool product = names({"polyc::rt::cuda::enqueueProduct"});
  bool gridGroup = names({"cooperative_groups::"});
  w.line("#include <polyc/Runtime.h>");
  if (blockReduce)
    w.line("#include <polyc/cuda/BlockReduce.cuh>");
  if (changedFlag)
    w.line("#include <polyc/cuda/ChangedFlag.cuh>");
  w.line("#include <polyc/cuda/CudaCompute.h>");
  if (decoupled)
    w.line("#include <polyc/cuda/DecoupledWindow.cuh>");
  w.line("#include <polyc/cuda/Device.h>");
  if (names({"polyc::rt::cuda::RankRows"}))
    w.line("#include <polyc/cuda/MpiRows.h>");
  if (names({"polyc::rt::mpi::"}))
    w.line("#include <polyc/mpi/Mpi.h>");
  if (names({"polyc::rt::cuda::PeerPipeline"}))
    w.line("#include <polyc/cuda/PeerPipeline.h>");
  if (persistent)
    w.line("#include <polyc/cuda/Persistent.cuh>");
  if (product)
    w.line("#include <polyc/cuda/Product.cuh>");
  if (slidingSum)
    w.line("#include <polyc/cuda/SlidingSum.cuh>");
  if (wavefront)
    w.line("#include <polyc/cuda/Wavefront.cuh>");
  w.blank();
  if (gridGroup)
    w.line("#include <cooperative_groups.h>");
  for (const char *header : {"algorithm", "cfloat", "cmath", "cstdint", "cstdio", "cstdlib", "cstring", "exception",
                             "type_traits", "vector"})
    w.line(std::string("#include <") + header + ">");
}

// --mpi: the download, after which rank 0 collects the other ranks' rows of the outputs that only halos
// shared, from host memory to host memory: like the plain build's download, outside the timed region.
static void printGatheringDownload(const model::Model &model, const CudaExprPrinter &exprs,
                                   const map::Decomposition &decomposition, CodeWriter &w) {
  w.line("public:");
  w.indent();
  w.comment("MPI: every rank copies its outputs back, then rank 0 collects the rows the others computed.");
  w.openBlock("void download(polyc::rt::RunContext &context) override");
  w.line("polyc::rt::cuda::CudaCompute::download(context);");
  printGathersOfContext(w, decomposition, model, exprs);
  w.closeBlock();
  w.blank();
  w.dedent();
}

llvm::Expected<std::vector<GeneratedFile>> polyc::codegen::emitCuda(const CodegenInput &given) {
  if (given.mapping && !given.mapping->streamProblem.empty())
    return llvm::createStringError(given.mapping->streamProblem);
  // --mpi: the bands the ranks share, and the mapping as ranks run it (map::mappingForRanks).
  std::optional<map::Decomposition> decomposition;
  std::optional<map::Mapping> rankMapping;
  CodegenInput input = given;
  if (given.mpi) {
    decomposition = map::decompose(given.model, given.schedule, given.allocation,
                                   {.recompute = given.mpiRecompute, .pipelines = given.mpiPipelines});
    rankMapping = map::mappingForRanks(*given.mapping, *decomposition);
    input.mapping = &*rankMapping;
  }
  const model::Model &model = input.model;
  const ast::Program &program = *model.program;
  std::string prog = programName(input);
  CudaExprPrinter exprs(model, input.schedule);
  std::vector<Package> packages = findPackages(model, input.schedule);
  if (decomposition) {
    exprs.setSplitReductions(splitReductions(*decomposition, model, /*instanceBuffers=*/true));
    dropSplitPackages(packages, *decomposition);
  }
  exprs.setPackages(std::move(packages));
  CudaProgram cp(input, exprs);
  cp.decomposition = decomposition ? &*decomposition : nullptr;
  cp.type = programTypeName(program, prog, "");
  cp.device = cp.type + "Device";
  cp.deviceOf = cp.type + "DeviceOf";

  CodeWriter host;
  CudaHostPrinter printer(input, host, cp);
  printer.names().take(cp.device);
  printer.names().take(cp.deviceOf);
  cp.program = printer.names().fresh("program");
  cp.stream = printer.names().fresh("stream");
  // The printer's own names (cIdentifier spells a program's `grid` as grid_, so none is taken here).
  for (const char *reserved : {"wavefront", "lane", "G", "args", "grid", "row", "col", "value", "sharedBytes"})
    printer.names().take(reserved);
  cp.globalNames = printer.names();
  cp.globalNames.take(cp.type + "Compute");
  if (llvm::Error e = printer.printSchedule())
    return e;
  if (cp.error)
    return llvm::createStringError(*cp.error);

  CodeWriter w;
  w.line("namespace {");
  w.blank();
  printConstants(program, w);
  w.blank();
  exprs.mode = CudaStatementMode::Thread;
  exprs.printHelpers(w);
  w.blank();
  exprs.printUserFunctions(w);
  w.blank();

  // The device struct: what every kernel receives by value.
  w.comment("The params and device arrays of one run, as every kernel receives them (by value), and one "
            "device member function per statement and variant; its params and indices of type " +
            std::string(IndexType) + ", int where the run's sizes fit (" + cp.type + "Compute::indexFitsInt).");
  w.line(kernelTemplate({}));
  w.openBlock("struct " + cp.deviceOf);
  for (auto &p : program.params)
    w.line(std::string(IndexType) + " " + cIdentifier(p->name) + " = 0;");
  for (const model::ArrayInfo &a : model.arrays) {
    bool readOnly = a.decl->kind == ast::ArrayKind::Input;
    w.line(std::string(readOnly ? "const " : "") + exprs.typeName(a.decl->elemType) + " *" + exprs.arrayRef(a) +
           " = nullptr; // " + roleWord(a.decl->kind) + (a.decl->rank() ? "" : " scalar"));
  }
  std::vector<std::string> members;
  for (auto &p : program.params)
    members.push_back(cIdentifier(p->name));
  for (const model::ArrayInfo &a : model.arrays)
    members.push_back(exprs.arrayRef(a));
  for (const map::TermSplit &split : decomposition ? decomposition->splits : std::vector<map::TermSplit>()) {
    const model::Statement &statement = model.statements[split.statement];
    w.line("polyc::rt::mpi::Block " + splitBlockName(statement) + "{}; // MPI: this rank's terms of " +
           statement.name + "'s reduction");
    w.line(exprs.typeName(statement.equation->array->elemType) + " *" + splitBufferName(statement) +
           " = nullptr; // MPI: " + statement.name + "'s partial values, then the ranks' combined ones");
    members.push_back(splitBlockName(statement));
    members.push_back(splitBufferName(statement));
  }
  w.blank();
  w.line(cp.deviceOf + "() = default;");
  if (!members.empty()) {
    w.comment("The view of another index type (the flexible wavefront's code takes int64_t's).");
    w.line("template <typename polyc_other>");
    std::vector<std::string> inits;
    for (const std::string &m : members)
      inits.push_back(m + "(polyc_from." + m + ")");
    w.line("__host__ __device__ " + cp.deviceOf + "(const " + cp.deviceOf + "<polyc_other> &polyc_from) : " +
           llvm::join(inits, ", ") + " {}");
  }
  exprs.threadIndexType = IndexType;
  printStatementFunctions(cp, w);
  exprs.threadIndexType = "int64_t";
  w.closeBlock(";");
  w.line("using " + cp.device + " = " + cp.deviceOf + "<int64_t>;");
  w.verbatim(cp.kernels.str());
  w.blank();

  // The Compute class.
  std::string computeType = cp.type + "Compute";
  std::string ctxParam = "const polyc::rt::RunContext &context";
  w.comment("Upload, timed run and download for polyc::rt::runMain (and for " + prog +
            "_run): the arrays live in device buffers; run() enqueues the schedule on the stream.");
  w.openBlock("class " + computeType + " final : public polyc::rt::cuda::CudaCompute");
  w.dedent();
  w.line("protected:");
  w.indent();
  for (const char *function : {"prepare", "run"}) {
    w.openBlock("void " + std::string(function) + "(" + ctxParam + ", cudaStream_t " + cp.stream + ") override");
    if (decomposition && std::string(function) == "prepare") {
      w.comment("MPI: the ranks' NCCL communicator is made on the first run, outside the timed region.");
      w.line("polyc::rt::cuda::rankCommunicator();");
    }
    w.openBlock("if (indexFitsInt(context))");
    w.line(std::string(function) + "As<int>(context, " + cp.stream + ");");
    w.elseBlock();
    w.line(std::string(function) + "As<int64_t>(context, " + cp.stream + ");");
    w.closeBlock();
    w.closeBlock();
    w.blank();
  }
  w.dedent();
  if (decomposition && !decomposition->gathers.empty())
    printGatheringDownload(model, exprs, *decomposition, w);
  w.line("private:");
  w.indent();
  w.comment("Whether the kernels of this run index in int (polyc::rt::cuda::indexFitsInt): the params, the "
            "bounds of the statements' and the schedule's dimensions, and the arrays' sizes.");
  w.openBlock("static bool indexFitsInt(" + ctxParam + ")");
  for (unsigned k = 0; k < program.params.size(); ++k)
    w.line("[[maybe_unused]] const int64_t " + cIdentifier(program.params[k]->name) + " = context.params[" +
           std::to_string(k) + "];");
  w.line("return " + printer.indexFitsCall() + ";");
  w.closeBlock();
  w.blank();
  w.line(kernelTemplate({}));
  w.openBlock("void prepareAs(" + ctxParam + ", cudaStream_t " + cp.stream + ")");
  w.line("const " + cp.indexedDevice() + " " + cp.program + " = view<" + IndexType + ">(context);");
  if (cp.prepareLines.empty()) {
    w.line("(void)" + cp.program + ";");
    w.line("(void)" + cp.stream + ";");
  } else {
    for (auto &p : program.params)
      w.line("[[maybe_unused]] const int64_t " + cIdentifier(p->name) + " = " + cp.program + "." + cIdentifier(p->name) +
             ";");
    w.line("[[maybe_unused]] const polyc::rt::cuda::WavefrontOverride wavefront = "
           "polyc::rt::cuda::wavefrontOverride();");
    w.comment("Capture the fixed wavefronts' and the host loops' launches once, outside the timed region.");
    w.openBlock("if (polyc::rt::cuda::useCudaGraph())");
    for (const CudaProgram::GraphCapture &capture : cp.prepareLines) {
      if (capture.guard.empty()) {
        w.line(capture.call);
        continue;
      }
      w.openBlock("if (" + capture.guard + ")");
      w.line(capture.call);
      w.closeBlock();
    }
    w.closeBlock();
  }
  w.closeBlock();
  w.blank();
  w.line(kernelTemplate({}));
  w.openBlock("void runAs(" + ctxParam + ", cudaStream_t " + cp.stream + ")");
  w.line("const " + cp.indexedDevice() + " " + cp.program + " = view<" + IndexType + ">(context);");
  for (auto &p : program.params)
    w.line("[[maybe_unused]] const int64_t " + cIdentifier(p->name) + " = " + cp.program + "." + cIdentifier(p->name) +
           ";");
  w.line("[[maybe_unused]] const polyc::rt::cuda::WavefrontOverride wavefront = "
         "polyc::rt::cuda::wavefrontOverride();");
  printRowArrayChecksOfContext(input, exprs, w);
  if (decomposition) {
    w.comment("MPI: the exchanges of the rows other ranks read (GPU to GPU with NCCL, else through host "
              "memory).");
    w.line("[[maybe_unused]] polyc::rt::cuda::RankRows polyc_rows(" + cp.stream + ");");
  }
  w.verbatim(host.str());
  w.closeBlock();
  w.blank();
  w.comment("The device view of this run: params, the device arrays, local arrays (allocated on first use).");
  w.line(kernelTemplate({}));
  w.openBlock(cp.indexedDevice() + " view(" + ctxParam + ")");
  w.line(cp.indexedDevice() + " " + cp.program + ";");
  for (unsigned k = 0; k < program.params.size(); ++k)
    w.line("[[maybe_unused]] const int64_t " + cIdentifier(program.params[k]->name) + " = context.params[" +
           std::to_string(k) + "];");
  for (unsigned k = 0; k < program.params.size(); ++k)
    w.line(cp.program + "." + cIdentifier(program.params[k]->name) + " = " + IndexType + "(" +
           cIdentifier(program.params[k]->name) + ");");
  std::vector<const model::ArrayInfo *> interface = interfaceArrays(model);
  for (unsigned k = 0; k < interface.size(); ++k)
    w.line(cp.program + "." + exprs.arrayRef(*interface[k]) + " = device<" + exprs.typeName(interface[k]->decl->elemType) +
           ">(" + std::to_string(k) + ");");
  std::vector<std::string> localMembers;
  for (const model::ArrayInfo &a : model.arrays) {
    if (a.decl->kind != ast::ArrayKind::Local)
      continue;
    std::string member = cp.globalNames.fresh(exprs.arrayRef(a) + "Storage_");
    localMembers.push_back("polyc::rt::cuda::DeviceBuffer " + member + "; // local " + a.name);
    std::string type = exprs.typeName(a.decl->elemType);
    w.line(member + ".resize(size_t(" + exprs.checkedStorageSize(a) + ") * sizeof(" + type + "));");
    w.line(cp.program + "." + exprs.arrayRef(a) + " = " + member + ".as<" + type + ">();");
  }
  if (decomposition && !decomposition->splits.empty()) {
    w.comment("MPI: the blocks of the terms of the reductions the ranks split, and their partial values.");
    printSplitBlocks(w, *decomposition, model, cp.program + ".");
    for (const map::TermSplit &split : decomposition->splits) {
      const model::Statement &statement = model.statements[split.statement];
      std::string member = cp.globalNames.fresh(splitBufferName(statement) + "Storage_");
      localMembers.push_back("polyc::rt::cuda::DeviceBuffer " + member + "; // MPI: " + statement.name +
                             "'s partial values");
      std::string type = exprs.typeName(statement.equation->array->elemType);
      w.line(member + ".resize(size_t(" + splitBufferSize(split, model, exprs, /*checked=*/true) + ") * sizeof(" + type +
             "));");
      w.line(cp.program + "." + splitBufferName(statement) + " = " + member + ".as<" + type + ">();");
    }
  }
  for (const std::string &line : cp.viewLines)
    w.line(line);
  w.line("return " + cp.program + ";");
  w.closeBlock();
  w.blank();
  w.comment("What a captured graph depends on: the index type, the sizes and the device arrays.");
  w.line(kernelTemplate({}));
  w.openBlock("static uint64_t graphKey(const " + cp.indexedDevice() + " &" + cp.program + ")");
  std::vector<std::string> keys{"uint64_t(sizeof(" + std::string(IndexType) + "))"};
  for (auto &p : program.params)
    keys.push_back("uint64_t(" + cp.program + "." + cIdentifier(p->name) + ")");
  for (const model::ArrayInfo &a : model.arrays)
    keys.push_back("uint64_t(reinterpret_cast<uintptr_t>(" + cp.program + "." + exprs.arrayRef(a) + "))");
  w.line("return polyc::rt::cuda::hashKey({" + llvm::join(keys, ", ") + "});");
  w.closeBlock();
  w.verbatim(cp.members.str());
  w.blank();
  for (const std::string &member : localMembers)
    w.line(member);
  for (const std::string &member : cp.memberVariables)
    w.line(member);
  w.closeBlock(";");
  w.blank();
  w.line("} // namespace");
  w.blank();

  // The C interface: host arrays in, host arrays out.
  w.comment("The C interface: copies the host arrays to the device, runs the program once, copies the outputs "
            "back. A CUDA error prints a message and exits with status 3.");
  w.openBlock("extern \"C\" " + runFunctionSignature(input));
  if (llvm::Error e = printContextFromArguments(input, exprs, w))
    return e;
  w.openBlock("try");
  w.line(computeType + " compute;");
  if (input.schedule.streaming) {
    w.line("polyc::rt::StreamSlices slices = polyc::rt::memorySlices(context);");
    w.line("compute.computeStreamed(context, slices);");
  } else {
    w.line("compute.upload(context);");
    w.line("compute.compute(context);");
    w.line("compute.download(context);");
  }
  w.elseBlock("catch (const std::exception &failure)");
  w.line("std::fprintf(stderr, \"" + prog + "_run: %s\\n\", failure.what());");
  w.line("std::exit(3);");
  w.closeBlock();
  printArgumentsFromContext(input, w);
  w.closeBlock();
  w.blank();
  w.comment("The executable: polyc::rt::runMain parses the command line, loads and checks the .npy inputs, "
            "times compute() with device events and writes the outputs. Define POLYC_NO_MAIN to use this "
            "file as a library.");
  w.line("#ifndef POLYC_NO_MAIN");
  w.openBlock("int main(int argc, char **argv)");
  w.line("polyc::rt::ProgramInfo info;");
  if (llvm::Error e = printProgramInfo(input, "info", w))
    return e;
  w.line(computeType + " compute;");
  if (input.mpi) {
    w.line("polyc::rt::cuda::selectRankDevice();");
    w.line("return polyc::rt::mpi::runMainMpi(argc, argv, info, compute);");
  } else {
    w.line("return polyc::rt::runMain(argc, argv, info, compute);");
  }
  w.closeBlock();
  w.line("#endif");

  CodeWriter file;
  printBanner(input, prog + ".cu", "CUDA code (nvcc, sm_90)", file);
  file.blank();
  file.line("#include \"" + prog + ".h\"");
  file.blank();
  printIncludes(w.str(), file);
  file.blank();
  if (input.model.anyLoopStopsEarly()) {
    file.comment(
        "Whether an iteration of a repeat loop that stops early changed an element (`until unchanged`).");
    file.line("__device__ int polyc_changed[3];");
    file.blank();
  }
  file.verbatim(w.str());

  std::vector<GeneratedFile> files;
  files.push_back({prog + ".cu", file.str()});
  files.push_back(emitLibraryHeader(input));
  return files;
}
