// Printing of the schedule's isl AST as C-family loops (see IslAstPrinter.h): bands are marked in the
// schedule tree so that every generated loop is known as a dimension of a band.
#include "compiler/codegen/IslAstPrinter.h"

#include "compiler/codegen/ProgramInterface.h"

#include "llvm/ADT/StringExtras.h"

#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/options.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/val.h>

#include <algorithm>
#include <cassert>
#include <functional>

using namespace polyc;
using namespace polyc::codegen;

namespace {
enum Prec { Ternary = 0, Or, And, Equality, Relational, Additive, Multiplicative, Unary, Atom };
const char *const MarkPrefix = "polyc_band";
} // namespace

// The C API calls the C++ bindings lack, wrapped once.
static isl::union_set nodeDomain(const isl::schedule_node &node) {
  return isl::manage(isl_schedule_node_get_domain(node.get()));
}
static unsigned scheduleDepth(const isl::schedule_node &node) {
  isl_size depth = isl_schedule_node_get_schedule_depth(node.get());
  return depth < 0 ? 0 : static_cast<unsigned>(depth);
}
static std::string tupleName(const isl::set &set) {
  const char *name = isl_set_get_tuple_name(set.get());
  return name ? name : "";
}
// An integer value as text; a rational one (not expected in schedules) as num/den.
static std::string valText(const isl::val &v) {
  if (v.is_int())
    return std::to_string(v.num_si());
  return std::to_string(v.num_si()) + "/" + std::to_string(isl_val_get_den_si(v.get()));
}
static isl_ast_expr_op_type opType(const isl::ast_expr &e) { return isl_ast_expr_op_get_type(e.get()); }
static isl::val affCoefficient(const isl::aff &aff, unsigned pos) {
  return isl::manage(isl_aff_get_coefficient_val(aff.get(), isl_dim_in, pos));
}
static unsigned affInputs(const isl::aff &aff) {
  isl_size n = isl_aff_dim(aff.get(), isl_dim_in);
  return n < 0 ? 0 : static_cast<unsigned>(n);
}

IslAstPrinter::IslAstPrinter(const CodegenInput &input, CodeWriter &w) : input_(input), w_(w) {
  takeGlobalNames(*input.model.program, names_);
  for (const model::Statement &s : input.model.statements)
    names_.take(s.name);
  for (size_t k = 0; k < input.schedule.timeTiled.size(); ++k)
    switchNames_.push_back(names_.fresh("time_tiled"));
}

IslAstPrinter::IslAstPrinter(const IslAstPrinter &outer, CodeWriter &w)
    : input_(outer.input_), w_(w), names_(outer.names_), bandViews_(outer.bandViews_),
      iteratorNames_(outer.iteratorNames_), switchNames_(outer.switchNames_), bandMember_(outer.bandMember_),
      depth_(outer.depth_), parallelDepth_(outer.parallelDepth_) {
  if (outer.currentBand_)
    currentBand_ = &bandViews_[outer.currentBand_ - outer.bandViews_.data()];
}

std::string IslAstPrinter::statementFunction(unsigned statement) const {
  return input_.model.statements[statement].name;
}

std::string IslAstPrinter::idName(const std::string &islName) const { return cIdentifier(islName); }

unsigned IslAstPrinter::statementIndex(const std::string &name) const {
  for (unsigned s = 0; s < input_.model.statements.size(); ++s)
    if (input_.model.statements[s].name == name)
      return s;
  return ~0u;
}

// ---------------------------------------------------------------------------------------------
// Marking the bands

static std::vector<unsigned> statementsOf(const isl::union_set &domain, const model::Model &model) {
  std::vector<unsigned> statements;
  for (unsigned s = 0; s < model.statements.size(); ++s) {
    bool present = false;
    domain.foreach_set([&](isl::set set) {
      if (tupleName(set) == model.statements[s].name)
        present = true;
    });
    if (present)
      statements.push_back(s);
  }
  return statements;
}

// The band tiled by `sizes`: a band of tile loops over a band of point loops (isl's tile loops step by
// the sizes, the point loops run over the schedule's own values: see printSchedule's options).
static isl::schedule_node tileBand(const isl::schedule_node_band &band, const std::vector<int64_t> &sizes) {
  isl::space space = band.partial_schedule().space();
  isl_multi_val *values = isl_multi_val_zero(space.release());
  for (size_t m = 0; m < sizes.size(); ++m)
    values = isl_multi_val_set_val(values, static_cast<int>(m), isl_val_int_from_si(band.ctx().get(), sizes[m]));
  return band.tile(isl::manage(values));
}

