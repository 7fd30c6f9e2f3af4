// polyc explain: runs the middle end (model, dependences, schedule, legality check, allocation) and
// shows what it found and why, as text, JSON, a Graphviz dependence graph or an SVG iteration space.
#include "Commands.h"
#include "ExplainPrinters.h"

#include "compiler/support/IslContext.h"
#include "compiler/support/SourceError.h"
#include "dsl/Diagnostics.h"
#include "dsl/Frontend.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

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

// Reports an error from a middle-end stage: at its place in the source when it has one.
static int report(Error err, SourceMgr &sm) {
  int status = 1;
  handleAllErrors(
      std::move(err),
      [&](const SourceError &e) {
        if (e.range.isValid()) {
          dsl::DiagnosticEngine diags(sm, errs());
          diags.error(e.range, e.message);
        } else {
          errs() << "polyc: error: " << e.message << "\n";
        }
      },
      [&](const ErrorInfoBase &e) { errs() << "polyc: error: " << e.message() << "\n"; });
  return status;
}

static Expected<std::map<std::string, int64_t>> parseParams() {
  std::map<std::string, int64_t> values;
  for (const std::string &text : explainParams) {
    size_t eq = text.find('=');
    StringRef name = StringRef(text).substr(0, eq), value = eq == std::string::npos ? "" : StringRef(text).substr(eq + 1);
    int64_t v = 0;
    if (eq == std::string::npos || name.empty() || value.getAsInteger(10, v))
      return makeError("--param expects NAME=VALUE with an integer VALUE, got '" + text + "'");
    if (values.count(name.str()) && values[name.str()] != v)
      return makeError("--param " + name + " is given twice with different values");
    values[name.str()] = v;
  }
  return values;
}

int polyc::driver::runExplain() {
  SourceMgr sm;
  auto params = parseParams();
  if (!params)
    return report(params.takeError(), sm);
  std::unique_ptr<ast::Program> program = loadProgram(sm, explainInput);
  if (!program)
    return 1;
  IslContext isl;
  isl::ctx ctx(isl.get());
  model::ModelOptions modelOptions;
  modelOptions.paramValues = *params;
  auto model = model::buildModel(*program, ctx, modelOptions);
  if (!model)
    return report(model.takeError(), sm);
  auto deps = analysis::computeDependences(*model);
  if (!deps)
    return report(deps.takeError(), sm);
  schedule::ScheduleOptions scheduleOptions;
  scheduleOptions.fuse = !explainNoFuse;
  auto schedule = schedule::chooseSchedule(*model, *deps, scheduleOptions);
  if (!schedule)
    return report(schedule.takeError(), sm);
  // The independent legality check runs here in every build, so that tests see it.
  if (Error err = schedule::verifySchedule(*model, *deps, *schedule))
    return report(std::move(err), sm);
  allocate::AllocationOptions allocationOptions;
  allocationOptions.choice = explainAllocation;
  auto allocation = allocate::allocate(*model, *deps, *schedule, allocationOptions);
  if (!allocation)
    return report(allocation.takeError(), sm);

  ExplainInput in{explainInput, *model, *deps, *schedule, *allocation};
  try {
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
        return report(std::move(err), sm);
      break;
    }
  } catch (const isl::exception &e) {
    return report(makeError(std::string("internal error while explaining (isl): ") + e.what()), sm);
  }
  return 0;
}
