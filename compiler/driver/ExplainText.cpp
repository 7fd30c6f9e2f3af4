// polyc explain's text view: params and context, each statement's domain and accesses in isl
// notation, the dependences with their distances, the schedule (isl's tree and in words), fusion,
// folded storage, the allocation of each band with the cost model's reasons, and the GPU mapping.
#include "ExplainPrinters.h"

#include "compiler/codegen/Packages.h"

#include "compiler/model/IslUtil.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

namespace polyc::driver {

namespace {

std::string rowCount(int64_t n) { return std::to_string(n) + (n == 1 ? " row" : " rows"); }

// What a rank receives of a halo: "up to 1 row before its block and 1 row after it, N elements of 4 bytes
// a row".
std::string haloVolume(const map::RowExchange &e) {
  const int64_t before = std::max<int64_t>(0, e.shift - e.lo), after = std::max<int64_t>(0, e.hi - e.shift);
  return "up to " + rowCount(before) + " before its block and " + rowCount(after) + " after it, " +
         e.rowElements + " element" + (e.rowElements == "1" ? "" : "s") + " of " +
         std::to_string(e.elementBytes) + " bytes a row";
}

// Why halos are recomputed (seed 000's cut point): what the widened blocks compute, against what sending
// every halo (`sent`, the --no-recompute decomposition) would move that the chosen one does not.
std::string recomputingAgainstSending(const map::Decomposition &chosen, const map::Decomposition &sent) {
  std::vector<std::string> widened, moved;
  for (const map::BandDecomposition &d : chosen.bands)
    if (d.widenBefore || d.widenAfter)
      widened.push_back("band " + std::to_string(d.band) + ": " + rowCount(d.widenBefore + d.widenAfter));
  if (widened.empty())
    return "";
  auto sentByChosen = [&](unsigned band, const std::string &array) {
    for (const map::BandDecomposition &d : chosen.bands)
      for (const map::RowExchange &e : d.exchanges)
        if (d.band == band && e.array == array)
          return e.kind == map::ExchangeKind::Halo && e.sends();
    return false;
  };
  for (const map::BandDecomposition &d : sent.bands)
    for (const map::RowExchange &e : d.exchanges)
      if (e.kind == map::ExchangeKind::Halo && e.sends() && !sentByChosen(d.band, e.array))
        moved.push_back(e.array + " (" + haloVolume(e) + ")");
  return "halos recomputed rather than sent, no message for them: the widened blocks compute more rows each "
         "time they run (" +
         llvm::join(widened, ", ") + ")" +
         (moved.empty() ? std::string(", and sending would move no fewer rows")
                        : ", where sending every halo (--no-recompute) would have each rank receive " +
                              llvm::join(moved, "; ") + " each time its writer runs");
}

// One exchange after a distributed band, with its volume: "halo of As (dimension 1) for S2, S5: each rank
// receives up to 1 row before its block and 1 after it, N elements of 4 bytes a row (reads -1..+1 from
// the block's rows)".
std::string describeExchange(const map::RowExchange &e) {
  std::string rows = e.array + " (dimension " + std::to_string(e.dim) +
                     (e.shift ? ", blocks shifted by " + std::to_string(e.shift) : std::string()) + ")";
  std::string row = e.rowElements + " element" + (e.rowElements == "1" ? "" : "s") + " of " +
                    std::to_string(e.elementBytes) + " bytes a row";
  if (e.kind == map::ExchangeKind::Broadcast)
    return "every rank's rows of " + rows + " go to all ranks, " + row + ": " + e.why;
  if (e.recomputed)
    return "no message: the widened blocks compute the rows of " + rows + " that other blocks read (" +
           e.why + ")";
  if (!e.sends())
    return "no message: no rank reads another's rows of " + rows + " (" + e.why + ")";
  auto signedText = [](int64_t v) { return (v > 0 ? "+" : "") + std::to_string(v); };
  return "halo of " + rows + ", " + e.why + ": each rank receives " + haloVolume(e) + " (reads " +
         signedText(e.lo) + ".." + signedText(e.hi) + " from the block's rows)";
}

} // namespace

static std::string statementList(const model::Model &model, const std::vector<unsigned> &stmts) {
  std::string text;
  for (unsigned s : stmts)
    text += (text.empty() ? "" : ", ") + model.statements[s].name;
  return text;
}

void printExplainText(const ExplainInput &in, const llvm::SourceMgr &sm, llvm::raw_ostream &os) {
  const model::Model &model = in.model;
  os << "program: " << in.path << "\n";
  os << "params:";
  if (model.params.empty())
    os << " none";
  for (const std::string &p : model.params) {
    os << " " << p;
    auto v = model.paramValues.find(p);
    if (v != model.paramValues.end())
      os << "=" << v->second;
  }
  os << "\ncontext: " << islText(model.context) << "\n";

  os << "\nstatements:\n";
  for (const model::Statement &stmt : model.statements) {
    os << "  " << stmt.name << " (line " << equationLine(stmt, sm) << "): " << equationText(stmt) << "\n";
    if (stmt.equation)
      for (const std::string &note : stmt.equation->rewrites)
        os << "    rewritten: " << note << "\n";
    os << "    domain:    " << islText(stmt.domain) << "\n";
    os << (stmt.write.isMay ? "    may-write: " : "    write:     ") << islText(stmt.write.relation) << "\n";
    for (const model::Access &read : stmt.reads) {
      const char *label =
          read.implicitUpdateRead ? "old value: " : (read.isMay ? "may-read:  " : "read:      ");
      os << "    " << label << islText(read.relation) << "\n";
    }
    for (const model::ReductionInfo &red : stmt.reductions)
      os << "    reduction: " << ast::spelling(red.reduction->op) << " over " << islText(red.range) << "\n";
    if (stmt.scatter)
      os << "    scatter:   its points add to " << stmt.write.array
         << " atomically, in any order (no dependence between them)\n";
    if (stmt.signalsChange)
      os << "    watched:   its repeat loop stops after an iteration in which it changes no element of "
         << stmt.write.array << "\n";
  }

  os << "\ndependences:";
  if (in.deps.edges.empty())
    os << " none";
  os << "\n";
  for (const analysis::Dependence &dep : in.deps.edges) {
    const model::Statement &src = model.statements[dep.source], &tgt = model.statements[dep.target];
    os << "  " << analysis::spelling(dep.kind) << " " << src.name << " -> " << tgt.name << " through " << dep.array << ": "
       << analysis::spelling(dep.depClass) << "\n";
    os << "    relation:  " << islText(dep.relation) << "\n";
    os << "    distances: " << islText(dep.distances) << "\n";
    if (dep.distanceVectors) {
      os << "    distance vectors (" << dep.distanceVectors->size() << "):\n";
      for (const auto &v : *dep.distanceVectors)
        os << "      " << vectorText(v) << "\n";
    }
  }

  const schedule::Schedule &schedule = in.schedule;
  os << "\nschedule:\n";
  std::string tree = islutil::scheduleToString(schedule.tree, true);
  size_t start = 0;
  while (start < tree.size()) {
    size_t end = tree.find('\n', start);
    if (end == std::string::npos)
      end = tree.size();
    os << "  | " << tree.substr(start, end - start) << "\n";
    start = end + 1;
  }
  for (size_t b = 0; b < schedule.bands.size(); ++b) {
    const schedule::Band &band = schedule.bands[b];
    os << "  band " << b << " over " << statementList(model, band.statements) << ": (";
    for (size_t m = 0; m < band.dimNames.size(); ++m)
      os << (m ? ", " : "") << band.dimNames[m];
    os << ")";
    std::string parallel, sequential;
    for (size_t m = 0; m < band.coincident.size(); ++m)
      (band.coincident[m] ? parallel : sequential) +=
          ((band.coincident[m] ? parallel : sequential).empty() ? "" : ", ") + band.dimNames[m];
    os << " parallel: " << (parallel.empty() ? "none" : parallel) << "; sequential: "
       << (sequential.empty() ? "none" : sequential);
    if (band.isSequentialRepeat)
      os << " (repeat loop)";
    if (!band.tileSizes.empty()) {
      os << "; tiles on the cpu target: ";
      for (size_t m = 0; m < band.tileSizes.size(); ++m)
        os << (m ? " x " : "") << band.tileSizes[m];
    }
    os << "\n";
    if (!band.hyperplane.empty())
      os << "    " << band.dimNames[0] << " = " << band.hyperplaneExpr << ", hyperplane " << vectorText(band.hyperplane)
         << ", hyperplanes: " << band.hyperplaneCount << "\n";
  }

  os << "\nfusion groups:";
  if (schedule.fusionGroups.empty())
    os << " none";
  os << "\n";
  for (const schedule::FusionGroup &group : schedule.fusionGroups)
    os << "  " << statementList(model, group.statements) << ": " << group.reason << "\n";
  std::vector<codegen::Package> packages = codegen::findPackages(model, schedule);
  if (!packages.empty()) {
    os << "\npackages (one loop nest for their sums, an accumulator each; GPU targets):\n";
    for (const codegen::Package &package : packages)
      os << "  " << statementList(model, package.statements) << "\n";
  }

  os << "\nfolded storage:";
  if (schedule.folded.empty())
    os << " none";
  os << "\n";
  for (const schedule::FoldedStorage &fold : schedule.folded)
    os << "  " << fold.array << " dimension " << fold.dim << ": window " << fold.window << "\n";
  if (schedule.streaming) {
    const schedule::Streaming &streaming = *schedule.streaming;
    os << "\nstreamed (--stream; one slice per step of " << streaming.stepName << "):\n";
    const std::string &t = streaming.stepName;
    for (const schedule::StreamedArray &array : streaming.arrays) {
      std::string reads =
          array.lag ? "slices " + t + " - " + std::to_string(array.lag) + " .. " + t : "slice " + t;
      os << "  " << (array.isInput ? "input " : "output ") << array.array << ": " << array.slots
         << " slots; step " << t
         << (array.isInput ? " reads " + reads : " writes slice " + t + (array.lag ? ", reads " + reads : ""))
         << "\n";
    }
    for (const std::string &whole : streaming.wholeArrays)
      os << "  whole " << whole << "\n";
  }
  if (!schedule.elided.empty()) {
    os << "\nelided copies:\n";
    for (const schedule::ElidedCopies &copies : schedule.elided)
      os << "  " << copies.description << "\n";
  }

  os << "\nallocation:\n";
  for (const allocate::BandAllocation &a : in.allocation.bands) {
    os << "  band " << a.band << ": " << allocate::spelling(a.kind);
    if (!a.runtimeCondition.empty())
      os << " if " << a.runtimeCondition << ", else " << allocate::spelling(*a.otherwise);
    if (a.reductionGroupSize > 0)
      os << ", " << a.reductionGroupSize << " threads per output";
    os << "\n    why: " << a.reason << "\n";
    if (a.wavefront) {
      const model::Statement &stmt = model.statements[in.schedule.bands[a.band].statements.front()];
      os << "    mapping: columns " << stmt.dimNames[a.wavefront->columnDim] << ", rows "
         << stmt.dimNames[a.wavefront->rowDim] << ", window " << a.wavefront->window << "\n";
    }
  }
  os << "\ngpu mapping:\n";
  for (const map::BandMapping &b : in.mapping.bands) {
    os << "  band " << b.band << ": " << map::spelling(b.placement);
    if (b.persistent)
      os << ", persistent kernel " << (!b.persistent->chosen ? "chosen at run time"
                                                               : *b.persistent->chosen ? "chosen" : "not chosen");
    if (b.product)
      os << ", matrix product on CUDA";
    if (b.computedIn >= 0)
      os << ", computed by band " << b.computedIn << "'s matrix product on CUDA";
    if (b.privatisedScatter)
      os << ", a copy a block chosen at run time";
    if (b.roundTiles)
      os << ", round tiles of " << b.roundTiles->rounds << " rounds";
    os << "\n    why: " << b.reason << "\n";
  }
  if (!in.mapping.streamProblem.empty())
    os << "  " << in.mapping.streamProblem << "\n";
  if (in.decomposition) {
    os << "\nmpi decomposition (polyc build --mpi --target=" << in.mpiTarget
       << "; every array on every rank):\n";
    for (const map::BandDecomposition &d : in.decomposition->bands) {
      os << "  band " << d.band << ": " << (d.distributed ? "shared by the ranks" : "whole on every rank");
      if (d.distributed)
        os << " (" << d.extent << " values from " << d.first << ")";
      os << "\n    why: " << d.reason << "\n";
      if (d.pipeline)
        os << "    pipeline: " << in.model.statements[d.pipeline->statement].dimNames[1] << " in strips ("
           << d.pipeline->columnExtent << " values from " << d.pipeline->columnFirst
           << "); before a strip each rank receives " << d.pipeline->depth << " rows of " << d.pipeline->array
           << " before its block from the ranks before it\n";
      if (d.chunks > 1)
        os << "    block-cyclic: " << d.chunksWhy << ", so each rank runs " << d.chunks
           << " chunks of the range dealt in snake order, not one block\n";
      if (d.widenBefore || d.widenAfter)
        os << "    widened: each rank runs " << rowCount(d.widenBefore) << " more before its block and "
           << rowCount(d.widenAfter) << " after it: it " << d.widenWhy << "\n";
      for (const map::RowExchange &e : d.exchanges)
        os << "    after it: " << describeExchange(e) << "\n";
    }
    for (const map::TermSplit &split : in.decomposition->splits) {
      os << "  " << in.model.statements[split.statement].name
         << ": the ranks split its terms, each taking its block of " << split.variable->name << " ("
         << split.extent << " values from " << split.first << ")\n    why: " << split.why
         << "\n    then: the ranks' partial values combined, an all-reduce of " << split.values
         << (split.values == "1" ? " element of " : " elements of ") << split.elementBytes << " bytes, "
         << (split.band >= 0 ? "after each run of band " + std::to_string(split.band)
                             : std::string("after each instance"))
         << "\n";
    }
    if (in.sentDecomposition)
      if (std::string why = recomputingAgainstSending(*in.decomposition, *in.sentDecomposition); !why.empty())
        os << "  " << why << "\n";
    for (const map::RowGather &g : in.decomposition->gathers)
      os << "  at the end: rank 0 collects the other ranks' rows of " << g.rows.array << " (an output)\n";
  }
  os << "\nlegality: verified, every dependence's source runs before its target (" << in.deps.edges.size()
     << (in.deps.edges.size() == 1 ? " dependence)" : " dependences)") << "\n";
}

} // namespace polyc::driver
