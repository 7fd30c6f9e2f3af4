// The GPU mapping of the schedule tree (see Mapping.h): a pre-order walk that places every band from
// its allocation and from what lies under it, then the persistent alternative of top-level host loops.
#include "compiler/map/Mapping.h"

#include "compiler/model/IslUtil.h"
#include "compiler/support/SourceError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include <numeric>

namespace polyc::map {

using allocate::AllocationKind;
namespace iu = polyc::islutil;

const char *spelling(Placement placement) {
  switch (placement) {
  case Placement::HostLoop:
    return "host loop";
  case Placement::Kernel:
    return "kernel";
  case Placement::InKernel:
    return "in kernel";
  case Placement::SingleThread:
    return "single thread";
  }
  return "?";
}

// A persistent kernel replaces a host loop when the largest launch inside one iteration takes at least
// this many threads. Measured on the H100 (docs/performance.md, "The GPU mapping"): a replayed graph node
// costs 1.8 us and a grid barrier 2.3 us, so small steps run faster as launches (jacobi-2d at N <= 250);
// from about 2^18 threads the persistent kernel ran faster (jacobi-2d N = 1000 and 1300: 1.17x and 1.26x;
// the rate network, 40000 neurons x 1000 synapses, a warp a neuron: 1.86x).
static constexpr int64_t PersistentThreadsMin = int64_t(1) << 18;

// A thread that sums a whole reduction alone (a data-parallel band over outputs of long sums) runs long
// enough in a step that the launch it saves is a small part of it, and the persistent kernel, with one
// register budget for all its bands, ran slower: the optical flow at 1920x1080 on the H100, 826 frames/s
// as a host loop and 664 persistent (docs/performance.md, "Optical flow"). Such loops are persistent as one
// block only.
static bool sumsAlone(const model::Model &model, const schedule::Band &band, const map::BandMapping &mapping) {
  return mapping.persistentGroup == 1 &&
         llvm::any_of(band.statements, [&](unsigned s) { return !model.statements[s].reductions.empty(); });
}

// Every band inside a host loop a thread a point, none reducing: its launches (CUDA) have an instance for
// a grid with a thread for every point (polyc::rt::cuda::gridCovers), without the grid-stride loops the
// persistent kernel keeps, and ran faster than the persistent kernel at every size that took it before
// (PolyBench LARGE on the H200: jacobi-2d 1.6x its floor a step against 1.9x, heat-3d 1.9x against 2.7x,
// fdtd-2d 1.3x against 1.6x; docs/performance.md). Such loops are persistent as one block only.
static bool threadAPointOnly(const model::Model &model, const schedule::Band &band,
                             const map::BandMapping &mapping, const allocate::BandAllocation &allocation) {
  return mapping.persistentGroup == 1 && allocation.kind == AllocationKind::DataParallel &&
         llvm::none_of(band.statements, [&](unsigned s) { return !model.statements[s].reductions.empty(); });
}

// A step of at most this many threads runs as a persistent kernel of one block, whose barriers are the
// block's (__syncthreads, well under a launch's 1.8 us): 8 points a thread of its 256. Below it a launch
// or a grid barrier costs far more than a step's work (jacobi-1d at N = 2000: 2000 points a step).
static constexpr int64_t OneBlockThreadsMax = 2048;

// The threads of a point of a kernel band inside a persistent kernel: one for a data-parallel band; for
// a reduction its group, at most a warp, so that every band fits the kernel's blocks of 256 threads.
static unsigned persistentGroup(const allocate::BandAllocation &allocation) {
  if (allocation.kind != AllocationKind::Reduction)
    return 1;
  int64_t size = allocation.reductionGroupSize;
  return size >= 2 && size <= 32 && (size & (size - 1)) == 0 ? unsigned(size) : 32;
}

static void walkBands(const isl::schedule_node &node, int parent, std::vector<BandNode> &nodes) {
  int inner = parent;
  if (node.isa<isl::schedule_node_band>()) {
    BandNode band;
    band.parent = parent;
    band.node = node;
    band.domain = isl::manage(isl_schedule_node_get_domain(node.get()));
    band.partial = node.as<isl::schedule_node_band>().partial_schedule();
    inner = static_cast<int>(nodes.size());
    nodes.push_back(band);
  }
  for (unsigned c = 0; c < unsigned(node.n_children()); ++c)
    walkBands(node.child(static_cast<int>(c)), inner, nodes);
}

std::vector<BandNode> bandNodes(const isl::schedule &tree) {
  std::vector<BandNode> nodes;
  walkBands(tree.root(), -1, nodes);
  return nodes;
}

namespace {

class Mapper {
public:
  Mapper(const model::Model &model, const schedule::Schedule &schedule, const allocate::Allocation &allocation)
      : model_(model), schedule_(schedule), allocation_(allocation) {}
  Mapping run();

private:
  bool hasParallelWorkUnder(unsigned band) const;
  bool isUnder(unsigned band, unsigned ancestor) const;
  std::vector<unsigned> hostStatements(unsigned band, const Mapping &mapping) const;
  std::vector<unsigned> gridMembers(unsigned band) const;
  std::string pointsOfLaunch(unsigned band, const std::vector<unsigned> &members) const;
  BandMapping place(unsigned band, const Mapping &mapping) const;
  void placeProduct(unsigned band, BandMapping &mapping) const;
  void placeScatter(unsigned band, BandMapping &mapping) const;
  bool nextInSequence(unsigned band, unsigned next) const;
  isl::set aroundBand(unsigned band) const;
  void attachFollowers(unsigned band, Mapping &mapping) const;
  std::optional<PersistentForm> persistentForm(unsigned band, const Mapping &mapping, std::string &why) const;

