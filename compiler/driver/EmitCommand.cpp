// polyc emit: runs the pipeline and a target's code generator and writes the sources (for the CPU,
// <prog>.cpp and the library header <prog>.h) into a folder. Also defines the options that emit and
// build share (see Targets.h).
#include "Commands.h"
#include "Targets.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace polyc;
using namespace polyc::driver;

// Options of both emit and build.
static cl::opt<std::string> sharedInput(cl::Positional, cl::Required, cl::desc("<file.poly>"), cl::sub(EmitCommand),
                                        cl::sub(BuildCommand));
static cl::opt<std::string> sharedTarget("target", cl::desc("The target: cpu, cuda or opencl (default cpu)"),
                                         cl::value_desc("name"), cl::init("cpu"), cl::sub(EmitCommand),
                                         cl::sub(BuildCommand));
static cl::opt<allocate::AllocationChoice> sharedAllocation(
    "allocation", cl::desc("Wavefront allocation"), cl::init(allocate::AllocationChoice::Auto),
    cl::values(clEnumValN(allocate::AllocationChoice::Auto, "auto", "chosen by the cost model (default)"),
               clEnumValN(allocate::AllocationChoice::Fixed, "fixed", "one parallel step per hyperplane"),
               clEnumValN(allocate::AllocationChoice::Flexible, "flexible", "columns taken under locks")),
    cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<bool> sharedNoFuse("no-fuse", cl::desc("Do not fuse statements into shared loop nests"),
                                  cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<bool> sharedNoHoist("no-hoist",
                                   cl::desc("Keep a recurrence's leading input-only terms in its wavefront "
                                            "(do not compute them first as a separate statement)"),
                                   cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<bool> sharedNoFactor("no-factor",
                                    cl::desc("Keep sums as written: no factoring of separable sums, no terms "
                                             "computed once per point"),
                                    cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<bool>
    sharedStream("stream",
                 cl::desc("Move the inputs and outputs indexed by the outer sequential loop one "
                          "slice per step, overlapped with the steps (cpu and cuda targets)"),
                 cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<bool>
    sharedMpi("mpi",
              cl::desc("Run as ranks of MPI (mpirun -np R EXE ...): each rank computes a block "
                       "of every band it can distribute (cpu target)"),
              cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<bool> sharedNoRecompute(
    "no-recompute",
    cl::desc("With --mpi: send every halo, rather than widen a band's blocks to compute the rows that "
             "later bands read beyond their own"),
    cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<int64_t> sharedBlock("block", cl::desc("Threads per block or work-group (default: the cost model's)"),
                                    cl::value_desc("N"), cl::init(0), cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<std::string> sharedTile(
    "tile",
    cl::desc("Tile sizes of the bands the CPU target tiles: S0,S1,... outermost first (a band with more "
             "members repeats the last), or none (default: 32, and 64 for the innermost)"),
    cl::value_desc("sizes|none"), cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::opt<std::string> sharedTimeTile(
    "time-tile",
    cl::desc("Time tiles of iterated stencils on the CPU target: S,W (steps, then rows of the skewed "
             "space), or none (default: 16,64; 64,8192 for a 1-D stencil)"),
    cl::value_desc("sizes|none"), cl::sub(EmitCommand), cl::sub(BuildCommand));
static cl::list<std::string> sharedParams("param", cl::desc("Fix a parameter at compile time: NAME=VALUE"),
                                          cl::value_desc("NAME=VALUE"), cl::sub(EmitCommand),
                                          cl::sub(BuildCommand));

// emit's own.
static cl::opt<std::string> emitOutput("o", cl::desc("Output folder (default: the current folder)"),
                                       cl::value_desc("dir"), cl::init("."), cl::sub(EmitCommand));

// --tile's and --time-tile's value: "none" (clears `enabled`), or positive sizes separated by commas.
static bool parseTileOption(StringRef option, StringRef text, bool &enabled, std::vector<int64_t> &sizes) {
  if (text.empty())
    return true;
  if (text == "none") {
    enabled = false;
    return true;
  }
  SmallVector<StringRef, 4> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    int64_t size = 0;
    if (part.trim().getAsInteger(10, size) || size < 1) {
      errs() << "polyc: error: --" << option << ": '" << part
             << "' is not a positive size (expected S0,S1,... or none)\n";
      return false;
    }
    sizes.push_back(size);
  }
  return true;
}

static const char *allocationName(allocate::AllocationChoice choice) {
  switch (choice) {
  case allocate::AllocationChoice::Auto: return "auto";
  case allocate::AllocationChoice::Fixed: return "fixed";
  case allocate::AllocationChoice::Flexible: return "flexible";
  }
  return "auto";
}

bool polyc::driver::readEmitSettings(StringRef subcommand, EmitSettings &settings) {
  settings.input = sharedInput;
  settings.target = findTarget(sharedTarget);
  if (!settings.target) {
    errs() << "polyc: error: unknown target '" << sharedTarget << "' (expected one of: " << targetNames()
           << ")\n";
    return false;
  }
  if (!settings.target->emit) {
    errs() << "polyc: error: target '" << sharedTarget << "' is not available in this build\n";
    return false;
  }
  if (sharedStream && !settings.target->streams) {
    errs() << "polyc: error: --stream is not supported by the " << sharedTarget
           << " target (cpu and cuda are)\n";
    return false;
  }
  if (sharedMpi && !settings.target->mpi) {
    errs() << "polyc: error: --mpi is not supported by the " << sharedTarget << " target\n";
    return false;
  }
  if (sharedNoRecompute && !sharedMpi) {
    errs() << "polyc: error: --no-recompute applies to --mpi builds only\n";
    return false;
  }
  if (sharedMpi && sharedStream) {
    errs() << "polyc: error: --mpi and --stream cannot be combined yet\n";
    return false;
  }
  if (sharedBlock < 0) {
    errs() << "polyc: error: --block must be positive, got " << sharedBlock << "\n";
    return false;
  }
  schedule::TimeTilingOptions &timeTiling = settings.pipeline.timeTiling;
  timeTiling.enabled = settings.target->tilesForCaches;
  if (!parseTileOption("tile", sharedTile, settings.pipeline.tiling.enabled,
                       settings.pipeline.tiling.sizes) ||
      !parseTileOption("time-tile", sharedTimeTile, timeTiling.enabled, timeTiling.sizes))
    return false;
  // A time tile runs several steps at once, between which the ranks would exchange rows: not with --mpi.
  timeTiling.enabled = timeTiling.enabled && settings.pipeline.tiling.enabled && !sharedMpi;
  settings.pipeline.gpuMapping = settings.target->mapsToGpu;
  settings.pipeline.fuseSiblings = settings.target->mapsToGpu;
  auto params = parseParamAssignments(sharedParams);
  if (!params) {
    errs() << "polyc: error: " << toString(params.takeError()) << "\n";
    return false;
  }
  settings.pipeline.params = *params;
  settings.pipeline.allocation = sharedAllocation;
  settings.pipeline.fuse = !sharedNoFuse;
  settings.pipeline.hoist = !sharedNoHoist;
  settings.pipeline.factor = !sharedNoFactor;
  settings.pipeline.blockSize = sharedBlock;
  settings.pipeline.stream = sharedStream;
  settings.pipeline.mpi = sharedMpi;
  settings.pipeline.mpiRecompute = !sharedNoRecompute;

  // The command line as it matters for the output: options in a fixed order, no output path, so
  // that emitting the same program twice gives the same files wherever they go.
  std::string line = "polyc " + subcommand.str() + " " + sharedInput + " --target=" + sharedTarget;
  if (sharedAllocation != allocate::AllocationChoice::Auto)
    line += std::string(" --allocation=") + allocationName(sharedAllocation);
  if (sharedNoFuse)
    line += " --no-fuse";
  if (sharedNoHoist)
    line += " --no-hoist";
  if (sharedNoFactor)
    line += " --no-factor";
  if (sharedStream)
    line += " --stream";
  if (sharedMpi)
    line += " --mpi";
  if (sharedNoRecompute)
    line += " --no-recompute";
  if (sharedBlock > 0)
    line += " --block=" + std::to_string(sharedBlock);
  if (!sharedTile.empty())
    line += " --tile=" + sharedTile;
  if (!sharedTimeTile.empty())
    line += " --time-tile=" + sharedTimeTile;
  for (const std::string &p : sharedParams)
    line += " --param " + p;
  settings.commandLine = line;
  return true;
}

int polyc::driver::runEmit() {
  EmitSettings settings;
  if (!readEmitSettings("emit", settings))
    return 1;
  SourceMgr sm;
  std::string programName;
  std::vector<codegen::GeneratedFile> files;
  if (!generateSources(settings, sm, programName, files))
    return 1;
  if (Error err = writeFiles(emitOutput, files))
    return reportError(std::move(err), sm);
  return 0;
}
