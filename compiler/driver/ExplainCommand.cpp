// polyc explain: runs the middle end (model, dependences, schedule, legality check, allocation) and
// shows what it found and why, as text, JSON, a Graphviz dependence graph or an SVG iteration space.
#include "Commands.h"
#include "ExplainPrinters.h"
#include "Pipeline.h"
#include "Targets.h"

#include "compiler/support/SourceError.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;
using namespace polyc;

namespace {
enum class ExplainFormat { Text, Json, Dot, Svg };
}

static cl::opt<std::string> explainInput(cl::Positional, cl::Required, cl::desc("<file.poly>"),
                                         cl::sub(driver::ExplainCommand));
static cl::opt<ExplainFormat> explainFormat(
    "format", cl::desc("Output format"), cl::init(ExplainFormat::Text),
    cl::values(clEnumValN(ExplainFormat::Text, "text", "readable text (default)"),
               clEnumValN(ExplainFormat::Json, "json", "JSON, see docs/explain-json.md"),
               clEnumValN(ExplainFormat::Dot, "dot", "the dependence graph for Graphviz"),
               clEnumValN(ExplainFormat::Svg, "svg", "a 2D iteration space with hyperplanes and columns")),
    cl::sub(driver::ExplainCommand));
static cl::list<std::string> explainParams("param", cl::desc("Fix a parameter: NAME=VALUE"),
                                           cl::value_desc("NAME=VALUE"), cl::sub(driver::ExplainCommand));
static cl::opt<allocate::AllocationChoice> explainAllocation(
    "allocation", cl::desc("Wavefront allocation"), cl::init(allocate::AllocationChoice::Auto),
    cl::values(clEnumValN(allocate::AllocationChoice::Auto, "auto", "chosen by the cost model (default)"),
               clEnumValN(allocate::AllocationChoice::Fixed, "fixed", "one launch per hyperplane"),
               clEnumValN(allocate::AllocationChoice::Flexible, "flexible", "one kernel with column locks")),
    cl::sub(driver::ExplainCommand));
static cl::opt<bool> explainNoFuse("no-fuse", cl::desc("Do not fuse statements into shared loop nests"),
                                   cl::sub(driver::ExplainCommand));
static cl::opt<bool> explainNoHoist("no-hoist",
                                    cl::desc("Keep a recurrence's leading input-only terms in its wavefront "
                                             "(do not compute them first as a separate statement)"),
                                    cl::sub(driver::ExplainCommand));

static cl::opt<bool>
    explainNoFactor("no-factor",
                    cl::desc("Keep sums as written: no factoring of separable sums, no terms "
                             "computed once per point"),
                    cl::sub(driver::ExplainCommand));

static cl::opt<bool>
    explainStream("stream",
                  cl::desc("Explain the streamed build: the inputs and outputs moved one slice per "
                           "step of the outer sequential loop"),
                  cl::sub(driver::ExplainCommand));

static cl::opt<bool>
    explainMpi("mpi",
               cl::desc("Explain the MPI build (polyc build --mpi): the bands the ranks share and "
                        "the rows each rank sends after them"),
               cl::sub(driver::ExplainCommand));
static cl::opt<std::string>
    explainTarget("target",
                  cl::desc("With --mpi: the target whose decomposition to explain: cpu "
                           "(default), cuda or opencl (only the cpu target pipelines)"),
                  cl::value_desc("name"), cl::init("cpu"), cl::sub(driver::ExplainCommand));
static cl::opt<bool> explainNoRecompute("no-recompute",
                                        cl::desc("With --mpi: the build that sends every halo (polyc build "
                                                 "--no-recompute)"),
                                        cl::sub(driver::ExplainCommand));

int polyc::driver::runExplain() {
  SourceMgr sm;
  auto params = parseParamAssignments(explainParams);
  if (!params)
    return reportError(params.takeError(), sm);
  const driver::TargetInfo *target = driver::findTarget(explainTarget);
  if (!target) {
    errs() << "polyc: error: unknown target '" << explainTarget
           << "' (expected one of: " << driver::targetNames() << ")\n";
    return 1;
  }
  PipelineOptions options;
  options.params = std::move(*params);
  options.allocation = explainAllocation;
  options.fuse = !explainNoFuse;
  // The schedule of the GPU targets, whose mapping explain shows; with --mpi, the target's.
  options.fuseSiblings = !explainMpi || target->mapsToGpu;
  options.hoist = !explainNoHoist;
  options.factor = !explainNoFactor;
  options.stream = explainStream;
  // compileProgram runs the independent legality check too, in every build, so that tests see it.
  std::unique_ptr<CompiledProgram> compiled = compileProgram(sm, explainInput, options);
  if (!compiled)
    return 1;

  ExplainInput in{explainInput, compiled->model, compiled->deps, compiled->schedule, compiled->allocation,
                  compiled->mapping};
  try {
    std::optional<map::Decomposition> decomposition, sent;
    if (explainMpi) {
      decomposition = map::decompose(compiled->model, compiled->schedule, compiled->allocation,
                                     {.recompute = !explainNoRecompute, .pipelines = target->mpiPipelines});
      if (explainFormat == ExplainFormat::Text && !explainNoRecompute) // what recomputing saves (text only)
        sent = map::decompose(compiled->model, compiled->schedule, compiled->allocation,
                              {.recompute = false, .pipelines = target->mpiPipelines});
    }
    in.mpiTarget = explainTarget;
    in.decomposition = decomposition ? &*decomposition : nullptr;
    in.sentDecomposition = sent ? &*sent : nullptr;
    switch (explainFormat) {
    case ExplainFormat::Text:
      printExplainText(in, sm, outs());
      break;
    case ExplainFormat::Json:
      outs() << formatv("{0:2}", explainJson(in, sm)) << "\n";
      break;
    case ExplainFormat::Dot:
      printExplainDot(in, outs());
      break;
    case ExplainFormat::Svg:
      if (Error err = printExplainSvg(in, outs()))
        return reportError(std::move(err), sm);
      break;
    }
  } catch (const isl::exception &e) {
    return reportError(makeError(std::string("internal error while explaining (isl): ") + e.what()), sm);
  }
  return 0;
}