// The params' context for isl's AST generator, with the params the schedule adds: time tiling's switches,
// 0 or 1 (the tree's filters test for 1 and for any other value).
static isl::set buildContext(const CodegenInput &input) {
  isl::ctx ctx = input.schedule.tree.ctx();
  isl::set context = input.model.context.is_null() ? isl::set(ctx, "{ : }") : input.model.context;
  context = isl::manage(
      isl_set_align_params(context.release(), isl_union_set_get_space(input.schedule.tree.domain().get())));
  for (const schedule::TimeTiledRegion &region : input.schedule.timeTiled) {
    int pos = isl_set_find_dim_by_id(context.get(), isl_dim_param, region.param.get());
    context = isl::manage(isl_set_upper_bound_si(
        isl_set_lower_bound_si(context.release(), isl_dim_param, pos, 0), isl_dim_param, pos, 1));
  }
  return context;
}

std::string IslAstPrinter::paramExpr(const isl::pw_aff &value) const {
  return expr(isl::ast_build::from_context(buildContext(input_)).expr_from(value));
}

namespace {
// How markBands sets up each band's loops for AST generation.
struct LoopTypes {
  std::function<bool(const BandView &)> atomic;   // every member atomic (isl_ast_loop_atomic)
  std::function<bool(const BandView &)> separate; // the outer member separate (isl_ast_loop_separate)
  bool tile = false;                              // tile the bands that have tile sizes
};
} // namespace

// Inserts a mark "polyc_band<k>" above every band node, k in pre-order, and records a BandView for
// each; sets its loop types as `types` says. Returns a node at the position `node` had.
static isl::schedule_node markBands(isl::schedule_node node, const CodegenInput &input,
                                    std::vector<BandView> &views, std::vector<bool> &used,
                                    const LoopTypes &types) {
  bool marked = false;
  bool inPointBand = false; // the band was tiled: `node` is its point band, below the tile band
  if (node.isa<isl::schedule_node_band>()) {
    auto band = node.as<isl::schedule_node_band>();
    BandView view;
    view.statements = statementsOf(nodeDomain(node), input.model);
    view.partialSchedule = band.partial_schedule();
    view.firstScheduleDim = scheduleDepth(node);
    unsigned members = band.n_member();
    // The k-th band in pre-order is Schedule::bands[k] when they agree; otherwise the first unused
    // band over the same statements with as many dimensions. A statement with no instance for the
    // params given at compile time (y[i] = ... where i < K, --param K=0) is in the band but not in the
    // domain isl hands down here.
    auto matches = [&](unsigned b) {
      const schedule::Band &candidate = input.schedule.bands[b];
      std::vector<unsigned> sorted;
      for (unsigned st : candidate.statements)
        if (llvm::is_contained(view.statements, st) || !input.model.statements[st].domain.intersect_params(input.model.context).is_empty())
          sorted.push_back(st);
      std::sort(sorted.begin(), sorted.end());
      return !used[b] && sorted == view.statements && candidate.dimNames.size() == members;
    };
    unsigned k = static_cast<unsigned>(views.size());
    std::optional<unsigned> chosen;
    if (k < input.schedule.bands.size() && matches(k))
      chosen = k;
    for (unsigned b = 0; !chosen && b < input.schedule.bands.size(); ++b)
      if (matches(b))
        chosen = b;
    if (chosen) {
      used[*chosen] = true;
      view.index = *chosen;
      view.band = &input.schedule.bands[*chosen];
      for (const allocate::BandAllocation &a : input.allocation.bands)
        if (a.band == *chosen)
          view.allocation = &a;
      if (!view.allocation && *chosen < input.allocation.bands.size())
        view.allocation = &input.allocation.bands[*chosen];
    } else {
      view.index = ~0u;
    }
    if (types.atomic(view))
      for (unsigned m = 0; m < members; ++m)
        node = node.as<isl::schedule_node_band>().member_set_ast_loop_atomic(static_cast<int>(m));
    else if (types.tile && view.band && view.band->tileSizes.size() == members)
      view.tiled = true;
    else if (view.band && types.separate(view))
      node = node.as<isl::schedule_node_band>().member_set_ast_loop_separate(0);
    if (view.tiled)
      node = tileBand(node.as<isl::schedule_node_band>(), view.band->tileSizes);
    isl::id id(node.ctx(), MarkPrefix + std::to_string(views.size()));
    views.push_back(view);
    node = node.insert_mark(id).child(0);
    marked = true;
    if (view.tiled) {
      node = node.child(0);
      inPointBand = true;
    }
  }
  for (unsigned i = 0; i < node.n_children(); ++i)
    node = markBands(node.child(i), input, views, used, types).parent();
  if (inPointBand)
    node = node.parent();
  return marked ? node.parent() : node;
}

