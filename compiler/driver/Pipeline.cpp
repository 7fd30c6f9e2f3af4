// The compilation pipeline shared by the subcommands (see Pipeline.h).
#include "Pipeline.h"

#include "compiler/model/DeadInstances.h"
#include "compiler/model/FactorSums.h"
#include "compiler/model/HoistInputTerms.h"
#include "compiler/model/PointTerms.h"
#include "compiler/model/SnapshotUpdates.h"
#include "compiler/schedule/CopyElision.h"
#include "compiler/schedule/Streaming.h"
#include "compiler/support/SourceError.h"
#include "dsl/Diagnostics.h"
#include "dsl/Frontend.h"

#include "llvm/Support/raw_ostream.h"

using namespace polyc;
using namespace polyc::driver;

int polyc::driver::reportError(llvm::Error error, llvm::SourceMgr &sm) {
  llvm::handleAllErrors(
      std::move(error),
      [&](const SourceError &e) {
        if (e.range.isValid()) {
          dsl::DiagnosticEngine diags(sm, llvm::errs());
          diags.error(e.range, e.message);
        } else {
          llvm::errs() << "polyc: error: " << e.message << "\n";
        }
      },
      [&](const llvm::ErrorInfoBase &e) { llvm::errs() << "polyc: error: " << e.message() << "\n"; });
  return 1;
}

llvm::Expected<std::map<std::string, int64_t>>
polyc::driver::parseParamAssignments(const std::vector<std::string> &texts) {
  std::map<std::string, int64_t> values;
  for (const std::string &text : texts) {
    size_t eq = text.find('=');
    llvm::StringRef name = llvm::StringRef(text).substr(0, eq);
    llvm::StringRef value = eq == std::string::npos ? "" : llvm::StringRef(text).substr(eq + 1);
    int64_t v = 0;
    if (eq == std::string::npos || name.empty() || value.getAsInteger(10, v))
      return makeError("--param expects NAME=VALUE with an integer VALUE, got '" + text + "'");
    auto it = values.find(name.str());
    if (it != values.end() && it->second != v)
      return makeError("--param " + name + " is given twice with different values");
    values[name.str()] = v;
  }
  return values;
}

// Time tiling (TimeTiling.h) on a copy of the schedule, kept only when both legality checks accept it;
// otherwise the step-by-step schedule stays, with a warning: the rejection is polyc's bug, not the
// program's.
static void timeTileChecked(const model::Model &model, const analysis::DependenceGraph &deps,
                            schedule::Schedule &chosen, const schedule::TimeTilingOptions &options) {
  schedule::Schedule tiled = chosen;
  if (schedule::timeTile(model, deps, tiled, options) == 0)
    return;
  llvm::Error err = schedule::verifySchedule(model, deps, tiled);
  if (!err)
    err = schedule::verifyStorage(model, deps, tiled);
  if (err) {
    llvm::errs() << "polyc: warning: time tiling rejected by the legality check, the steps run one by one: "
                 << llvm::toString(std::move(err)) << "\n";
    return;
  }
  chosen = std::move(tiled);
}

std::unique_ptr<CompiledProgram> polyc::driver::compileProgram(llvm::SourceMgr &sm, llvm::StringRef path,
                                                               const PipelineOptions &options) {
  auto compiled = std::make_unique<CompiledProgram>();
  compiled->program = loadProgram(sm, path);
  if (!compiled->program)
    return nullptr;
  if (options.hoist)
    model::hoistInputTerms(*compiled->program);
  if (options.factor) {
    // Factored first: the sums it nests are what PointTerms computes once per point.
    model::factorSeparableSums(*compiled->program);
    model::computeTermsOncePerPoint(*compiled->program);
  }
  try {
    isl::ctx ctx(compiled->isl.get());
    model::ModelOptions modelOptions;
    modelOptions.paramValues = options.params;
    auto model = model::buildModel(*compiled->program, ctx, modelOptions);
    if (!model)
      return reportError(model.takeError(), sm), nullptr;
    // Updates that read elements other instances overwrite read a copy of the old values: new
    // equations, a new model. No target orders or copies them itself.
    if (model::snapshotUpdates(*compiled->program, *model) > 0) {
      model = model::buildModel(*compiled->program, ctx, modelOptions);
      if (!model)
        return reportError(model.takeError(), sm), nullptr;
    }
    for (const model::Statement &stmt : model->statements)
      if (stmt.isUpdate() && stmt.readsOtherInstances)
        return reportError(makeError("internal error: " + stmt.name + " updates " + stmt.write.array +
                                     " reading elements it overwrites, and no copy of the old values "
                                     "could be made"),
                           sm),
               nullptr;
    // Definitions of local elements that nothing reads are not computed.
    model::removeDeadInstances(*model);
    compiled->model = std::move(*model);
    auto deps = analysis::computeDependences(compiled->model);
    if (!deps)
      return reportError(deps.takeError(), sm), nullptr;
    compiled->deps = std::move(*deps);
    schedule::ScheduleOptions scheduleOptions;
    scheduleOptions.fuse = options.fuse;
    scheduleOptions.fuseSiblings = options.fuseSiblings;
    scheduleOptions.streamSteps = options.stream;
    auto schedule = schedule::chooseSchedule(compiled->model, compiled->deps, scheduleOptions);
    if (!schedule)
      return reportError(schedule.takeError(), sm), nullptr;
    compiled->schedule = std::move(*schedule);
    // The independent legality check: code is never generated from a schedule it rejects.
    if (llvm::Error err = schedule::verifySchedule(compiled->model, compiled->deps, compiled->schedule))
      return reportError(std::move(err), sm), nullptr;
    if (llvm::Error err = schedule::verifyStorage(compiled->model, compiled->deps, compiled->schedule))
      return reportError(std::move(err), sm), nullptr;
    // A time tile runs several steps at once, before their slices could move: not with --stream.
    if (!options.stream)
      timeTileChecked(compiled->model, compiled->deps, compiled->schedule, options.timeTiling);
    // After both checks, which see every copy: what is elided runs on values its slots hold already.
    schedule::elideSteadyCopies(compiled->model, compiled->schedule);
    schedule::chooseTiles(compiled->model, compiled->schedule, options.tiling);
    if (options.stream) {
      auto streaming = schedule::planStreaming(compiled->model, compiled->schedule);
      if (!streaming)
        return reportError(streaming.takeError(), sm), nullptr;
      schedule::applyStreaming(compiled->schedule, std::move(*streaming));
      if (llvm::Error err = schedule::verifyStorage(compiled->model, compiled->deps, compiled->schedule))
        return reportError(std::move(err), sm), nullptr;
    }
    allocate::AllocationOptions allocationOptions;
    allocationOptions.choice = options.allocation;
    allocationOptions.blockSize = options.blockSize;
    auto allocation = allocate::allocate(compiled->model, compiled->deps, compiled->schedule, allocationOptions);
    if (!allocation)
      return reportError(allocation.takeError(), sm), nullptr;
    compiled->allocation = std::move(*allocation);
    if (options.gpuMapping) {
      auto mapping = map::mapScheduleTree(compiled->model, compiled->schedule, compiled->allocation);
      if (!mapping)
        return reportError(mapping.takeError(), sm), nullptr;
      compiled->mapping = std::move(*mapping);
    }
  } catch (const isl::exception &e) {
    reportError(makeError(std::string("internal error in the middle end (isl): ") + e.what()), sm);
    return nullptr;
  }
  return compiled;
}
