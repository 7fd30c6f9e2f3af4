// Time tiling of iterated stencils (see TimeTiling.h).
#include "compiler/schedule/TimeTiling.h"

#include "compiler/model/IslUtil.h"

#include "llvm/ADT/STLExtras.h"

#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>
#include <isl/val.h>

#include <functional>
#include <optional>

namespace polyc::schedule {

namespace iu = polyc::islutil;
using model::Model;

namespace {

// The skewed bands time tiling takes: the time step and one to three space dimensions.
constexpr unsigned MinSkewedMembers = 2, MaxSkewedMembers = 4;

// The statements with instances under `node`, by index into Model::statements.
std::vector<unsigned> statementsUnder(const Model &model, const isl::schedule_node &node) {
  isl::union_set domain = isl::manage(isl_schedule_node_get_domain(node.get()));
  std::vector<unsigned> result;
  for (unsigned s = 0; s < model.statements.size(); ++s)
    if (!domain.extract_set(model.statements[s].domain.space()).is_empty())
      result.push_back(s);
  return result;
}

// Whether every band below `node` (not `node` itself) runs all its members in parallel.
bool onlyParallelBandsBelow(const isl::schedule_node &node) {
  bool parallel = true;
  node.foreach_descendant_top_down([&](const isl::schedule_node &below) {
    if (below.get() == node.get() || !below.isa<isl::schedule_node_band>())
      return true;
    auto band = below.as<isl::schedule_node_band>();
    for (unsigned m = 0; m < band.n_member(); ++m)
      parallel &= band.member_get_coincident(static_cast<int>(m));
    return parallel;
  });
  return parallel;
}

// Whether the band's first member is, for each of the `statements` statements under it, one affine
// piece that involves the statement's dimension 0 (the time step) and no other dimension, and that
// `accepts`.
bool firstMemberFollowsTime(const isl::schedule_node_band &band, size_t statements,
                            const std::function<bool(const iu::AffCoefficients &)> &accepts) {
  isl::pw_multi_aff_list pieces = band.partial_schedule().at(0).pw_multi_aff_list();
  for (unsigned p = 0; p < pieces.size(); ++p) {
    isl::pw_multi_aff piece = pieces.at(static_cast<int>(p));
    if (piece.n_piece() != 1)
      return false;
    iu::AffCoefficients aff = iu::coefficients(piece.as_multi_aff().at(0));
    if (!aff.integral || aff.dims.empty() || aff.dims[0] < 1 ||
        llvm::any_of(llvm::drop_begin(aff.dims), [](int64_t c) { return c != 0; }) || !accepts(aff))
      return false;
  }
  return pieces.size() == statements;
}

// Whether the band's one member is dimension 0 of each statement under it (the time step `t`), and
// every statement has a space dimension after it.
bool isTimeMember(const isl::schedule_node_band &band, const std::vector<unsigned> &stmts) {
  return firstMemberFollowsTime(band, stmts.size(), [](const iu::AffCoefficients &aff) {
    return aff.dims.size() >= 2 && aff.dims[0] == 1 && aff.constant == 0 &&
           llvm::none_of(aff.params, [](int64_t c) { return c != 0; });
  });
}

// Whether each instance of the statement reads a fixed handful of elements: no reduction, no window, no
// gather. Time tiles gain where the steps are bound by memory; a reduction's work a point already
// amortises its reads (the optical flow's convolutions over frames ran 1.7x slower time-tiled).
bool readsAFewElements(const model::Statement &stmt) {
  return stmt.reductions.empty() && llvm::all_of(stmt.reads, [](const model::Access &read) {
           return read.relation.is_null() || read.relation.is_single_valued();
         });
}

// Whether time tiling may replace the band at `node`: the time loop of a region of steps (one sequential
// member, the statements' time dimension, with only parallel bands below it: Jacobi, heat, FDTD), over
// statements outside any repeat block that read a few elements each. Inside a tile's point, a step's own
// loops run as the step-by-step schedule has them. (An in-place sweep's hyperplane band, seidel-2d's, was
// tiled too, until its hyperplane form got faster than its tiles: 0.25x at MEDIUM, 0.44x at LARGE,
// docs/performance.md "Time tiling".)
bool isStepRegion(const Model &model, const isl::schedule_node &node, const Band &info) {
  if (!node.isa<isl::schedule_node_band>() || info.isSequentialRepeat || !info.hyperplane.empty())
    return false;
  auto band = node.as<isl::schedule_node_band>();
  std::vector<unsigned> stmts = statementsUnder(model, node);
  if (stmts.empty() || llvm::any_of(stmts, [&](unsigned s) {
        return model.statements[s].repeatDims != 0 || !readsAFewElements(model.statements[s]);
      }))
    return false;
  return onlyParallelBandsBelow(node) && band.n_member() == 1 && !band.member_get_coincident(0) &&
         isTimeMember(band, stmts);
}

// { A[a] -> A[a'] : a'_dim = a_dim + window, the other indices equal }: the element that a folded
// dimension stores next in a's slot.
isl::map nextInSlot(const isl::id &array, unsigned rank, const FoldedStorage &fold, isl::ctx ctx) {
  std::string a, b;
  for (unsigned k = 0; k < rank; ++k) {
    std::string ak = "a" + std::to_string(k);
    a += (k ? ", " : "") + ak;
    b += (k ? ", " : "") + (k == fold.dim ? ak + " + " + std::to_string(fold.windowValue) : ak);
  }
  isl::map next(ctx, "{ [" + a + "] -> [" + b + "] }");
  return next.set_domain_tuple(array).set_range_tuple(array);
}

// The order that the folded storage asks of the statements `stmts`: the writer of a slot's next element
// after every read of the element before it (anti) and after its writer (output).
isl::union_map slotReuse(const Model &model, const Schedule &schedule, const std::vector<unsigned> &stmts) {
  isl::union_map result = isl::union_map::empty(model.ctx);
  for (const FoldedStorage &fold : schedule.folded) {
    if (fold.windowValue < 1)
      continue;
    isl::union_map writes = isl::union_map::empty(model.ctx), reads = isl::union_map::empty(model.ctx);
    std::optional<isl::map> next;
    for (unsigned s : stmts) {
      const model::Statement &stmt = model.statements[s];
      if (stmt.write.array == fold.array) {
        writes = writes.unite(isl::union_map(stmt.write.relation));
        if (!next)
          next = nextInSlot(stmt.write.relation.get_range_tuple_id(), stmt.write.relation.range_tuple_dim(),
                            fold, model.ctx);
      }
      for (const model::Access &read : stmt.reads)
        if (read.array == fold.array && !read.relation.is_null())
          reads = reads.unite(isl::union_map(read.relation));
    }
    if (!next)
      continue;
    isl::union_map nextWriter = isl::union_map(*next).apply_range(writes.reverse());
    result = result.unite(writes.apply_range(nextWriter)).unite(reads.apply_range(nextWriter));
  }
  return result;
}

// The node removed from its tree (its child, or a leaf, in its place; the C++ bindings lack it).
isl::schedule_node deleteNode(const isl::schedule_node &node) {
  return isl::manage(isl_schedule_node_delete(node.copy()));
}

// isl options set for one computation and restored after it (they belong to the context).
class ScopedIslOptions {
public:
  explicit ScopedIslOptions(isl::ctx ctx) : ctx_(ctx.get()) {
    outerCoincidence_ = isl_options_get_schedule_outer_coincidence(ctx_);
    bandDepth_ = isl_options_get_schedule_maximize_band_depth(ctx_);
    serialize_ = isl_options_get_schedule_serialize_sccs(ctx_);
    scale_ = isl_options_get_tile_scale_tile_loops(ctx_);
    shift_ = isl_options_get_tile_shift_point_loops(ctx_);
  }
  ~ScopedIslOptions() {
    isl_options_set_schedule_outer_coincidence(ctx_, outerCoincidence_);
    isl_options_set_schedule_maximize_band_depth(ctx_, bandDepth_);
    isl_options_set_schedule_serialize_sccs(ctx_, serialize_);
    isl_options_set_tile_scale_tile_loops(ctx_, scale_);
    isl_options_set_tile_shift_point_loops(ctx_, shift_);
  }
  ScopedIslOptions(const ScopedIslOptions &) = delete;
  ScopedIslOptions &operator=(const ScopedIslOptions &) = delete;

private:
  isl_ctx *ctx_;
  int outerCoincidence_, bandDepth_, serialize_, scale_, shift_;
};

// The region's statements as one permutable band of at least two members whose first member is the
// time step (Pluto's objective: isl's scheduler without the outer parallel member that the step-by-step
// schedule asks for), or none. `order` holds every dependence the schedule must respect.
std::optional<isl::schedule> skewedBand(const Model &model, const analysis::DependenceGraph &deps,
                                        const std::vector<unsigned> &stmts, const isl::union_map &order) {
  isl::union_set domain = isl::union_set::empty(model.ctx);
  for (unsigned s : stmts)
    domain = domain.unite(isl::union_set(model.statements[s].domain));
  auto within = [&](const isl::union_map &relation) {
    return relation.intersect_domain(domain).intersect_range(domain);
  };
  isl::ctx ctx = model.ctx;
  isl_options_set_schedule_outer_coincidence(ctx.get(), 0);
  isl_options_set_schedule_maximize_band_depth(ctx.get(), 1);
  isl_options_set_schedule_serialize_sccs(ctx.get(), 0);
  isl::schedule result;
  try {
    result = isl::schedule_constraints::on_domain(domain)
                 .set_context(model.context)
                 .set_validity(within(order))
                 .set_coincidence(within(order)) // so that members are marked parallel only when they are
                 .set_proximity(within(deps.flow()))
                 .compute_schedule();
  } catch (const isl::exception &) {
    // "unable to carry dependences" (fuzz seed 8100123, a backward 1-D recurrence): no tiles, then.
    return std::nullopt;
  }
  if (result.is_null() || result.root().n_children() != 1)
    return std::nullopt;
  isl::schedule_node top = result.root().child(0);
  if (!top.isa<isl::schedule_node_band>())
    return std::nullopt;
  auto band = top.as<isl::schedule_node_band>();
  if (!band.permutable() || statementsUnder(model, top) != stmts)
    return std::nullopt;
  if (band.n_member() < MinSkewedMembers || band.n_member() > MaxSkewedMembers)
    return std::nullopt;
  // The first member must advance with the time step and not with space: (t, 2t + i, ...) and not
  // (2t + i, ...), whose tiles would not be the time tiles the wavefront below assumes.
  if (!firstMemberFollowsTime(band, stmts.size(), [](const iu::AffCoefficients &) { return true; }))
    return std::nullopt;
  return result;
}

isl::schedule_node_band skewedBandOf(const isl::schedule &skewed) {
  return skewed.root().child(0).as<isl::schedule_node_band>();
}

// The tile sizes: the time step's and the first space member's (options.sizes, else by the stencil's
// dimensions: a tile's point is a row of a 2-D stencil, a plane of a 3-D one, an element of a 1-D one).
// Measured on a 2-core EPYC (docs/performance.md, "Time tiling"): 16 x 64 for 2-D; 64 x 8192 for 1-D;
// 8 x 16 for 3-D, whose 16 x 64 tiles of planes outgrow the caches (heat-3d at 250^3: 1.01x the steps,
// 1.30x with 8 x 16). The last member of a 2-D stencil is the step's innermost loop and stays whole
// (unit stride, vectorised).
std::vector<int64_t> tileSizes(const TimeTilingOptions &options, unsigned skewedMembers) {
  if (options.sizes.empty())
    return skewedMembers == 2   ? std::vector<int64_t>{64, 8192}
           : skewedMembers == 4 ? std::vector<int64_t>{8, 16}
                                : std::vector<int64_t>{16, 64};
  return {options.sizes[0], options.sizes.size() > 1 ? options.sizes[1] : options.sizes[0]};
}

// The first two members of `schedule`'s top band (the time step and the first skewed space member) cut
// into tiles (tileSizes), the tile loops made a wavefront: (tile of t + tile of x, tile of x), the second
// member parallel; below them the tile's points along those two members (along t alone for a 1-D
// stencil). The band's other members are dropped: the step's own loops go there instead.
isl::schedule tileAsWavefront(const isl::schedule &schedule, const TimeTilingOptions &options) {
  isl::ctx ctx = schedule.ctx();
  isl_options_set_tile_scale_tile_loops(ctx.get(), 0);
  isl_options_set_tile_shift_point_loops(ctx.get(), 0);
  auto band = skewedBandOf(schedule);
  std::vector<int64_t> sizes = tileSizes(options, band.n_member());
  // A 1-D stencil's points along the row are single elements: there a tile's point is a step, and the
  // step's own loop, bounded by the tile, runs each statement's part of the row in turn (one element a
  // point, its statements interleaved, ran 3 to 4x slower than the steps; docs/performance.md).
  bool pointIsAStep = band.n_member() == sizes.size();
  if (band.n_member() > sizes.size()) {
    isl::schedule_node rest = band.split(static_cast<int>(sizes.size())).child(0);
    band = isl::manage(isl_schedule_node_cut(rest.release())).parent().as<isl::schedule_node_band>();
  }
  isl_multi_val *values = isl_multi_val_zero(band.partial_schedule().space().release());
  for (size_t m = 0; m < sizes.size(); ++m)
    values = isl_multi_val_set_val(values, static_cast<int>(m), isl_val_int_from_si(ctx.get(), sizes[m]));
  isl::schedule_node_band tiles = band.tile(isl::manage(values));
  isl::multi_union_pw_aff tileLoops = tiles.partial_schedule();
  isl::multi_union_pw_aff wave = tileLoops.set_at(0, tileLoops.at(0).add(tileLoops.at(1)));
  isl::schedule_node node = deleteNode(tiles).insert_partial_schedule(wave);
  auto wavefront = node.as<isl::schedule_node_band>().set_permutable(true).member_set_coincident(1, true);
  auto points = wavefront.child(0).as<isl::schedule_node_band>();
  for (unsigned m = 0; m < sizes.size(); ++m)
    points = points.member_set_coincident(static_cast<int>(m), false);
  if (pointIsAStep)
    return isl::manage(isl_schedule_node_cut(points.split(1).child(0).release())).schedule();
  return points.schedule();
}

// Inserts at the leaf `at` a copy of the subtree rooted at `from` (bands, sequences, sets and their
// filters: what isl's scheduler and tiling build; see graftable). Returns the node at `at`'s position.
isl::schedule_node graft(isl::schedule_node at, const isl::schedule_node &from) {
  if (from.isa<isl::schedule_node_leaf>())
    return at;
  if (from.isa<isl::schedule_node_band>()) {
    auto source = from.as<isl::schedule_node_band>();
    auto band = at.insert_partial_schedule(source.partial_schedule()).as<isl::schedule_node_band>();
    band = band.set_permutable(source.permutable());
    for (unsigned m = 0; m < source.n_member(); ++m)
      band =
          band.member_set_coincident(static_cast<int>(m), source.member_get_coincident(static_cast<int>(m)));
    return graft(band.child(0), from.child(0)).parent();
  }
  if (from.isa<isl::schedule_node_sequence>() || from.isa<isl::schedule_node_set>()) {
    isl::union_set_list filters(from.ctx(), static_cast<int>(from.n_children()));
    for (unsigned c = 0; c < from.n_children(); ++c)
      filters = filters.add(from.child(static_cast<int>(c)).as<isl::schedule_node_filter>().filter());
    isl::schedule_node node =
        from.isa<isl::schedule_node_sequence>() ? at.insert_sequence(filters) : at.insert_set(filters);
    for (unsigned c = 0; c < from.n_children(); ++c)
      node = graft(node.child(static_cast<int>(c)).child(0), from.child(static_cast<int>(c)).child(0))
                 .parent()
                 .parent();
    return node;
  }
  return at; // not reached: graftable() holds
}

bool graftable(const isl::schedule_node &root) {
  return root.every_descendant([](const isl::schedule_node &node) {
    return node.isa<isl::schedule_node_band>() || node.isa<isl::schedule_node_sequence>() ||
           node.isa<isl::schedule_node_set>() || node.isa<isl::schedule_node_filter>() ||
           node.isa<isl::schedule_node_leaf>();
  });
}

// The k-th band node of `tree` in pre-order.
std::optional<isl::schedule_node> bandNode(const isl::schedule &tree, unsigned k) {
  std::optional<isl::schedule_node> found;
  unsigned index = 0;
  tree.root().foreach_descendant_top_down([&](const isl::schedule_node &node) {
    if (found)
      return false;
    if (node.isa<isl::schedule_node_band>() && index++ == k)
      found = node;
    return !found;
  });
  return found;
}

unsigned bandsIn(const isl::schedule_node &node) {
  unsigned count = 0;
  node.foreach_descendant_top_down([&](const isl::schedule_node &below) {
    count += below.isa<isl::schedule_node_band>();
    return true;
  });
  return count;
}

std::string sizeList(const std::vector<int64_t> &sizes) {
  std::string text;
  for (int64_t size : sizes)
    text += (text.empty() ? "" : " x ") + std::to_string(size);
  return text;
}

std::string statementList(const Model &model, const std::vector<unsigned> &stmts) {
  std::string text;
  for (unsigned s : stmts)
    text += (text.empty() ? "" : ", ") + model.statements[s].name;
  return text;
}

// { : param = 1 } (`on`), or { : param != 1 }.
isl::set switchSet(const Model &model, const isl::id &param, bool on) {
  isl::ctx ctx = model.ctx;
  isl::space space =
      isl::manage(isl_space_set_dim_id(isl_space_params_alloc(ctx.get(), 1), isl_dim_param, 0, param.copy()));
  isl::set one = isl::manage(isl_set_fix_si(isl_set_universe(space.copy()), isl_dim_param, 0, 1));
  return on ? one : isl::set::universe(space).subtract(one);
}

// The region's statements when `param` = 1 (`on`), or when it has any other value.
isl::union_set switchFilter(const Model &model, const std::vector<unsigned> &stmts, const isl::id &param,
                            bool on) {
  isl::set params = switchSet(model, param, on);
  isl::union_set filter = isl::union_set::empty(model.ctx);
  for (unsigned s : stmts)
    filter = filter.unite(
        isl::union_set(isl::set::universe(model.statements[s].domain.space()).intersect_params(params)));
  return filter;
}

// For each statement, the extents of its dimensions after the time step (a step's points are their
// product), or none where one is unbounded.
std::optional<std::vector<std::vector<isl::pw_aff>>> stepExtents(const Model &model,
                                                                 const std::vector<unsigned> &stmts) {
  std::vector<std::vector<isl::pw_aff>> result;
  for (unsigned s : stmts) {
    isl::set step = iu::projectOutDims(model.statements[s].domain.intersect_params(model.context), 0, 1);
    if (!iu::isBounded(step))
      return std::nullopt;
    std::vector<isl::pw_aff> extents;
    for (unsigned d = 0; d < iu::tupleDims(step.space()); ++d)
      extents.push_back(iu::dimMax(step, d).sub(iu::dimMin(step, d)).add_constant(isl::val(model.ctx, 1)));
    result.push_back(std::move(extents));
  }
  return result;
}

} // namespace

unsigned timeTile(const Model &model, const analysis::DependenceGraph &deps, Schedule &schedule,
                  const TimeTilingOptions &options) {
  unsigned rewritten = 0;
  if (!options.enabled || schedule.tree.is_null())
    return rewritten;
  ScopedIslOptions restore(model.ctx);
  // From the last band to the first, so that rewriting one leaves the earlier ones' indices as they are.
  for (unsigned k = static_cast<unsigned>(schedule.bands.size()); k-- > 0;) {
    std::optional<isl::schedule_node> node = bandNode(schedule.tree, k);
    if (!node || !isStepRegion(model, *node, schedule.bands[k]))
      continue;
    std::vector<unsigned> stmts = statementsUnder(model, *node);
    std::optional<std::vector<std::vector<isl::pw_aff>>> extents = stepExtents(model, stmts);
    if (!extents)
      continue;
    isl::union_map order = deps.validity().unite(slotReuse(model, schedule, stmts));
    std::optional<isl::schedule> skewed = skewedBand(model, deps, stmts, order);
    if (!skewed)
      continue;
    isl::schedule tiled = tileAsWavefront(*skewed, options);
    // Inside a tile's point (t, x), a step's statements as the step-by-step schedule runs them: its
    // loops over the other dimensions, parallel and unit-stride (one row of jacobi-2d a point).
    isl::schedule_node step = node->child(0);
    if (!graftable(*node))
      continue;
    // The region replaced by a sequence of two filters on a new param: the tiles, then the step inside
    // a tile's point; otherwise the region as it was. The param's isl id has a user pointer, which the
    // program's params (parsed, without one) never have: no .poly name is it.
    static int switchTag;
    isl::ctx ctx = model.ctx;
    isl::id param =
        isl::manage(isl_id_alloc(ctx.get(), ("time_tiled" + std::to_string(k)).c_str(), &switchTag));
    isl::union_set_list filters(model.ctx, 2);
    filters =
        filters.add(switchFilter(model, stmts, param, true)).add(switchFilter(model, stmts, param, false));
    // The tree's domain takes the param first (isl's AST generator wants every param declared at the root).
    schedule.tree = isl::manage(isl_schedule_align_params(
        schedule.tree.copy(), isl_set_get_space(switchSet(model, param, true).get())));
    node = bandNode(schedule.tree, k);
    isl::schedule_node sequence = isl::manage(isl_schedule_node_cut(node->copy())).insert_sequence(filters);
    isl::schedule_node wave = graft(sequence.child(0).child(0), tiled.root().child(0));
    wave = graft(wave.child(0).child(0), step).parent().parent();
    sequence = graft(wave.parent().parent().child(1).child(0), *node).parent().parent();
    schedule.tree = sequence.schedule();

    // The bands in pre-order: the wavefront and the tile's points (new), the step's (copied), then the
    // region's as they were.
    unsigned oldBands = bandsIn(*node);
    std::vector<Band> bands;
    auto wavefront = bandNode(schedule.tree, k)->as<isl::schedule_node_band>();
    auto points = wavefront.child(0).as<isl::schedule_node_band>();
    bands.push_back(describeBand(model, wavefront));
    bands.back().dimNames = {"wave", "tile"};
    bands.push_back(describeBand(model, points));
    bands.insert(bands.end(), schedule.bands.begin() + k + 1, schedule.bands.begin() + k + oldBands);
    bands.insert(bands.end(), schedule.bands.begin() + k, schedule.bands.begin() + k + oldBands);
    schedule.bands.erase(schedule.bands.begin() + k, schedule.bands.begin() + k + oldBands);
    schedule.bands.insert(schedule.bands.begin() + k, bands.begin(), bands.end());

    std::string skew;
    for (const std::string &name : describeBand(model, skewedBandOf(*skewed)).dimNames)
      skew += (skew.empty() ? "" : ", ") + name;
    TimeTiledRegion info;
    info.param = param;
    info.stepExtents = std::move(*extents);
    info.description = "band " + std::to_string(k) + " over " + statementList(model, stmts) + ": (" + skew +
                       ") in tiles of " + sizeList(tileSizes(options, skewedBandOf(*skewed).n_member())) +
                       ", wavefronts of tiles in parallel, when a step is large";
    schedule.timeTiled.insert(schedule.timeTiled.begin(), std::move(info));
    ++rewritten;
  }
  schedule.scheduleMap = flatScheduleMap(schedule.tree);
  return rewritten;
}

} // namespace polyc::schedule