// The most times one band's mark occurs in `root`: 1 unless separated loops copied it.
static unsigned mostCopiesOfABand(const isl::ast_node &root) {
  std::map<std::string, unsigned> copies;
  isl_ast_node_foreach_descendant_top_down(
      root.get(),
      [](isl_ast_node *node, void *user) -> isl_bool {
        if (isl_ast_node_get_type(node) == isl_ast_node_mark) {
          isl_id *id = isl_ast_node_mark_get_id(node);
          ++(*static_cast<std::map<std::string, unsigned> *>(user))[isl_id_get_name(id)];
          isl_id_free(id);
        }
        return isl_bool_true;
      },
      &copies);
  unsigned most = 0;
  for (const auto &[name, count] : copies)
    most = std::max(most, count);
  return most;
}

llvm::Error IslAstPrinter::printSchedule() {
  try {
    isl::schedule tree = input_.schedule.tree;
    if (tree.is_null())
      return llvm::createStringError("code generation: the schedule has no schedule tree");
    LoopTypes types;
    // A streamed outer loop is one loop, not split into pieces: the hooks around its body run once a step.
    types.atomic = [this](const BandView &view) {
      return printsStatementsOnce(view) || (input_.schedule.streaming && view.index == 0);
    };
    types.separate = [this](const BandView &view) { return separatesIterations(view); };
    types.tile = tilesBands();
    isl::ctx ctx = tree.ctx();
    // Tile loops step by the tile size (for (i_tile = 0; i_tile < N; i_tile += 32)); point loops run
    // over the schedule's values (for (i = i_tile; ...)), not from 0 within the tile.
    isl_options_set_tile_scale_tile_loops(ctx.get(), 1);
    isl_options_set_tile_shift_point_loops(ctx.get(), 0);
    // Prefer min/max in bounds over if-splitting: shorter, more readable loops.
    isl_options_set_ast_build_detect_min_max(ctx.get(), 1);
    auto generate = [&](const LoopTypes &loopTypes) {
      std::vector<bool> used(input_.schedule.bands.size(), false);
      bandViews_.clear();
      isl::schedule marked = markBands(tree.root(), input_, bandViews_, used, loopTypes).schedule();
      return isl::ast_build::from_context(buildContext(input_)).node_from(marked);
    };
    isl::ast_node root = generate(types);
    // Separated iterations copy the bands inside once per piece; past a few copies the guards they save
    // are not worth the code (and the compile time) they add.
    if (mostCopiesOfABand(root) > MaxSeparatedCopies) {
      types.separate = [](const BandView &) { return false; };
      root = generate(types);
    }
    printNode(root);
    if (printsStepHooks() && input_.schedule.streaming && stepLoops_ != 1)
      return llvm::createStringError(
          "--stream: the outer loop over " + input_.schedule.streaming->stepName +
          " is not one loop in the generated code (a single step, fixed by --param?)");
  } catch (const isl::exception &e) {
    return llvm::createStringError(std::string("code generation: isl failed: ") + e.what());
  }
  return llvm::Error::success();
}

// ---------------------------------------------------------------------------------------------
// Nodes

void IslAstPrinter::printNode(const isl::ast_node &node) {
  if (node.isa<isl::ast_node_for>())
    return printFor(node.as<isl::ast_node_for>());
  if (node.isa<isl::ast_node_if>())
    return printIf(node.as<isl::ast_node_if>());
  if (node.isa<isl::ast_node_block>()) {
    isl::ast_node_list children = node.as<isl::ast_node_block>().children();
    for (unsigned i = 0; i < children.size(); ++i)
      printNode(children.at(i));
    return;
  }
  if (node.isa<isl::ast_node_mark>())
    return printMark(node.as<isl::ast_node_mark>());
  if (node.isa<isl::ast_node_user>())
    return printUser(node.as<isl::ast_node_user>());
}

