// The MPI decomposition (Decompose.h): a walk of the schedule tree that finds the bands whose outermost
// parallel member the ranks can split, and the row exchanges that make the replicated arrays equal again.
#include "compiler/map/Decompose.h"
#include "compiler/map/Mapping.h"

#include "compiler/model/IslUtil.h"
#include "dsl/Affine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <set>

namespace polyc::map {

namespace iu = polyc::islutil;

namespace {

// The first index of `write` (S[x] -> A[...]) that is x_dim + c, with c. Each index is taken alone: a
// scatter's write is a function of the point in its other indices only.
std::optional<std::pair<unsigned, int64_t>> rowIndex(const isl::map &write, unsigned dim) {
  const unsigned rank = unsigned(write.range_tuple_dim());
  for (unsigned k = 0; k < rank; ++k) {
    isl::map index = isl::manage(isl_map_project_out(write.copy(), isl_dim_out, k + 1, rank - k - 1));
    index = isl::manage(isl_map_project_out(index.release(), isl_dim_out, 0, k));
    if (!index.is_single_valued())
      continue;
    isl::pw_multi_aff function = isl::manage(isl_pw_multi_aff_from_map(index.release()));
    std::vector<isl::multi_aff> each;
    function.foreach_piece([&](isl::set, isl::multi_aff piece) { each.push_back(piece); });
    if (each.size() != 1)
      continue;
    iu::AffCoefficients c = iu::coefficients(each.front().at(0));
    bool row = c.integral && dim < c.dims.size() && c.dims[dim] == 1;
    for (size_t d = 0; row && d < c.dims.size(); ++d)
      row = d == dim || c.dims[d] == 0;
    for (int64_t p : c.params)
      row = row && p == 0;
    if (row)
      return std::make_pair(k, c.constant);
  }
  return std::nullopt;
}

// The range a distributed band splits: its first member's least and greatest values.
struct Range {
  isl::pw_aff lo, hi;
};

// Whether two bands' blocks are equal whenever both run: their ranges agree on the params where both
// have instances.
bool sameBlocks(const Range &a, const Range &b) {
  isl::set both = a.lo.domain().intersect(b.lo.domain());
  auto equal = [&](const isl::pw_aff &x, const isl::pw_aff &y) {
    return isl_pw_aff_is_equal(x.intersect_domain(both).get(), y.intersect_domain(both).get()) ==
           isl_bool_true;
  };
  return equal(a.lo, b.lo) && equal(a.hi, b.hi);
}

// What the decomposition knows of a band while it decides the exchanges.
struct Shared {
  const BandDecomposition *band = nullptr; // null: not distributed
  Range range;
};

// The innermost distributed band that runs `statement`, or -1.
int distributedBandOf(unsigned statement, const schedule::Schedule &schedule,
                      const std::vector<Shared> &shared) {
  for (int b = int(schedule.bands.size()) - 1; b >= 0; --b)
    if (shared[b].band && llvm::is_contained(schedule.bands[b].statements, statement))
      return b;
  return -1;
}

// The rows a band reads of a halo's array, relative to its block's rows: [lo, hi].
struct ReaderReach {
  unsigned band = 0;
  int64_t lo = 0, hi = 0;
};
// Each band's exchanges' readers: reaches[band][exchange], one entry a reading band.
using Reaches = std::vector<std::vector<std::vector<ReaderReach>>>;

// The array reads in `expr` and its sub-expressions.
void collectReads(const ast::Expr &expr, std::vector<const ast::ArrayRead *> &reads) {
  if (auto *read = llvm::dyn_cast<ast::ArrayRead>(&expr))
    reads.push_back(read);
  ast::forEachChild(expr, [&](const ast::Expr &child) { collectReads(child, reads); });
}

// The variables of a reduction in the order of its range's dimensions (ReductionInfo::range).
std::vector<const ast::IndexVar *> reductionVariables(const ast::Reduction &reduction) {
  std::vector<const ast::IndexVar *> vars;
  for (const ast::RangeBinding &binding : reduction.bindings)
    for (const auto &var : binding.vars)
      vars.push_back(binding.rowArray ? nullptr : var.get()); // a row range's values are data: not split
  return vars;
}

// The variable that `read` indexes `exchange`'s rows with, when it is that variable plus the writer's
// shift exactly (the row the rank that took the variable's value computed).
const ast::IndexVar *rowVariable(const ast::ArrayRead &read, const RowExchange &exchange,
                                 const std::vector<const ast::IndexVar *> &vars) {
  if (exchange.dim >= read.indices.size())
    return nullptr;
  std::optional<dsl::AffineExpr> index = dsl::toAffine(*read.indices[exchange.dim], "index");
  if (!index || !index->params.empty() || !index->isStrictlyAffine() || index->vars.size() != 1 ||
      index->vars[0].second != 1 || index->constant != exchange.shift ||
      !llvm::is_contained(vars, index->vars[0].first))
    return nullptr;
  return index->vars[0].first;
}

// The C text of all the elements of `array`, a count.
std::string elementCountText(const model::ArrayInfo &array, const isl::set &context) {
  std::vector<std::string> factors;
  for (unsigned d = 0; d < array.decl->rank(); ++d)
    factors.push_back(iu::pwAffToC(iu::dimMax(array.extent, d).add_constant(1).gist_params(context), context));
  return factors.empty() ? "1" : llvm::join(factors, " * ");
}

// Whether the values `values` (a set of one dimension) lie within [range.lo, range.hi] for every params.
bool withinRange(const isl::set &values, const Range &range) {
  if (values.is_empty())
    return true;
  // Where the range is empty (its band has no instance for those params) its bounds are undefined: any
  // value there lies outside it (fuzz seed 77000038: a split over the rows of an array of no rows).
  if (!values.params().is_subset(range.lo.domain().intersect(range.hi.domain())))
    return false;
  isl::pw_aff least = iu::dimMin(values, 0), greatest = iu::dimMax(values, 0);
  isl::set below = isl::manage(isl_pw_aff_lt_set(least.release(), range.lo.copy()));
  isl::set above = isl::manage(isl_pw_aff_gt_set(greatest.release(), range.hi.copy()));
  return below.is_empty() && above.is_empty();
}

// A split of statement `s`'s reduction by its terms (TermSplit), when it has one reduction whose body
// reads rows of an array a distributed band wrote at a variable of the reduction plus that band's shift,
// the variable's values all within that band's range; `band` and the placement are the caller's.
struct FoundSplit {
  TermSplit split;
  Range range;
  std::vector<unsigned> writers; // the bands that computed the rows its terms read
};
std::optional<FoundSplit> findTermSplit(unsigned s, const model::Model &model, const schedule::Schedule &schedule,
                                        const std::vector<Shared> &shared) {
  const model::Statement &statement = model.statements[s];
  if (statement.reductions.size() != 1 || !statement.reductions[0].reduction)
    return std::nullopt;
  if (llvm::any_of(schedule.folded, [&](const schedule::FoldedStorage &f) { return f.array == statement.write.array; }))
    return std::nullopt; // the partial values are kept an element of the written array each
  const model::ReductionInfo &info = statement.reductions[0];
  const std::vector<const ast::IndexVar *> vars = reductionVariables(*info.reduction);
  std::vector<const ast::ArrayRead *> reads;
  collectReads(*info.reduction->body, reads);
  std::optional<FoundSplit> found;
  std::vector<std::string> writers;
  for (const ast::ArrayRead *read : reads)
    for (unsigned w = 0; w < shared.size(); ++w) {
      if (!shared[w].band)
        continue;
      auto exchange = llvm::find_if(shared[w].band->exchanges,
                                    [&](const RowExchange &e) { return e.array == read->name; });
      if (exchange == shared[w].band->exchanges.end())
        continue;
      const ast::IndexVar *var = rowVariable(*read, *exchange, vars);
      if (!var || (found && (var != found->split.variable || !sameBlocks(found->range, shared[w].range))))
        continue;
      if (!found) {
        TermSplit split;
        split.statement = s;
        split.variable = var;
        split.first = shared[w].band->first;
        split.extent = shared[w].band->extent;
        found.emplace(
            FoundSplit{std::move(split), shared[w].range, {}}); // (isl objects are not default-copied)
      }
      found->split.ownRows.push_back(read);
      if (!llvm::is_contained(found->writers, w))
        found->writers.push_back(w);
      std::string writer = read->name + " (band " + std::to_string(w) + ")";
      if (!llvm::is_contained(writers, writer))
        writers.push_back(writer);
    }
  if (!found)
    return std::nullopt;
  unsigned position = unsigned(llvm::find(vars, found->split.variable) - vars.begin());
  isl::set values = iu::projectOutDims(info.range.intersect_domain(statement.domain).range(), position + 1,
                                       unsigned(vars.size()) - position - 1);
  values = iu::projectOutDims(values, 0, position).intersect_params(model.context);
  if (!withinRange(values, found->range))
    return std::nullopt; // some terms lie on no rank's block
  const model::ArrayInfo &array = *model.findArray(statement.write.array);
  found->split.values = elementCountText(array, model.context);
  found->split.elementBytes = array.decl->elemType == ast::ElemType::F64 ? 8 : 4;
  found->split.why = "the terms of " + found->split.variable->name + " read the rows of " + llvm::join(writers, ", ") +
                     " computed in the same blocks";
  return found;
}

// Whether band `b` is the innermost band of each of its statements (the bands after it in pre-order that
// hold one of them are inside it).
bool innermostOfItsStatements(unsigned b, const schedule::Schedule &schedule) {
  for (unsigned later = b + 1; later < schedule.bands.size(); ++later)
    for (unsigned s : schedule.bands[later].statements)
      if (llvm::is_contained(schedule.bands[b].statements, s))
        return false;
  return true;
}

// The innermost band that runs `statement`, or -1.
int innermostBandOf(unsigned statement, const schedule::Schedule &schedule) {
  for (int b = int(schedule.bands.size()) - 1; b >= 0; --b)
    if (llvm::is_contained(schedule.bands[b].statements, statement))
      return b;
  return -1;
}

// Whether every read of `array` by `statement` is one of the split's reads of the rows its rank computed.
bool readsOnlyOwnRows(const model::Statement &statement, const std::string &array, const TermSplit &split) {
  return llvm::all_of(statement.reads, [&](const model::Access &read) {
    return read.array != array || (read.read && llvm::is_contained(split.ownRows, read.read));
  });
}

// How the rows of `exchange` (written by band `writer`) reach their readers: a halo when every statement
// that writes or reads the array is in a distributed band with the same blocks, writes at the same row,
// and reads at constant distances from its own; otherwise a broadcast, with the reason. A halo's readers
// go to `reach`, one entry a band.
void chooseExchange(RowExchange &exchange, unsigned writer, const model::Model &model,
                    const schedule::Schedule &schedule, const std::vector<Shared> &shared,
                    const std::map<unsigned, FoundSplit> &splits, std::vector<ReaderReach> &reach) {
  auto broadcast = [&](const std::string &why) {
    exchange.kind = ExchangeKind::Broadcast;
    exchange.why = why;
  };
  std::vector<std::string> readers;
  for (unsigned s = 0; s < model.statements.size(); ++s) {
    const model::Statement &statement = model.statements[s];
    bool writes = statement.write.array == exchange.array;
    bool reads =
        llvm::any_of(statement.reads, [&](const model::Access &r) { return r.array == exchange.array; });
    if (!writes && !reads)
      continue;
    int b = distributedBandOf(s, schedule, shared);
    auto split = splits.find(s);
    if (b < 0 && !writes && split != splits.end() && sameBlocks(split->second.range, shared[writer].range) &&
        readsOnlyOwnRows(statement, exchange.array, split->second.split)) {
      if (!llvm::is_contained(readers, statement.name))
        readers.push_back(statement.name); // its block of terms reads the rows its rank computed
      continue;
    }
    if (b < 0)
      return broadcast(statement.name + " runs whole on every rank");
    if (b == int(writer) && shared[writer].band->pipeline)
      continue; // the pipeline sends the rows its own statement reads, strip by strip
    if (!sameBlocks(shared[b].range, shared[writer].range))
      return broadcast(statement.name + " is in band " + std::to_string(b) + ", whose blocks differ");
    const BandDecomposition &band = *shared[b].band;
    auto placed = band.statementDims.find(s);
    if (placed == band.statementDims.end())
      continue; // no instance in the band
    unsigned dim = placed->second;
    if (writes) {
      auto same =
          llvm::find_if(band.exchanges, [&](const RowExchange &e) { return e.array == exchange.array; });
      if (same->dim != exchange.dim || same->shift != exchange.shift)
        return broadcast(statement.name + " writes other rows of the blocks");
    }
    for (const model::Access &read : statement.reads) {
      if (read.array != exchange.array)
        continue;
      if (read.isMay)
        return broadcast(statement.name + (read.implicitUpdateRead ? " scatters into " : " gathers ") +
                         exchange.array +
                         (read.implicitUpdateRead ? " at computed indices" : " through an index array"));
      std::optional<std::pair<int64_t, int64_t>> distances =
          iu::indexDistances(read.relation.intersect_domain(statement.domain), dim, exchange.dim, model.context);
      if (!distances)
        return broadcast(statement.name + " reads " + exchange.array + " at no constant distance from " +
                         statement.dimNames[dim]);
      auto mine = llvm::find_if(reach, [&](const ReaderReach &r) { return r.band == unsigned(b); });
      if (mine == reach.end())
        reach.push_back({unsigned(b), distances->first, distances->second});
      else
        *mine = {unsigned(b), std::min(mine->lo, distances->first), std::max(mine->hi, distances->second)};
      if (!llvm::is_contained(readers, statement.name))
        readers.push_back(statement.name);
    }
  }
  exchange.kind = ExchangeKind::Halo;
  exchange.why = readers.empty() ? "no statement reads it" : "for " + llvm::join(readers, ", ");
}

// Halos recomputed rather than sent (Decompose.h). From the last band to the first, so that a band's
// widening is final before the bands it reads from are widened for it: a halo whose readers all run
// after its writer (in the same step of any loop around) is recomputed when the writer's widening stays
// within kMaxWidening rows; a reader that runs before it (the next step reads it) keeps it a message.
void recomputeHalos(std::vector<BandDecomposition> &bands, const Reaches &reaches) {
  for (unsigned w = unsigned(bands.size()); w-- > 0;) {
    BandDecomposition &writer = bands[w];
    if (writer.pipeline)
      continue; // its blocks are not widened: what later bands read of it is sent
    std::vector<std::string> recomputed;
    for (unsigned e = 0; e < writer.exchanges.size(); ++e) {
      RowExchange &exchange = writer.exchanges[e];
      const std::vector<ReaderReach> &readers = reaches[w][e];
      if (exchange.kind != ExchangeKind::Halo ||
          llvm::any_of(readers, [&](const ReaderReach &r) { return r.band <= w; }))
        continue;
      int64_t before = 0, after = 0;
      for (const ReaderReach &r : readers) {
        before = std::max(before, bands[r.band].widenBefore + exchange.shift - r.lo);
        after = std::max(after, bands[r.band].widenAfter + r.hi - exchange.shift);
      }
      if ((before == 0 && after == 0) || before > kMaxWidening || after > kMaxWidening)
        continue;
      exchange.recomputed = true;
      writer.widenBefore = std::max(writer.widenBefore, before);
      writer.widenAfter = std::max(writer.widenAfter, after);
      recomputed.push_back(exchange.array + " (" + exchange.why + ")");
    }
    if (!recomputed.empty())
      writer.widenWhy = "computes the rows of " + llvm::join(recomputed, ", ") +
                        " that later bands read beyond their blocks";
  }
}

// Each halo's rows [lo, hi] relative to the blocks: the writer's own (shift) and what its readers read,
// a sent halo covering their widened blocks.
void setHaloRows(std::vector<BandDecomposition> &bands, const Reaches &reaches) {
  for (unsigned w = 0; w < bands.size(); ++w)
    for (unsigned e = 0; e < bands[w].exchanges.size(); ++e) {
      RowExchange &exchange = bands[w].exchanges[e];
      if (exchange.kind != ExchangeKind::Halo)
        continue;
      exchange.lo = exchange.hi = exchange.shift;
      for (const ReaderReach &r : reaches[w][e]) {
        const BandDecomposition &reader = bands[r.band];
        exchange.lo = std::min(exchange.lo, r.lo - (exchange.recomputed ? 0 : reader.widenBefore));
        exchange.hi = std::max(exchange.hi, r.hi + (exchange.recomputed ? 0 : reader.widenAfter));
      }
    }
}

// Whether the work of `statement` at `points` (its instances, and each one's terms of a sum) varies with
// its dimension `dim`: the work's set is not the product of its values along `dim` and the rest
// (syrk's C[i, j] where j <= i, or a sum over k in 0..i).
bool workVaries(const model::Statement &statement, const isl::set &points, unsigned dim) {
  std::vector<isl::set> work = {points};
  for (const model::ReductionInfo &info : statement.reductions)
    if (info.reduction)
      work.push_back(
          isl::manage(isl_set_flatten(isl_map_wrap(info.range.intersect_domain(points).release()))));
  return llvm::any_of(work, [&](const isl::set &set) {
    isl::map byValue =
        isl::manage(isl_map_move_dims(isl_map_from_range(set.copy()), isl_dim_in, 0, isl_dim_out, dim, 1));
    return !byValue.is_equal(iu::crossProduct(byValue.domain(), byValue.range()));
  });
}

// The bands that run block-cyclic (BandDecomposition::chunks): distributed, not a pipeline nor widened,
// every exchange a broadcast, reading no halo (whose rows come from contiguous blocks like its own) and
// computing no rows that a split of terms reads in blocks, and with work that varies along member 0.
void chooseChunks(std::vector<BandDecomposition> &bands, const Reaches &reaches,
                  const std::map<unsigned, FoundSplit> &splits, const model::Model &model,
                  const std::vector<BandNode> &nodes) {
  std::set<unsigned> fixed; // bands whose blocks another decision relies on
  for (unsigned w = 0; w < bands.size(); ++w)
    for (size_t e = 0; e < bands[w].exchanges.size(); ++e)
      if (bands[w].exchanges[e].kind == ExchangeKind::Halo)
        for (const ReaderReach &reader : reaches[w][e])
          fixed.insert(reader.band);
  for (const auto &[s, found] : splits)
    fixed.insert(found.writers.begin(), found.writers.end());
  for (BandDecomposition &d : bands) {
    if (!d.distributed || d.pipeline || d.widenBefore || d.widenAfter || fixed.count(d.band) ||
        llvm::any_of(d.exchanges, [](const RowExchange &e) { return e.kind != ExchangeKind::Broadcast; }))
      continue;
    for (const auto &[s, dim] : d.statementDims) {
      const model::Statement &statement = model.statements[s];
      isl::set points = isl::manage(isl_union_set_extract_set(nodes[d.band].domain.copy(),
                                                              statement.domain.get_space().release()))
                            .intersect_params(model.context);
      if (points.is_empty() || !workVaries(statement, points, dim))
        continue;
      d.chunks = kChunksPerRank;
      d.chunksWhy = statement.name + "'s work per " + statement.dimNames[dim] + " varies";
      break;
    }
  }
}

// The elements of one row of `array` along `dim` in one run of the dimensions before it, as C text.
std::string rowElementsText(const model::ArrayInfo &array, unsigned dim, const schedule::Schedule &schedule,
                            const isl::set &context) {
  std::vector<std::string> factors;
  for (unsigned d = dim + 1; d < array.decl->rank(); ++d) {
    auto fold = llvm::find_if(schedule.folded, [&](const schedule::FoldedStorage &f) {
      return f.array == array.name && f.dim == d;
    });
    factors.push_back(
        fold != schedule.folded.end()
            ? fold->window
            : iu::pwAffToC(iu::dimMax(array.extent, d).add_constant(1).gist_params(context), context));
  }
  return factors.empty() ? "1" : llvm::join(factors, " * ");
}

// `value`, or 0 where it is less or undefined, as C text.
std::string atLeastZero(const isl::pw_aff &value, const isl::set &context) {
  isl::pw_aff zero = isl::manage(isl_pw_aff_val_on_domain(context.copy(), isl_val_zero(context.ctx().get())));
  return iu::pwAffToC(isl::manage(isl_pw_aff_union_max(value.copy(), zero.release())).gist_params(context),
                      context);
}

// The range of a band's member 0 or a pipeline's rows (C text: first and a count that is 0 where the
// band has no instance), from their least and greatest values.
void setBlocks(BandDecomposition &d, const Range &range, const isl::set &context) {
  d.first = iu::pwAffToC(range.lo.gist_params(context), context);
  d.extent = atLeastZero(range.hi.sub(range.lo).add_constant(1), context);
}

// Band `b` as a pipeline (Pipeline), or why it is none: its one statement's dimensions 0 and 1 are the
// rows the ranks split and the columns they walk in strips.
std::optional<Pipeline> findPipeline(const schedule::Band &band, const model::Model &model,
                                     const schedule::Schedule &schedule, Range &rows, std::string &why) {
  if (band.statements.size() != 1 || band.isSequentialRepeat) {
    why = "its first member is not parallel";
    return std::nullopt;
  }
  const unsigned s = band.statements.front();
  const model::Statement &statement = model.statements[s];
  auto refuse = [&](const std::string &reason) {
    why = "its first member is not parallel, and no pipeline: " + statement.name + " " + reason;
    return std::nullopt;
  };
  if (statement.dimNames.size() != 2 || statement.repeatDims != 0)
    return refuse("is not over two dimensions");
  isl::set domain = statement.domain.intersect_params(model.context);
  if (domain.is_empty())
    return refuse("has no instance");
  if (!iu::isBox(domain))
    return refuse("is not over a rectangle");
  std::optional<std::pair<unsigned, int64_t>> row = rowIndex(statement.write.relation, 0);
  std::optional<std::pair<unsigned, int64_t>> column = rowIndex(statement.write.relation, 1);
  const model::ArrayInfo *array = model.findArray(statement.write.array);
  if (!row || !column || row->first != 0 || column->first != 1 || !array || array->decl->rank() != 2)
    return refuse("does not write a two-dimensional array at its row and column");
  if (llvm::any_of(schedule.folded, [&](const schedule::FoldedStorage &f) { return f.array == array->name; }))
    return refuse("writes " + array->name + ", whose storage is folded");
  // Each read of its own array as the distances from the instance that wrote the element to the reader.
  isl::map writer = statement.write.relation.intersect_domain(domain).reverse();
  isl::set towardsWriter; // writer - reader, for every read of an element an instance wrote
  for (const model::Access &read : statement.reads) {
    if (read.array != statement.write.array)
      continue;
    if (read.isMay)
      return refuse("gathers " + read.array + " through an index array");
    isl::map pairs = read.relation.intersect_domain(domain).apply_range(writer).intersect_range(domain);
    isl::set deltas = pairs.deltas();
    towardsWriter = towardsWriter.is_null() ? deltas : towardsWriter.unite(deltas);
  }
  if (!towardsWriter.is_null()) {
    auto ahead = [&](unsigned dim) {
      return !isl::manage(isl_set_lower_bound_si(towardsWriter.copy(), isl_dim_set, dim, 1)).is_empty();
    };
    if (ahead(0) || ahead(1))
      return refuse("reads " + statement.write.array + " at a later row or column than its own");
  }
  Pipeline pipeline;
  pipeline.statement = s;
  pipeline.array = statement.write.array;
  pipeline.rowShift = row->second;
  pipeline.columnShift = column->second;
  pipeline.depth = towardsWriter.is_null() || towardsWriter.is_empty()
                       ? "0"
                       : atLeastZero(iu::dimMin(towardsWriter, 0).neg(), model.context);
  isl::pw_aff columnLo = iu::dimMin(domain, 1);
  pipeline.columnFirst = iu::pwAffToC(columnLo.gist_params(model.context), model.context);
  pipeline.columnExtent = atLeastZero(iu::dimMax(domain, 1).sub(columnLo).add_constant(1), model.context);
  rows = {iu::dimMin(domain, 0), iu::dimMax(domain, 0)};
  return pipeline;
}

} // namespace

Decomposition decompose(const model::Model &model, const schedule::Schedule &schedule,
                        const allocate::Allocation &allocation, const DecomposeOptions &options) {
  std::vector<BandNode> nodes = bandNodes(schedule.tree);
  Decomposition result;
  if (nodes.size() != schedule.bands.size())
    return result;
  result.bands.reserve(nodes.size()); // Shared::band points into it
  std::vector<Shared> shared(nodes.size());
  std::map<unsigned, FoundSplit> splits; // by statement
  for (unsigned b = 0; b < nodes.size(); ++b) {
    const schedule::Band &band = schedule.bands[b];
    BandDecomposition d;
    d.band = b;
    auto refuse = [&](const std::string &why) {
      d.reason = why;
      result.bands.push_back(d);
    };
    bool nested = false;
    for (int a = nodes[b].parent; a >= 0; a = nodes[a].parent)
      nested = nested || shared[a].band || llvm::is_contained(schedule.bands[a].coincident, true);
    if (nested) {
      refuse("inside a parallel or distributed band");
      continue;
    }
    allocate::AllocationKind kind = allocation.bands[b].kind;
    if (band.coincident.empty() || !band.coincident[0] || band.isSequentialRepeat ||
        (kind != allocate::AllocationKind::DataParallel && kind != allocate::AllocationKind::Reduction)) {
      std::string why = "its first member is not parallel";
      Range rows;
      std::optional<Pipeline> pipeline =
          options.pipelines ? findPipeline(band, model, schedule, rows, why) : std::nullopt;
      if (!pipeline) {
        refuse(why);
        continue;
      }
      const model::Statement &statement = model.statements[pipeline->statement];
      setBlocks(d, rows, model.context);
      d.statementDims[pipeline->statement] = 0;
      RowExchange rowsOfArray;
      rowsOfArray.array = pipeline->array;
      rowsOfArray.shift = pipeline->rowShift;
      d.exchanges.push_back(rowsOfArray);
      d.reason = "a pipeline: the ranks take blocks of " + statement.dimNames[0] + " and walk " +
                 statement.dimNames[1] +
                 " in strips, each rank's last rows of a strip sent to the next ranks";
      d.distributed = true;
      d.pipeline = std::move(pipeline);
      result.bands.push_back(d);
      shared[b] = {&result.bands.back(), rows};
      continue;
    }
    if (llvm::all_of(band.coincident, [](bool c) { return c; }) && innermostOfItsStatements(b, schedule)) {
      std::vector<FoundSplit> bandSplits;
      for (unsigned s : band.statements) {
        std::optional<FoundSplit> found = findTermSplit(s, model, schedule, shared);
        if (!found) {
          bandSplits.clear();
          break;
        }
        found->split.band = int(b);
        bandSplits.push_back(*found);
      }
      if (!bandSplits.empty()) {
        for (const FoundSplit &found : bandSplits)
          splits.emplace(found.split.statement, found);
        refuse("the ranks split its reductions by their terms (below)");
        continue;
      }
    }
    std::string why;
    for (unsigned s : band.statements) {
      const model::Statement &statement = model.statements[s];
      isl::set points = isl::manage(
          isl_union_set_extract_set(nodes[b].domain.copy(), statement.domain.get_space().release()));
      if (points.is_empty())
        continue; // no instance to place (fuzz seed 41000000)
      std::optional<unsigned> dim = memberDim(points, nodes[b].partial, 0);
      std::optional<std::pair<unsigned, int64_t>> row =
          dim ? rowIndex(statement.write.relation, *dim) : std::nullopt;
      if (!row) {
        why =
            statement.name + " writes " + statement.write.array + " at no index equal to " + band.dimNames[0];
        break;
      }
      if (llvm::any_of(schedule.folded, [&](const schedule::FoldedStorage &f) {
            return f.array == statement.write.array && f.dim == row->first;
          })) {
        why = statement.write.array + "'s dimension " + std::to_string(row->first) + " is folded";
        break;
      }
      d.statementDims[s] = *dim;
      auto same =
          llvm::find_if(d.exchanges, [&](const RowExchange &e) { return e.array == statement.write.array; });
      if (same == d.exchanges.end()) {
        RowExchange exchange;
        exchange.array = statement.write.array;
        exchange.dim = row->first;
        exchange.shift = row->second;
        d.exchanges.push_back(exchange);
      } else if (same->dim != row->first || same->shift != row->second) {
        why = statement.write.array + " is written along two different rows";
        break;
      }
    }
    if (!why.empty()) {
      d.statementDims.clear();
      d.exchanges.clear();
      refuse(why);
      continue;
    }
    isl::union_set range = nodes[b].domain.apply(isl::union_map::from(nodes[b].partial));
    isl::set points =
        range.is_empty()
            ? isl::set()
            : isl::manage(isl_set_from_union_set(range.release())).intersect_params(model.context);
    if (points.is_null() || points.is_empty()) {
      d.statementDims.clear();
      d.exchanges.clear();
      refuse("no instance");
      continue;
    }
    isl::pw_aff lo = iu::dimMin(points, 0), hi = iu::dimMax(points, 0);
    setBlocks(d, {lo, hi}, model.context);
    d.distributed = true;
    d.reason = "the ranks take blocks of " + band.dimNames[0];
    result.bands.push_back(d);
    shared[b] = {&result.bands.back(), {lo, hi}};
  }
  // Statements directly in a repeat loop, or in no band: their partial values combined after each instance.
  for (unsigned s = 0; s < model.statements.size(); ++s) {
    int inner = innermostBandOf(s, schedule);
    if (splits.count(s) || (inner >= 0 && !schedule.bands[size_t(inner)].isSequentialRepeat))
      continue;
    if (std::optional<FoundSplit> found = findTermSplit(s, model, schedule, shared)) {
      found->split.values = "1"; // an instance's own element
      splits.emplace(s, *found);
    }
  }
  for (const auto &[s, found] : splits)
    result.splits.push_back(found.split);
  Reaches reaches(result.bands.size());
  for (unsigned b = 0; b < result.bands.size(); ++b)
    for (RowExchange &exchange : result.bands[b].exchanges) {
      const model::ArrayInfo &array = *model.findArray(exchange.array);
      exchange.rowElements = rowElementsText(array, exchange.dim, schedule, model.context);
      exchange.elementBytes = array.decl->elemType == ast::ElemType::F64 ? 8 : 4;
      chooseExchange(exchange, b, model, schedule, shared, splits, reaches[b].emplace_back());
    }
  if (options.recompute)
    recomputeHalos(result.bands, reaches);
  setHaloRows(result.bands, reaches);
  chooseChunks(result.bands, reaches, splits, model, nodes);
  for (const model::ArrayInfo &array : model.arrays) {
    if (array.decl->kind != ast::ArrayKind::Output && array.decl->kind != ast::ArrayKind::InOut)
      continue;
    // One gather for each distinct text of the writers' blocks: two bands' blocks are the same only where
    // both have instances, and where one has none its text counts no rows (fuzz seed 80000019).
    for (const BandDecomposition &band : result.bands) {
      auto exchange =
          llvm::find_if(band.exchanges, [&](const RowExchange &e) { return e.array == array.name; });
      if (exchange == band.exchanges.end() || exchange->kind != ExchangeKind::Halo)
        continue;
      bool gathered = llvm::any_of(result.gathers, [&](const RowGather &g) {
        return g.rows.array == array.name && g.rows.dim == exchange->dim && g.rows.shift == exchange->shift &&
               g.first == band.first && g.extent == band.extent;
      });
      if (!gathered)
        result.gathers.push_back({*exchange, band.first, band.extent});
    }
  }
  return result;
}

Mapping mappingForRanks(Mapping mapping, const Decomposition &decomposition) {
  auto distributed = [&](int band) {
    return band >= 0 && size_t(band) < decomposition.bands.size() && decomposition.bands[size_t(band)].distributed;
  };
  for (BandMapping &band : mapping.bands) {
    if (band.persistent) {
      band.persistent.reset();
      band.reason += "; no persistent kernel under MPI (rows move between its launches)";
    }
    band.replayable = false;
    // A distributed product's rows (member 0) are the rank's block; the bands after it that it computed
    // at each output have blocks of their own, so they are kernels again.
    if (distributed(int(band.band)) && band.product && !band.product->followers.empty()) {
      band.product->followers.clear();
      band.product->followerConditions.clear();
      band.reason += "; under MPI its rows are the rank's block, the statements it computed after its store "
                     "kernels of their own";
    }
  }
  for (BandMapping &band : mapping.bands)
    if (band.computedIn >= 0 && (!mapping.bands[size_t(band.computedIn)].product || distributed(band.computedIn)))
      band.computedIn = -1;
  return mapping;
}

} // namespace polyc::map