  const model::Model &model_;
  const schedule::Schedule &schedule_;
  const allocate::Allocation &allocation_;
  std::vector<BandNode> nodes_; // by band, pre-order
};

} // namespace

bool Mapper::isUnder(unsigned band, unsigned ancestor) const {
  for (int b = nodes_[band].parent; b >= 0; b = nodes_[b].parent)
    if (unsigned(b) == ancestor)
      return true;
  return false;
}

// Whether a band, or a band or statement under it, offers parallel work: a parallel member, or a
// reduction (a group of threads can share it).
bool Mapper::hasParallelWorkUnder(unsigned band) const {
  for (unsigned b = band; b < nodes_.size(); ++b)
    if ((b == band || isUnder(b, band)) && allocation_.bands[b].kind != AllocationKind::Sequential)
      return true;
  return llvm::any_of(schedule_.bands[band].statements,
                      [&](unsigned s) { return !model_.statements[s].reductions.empty(); });
}

// The statements under `band` whose innermost band is a host loop: instances met on the host. A
// statement's innermost band is the last band containing it in pre-order (sibling subtrees of a
// sequence hold different statements).
std::vector<unsigned> Mapper::hostStatements(unsigned band, const Mapping &mapping) const {
  std::vector<unsigned> result;
  for (unsigned s : schedule_.bands[band].statements) {
    unsigned innermost = band;
    for (unsigned b = band + 1; b < nodes_.size(); ++b)
      if (isUnder(b, band) && llvm::is_contained(schedule_.bands[b].statements, s))
        innermost = b;
    if (mapping.bands[innermost].placement == Placement::HostLoop)
      result.push_back(s);
  }
  return result;
}

// The innermost run of up to three parallel members from the band's first parallel member on.
std::vector<unsigned> Mapper::gridMembers(unsigned band) const {
  const std::vector<bool> &coincident = schedule_.bands[band].coincident;
  unsigned first = 0;
  while (first < coincident.size() && !coincident[first])
    ++first;
  unsigned end = first;
  while (end < coincident.size() && coincident[end])
    ++end;
  std::vector<unsigned> members;
  for (unsigned m = end > first + 3 ? end - 3 : first; m < end; ++m)
    members.push_back(m);
  return members;
}

// The points one launch of a kernel band covers (or the iterations of a host loop): the product of the
// extents of the band's `members` over all values of the loops around, as a C expression of the
// params; empty when an extent is not one affine expression.
std::string Mapper::pointsOfLaunch(unsigned band, const std::vector<unsigned> &members) const {
  isl::union_set range = nodes_[band].domain.apply(isl::union_map::from(nodes_[band].partial));
  if (range.intersect_params(model_.context).is_empty())
    return "0"; // a band of statements with no instance (an update whose where is never true)
  isl::set points = isl::manage(isl_set_from_union_set(range.release())).intersect_params(model_.context);
  std::vector<std::string> factors;
  bool constant = true;
  int64_t product = 1;
  for (unsigned m : members) {
    isl::pw_aff extent = iu::dimMax(points, m).sub(iu::dimMin(points, m)).add_constant(1).gist_params(model_.context);
    if (std::optional<int64_t> value = iu::constantValue(extent)) {
      factors.push_back(std::to_string(*value));
      product *= *value;
      continue;
    }
    constant = false;
    factors.push_back(iu::pwAffToC(extent, model_.context));
  }
  if (constant)
    return std::to_string(product);
  if (factors.size() > 1)
    for (std::string &factor : factors)
      if (factor.find(' ') != std::string::npos)
        factor = "(" + factor + ")";
  return llvm::join(factors, " * ");
}

BandMapping Mapper::place(unsigned band, const Mapping &mapping) const {
  BandMapping result;
  result.band = band;
  result.parent = nodes_[band].parent;
  const allocate::BandAllocation &allocation = allocation_.bands[band];
  if (result.parent >= 0 && mapping.bands[result.parent].placement != Placement::HostLoop) {
    result.placement = Placement::InKernel;
    result.reason = "inside band " + std::to_string(result.parent) + "'s " +
                    spelling(mapping.bands[result.parent].placement) + ": loops of its threads";
    return result;
  }
  if (allocation.kind != AllocationKind::Sequential) {
    result.placement = Placement::Kernel;
    result.gridMembers = gridMembers(band);
    result.persistentGroup = persistentGroup(allocation);
    std::vector<std::string> names;
    for (unsigned m : result.gridMembers)
      names.push_back(schedule_.bands[band].dimNames[m]);
    result.reason = std::string(allocate::spelling(allocation.kind)) + ": grid over " + llvm::join(names, ", ");
    std::string points = pointsOfLaunch(band, result.gridMembers);
    if (!points.empty())
      result.reason += " (" + points + " points a launch)";
    placeProduct(band, result);
    placeScatter(band, result);
    std::vector<unsigned> outer(result.gridMembers.empty() ? 0 : result.gridMembers.front());
    std::iota(outer.begin(), outer.end(), 0u);
    if (outer.empty())
      return result;
    result.iterations = pointsOfLaunch(band, outer);
    std::vector<std::string> outerNames;
    for (unsigned m : outer)
      outerNames.push_back(schedule_.bands[band].dimNames[m]);
    if (allocation.kind != AllocationKind::FixedWavefront)
      result.reason += "; in order on the host over " + llvm::join(outerNames, ", ") + ", a launch each";
    return result;
  }
  const std::string what = schedule_.bands[band].isSequentialRepeat ? "repeat loop" : "sequential band";
  if (hasParallelWorkUnder(band)) {
    result.placement = Placement::HostLoop;
    std::vector<unsigned> members(schedule_.bands[band].dimNames.size());
    std::iota(members.begin(), members.end(), 0u);
    result.iterations = pointsOfLaunch(band, members);
    result.reason = what + " with parallel work inside: its loop on the host, the work inside launched on each "
                           "iteration, the arrays on the device throughout";
    return result;
  }
  result.placement = Placement::SingleThread;
  result.reason = what + " with no parallel dimension or reduction in or under it: one thread runs it in order";
  return result;
}

// The params for which the loops around a band run: all, at the top; where its parent has instances.
isl::set Mapper::aroundBand(unsigned band) const {
  int parent = nodes_[band].parent;
  if (parent < 0)
    return model_.context;
  return isl::manage(isl_union_set_params(nodes_[parent].domain.copy())).intersect(model_.context);
}

// A kernel band of a program's top level, or of a repeat loop there, that is a matrix product: tiles on
// CUDA (the host passes the repeat loop's iterator to the statement; a band deeper in the tree would need
// the values of the loops around it).
void Mapper::placeProduct(unsigned band, BandMapping &mapping) const {
  AllocationKind kind = allocation_.bands[band].kind;
  if (kind != AllocationKind::DataParallel && kind != AllocationKind::Reduction)
    return;
  int parent = nodes_[band].parent;
  if (parent >= 0 && !(schedule_.bands[parent].isSequentialRepeat && nodes_[parent].parent < 0))
    return;
  std::string why;
  mapping.product =
      findProduct(model_, schedule_, band, nodes_[band].domain, nodes_[band].partial, aroundBand(band), why);
  if (!mapping.product)
    return;
  const ProductForm &form = *mapping.product;
  auto factor = [&](const ast::ArrayRead *read, bool alongTerms) {
    return read->name + " along " + (alongTerms ? "the terms" : "the outputs");
  };
  const std::vector<std::string> &names = schedule_.bands[band].dimNames;
  mapping.reason +=
      "; on CUDA a matrix product over " + names[0] + ", " + names[1] +
      ": tiles of outputs through shared memory, a block of them a thread, the terms split over blocks when "
      "the tiles are too few to fill the device; " +
      factor(form.rowFactor, form.rowAlongTerms) + ", " + factor(form.columnFactor, form.columnAlongTerms);
}

// A kernel band of one scatter, a thread a point (data-parallel: a reduction's group of threads per point
// would add its value from one thread): its points may add into a copy of the array a block.
void Mapper::placeScatter(unsigned band, BandMapping &mapping) const {
  const std::vector<unsigned> &statements = schedule_.bands[band].statements;
  if (statements.size() != 1 || !model_.statements[statements.front()].scatter ||
      allocation_.bands[band].kind != AllocationKind::DataParallel)
    return;
  mapping.privatisedScatter = statements.front();
  mapping.reason +=
      "; a scatter: each block adds into its copy of " + model_.statements[statements.front()].write.array +
      " in shared (local) memory, then adds the copy to it, where the copy fits in 32 KiB and the "
      "points number at least 4 times the elements the blocks add back (at run time); else "
      "atomics on " +
      model_.statements[statements.front()].write.array;
}

// Whether band `next` is the band of the filter right after `band`'s in their sequence.
bool Mapper::nextInSequence(unsigned band, unsigned next) const {
  isl::schedule_node filter = nodes_[band].node.parent();
  if (!filter.isa<isl::schedule_node_filter>() || !filter.has_next_sibling())
    return false;
  isl::schedule_node following = filter.next_sibling();
  return following.n_children() == 1 && following.child(0).isa<isl::schedule_node_band>() &&
         isl::manage(isl_schedule_node_get_domain(following.child(0).get())).is_equal(nodes_[next].domain);
}

// The kernel bands right after a matrix product's that it computes at each of its outputs (a
// producer-consumer fusion: one kernel fewer, and the consumer reads the product's value where it was
// just stored).
void Mapper::attachFollowers(unsigned band, Mapping &mapping) const {
  ProductForm &form = *mapping.bands[band].product;
  unsigned last = band;
  isl::set around = aroundBand(band);
  for (unsigned next = band + 1; next < nodes_.size(); ++next) {
    const schedule::Band &b = schedule_.bands[next];
    BandMapping &follower = mapping.bands[next];
    if (follower.placement != Placement::Kernel || follower.product || b.statements.size() != 1 ||
        allocation_.bands[next].kind != AllocationKind::DataParallel || !nextInSequence(last, next))
      return;
    std::optional<std::string> condition =
        canFollowProduct(model_, form, b.statements.front(), nodes_[band].domain, nodes_[next].domain,
                         nodes_[next].partial, around);
    if (!condition)
      return;
    form.followers.push_back(b.statements.front());
    form.followerConditions.push_back(*condition);
    follower.computedIn = int(band);
    follower.reason += "; on CUDA computed by band " + std::to_string(band) + "'s matrix product at each of " +
                       "its outputs, after its store (it reads what the product writes at its own point only)";
    mapping.bands[band].reason += "; computes " + model_.statements[b.statements.front()].name + " (band " +
                                  std::to_string(next) + ") at each output after its store";
    last = next;
  }
}

// The persistent form of a top-level host loop, or none with the reason in `why`.
std::optional<PersistentForm> Mapper::persistentForm(unsigned band, const Mapping &mapping, std::string &why) const {
  PersistentForm form;
  bool constant = true, threadAPoint = true;
  int64_t largest = 0;
  std::vector<std::string> launches;
  for (unsigned b = band + 1; b < nodes_.size(); ++b) {
    if (!isUnder(b, band) || mapping.bands[b].placement != Placement::Kernel)
      continue;
    const allocate::BandAllocation &a = allocation_.bands[b];
    if (mapping.bands[b].product) {
      why =
          "band " + std::to_string(b) + " is a matrix product, whose tiles a persistent kernel does not take";
      return std::nullopt;
    }
    if (a.kind != AllocationKind::DataParallel && a.kind != AllocationKind::Reduction) {
      why = "band " + std::to_string(b) + " is a " + allocate::spelling(a.kind) +
            ", which a persistent kernel does not take";
      return std::nullopt;
    }
    std::string points = pointsOfLaunch(b, mapping.bands[b].gridMembers);
    form.threadsPerPoint = std::max(form.threadsPerPoint, mapping.bands[b].persistentGroup);
    if (sumsAlone(model_, schedule_.bands[b], mapping.bands[b]))
      form.whyOneBlockOnly =
          "a thread of a band inside sums a whole reduction alone: a launch is a small part "
          "of its step, and a grid-wide persistent kernel ran slower";
    threadAPoint = threadAPoint && threadAPointOnly(model_, schedule_.bands[b], mapping.bands[b], a);
    if (points.empty()) {
      why = "the points of band " + std::to_string(b) + "'s launches are not an affine expression of the params";
      return std::nullopt;
    }
    int64_t value = 0;
    constant = constant && llvm::to_integer(points, value);
    largest = std::max(largest, value);
    if (!llvm::is_contained(launches, points))
      launches.push_back(points);
    ++form.barriersPerStep;
  }
  for (unsigned s : hostStatements(band, mapping)) {
    if (!model_.statements[s].reductions.empty()) {
      why = model_.statements[s].name + " reduces on the host (a block reduction per instance)";
      return std::nullopt;
    }
    ++form.barriersPerStep;
  }
  if (launches.empty()) {
    why = "no launch inside";
    return std::nullopt;
  }
  // So also where the loop stops early and its launches are not replayed: Canny's hysteresis at 640x480
  // made 808 FPS as a grid-wide persistent kernel, 852 as a host loop (docs/performance.md, "Canny").
  if (threadAPoint && form.whyOneBlockOnly.empty())
    form.whyOneBlockOnly =
        "every band inside is a thread a point: its launches, whose grid has a thread for every "
        "point, ran faster than a grid-wide persistent kernel";
  form.gridWide = form.whyOneBlockOnly.empty();
  form.threadsMin = PersistentThreadsMin;
  form.oneBlockThreadsMax = OneBlockThreadsMax;
  const std::string perPoint = form.threadsPerPoint > 1 ? " * " + std::to_string(form.threadsPerPoint) : "";
  if (constant) {
    form.pointsPerStep = std::to_string(largest);
    int64_t threads = largest * int64_t(form.threadsPerPoint);
    form.chosen = (form.gridWide && threads >= form.threadsMin) || threads <= form.oneBlockThreadsMax;
    form.condition = *form.chosen ? "true" : "false";
  } else {
    // Over the params alone (int64_t in the host code), with C's operators: no names of C++ in the
    // text, which a program's params may share (a param named int64_t).
    std::string largestLaunch = launches.front();
    for (size_t k = 1; k < launches.size(); ++k) {
      std::string a = "(" + largestLaunch + ")", b = "(" + launches[k] + ")";
      largestLaunch = a + " > " + b + " ? " + a + " : " + b;
    }
    form.pointsPerStep = largestLaunch;
    std::string threads = "(" + form.pointsPerStep + ")" + perPoint;
    form.condition = (form.gridWide ? threads + " >= " + std::to_string(form.threadsMin) + " || " : "") + threads +
                     " <= " + std::to_string(form.oneBlockThreadsMax);
  }
  return form;
}

// Round tiles in words: "rounds in tiles on chip, up to 8 a launch: a block holds 48 x 48 points (32 x
// 32 its own)".
static std::string describeRoundTiles(const RoundTiles &tiles) {
  return "rounds in tiles on chip, up to " + std::to_string(tiles.rounds) + " a launch: a block holds " +
         tiles.heldPoints() + ")";
}

Mapping Mapper::run() {
  nodes_ = bandNodes(schedule_.tree);
  Mapping mapping;
  if (nodes_.size() != schedule_.bands.size() || allocation_.bands.size() != schedule_.bands.size())
    return mapping;
  for (unsigned b = 0; b < nodes_.size(); ++b)
    mapping.bands.push_back(place(b, mapping));
  for (unsigned b = 0; b < nodes_.size(); ++b)
    if (mapping.bands[b].product)
      attachFollowers(b, mapping);
  for (BandMapping &band : mapping.bands) {
    if (band.parent >= 0 || band.iterations.empty())
      continue;
    // A graph of a loop with loops on the host inside would hold their product of launches (seidel-2d's
    // wavefront in its time loop: 500 x 4000): those launch directly.
    band.replayable = true;
    for (const BandMapping &inner : mapping.bands)
      if (isUnder(inner.band, band.band) && !inner.iterations.empty())
        band.replayable = false;
  }
  for (BandMapping &band : mapping.bands) {
    if (band.placement != Placement::HostLoop || band.parent >= 0)
      continue;
    if (schedule_.bands[band.band].stopsWhenUnchanged) {
      // Never a graph: a replay would run every iteration.
      band.replayable = false;
      band.reason +=
          "; it stops after an iteration that changes nothing: on the host the changed flags are "
          "read back after each iteration, or every 16 where every update of the block is watched and "
          "no equation of the block reads its variable";
    }
    std::string why;
    band.roundTiles = findRoundTiles(model_, schedule_, band.band, why);
    if (band.roundTiles)
      band.reason += "; " + describeRoundTiles(*band.roundTiles);
    else if (schedule_.bands[band.band].isSequentialRepeat)
      band.reason += "; no round tiles: " + why;
    band.persistent = persistentForm(band.band, mapping, why);
    if (!band.persistent) {
      band.reason += "; no persistent form: " + why;
      continue;
    }
    const PersistentForm &form = *band.persistent;
    std::string rule = "a persistent grid-synchronised kernel (" + std::to_string(form.barriersPerStep) +
                       (form.barriersPerStep == 1 ? " grid barrier" : " grid barriers") + " an iteration, " +
                       std::to_string(form.threadsPerPoint) +
                       (form.threadsPerPoint == 1 ? " thread" : " threads") + " a point) when the largest launch "
                       "inside takes at least " + std::to_string(form.threadsMin) + " threads, or of one block "
                       "with block barriers when it takes at most " + std::to_string(form.oneBlockThreadsMax);
    if (!form.gridWide)
      rule = "one block with block barriers when the largest launch inside takes at most " +
             std::to_string(form.oneBlockThreadsMax) + " threads (" + form.whyOneBlockOnly + ")";
    if (form.chosen)
      band.reason += "; " + rule + ": " + form.pointsPerStep + " points -> " +
                     (*form.chosen ? "persistent kernel" : "host loop");
    else
      band.reason += "; " + rule + ": chosen at run time, " + form.condition;
  }
  return mapping;
}

// A streamed build's outer loop: on the host, one step at a time, so that the runtime moves each step's
// slices between its launches; not one persistent kernel nor a graph of all the steps.
static void keepStepsOnHost(Mapping &mapping) {
  BandMapping &outer = mapping.bands.front();
  bool stepsOnHost =
      outer.placement == Placement::HostLoop ||
      (outer.placement == Placement::Kernel && !outer.gridMembers.empty() && outer.gridMembers.front() > 0);
  if (!stepsOnHost) {
    mapping.streamProblem =
        std::string("--stream: on a GPU target the outer loop would be mapped as ") +
        spelling(outer.placement) +
        ", not as a loop on the host around the kernels of each step (the cpu target streams it)";
    return;
  }
  const char *streamed =
      "streamed (--stream): the outer loop on the host, one step at a time, the streamed arrays' "
      "slices moved between the steps";
  if (outer.placement == Placement::HostLoop)
    outer.reason = std::string(streamed) + ", the work inside launched on each step";
  else
    outer.reason += std::string("; ") + streamed;
  outer.persistent.reset();
  outer.roundTiles.reset();
  outer.replayable = false;
}

llvm::Expected<Mapping> mapScheduleTree(const model::Model &model, const schedule::Schedule &schedule,
                                        const allocate::Allocation &allocation) {
  try {
    Mapper mapper(model, schedule, allocation);
    Mapping mapping = mapper.run();
    if (mapping.bands.size() != schedule.bands.size())
      return makeError("internal error in the GPU mapping: the schedule tree's bands do not match the schedule's");
    if (schedule.streaming)
      keepStepsOnHost(mapping);
    return mapping;
  } catch (const isl::exception &e) {
    return makeError(std::string("internal error in the GPU mapping (isl): ") + e.what());
  }
}

} // namespace polyc::map