void IslAstPrinter::printMark(const isl::ast_node_mark &node) {
  std::string name = node.id().name();
  if (!llvm::StringRef(name).starts_with(MarkPrefix))
    return printNode(node.node());
  unsigned k = std::stoul(name.substr(strlen(MarkPrefix)));
  assert(k < bandViews_.size());
  const BandView *saved = currentBand_;
  currentBand_ = &bandViews_[k];
  printBand(bandViews_[k], node.node());
  currentBand_ = saved;
}

void IslAstPrinter::printBand(const BandView &, const isl::ast_node &body) { printNode(body); }

bool IslAstPrinter::separatesIterations(const BandView &band) const {
  // A loop that stops early stays one loop, which its `break` leaves.
  if (band.band && band.band->stopsWhenUnchanged)
    return false;
  return input_.mapping && band.index < input_.mapping->bands.size() &&
         input_.mapping->bands[band.index].placement == map::Placement::HostLoop;
}

bool IslAstPrinter::mayComputePointsByGroups(const BandView &band) {
  const allocate::BandAllocation *allocation = band.allocation;
  return allocation && (allocation->kind == allocate::AllocationKind::Reduction ||
                        allocation->otherwise == allocate::AllocationKind::Reduction);
}

std::vector<unsigned> IslAstPrinter::statementsUnder(const isl::ast_node &node) const {
  std::vector<unsigned> statements;
  std::function<void(const isl::ast_node &)> visit = [&](const isl::ast_node &n) {
    if (n.isa<isl::ast_node_for>())
      return visit(n.as<isl::ast_node_for>().body());
    if (n.isa<isl::ast_node_if>()) {
      auto i = n.as<isl::ast_node_if>();
      visit(i.then_node());
      if (i.has_else_node())
        visit(i.else_node());
      return;
    }
    if (n.isa<isl::ast_node_block>()) {
      isl::ast_node_list children = n.as<isl::ast_node_block>().children();
      for (unsigned i = 0; i < children.size(); ++i)
        visit(children.at(i));
      return;
    }
    if (n.isa<isl::ast_node_mark>())
      return visit(n.as<isl::ast_node_mark>().node());
    if (n.isa<isl::ast_node_user>()) {
      isl::ast_expr call = n.as<isl::ast_node_user>().expr();
      std::string name = call.as<isl::ast_expr_op>().arg(0).as<isl::ast_expr_id>().id().name();
      unsigned s = statementIndex(name);
      if (s != ~0u && std::find(statements.begin(), statements.end(), s) == statements.end())
        statements.push_back(s);
    }
  };
  visit(node);
  std::sort(statements.begin(), statements.end());
  return statements;
}

void IslAstPrinter::printFor(const isl::ast_node_for &node) {
  std::string islName = node.iterator().as<isl::ast_expr_id>().id().name();
  LoopView loop;
  loop.depth = depth_;
  loop.insideParallel = parallelDepth_ > 0;
  loop.statements = statementsUnder(node);
  // isl names the iterator of schedule dimension k "c<k>": that finds the band member.
  unsigned scheduleDim = ~0u;
  if (islName.size() > 1 && islName[0] == 'c' && llvm::all_of(islName.substr(1), llvm::isDigit))
    scheduleDim = std::stoul(islName.substr(1));
  std::string base = "c" + std::to_string(depth_);
  if (currentBand_ && scheduleDim != ~0u && scheduleDim >= currentBand_->firstScheduleDim) {
    loop.band = currentBand_;
    loop.member = scheduleDim - currentBand_->firstScheduleDim;
    if (currentBand_->tiled && currentBand_->band) {
      unsigned members = static_cast<unsigned>(currentBand_->band->tileSizes.size());
      loop.tileLoop = loop.member < members;
      if (!loop.tileLoop)
        loop.member -= members;
    }
    if (currentBand_->band && loop.member < currentBand_->band->dimNames.size()) {
      // A skewed member reads as its expression ("t + i"): its loop keeps the generic name.
      const std::string &name = currentBand_->band->dimNames[loop.member];
      if (isIdentifier(name))
        base = loop.tileLoop ? name + "_tile" : name;
      loop.coincident = loop.member < currentBand_->band->coincident.size() &&
                        currentBand_->band->coincident[loop.member];
    }
  }
  NameScope savedNames = names_;
  loop.iterator = names_.fresh(cIdentifier(base));
  iteratorNames_[islName] = loop.iterator;
  setBounds(loop, node);
  narrowLoop(loop);
  ++depth_;
  printFor(loop, node);
  --depth_;
  iteratorNames_.erase(islName);
  names_ = savedNames;
}

