// polyc explain --format=json: everything the text view shows, machine-readable; the schema is
// documented in docs/explain-json.md.
#include "ExplainPrinters.h"

#include "compiler/codegen/Packages.h"

#include "compiler/model/IslUtil.h"

#include "llvm/Support/SourceMgr.h"

namespace polyc::driver {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

static Value intArray(const std::vector<int64_t> &v) {
  Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

// One exchange after a distributed band (docs/explain-json.md, `mpi`).
static Value rowExchangeJson(const map::RowExchange &e) {
  Object o{{"array", e.array},
           {"dim", e.dim},
           {"shift", e.shift},
           {"kind", e.kind == map::ExchangeKind::Halo ? "halo" : "broadcast"},
           {"why", e.why},
           {"rowElements", e.rowElements},
           {"elementBytes", e.elementBytes}};
  if (e.kind == map::ExchangeKind::Halo) {
    o["halo"] = intArray({e.lo, e.hi});
    o["sends"] = e.sends();
    o["recomputed"] = e.recomputed;
  }
  return o;
}

static Value statementNames(const model::Model &model, const std::vector<unsigned> &stmts) {
  Array a;
  for (unsigned s : stmts)
    a.push_back(model.statements[s].name);
  return a;
}

Value explainJson(const ExplainInput &in, const llvm::SourceMgr &sm) {
  const model::Model &model = in.model;
  Object root;
  root["file"] = in.path;
  Array params;
  for (const std::string &p : model.params)
    params.push_back(p);
  root["params"] = std::move(params);
  Object values;
  for (const auto &[name, value] : model.paramValues)
    values[name] = value;
  root["paramValues"] = std::move(values);
  root["context"] = islText(model.context);

  Array statements;
  for (const model::Statement &stmt : model.statements) {
    Object s;
    s["name"] = stmt.name;
    s["array"] = stmt.write.array;
    s["equation"] = equationText(stmt);
    s["line"] = equationLine(stmt, sm);
    Array rewrites;
    if (stmt.equation)
      for (const std::string &note : stmt.equation->rewrites)
        rewrites.push_back(note);
    s["rewrites"] = std::move(rewrites);
    Array dims;
    for (const std::string &d : stmt.dimNames)
      dims.push_back(d);
    s["dims"] = std::move(dims);
    s["repeatDims"] = stmt.repeatDims;
    s["update"] = stmt.isUpdate();
    s["watched"] = stmt.signalsChange;
    s["scatter"] = stmt.scatter;
    s["domain"] = islText(stmt.domain);
    s["write"] = islText(stmt.write.relation);
    Array reads;
    for (const model::Access &read : stmt.reads)
      reads.push_back(Object{{"array", read.array},
                             {"relation", islText(read.relation)},
                             {"may", read.isMay},
                             {"oldValue", read.implicitUpdateRead}});
    s["reads"] = std::move(reads);
    Array reductions;
    for (const model::ReductionInfo &red : stmt.reductions)
      reductions.push_back(Object{{"op", ast::spelling(red.reduction->op)}, {"range", islText(red.range)}});
    s["reductions"] = std::move(reductions);
    statements.push_back(std::move(s));
  }
  root["statements"] = std::move(statements);

  Array deps;
  for (const analysis::Dependence &dep : in.deps.edges) {
    Object d;
    d["kind"] = analysis::spelling(dep.kind);
    d["source"] = model.statements[dep.source].name;
    d["target"] = model.statements[dep.target].name;
    d["array"] = dep.array;
    d["class"] = analysis::spelling(dep.depClass);
    d["relation"] = islText(dep.relation);
    d["sharedDims"] = dep.sharedDims;
    d["distances"] = islText(dep.distances);
    if (dep.distanceVectors) {
      Array vectors;
      for (const auto &v : *dep.distanceVectors)
        vectors.push_back(intArray(v));
      d["distanceVectors"] = std::move(vectors);
    } else {
      d["distanceVectors"] = nullptr;
    }
    deps.push_back(std::move(d));
  }
  root["dependences"] = std::move(deps);

  const schedule::Schedule &schedule = in.schedule;
  Object sched;
  sched["tree"] = islutil::scheduleToString(schedule.tree, false);
  sched["map"] = islText(schedule.scheduleMap);
  Array bands;
  for (size_t b = 0; b < schedule.bands.size(); ++b) {
    const schedule::Band &band = schedule.bands[b];
    Object o;
    o["index"] = static_cast<int64_t>(b);
    o["statements"] = statementNames(model, band.statements);
    Array dims, coincident;
    for (const std::string &d : band.dimNames)
      dims.push_back(d);
    for (bool c : band.coincident)
      coincident.push_back(c);
    o["dims"] = std::move(dims);
    o["coincident"] = std::move(coincident);
    o["sequentialRepeat"] = band.isSequentialRepeat;
    o["stopsWhenUnchanged"] = band.stopsWhenUnchanged;
    if (!band.hyperplane.empty()) {
      o["hyperplane"] = intArray(band.hyperplane);
      o["hyperplaneExpr"] = band.hyperplaneExpr;
      o["hyperplaneCount"] = band.hyperplaneCount;
    }
    if (!band.tileSizes.empty())
      o["cpuTileSizes"] = intArray(band.tileSizes);
    bands.push_back(std::move(o));
  }
  sched["bands"] = std::move(bands);
  Array groups;
  for (const schedule::FusionGroup &group : schedule.fusionGroups)
    groups.push_back(Object{{"statements", statementNames(model, group.statements)}, {"reason", group.reason}});
  sched["fusionGroups"] = std::move(groups);
  Array packages;
  for (const codegen::Package &package : codegen::findPackages(model, schedule))
    packages.push_back(statementNames(model, package.statements));
  sched["packages"] = std::move(packages);
  Array folded;
  for (const schedule::FoldedStorage &fold : schedule.folded) {
    Object f{{"array", fold.array}, {"dim", fold.dim}, {"window", fold.window}};
    if (fold.windowValue >= 0)
      f["windowValue"] = fold.windowValue;
    folded.push_back(std::move(f));
  }
  sched["folded"] = std::move(folded);
  if (schedule.streaming) {
    Array arrays, whole;
    for (const schedule::StreamedArray &array : schedule.streaming->arrays)
      arrays.push_back(Object{{"array", array.array},
                              {"role", array.isInput ? "input" : "output"},
                              {"lag", array.lag},
                              {"slots", array.slots}});
    for (const std::string &reason : schedule.streaming->wholeArrays)
      whole.push_back(reason);
    sched["streaming"] = Object{
        {"step", schedule.streaming->stepName}, {"arrays", std::move(arrays)}, {"whole", std::move(whole)}};
  }
  root["schedule"] = std::move(sched);

  Array allocation;
  for (const allocate::BandAllocation &a : in.allocation.bands) {
    Object o;
    o["band"] = a.band;
    o["kind"] = allocate::spelling(a.kind);
    if (!a.runtimeCondition.empty()) {
      o["runtimeCondition"] = a.runtimeCondition;
      o["otherwise"] = allocate::spelling(*a.otherwise);
    }
    if (a.wavefront) {
      const model::Statement &stmt = model.statements[schedule.bands[a.band].statements.front()];
      o["wavefront"] = Object{{"rowDim", a.wavefront->rowDim},
                              {"columnDim", a.wavefront->columnDim},
                              {"row", stmt.dimNames[a.wavefront->rowDim]},
                              {"column", stmt.dimNames[a.wavefront->columnDim]},
                              {"window", a.wavefront->window}};
    }
    if (!a.reductionLength.empty()) {
      o["reductionLength"] = a.reductionLength;
      o["reductionGroupSize"] = a.reductionGroupSize;
    }
    o["reason"] = a.reason;
    allocation.push_back(std::move(o));
  }
  root["allocation"] = std::move(allocation);
  Array mapping;
  for (const map::BandMapping &b : in.mapping.bands) {
    Object o{{"band", b.band}, {"parent", b.parent}, {"placement", map::spelling(b.placement)}};
    if (!b.gridMembers.empty()) {
      Array grid;
      for (unsigned m : b.gridMembers)
        grid.push_back(schedule.bands[b.band].dimNames[m]);
      o["grid"] = std::move(grid);
    }
    if (!b.iterations.empty()) {
      o["iterations"] = b.iterations;
      o["replayable"] = b.replayable;
    }
    if (b.persistent) {
      Object p{{"pointsPerStep", b.persistent->pointsPerStep},
               {"oneBlockThreadsMax", b.persistent->oneBlockThreadsMax},
               {"condition", b.persistent->condition},
               {"barriersPerStep", b.persistent->barriersPerStep},
               {"threadsPerPoint", b.persistent->threadsPerPoint}};
      if (b.persistent->gridWide)
        p["threadsMin"] = b.persistent->threadsMin;
      else
        p["oneBlockOnly"] = b.persistent->whyOneBlockOnly;
      if (b.persistent->chosen)
        p["chosen"] = *b.persistent->chosen;
      o["persistent"] = std::move(p);
    }
    if (b.product) {
      const map::ProductForm &form = *b.product;
      const model::Statement &statement = in.model.statements[form.statement];
      Array followers;
      for (unsigned f : form.followers)
        followers.push_back(in.model.statements[f].name);
      o["product"] = Object{{"statement", statement.name},
                            {"followers", std::move(followers)},
                            {"rows", form.rows},
                            {"columns", form.columns},
                            {"rowFactor", form.rowFactor->name},
                            {"columnFactor", form.columnFactor->name},
                            {"rowAlongTerms", form.rowAlongTerms},
                            {"columnAlongTerms", form.columnAlongTerms}};
    }
    if (b.computedIn >= 0)
      o["computedIn"] = b.computedIn;
    if (b.privatisedScatter)
      o["privatisedScatter"] = in.model.statements[*b.privatisedScatter].name;
    if (b.roundTiles)
      o["roundTiles"] = Object{{"update", in.model.statements[b.roundTiles->update].name},
                               {"array", b.roundTiles->array},
                               {"rounds", b.roundTiles->rounds},
                               {"reach", intArray(b.roundTiles->reach)},
                               {"tile", intArray(b.roundTiles->tile)}};
    o["reason"] = b.reason;
    mapping.push_back(std::move(o));
  }
  root["mapping"] = std::move(mapping);
  if (!in.mapping.streamProblem.empty())
    root["gpuStreamProblem"] = in.mapping.streamProblem;
  if (in.decomposition) {
    Array mpi;
    for (const map::BandDecomposition &d : in.decomposition->bands) {
      Object o{{"band", d.band}, {"distributed", d.distributed}, {"reason", d.reason}};
      if (d.distributed) {
        o["first"] = d.first;
        o["extent"] = d.extent;
        o["widen"] = intArray({d.widenBefore, d.widenAfter});
        o["chunks"] = d.chunks;
        Array exchanges;
        for (const map::RowExchange &e : d.exchanges)
          exchanges.push_back(rowExchangeJson(e));
        o["exchanges"] = std::move(exchanges);
      }
      if (d.pipeline)
        o["pipeline"] = Object{{"statement", in.model.statements[d.pipeline->statement].name},
                               {"array", d.pipeline->array},
                               {"depth", d.pipeline->depth},
                               {"columnFirst", d.pipeline->columnFirst},
                               {"columnExtent", d.pipeline->columnExtent}};
      mpi.push_back(std::move(o));
    }
    root["mpi"] = std::move(mpi);
    root["mpiTarget"] = in.mpiTarget;
    Array gathers;
    for (const map::RowGather &g : in.decomposition->gathers)
      gathers.push_back(Object{{"array", g.rows.array},
                               {"dim", g.rows.dim},
                               {"shift", g.rows.shift},
                               {"first", g.first},
                               {"extent", g.extent}});
    root["mpiGathers"] = std::move(gathers);
    Array splits;
    for (const map::TermSplit &t : in.decomposition->splits)
      splits.push_back(Object{{"statement", in.model.statements[t.statement].name},
                              {"variable", t.variable->name},
                              {"first", t.first},
                              {"extent", t.extent},
                              {"band", int64_t(t.band)},
                              {"values", t.values},
                              {"elementBytes", int64_t(t.elementBytes)},
                              {"why", t.why}});
    root["mpiSplits"] = std::move(splits);
  }
  root["legality"] = Object{{"verified", true}, {"dependences", static_cast<int64_t>(in.deps.edges.size())}};
  return root;
}

} // namespace polyc::driver