std::string IslAstPrinter::forHeader(const LoopView &loop, const std::string &indexType) const {
  std::string step = loop.inc == "1" ? "++" + loop.iterator : loop.iterator + " += " + loop.inc;
  return "for (" + indexType + " " + loop.iterator + " = " + loop.init + "; " + loop.cond + "; " + step + ")";
}

std::string IslAstPrinter::describeDimension(const BandView &band, unsigned member) const {
  std::string name = band.band && member < band.band->dimNames.size() ? band.band->dimNames[member]
                                                                       : "c" + std::to_string(member);
  // The dimension as a function of each statement's own dimensions.
  std::vector<std::pair<std::string, std::string>> perStatement; // (statement, text)
  try {
    if (!band.partialSchedule.is_null() && member < band.partialSchedule.size()) {
      isl::pw_multi_aff_list pieces = band.partialSchedule.at(member).pw_multi_aff_list();
      for (unsigned p = 0; p < pieces.size(); ++p) {
        isl::pw_multi_aff pma = pieces.at(p);
        std::string stmt = tupleName(pma.domain());
        unsigned s = statementIndex(stmt);
        if (s == ~0u || pma.n_piece() != 1)
          continue;
        pma.foreach_piece([&](isl::set, isl::multi_aff ma) {
          isl::aff aff = ma.at(0);
          const std::vector<std::string> &dims = input_.model.statements[s].dimNames;
          std::string text;
          for (unsigned k = 0; k < affInputs(aff); ++k) {
            isl::val c = affCoefficient(aff, k);
            if (c.is_zero())
              continue;
            std::string dim = k < dims.size() ? dims[k] : "x" + std::to_string(k);
            std::string magnitude = c.abs().is_one() ? "" : valText(c.abs()) + " * ";
            if (text.empty())
              text = (c.is_neg() ? "-" : "") + magnitude + dim;
            else
              text += (c.is_neg() ? " - " : " + ") + magnitude + dim;
          }
          isl::val k0 = aff.constant_val();
          if (!k0.is_zero())
            text += text.empty() ? valText(k0) : (k0.is_neg() ? " - " : " + ") + valText(k0.abs());
          perStatement.push_back({stmt, text.empty() ? "0" : text});
        });
      }
    }
  } catch (const isl::exception &) {
    perStatement.clear();
  }
  std::sort(perStatement.begin(), perStatement.end());
  std::string text = name;
  bool same = !perStatement.empty() && llvm::all_of(perStatement, [&](auto &p) {
    return p.second == perStatement.front().second;
  });
  if (same && perStatement.front().second != name)
    text += " = " + perStatement.front().second;
  else if (!same)
    for (auto &[stmt, t] : perStatement)
      text += (&t == &perStatement.front().second ? " = " : ", ") + t + " in " + stmt;
  if (member == 0 && band.band && !band.band->hyperplane.empty()) {
    std::string pi;
    for (int64_t c : band.band->hyperplane)
      pi += (pi.empty() ? "" : ", ") + std::to_string(c);
    text += " (Lamport hyperplane pi = (" + pi + "))";
  }
  return text;
}

std::string IslAstPrinter::loopComment(const LoopView &loop) const {
  std::string stmts;
  for (unsigned s : loop.statements)
    stmts += (stmts.empty() ? "" : ", ") + input_.model.statements[s].name;
  if (!loop.band || !loop.band->band)
    return stmts + ": schedule dimension " + loop.iterator;
  std::string text = stmts + ", band " + std::to_string(loop.band->index) + " dimension " +
                     std::to_string(loop.member) + ": " + describeDimension(*loop.band, loop.member);
  if (loop.tileLoop)
    text += ", tiles of " + std::to_string(loop.band->band->tileSizes[loop.member]);
  if (loop.band->band->stopsWhenUnchanged)
    return text + "; the repeat loop, in order, until an iteration changes nothing";
  if (loop.band->band->isSequentialRepeat)
    return text + "; the repeat loop, in order";
  return text + (loop.coincident ? "; carries no dependence" : "; carries dependences, in order");
}

void IslAstPrinter::printFor(const LoopView &loop, const isl::ast_node_for &node) {
  w_.comment(loopComment(loop));
  markParallel_ = false;
  printLoopPragma(loop);
  bool parallel = markParallel_;
  markParallel_ = false;
  parallelDepth_ += parallel;
  const bool until = stopsWhenUnchanged(loop);
  const std::vector<std::string> setup = until ? untilSetup(loop) : std::vector<std::string>();
  if (!setup.empty()) {
    w_.openBlock("");
    for (const std::string &line : setup)
      w_.line(line);
  }
  w_.openBlock(forHeader(loop));
  bool hooks = isStreamedStep(loop);
  if (hooks) {
    ++stepLoops_;
    w_.line("polyc_steps->beforeStep(" + loop.iterator + ");");
  }
  if (until && !resetChanged(loop).empty())
    w_.line(resetChanged(loop));
  printNode(node.body());
  if (hooks)
    w_.line("polyc_steps->afterStep(" + loop.iterator + ");");
  if (until) // after the step's hooks: a streamed step's outputs leave before the loop does
    w_.line("if (" + stopsNow(loop) + ") break;");
  w_.closeBlock();
  if (!setup.empty())
    w_.closeBlock();
  parallelDepth_ -= parallel;
}

// Where isl prints no loop (one iteration), the body runs once, and nothing is left to stop.
bool IslAstPrinter::stopsWhenUnchanged(const LoopView &loop) {
  return loop.band && loop.band->band && loop.band->band->stopsWhenUnchanged && loop.member == 0 &&
         !loop.tileLoop;
}

bool IslAstPrinter::mayRunAhead(const LoopView &loop) const {
  return stopsWhenUnchanged(loop) && llvm::all_of(loop.band->statements, [&](unsigned s) {
           const model::Statement &statement = input_.model.statements[s];
           return (!statement.isUpdate() || statement.signalsChange) &&
                  !model::mentionsRepeatVariable(statement);
         });
}

bool IslAstPrinter::isStreamedStep(const LoopView &loop) const {
  return printsStepHooks() && input_.schedule.streaming && loop.band && loop.band->index == 0 &&
         loop.member == 0 && !loop.tileLoop;
}

void IslAstPrinter::printIf(const isl::ast_node_if &node) {
  w_.openBlock("if (" + expr(node.cond()) + ")");
  printNode(node.then_node());
  if (node.has_else_node()) {
    isl::ast_node otherwise = node.else_node();
    w_.elseBlock();
    printNode(otherwise);
  }
  w_.closeBlock();
}

void IslAstPrinter::printUser(const isl::ast_node_user &node) {
  isl::ast_expr_op call = node.expr().as<isl::ast_expr_op>();
  StatementCall sc;
  sc.statement = statementIndex(call.arg(0).as<isl::ast_expr_id>().id().name());
  assert(sc.statement != ~0u && "every AST leaf is a statement of the model");
  for (unsigned i = 1; i < call.n_arg(); ++i)
    sc.args.push_back(expr(call.arg(i)));
  printStatementCall(sc);
}

void IslAstPrinter::printStatementCall(const StatementCall &call) {
  w_.line(statementFunction(call.statement) + "(" + llvm::join(call.args, ", ") + ");");
}

// ---------------------------------------------------------------------------------------------
// Expressions

std::string IslAstPrinter::expr(const isl::ast_expr &e) const {
  int prec;
  return expr(e, prec);
}

void IslAstPrinter::setBounds(LoopView &loop, const isl::ast_node_for &node) const {
  auto operand = [&](const isl::ast_expr &e, int needed) {
    int prec;
    std::string text = expr(e, prec);
    return prec < needed ? "(" + text + ")" : text;
  };
  loop.init = operand(node.init(), Additive);
  loop.cond = operand(node.cond(), And + 1);
  loop.inc = operand(node.inc(), Multiplicative + 1);
}

std::string IslAstPrinter::expr(const isl::ast_expr &e, int &prec) const {
  prec = Atom;
  if (e.isa<isl::ast_expr_id>()) {
    isl::id id = e.as<isl::ast_expr_id>().id();
    for (size_t k = 0; k < input_.schedule.timeTiled.size(); ++k)
      if (id.get() == input_.schedule.timeTiled[k].param.get())
        return switchNames_[k];
    std::string name = id.name();
    auto it = iteratorNames_.find(name);
    return it != iteratorNames_.end() ? it->second : idName(name);
  }
  if (e.isa<isl::ast_expr_int>()) {
    isl::val v = e.as<isl::ast_expr_int>().val();
    if (v.is_neg())
      prec = Unary;
    return valText(v);
  }
  isl::ast_expr_op op = e.as<isl::ast_expr_op>();
  auto arg = [&](unsigned i, int needed) {
    int p;
    std::string text = expr(op.arg(i), p);
    return p < needed ? "(" + text + ")" : text;
  };
  auto binary = [&](const char *spelling, int level) {
    prec = level;
    return arg(0, level) + " " + spelling + " " + arg(1, level + 1);
  };
  auto function = [&](const std::string &name) {
    // isl's min and max take two or more arguments: nest them.
    std::string text = expr(op.arg(0));
    for (unsigned i = 1; i < op.n_arg(); ++i)
      text = name + "(" + text + ", " + expr(op.arg(i)) + ")";
    return text;
  };
  switch (opType(e)) {
  case isl_ast_expr_op_and:
  case isl_ast_expr_op_and_then:
    return binary("&&", And);
  case isl_ast_expr_op_or:
  case isl_ast_expr_op_or_else:
    prec = Or;
    return arg(0, And) + " || " + arg(1, And);
  case isl_ast_expr_op_max:
    return function(maxFunction());
  case isl_ast_expr_op_min:
    return function(minFunction());
  case isl_ast_expr_op_minus:
    prec = Unary;
    return "-" + arg(0, Atom);
  case isl_ast_expr_op_add:
    // isl writes -H + t: print t - H.
    if (op.arg(0).isa<isl::ast_expr_op>() && opType(op.arg(0)) == isl_ast_expr_op_minus) {
      prec = Additive;
      isl::ast_expr negated = op.arg(0).as<isl::ast_expr_op>().arg(0);
      int p;
      std::string rhs = expr(negated, p);
      return arg(1, Additive) + " - " + (p <= Additive ? "(" + rhs + ")" : rhs);
    }
    return binary("+", Additive);
  case isl_ast_expr_op_sub:
    return binary("-", Additive);
  case isl_ast_expr_op_mul:
    return binary("*", Multiplicative);
  case isl_ast_expr_op_div:    // exact division
  case isl_ast_expr_op_pdiv_q: // the dividend is known non-negative: C's / is the floor
    return binary("/", Multiplicative);
  case isl_ast_expr_op_fdiv_q:
    return floorDivFunction() + "(" + expr(op.arg(0)) + ", " + expr(op.arg(1)) + ")";
  case isl_ast_expr_op_pdiv_r:
  case isl_ast_expr_op_zdiv_r:
    return binary("%", Multiplicative);
  case isl_ast_expr_op_cond:
  case isl_ast_expr_op_select:
    prec = Ternary;
    return arg(0, Or) + " ? " + arg(1, Or) + " : " + arg(2, Ternary);
  case isl_ast_expr_op_eq:
    return binary("==", Equality);
  case isl_ast_expr_op_le:
    return binary("<=", Relational);
  case isl_ast_expr_op_lt:
    return binary("<", Relational);
  case isl_ast_expr_op_ge:
    return binary(">=", Relational);
  case isl_ast_expr_op_gt:
    return binary(">", Relational);
  case isl_ast_expr_op_call: {
    std::vector<std::string> args;
    for (unsigned i = 1; i < op.n_arg(); ++i)
      args.push_back(expr(op.arg(i)));
    return expr(op.arg(0)) + "(" + llvm::join(args, ", ") + ")";
  }
  case isl_ast_expr_op_access: {
    std::string text = arg(0, Atom);
    for (unsigned i = 1; i < op.n_arg(); ++i)
      text += "[" + expr(op.arg(i)) + "]";
    return text;
  }
  case isl_ast_expr_op_member:
    return arg(0, Atom) + "." + expr(op.arg(1));
  case isl_ast_expr_op_address_of:
    prec = Unary;
    return "&" + arg(0, Atom);
  default:
    break;
  }
  return e.to_C_str();
}

bool polyc::codegen::readsEarlierInstances(const model::Model &model, const BandView *band,
                                           bool insideKernelLoop) {
  if (!band)
    return false;
  if (insideKernelLoop)
    return true;
  for (unsigned writer : band->statements)
    for (unsigned reader : band->statements)
      if (reader != writer && llvm::any_of(model.statements[reader].reads, [&](const model::Access &read) {
            return read.array == model.statements[writer].write.array;
          }))
        return true;
  return false;
}
