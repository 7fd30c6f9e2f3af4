// Unit tests of the middle end (dependences, schedule, legality check, fusion, folding, allocation, GPU
// mapping) on polytope models written directly as isl strings, so they do not depend on the front end.
#include "compiler/allocate/Allocation.h"
#include "compiler/allocate/CostModel.h"
#include "compiler/map/Mapping.h"
#include "compiler/model/IslUtil.h"
#include "compiler/schedule/Tiling.h"
#include "compiler/schedule/TimeTiling.h"
#include "compiler/support/IslContext.h"
#include "compiler/support/SourceError.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

using namespace polyc;

namespace {

// A model assembled by hand: params, arrays, statements with their accesses.
class ModelBuilder {
public:
  explicit ModelBuilder(const std::string &params, const std::string &context) {
    model.ctx = isl::ctx(isl.get());
    model.context = isl::set(model.ctx, params + " -> { : " + context + " }");
    std::string names = params.substr(1, params.size() - 2);
    size_t start = 0;
    while (start < names.size()) {
      size_t comma = names.find(',', start);
      std::string name = names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      name.erase(0, name.find_first_not_of(' '));
      model.params.push_back(name);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    params_ = params;
  }

  void array(const std::string &name, const std::string &extent, ast::ArrayKind kind) {
    auto decl = std::make_unique<ast::ArrayDecl>();
    decl->name = name;
    decl->kind = kind;
    model::ArrayInfo info;
    info.decl = decl.get();
    info.name = name;
    info.extent = isl::set(model.ctx, params_ + " -> { " + extent + " }");
    decl->shape.resize(info.extent.tuple_dim());
    model.arrays.push_back(info);
    decls_.push_back(std::move(decl));
  }

  // Accesses are "S[i] -> A[i - 1] : ..." without the params and braces; may-reads start with '?'.
  model::Statement &statement(const std::vector<std::string> &dims, const std::string &domain, const std::string &write,
                              const std::vector<std::string> &reads) {
    model::Statement stmt;
    stmt.name = "S" + std::to_string(model.statements.size());
    stmt.dimNames = dims;
    stmt.domain = isl::set(model.ctx, params_ + " -> { " + domain + " }").intersect_params(model.context);
    stmt.write.relation = relation(write).intersect_domain(stmt.domain);
    stmt.write.array = stmt.write.relation.get_range_tuple_id().name();
    for (std::string read : reads) {
      model::Access access;
      access.isMay = read[0] == '?';
      if (access.isMay)
        read = read.substr(1);
      access.relation = relation(read).intersect_domain(stmt.domain);
      access.array = access.relation.get_range_tuple_id().name();
      stmt.reads.push_back(access);
    }
    stmt.topPosition = static_cast<unsigned>(model.statements.size());
    model.statements.push_back(stmt);
    return model.statements.back();
  }

  isl::map relation(const std::string &text) { return isl::map(model.ctx, params_ + " -> { " + text + " }"); }

  IslContext isl;
  model::Model model;

private:
  std::string params_;
  std::vector<std::unique_ptr<ast::ArrayDecl>> decls_;
};

// The 2D IIR filter's recursive part: y[i, j] reads y over the window [0, M)^2 without (0, 0).
void iir(ModelBuilder &b) {
  b.array("x", "x[a, c] : 0 <= a < H and 0 <= c < W", ast::ArrayKind::Input);
  b.array("y", "y[a, c] : 0 <= a < H and 0 <= c < W", ast::ArrayKind::Output);
  b.statement({"i", "j"}, "S0[i, j] : 0 <= i < H and 0 <= j < W", "S0[i, j] -> y[i, j]",
              {"S0[i, j] -> x[i, j]",
               "S0[i, j] -> y[a, c] : exists k1, k2 : a = i - k1 and c = j - k2 and 0 <= k1 < M and 0 <= k2 < M and "
               "k1 + k2 > 0 and a >= 0 and c >= 0"});
}

std::string errorText(llvm::Error err) {
  std::string text;
  llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase &e) { text = e.message(); });
  return text;
}

} // namespace

TEST(Dependences, IirWindowIsEightUniformDistances) {
  ModelBuilder b("[H, W, M]", "M = 3 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  ASSERT_EQ(deps->edges.size(), 1u);
  const analysis::Dependence &dep = deps->edges[0];
  EXPECT_EQ(dep.kind, analysis::DependenceKind::Flow);
  EXPECT_EQ(dep.depClass, analysis::DependenceClass::Uniform);
  EXPECT_EQ(dep.array, "y");
  std::vector<std::vector<int64_t>> expected;
  for (int64_t k1 = 0; k1 < 3; ++k1)
    for (int64_t k2 = 0; k2 < 3; ++k2)
      if (k1 || k2)
        expected.push_back({k1, k2});
  ASSERT_TRUE(dep.distanceVectors.has_value());
  EXPECT_EQ(*dep.distanceVectors, expected);
}

TEST(Dependences, FreeWindowHasNoFiniteVectors) {
  ModelBuilder b("[H, W, M]", "M >= 0 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  EXPECT_FALSE(deps->edges[0].distanceVectors.has_value());
  EXPECT_EQ(deps->edges[0].depClass, analysis::DependenceClass::Uniform);
}

TEST(Dependences, ZeroDistanceSelfReadIsAnError) {
  ModelBuilder b("[N]", "N >= 0");
  b.array("y", "y[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"i"}, "S0[i] : 0 <= i < N", "S0[i] -> y[i]", {"S0[i] -> y[i]"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_FALSE(static_cast<bool>(deps));
  EXPECT_NE(errorText(deps.takeError()).find("reads the value it defines at the same point"), std::string::npos);
}

TEST(Dependences, GatherIsNonUniformWhenNotTranslationInvariant) {
  // out[j] = sum over c of in[pre[j, c]]: a may-read of all of `in`, which another statement writes.
  ModelBuilder b("[N, C]", "N >= 0 and C >= 0");
  b.array("in", "in[a] : 0 <= a < N", ast::ArrayKind::Local);
  b.array("out", "out[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"j"}, "S0[j] : 0 <= j < N", "S0[j] -> in[j]", {});
  b.statement({"j"}, "S1[j] : 0 <= j < N", "S1[j] -> out[j]", {"?S1[j] -> in[a] : 0 <= a < N and C > 0"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  ASSERT_EQ(deps->edges.size(), 1u);
  EXPECT_EQ(deps->edges[0].source, 0u);
  EXPECT_EQ(deps->edges[0].target, 1u);
  // Every S1[j] depends on every S0[j']: N^2 pairs, so neither a translation nor a function.
  EXPECT_NE(deps->edges[0].depClass, analysis::DependenceClass::Affine);
}

TEST(Schedule, IirGetsTheLamportHyperplane) {
  ModelBuilder b("[H, W, M]", "M >= 0 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
  ASSERT_EQ(schedule->bands.size(), 1u);
  const schedule::Band &band = schedule->bands[0];
  EXPECT_EQ(band.hyperplane, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(band.hyperplaneCount, "H + W - 1");
  EXPECT_EQ(band.hyperplaneExpr, "i + j");
  EXPECT_EQ(band.coincident, (std::vector<bool>{false, true}));
  EXPECT_FALSE(static_cast<bool>(schedule::verifySchedule(b.model, *deps, *schedule)));
}

TEST(Schedule, GaussSeidelNeedsTwoOneOne) {
  // u[t, i, j] reads u[t, i - 1, j], u[t, i, j - 1], u[t - 1, i + 1, j], u[t - 1, i, j + 1].
  ModelBuilder b("[T, H, W]", "T >= 0 and H >= 0 and W >= 0");
  b.array("u", "u[a, c, d] : 0 <= a < T and 0 <= c < H and 0 <= d < W", ast::ArrayKind::Output);
  b.statement({"t", "i", "j"}, "S0[t, i, j] : 0 <= t < T and 0 <= i < H and 0 <= j < W", "S0[t, i, j] -> u[t, i, j]",
              {"S0[t, i, j] -> u[t, i - 1, j] : i >= 1", "S0[t, i, j] -> u[t, i, j - 1] : j >= 1",
               "S0[t, i, j] -> u[t - 1, i + 1, j] : t >= 1 and i < H - 1",
               "S0[t, i, j] -> u[t - 1, i, j + 1] : t >= 1 and j < W - 1"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
  ASSERT_EQ(schedule->bands.size(), 1u);
  EXPECT_EQ(schedule->bands[0].hyperplane, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(schedule->bands[0].coincident, (std::vector<bool>{false, true, true}));
}

// The legality check is independent of the scheduler: hand it wrong schedules.
// Its members are sequential unless `parallel` says otherwise.
static schedule::Schedule handMade(const model::Model &model, const std::string &partial,
                                   std::vector<bool> parallel = {}) {
  schedule::Schedule s;
  isl::multi_union_pw_aff mupa(model.ctx, partial);
  parallel.resize(mupa.size(), false);
  s.tree = islutil::insertBand(isl::schedule::from_domain(model.domains()), mupa, parallel, false);
  s.scheduleMap = schedule::flatScheduleMap(s.tree);
  return s;
}

TEST(Legality, RejectsAReversedWavefront) {
  ModelBuilder b("[H, W, M]", "M = 2 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  schedule::Schedule reversed = handMade(b.model, "[H, W, M] -> [{ S0[i, j] -> [(-i - j)] }, { S0[i, j] -> [(j)] }]");
  std::string message = errorText(schedule::verifySchedule(b.model, *deps, reversed));
  EXPECT_NE(message.find("violates the flow dependence S0 -> S0 through 'y'"), std::string::npos) << message;
}

TEST(Legality, RejectsRunningAllPointsAtOnce) {
  ModelBuilder b("[H, W, M]", "M = 2 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  schedule::Schedule flat = handMade(b.model, "[H, W, M] -> [{ S0[i, j] -> [(0)] }]");
  EXPECT_NE(errorText(schedule::verifySchedule(b.model, *deps, flat)).find("violates"), std::string::npos);
}

TEST(Legality, AcceptsRowMajorOrderForTheIir) {
  ModelBuilder b("[H, W, M]", "M = 2 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  schedule::Schedule rowMajor = handMade(b.model, "[H, W, M] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]");
  EXPECT_FALSE(static_cast<bool>(schedule::verifySchedule(b.model, *deps, rowMajor)));
}

TEST(Legality, RejectsAScheduleThatDropsInstances) {
  ModelBuilder b("[H, W, M]", "M = 2 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  schedule::Schedule partial;
  isl::set half = b.model.statements[0].domain.intersect(isl::set(b.model.ctx, "[H, W, M] -> { S0[i, j] : i < 2 }"));
  partial.tree = isl::schedule::from_domain(isl::union_set(half));
  std::string message = errorText(schedule::verifySchedule(b.model, *deps, partial));
  EXPECT_NE(message.find("leaves statement instances out"), std::string::npos) << message;
}

TEST(Legality, RejectsAParallelMemberThatCarriesADependence) {
  // Row-major order is right for the IIR, but not with its rows marked parallel: y[i, j] reads y[i - 1, j].
  ModelBuilder b("[H, W, M]", "M = 2 and H >= 0 and W >= 0");
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  schedule::Schedule rows =
      handMade(b.model, "[H, W, M] -> [{ S0[i, j] -> [(i)] }, { S0[i, j] -> [(j)] }]", {true, false});
  std::string message = errorText(schedule::verifySchedule(b.model, *deps, rows));
  EXPECT_NE(message.find("runs in one parallel loop"), std::string::npos) << message;
}

TEST(StorageFolding, PreviousStepOnlyGivesTwoBuffers) {
  // r[t, j] = f(r[t - 1, j]) for t >= 1 after r[0, j] = r0[j]; rT[j] = r[T - 1, j].
  ModelBuilder b("[N, T]", "N >= 0 and T >= 1");
  b.array("r0", "r0[a] : 0 <= a < N", ast::ArrayKind::Input);
  b.array("r", "r[a, c] : 0 <= a < T and 0 <= c < N", ast::ArrayKind::Local);
  b.array("rT", "rT[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"j"}, "S0[j] : 0 <= j < N", "S0[j] -> r[0, j]", {"S0[j] -> r0[j]"});
  b.statement({"t", "j"}, "S1[t, j] : 1 <= t < T and 0 <= j < N", "S1[t, j] -> r[t, j]", {"S1[t, j] -> r[t - 1, j]"});
  b.statement({"j"}, "S2[j] : 0 <= j < N", "S2[j] -> rT[j]", {"S2[j] -> r[T - 1, j]"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
  ASSERT_EQ(schedule->folded.size(), 1u);
  EXPECT_EQ(schedule->folded[0].array, "r");
  EXPECT_EQ(schedule->folded[0].dim, 0u);
  EXPECT_EQ(schedule->folded[0].windowValue, 2);
}

TEST(StorageFolding, ADeadWriteIsInTheWindow) {
  // q[r] = r for r < M, of which only q[0] and q[1] are read, after every write (fuzz; the pipeline
  // removes such writes first, DeadInstances.cpp, but folding must not count on it): q[2] overwrote q[0]
  // when q was folded to 2 slots.
  ModelBuilder b("[M]", "M >= 0");
  b.array("q", "q[a] : 0 <= a < M", ast::ArrayKind::Local);
  b.array("lock", "lock[a, c] : 0 <= a < 3 and 0 <= c < M", ast::ArrayKind::Output);
  b.statement({"r"}, "S0[r] : 0 <= r < M", "S0[r] -> q[r]", {});
  b.statement({"s", "c"}, "S1[s, c] : 0 <= s < 2 and c = 2 and c < M", "S1[s, c] -> lock[s, c]",
              {"S1[s, c] -> q[s]"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
  for (const schedule::FoldedStorage &f : schedule->folded)
    EXPECT_NE(f.array, "q") << "q folded modulo " << f.window;
}

// b[k, d] = h[d] for d in 1..2 (S0), b[k, 3] = 7 (S1), out[k] = b[k, 2] + b[k, 3] (S2), with b[k, 1]
// never read (fuzz seed 2600752 on CUDA). S0 and S1 share the band (k, d), parallel in d.
static void parallelMemberModel(ModelBuilder &b) {
  b.array("h", "h[a] : 0 <= a < 4", ast::ArrayKind::Input);
  b.array("b", "b[a, c] : 0 <= a < C and 0 <= c < 4", ast::ArrayKind::Local);
  b.array("out", "out[a] : 0 <= a < C", ast::ArrayKind::Output);
  b.statement({"k", "d"}, "S0[k, d] : 0 <= k < C and 1 <= d <= 2", "S0[k, d] -> b[k, d]", {"S0[k, d] -> h[d]"});
  b.statement({"k", "d"}, "S1[k, d] : 0 <= k < C and d = 3", "S1[k, d] -> b[k, d]", {});
  b.statement({"k"}, "S2[k] : 0 <= k < C", "S2[k] -> out[k]", {"S2[k] -> b[k, 2]", "S2[k] -> b[k, 3]"});
}

TEST(StorageFolding, StatementsBelowAParallelMemberAreNotOrdered) {
  // S0 at d = 1 and S1 at d = 3 run on different threads in no order, so b must not be folded modulo 2
  // along d, although S1 comes after S0 in the band's sequence.
  ModelBuilder b("[C]", "C >= 0");
  parallelMemberModel(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
  for (const schedule::FoldedStorage &f : schedule->folded)
    EXPECT_FALSE(f.array == "b" && f.dim == 1 && f.windowValue == 2) << "b folded modulo 2 along d";
}

// The storage check is independent of foldStorage: hand it foldings, legal and not.
static schedule::FoldedStorage folding(const std::string &array, unsigned dim, int64_t window) {
  schedule::FoldedStorage fold;
  fold.array = array;
  fold.dim = dim;
  fold.window = std::to_string(window);
  fold.windowValue = window;
  return fold;
}

// r[t, j] = f(r[t - 1, j], r[t - 1, j + neighbour] when neighbour != 0) for t >= 1 after r[0, j] = r0[j];
// rT[j] = r[T - 1, j]. chooseSchedule gives it t sequential, j parallel inside it.
static void stepModel(ModelBuilder &b, int neighbour) {
  b.array("r0", "r0[a] : 0 <= a < N", ast::ArrayKind::Input);
  b.array("r", "r[a, c] : 0 <= a < T and 0 <= c < N", ast::ArrayKind::Local);
  b.array("rT", "rT[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"j"}, "S0[j] : 0 <= j < N", "S0[j] -> r[0, j]", {"S0[j] -> r0[j]"});
  std::vector<std::string> reads{"S1[t, j] -> r[t - 1, j]"};
  if (neighbour)
    reads.push_back("S1[t, j] -> r[t - 1, j + " + std::to_string(neighbour) + "] : 0 <= j + " +
                    std::to_string(neighbour) + " < N");
  b.statement({"t", "j"}, "S1[t, j] : 1 <= t < T and 0 <= j < N", "S1[t, j] -> r[t, j]", reads);
  b.statement({"j"}, "S2[j] : 0 <= j < N", "S2[j] -> rT[j]", {"S2[j] -> r[T - 1, j]"});
}

TEST(StorageCheck, AcceptsTheFoldingsThatFoldStorageChooses) {
  for (int neighbour : {0, 1}) {
    ModelBuilder b("[N, T]", "N >= 0 and T >= 1");
    stepModel(b, neighbour);
    auto deps = analysis::computeDependences(b.model);
    ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
    auto schedule = schedule::chooseSchedule(b.model, *deps, {});
    ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
    ASSERT_EQ(schedule->folded.size(), 1u);
    EXPECT_EQ(schedule->folded[0].windowValue, 2);
    EXPECT_EQ(errorText(schedule::verifyStorage(b.model, *deps, *schedule)), "");
  }
}

TEST(StorageCheck, OneSlotIsSafeOnlyWhereEachPointReadsItsOwnOldValue) {
  // r[t, j] from r[t - 1, j] alone: each instance reads its slot before it writes it, so one slot holds
  // (finer than foldStorage, which keeps the written element and the live ones apart). With r[t - 1,
  // j + 1] or r[t - 1, j - 1] too, S1 at that j on another thread may overwrite what S1[t, j] still has
  // to read.
  for (int neighbour : {0, 1, -1}) {
    ModelBuilder b("[N, T]", "N >= 0 and T >= 1");
    stepModel(b, neighbour);
    auto deps = analysis::computeDependences(b.model);
    ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
    auto schedule = schedule::chooseSchedule(b.model, *deps, {});
    ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
    schedule->folded = {folding("r", 0, 1)};
    std::string message = errorText(schedule::verifyStorage(b.model, *deps, *schedule));
    if (!neighbour) {
      EXPECT_EQ(message, "");
      continue;
    }
    EXPECT_NE(message.find("storage folding of 'r' along dimension 0 modulo 1 is not safe"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("S1 may overwrite the slot of a value S"), std::string::npos) << message;
  }
}

TEST(StorageCheck, RejectsAWindowThatTheScheduleOutruns) {
  // Sequential j (a hand-made row-major schedule) and a read of r[t - 1, j - 1]: S1[t, j - 1] has
  // overwritten that slot when S1[t, j] reads it, so one slot is wrong even without threads; two slots
  // are right. (With r[t - 1, j + 1] one slot would do: the read comes before the overwrite.)
  ModelBuilder b("[N, T]", "N >= 0 and T >= 1");
  stepModel(b, -1);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  schedule::Schedule rowMajor =
      handMade(b.model, "[N, T] -> [{ S0[j] -> [(0)]; S1[t, j] -> [(t)]; S2[j] -> [(T)] }, "
                        "{ S0[j] -> [(j)]; S1[t, j] -> [(j)]; S2[j] -> [(j)] }]");
  ASSERT_EQ(errorText(schedule::verifySchedule(b.model, *deps, rowMajor)), "");
  rowMajor.folded = {folding("r", 0, 1)};
  EXPECT_NE(errorText(schedule::verifyStorage(b.model, *deps, rowMajor)).find("not safe"), std::string::npos);
  rowMajor.folded = {folding("r", 0, 2)};
  EXPECT_EQ(errorText(schedule::verifyStorage(b.model, *deps, rowMajor)), "");

  ModelBuilder ahead("[N, T]", "N >= 0 and T >= 1");
  stepModel(ahead, 1);
  auto aheadDeps = analysis::computeDependences(ahead.model);
  ASSERT_TRUE(static_cast<bool>(aheadDeps)) << errorText(aheadDeps.takeError());
  schedule::Schedule aheadRowMajor =
      handMade(ahead.model, "[N, T] -> [{ S0[j] -> [(0)]; S1[t, j] -> [(t)]; S2[j] -> [(T)] }, "
                            "{ S0[j] -> [(j)]; S1[t, j] -> [(j)]; S2[j] -> [(j)] }]");
  aheadRowMajor.folded = {folding("r", 0, 1)};
  EXPECT_EQ(errorText(schedule::verifyStorage(ahead.model, *aheadDeps, aheadRowMajor)), "");
}

TEST(StorageCheck, TwoSlotsHoldUnderASkewedSchedule) {
  // The skewed schedule (t, t + j) that time tiles are cut from, both members sequential: two slots of r
  // stay safe with either neighbour; one slot only with r[t - 1, j + 1].
  for (int neighbour : {1, -1}) {
    ModelBuilder b("[N, T]", "N >= 0 and T >= 1");
    stepModel(b, neighbour);
    auto deps = analysis::computeDependences(b.model);
    ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
    schedule::Schedule skewed =
        handMade(b.model, "[N, T] -> [{ S0[j] -> [(0)]; S1[t, j] -> [(t)]; S2[j] -> [(T)] }, "
                          "{ S0[j] -> [(j)]; S1[t, j] -> [(t + j)]; S2[j] -> [(j)] }]");
    ASSERT_EQ(errorText(schedule::verifySchedule(b.model, *deps, skewed)), "");
    skewed.folded = {folding("r", 0, 2)};
    EXPECT_EQ(errorText(schedule::verifyStorage(b.model, *deps, skewed)), "") << neighbour;
    skewed.folded = {folding("r", 0, 1)};
    EXPECT_EQ(errorText(schedule::verifyStorage(b.model, *deps, skewed)).empty(), neighbour == 1) << neighbour;
  }
}

TEST(StorageCheck, StatementsBelowAParallelMemberAreNotOrdered) {
  // StorageFolding.StatementsBelowAParallelMemberAreNotOrdered's program, b folded modulo 2 along d (fuzz
  // seed 2600752 on the GPU): b[k, 1] (S0, never read) and b[k, 3] (S1, read by S2) share a slot, and S0
  // at d = 1 runs on another thread than S1 at d = 3, so its write may land after S1's.
  ModelBuilder b("[C]", "C >= 0");
  parallelMemberModel(b);
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps)) << errorText(deps.takeError());
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(schedule)) << errorText(schedule.takeError());
  EXPECT_EQ(errorText(schedule::verifyStorage(b.model, *deps, *schedule)), "");
  schedule->folded = {folding("b", 1, 2)};
  std::string message = errorText(schedule::verifyStorage(b.model, *deps, *schedule));
  EXPECT_NE(message.find("storage folding of 'b' along dimension 1 modulo 2 is not safe"), std::string::npos)
      << message;
}

// C[i, j] = sum(k) A[i, k] * B[k, j] (the reduction's reads over k), and the same with a read of row
// r[j] only: the first reads blocks that do not follow i or j, the second one element a point.
static schedule::Schedule productSchedule(bool reduction, const schedule::TilingOptions &options) {
  ModelBuilder b("[N]", "N >= 0");
  b.array("A", "A[a, c] : 0 <= a < N and 0 <= c < N", ast::ArrayKind::Input);
  b.array("B", "B[a, c] : 0 <= a < N and 0 <= c < N", ast::ArrayKind::Input);
  b.array("C", "C[a, c] : 0 <= a < N and 0 <= c < N", ast::ArrayKind::Output);
  std::vector<std::string> reads =
      reduction ? std::vector<std::string>{"S0[i, j] -> A[i, k] : 0 <= k < N", "S0[i, j] -> B[k, j] : 0 <= k < N"}
                : std::vector<std::string>{"S0[i, j] -> A[i, j]", "S0[i, j] -> B[0, j]"};
  b.statement({"i", "j"}, "S0[i, j] : 0 <= i < N and 0 <= j < N", "S0[i, j] -> C[i, j]", reads);
  auto deps = analysis::computeDependences(b.model);
  EXPECT_TRUE(static_cast<bool>(deps));
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  EXPECT_TRUE(static_cast<bool>(schedule));
  schedule::chooseTiles(b.model, *schedule, options);
  return std::move(*schedule);
}

TEST(Tiling, AReductionReadingBlocksAcrossAMemberIsTiled) {
  schedule::Schedule s = productSchedule(true, {});
  ASSERT_EQ(s.bands.size(), 1u);
  EXPECT_EQ(s.bands[0].tileSizes, (std::vector<int64_t>{32, 64}));
  schedule::TilingOptions sizes;
  sizes.sizes = {8};
  EXPECT_EQ(productSchedule(true, sizes).bands[0].tileSizes, (std::vector<int64_t>{8, 8}));
  schedule::TilingOptions off;
  off.enabled = false;
  EXPECT_TRUE(productSchedule(true, off).bands[0].tileSizes.empty());
}

TEST(Tiling, OneElementAPointIsNotTiled) {
  EXPECT_TRUE(productSchedule(false, {}).bands[0].tileSizes.empty());
}

// A 2-D stencil: r[t, i, j] from r[t - 1, i, j], r[t - 1, i + 1, j] and r[t - 1, i, j + 1] after
// r[0, i, j] = r0[i, j]; rT[i, j] = r[T - 1, i, j]. chooseSchedule folds r modulo 2.
static void stencil2d(ModelBuilder &b) {
  b.array("r0", "r0[a, c] : 0 <= a < N and 0 <= c < N", ast::ArrayKind::Input);
  b.array("r", "r[s, a, c] : 0 <= s < T and 0 <= a < N and 0 <= c < N", ast::ArrayKind::Local);
  b.array("rT", "rT[a, c] : 0 <= a < N and 0 <= c < N", ast::ArrayKind::Output);
  b.statement({"i", "j"}, "S0[i, j] : 0 <= i < N and 0 <= j < N", "S0[i, j] -> r[0, i, j]",
              {"S0[i, j] -> r0[i, j]"});
  b.statement({"t", "i", "j"}, "S1[t, i, j] : 1 <= t < T and 0 <= i < N and 0 <= j < N",
              "S1[t, i, j] -> r[t, i, j]",
              {"S1[t, i, j] -> r[t - 1, i, j]", "S1[t, i, j] -> r[t - 1, i + 1, j] : i + 1 < N",
               "S1[t, i, j] -> r[t - 1, i, j + 1] : j + 1 < N"});
  b.statement({"i", "j"}, "S2[i, j] : 0 <= i < N and 0 <= j < N", "S2[i, j] -> rT[i, j]",
              {"S2[i, j] -> r[T - 1, i, j]"});
}

// The dependences and the chosen schedule of b's model, or none (with the error as a test failure).
struct Scheduled {
  analysis::DependenceGraph deps;
  schedule::Schedule schedule;
};
static std::optional<Scheduled> scheduled(ModelBuilder &b) {
  auto deps = analysis::computeDependences(b.model);
  if (!deps) {
    ADD_FAILURE() << errorText(deps.takeError());
    return std::nullopt;
  }
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  if (!schedule) {
    ADD_FAILURE() << errorText(schedule.takeError());
    return std::nullopt;
  }
  return Scheduled{std::move(*deps), std::move(*schedule)};
}

static schedule::TimeTilingOptions timeTiles(std::vector<int64_t> sizes) {
  schedule::TimeTilingOptions options;
  options.enabled = true;
  options.sizes = std::move(sizes);
  return options;
}

TEST(Schedule, BoundaryPiecesJoinTheSweepsHyperplaneSoItsStepsFold) {
  // The Gauss-Seidel sweep above over the interior of u, its boundary copied from the step before (S2),
  // as seidel-2d writes it. Scheduled apart, before the sweep, S2 wrote the boundary of every step before
  // the sweep read any, and u kept all T steps.
  ModelBuilder b("[T, H, W]", "T >= 1 and H >= 0 and W >= 0");
  b.array("u0", "u0[c, d] : 0 <= c < H and 0 <= d < W", ast::ArrayKind::Input);
  b.array("u", "u[a, c, d] : 0 <= a < T and 0 <= c < H and 0 <= d < W", ast::ArrayKind::Local);
  b.array("uT", "uT[c, d] : 0 <= c < H and 0 <= d < W", ast::ArrayKind::Output);
  b.statement({"i", "j"}, "S0[i, j] : 0 <= i < H and 0 <= j < W", "S0[i, j] -> u[0, i, j]",
              {"S0[i, j] -> u0[i, j]"});
  b.statement({"t", "i", "j"}, "S1[t, i, j] : 1 <= t < T and 1 <= i < H - 1 and 1 <= j < W - 1",
              "S1[t, i, j] -> u[t, i, j]",
              {"S1[t, i, j] -> u[t, i - 1, j]", "S1[t, i, j] -> u[t, i, j - 1]",
               "S1[t, i, j] -> u[t - 1, i + 1, j]", "S1[t, i, j] -> u[t - 1, i, j + 1]"});
  b.statement(
      {"t", "i", "j"},
      "S2[t, i, j] : 1 <= t < T and 0 <= i < H and 0 <= j < W and (i = 0 or i = H - 1 or j = 0 or j = W - 1)",
      "S2[t, i, j] -> u[t, i, j]", {"S2[t, i, j] -> u[t - 1, i, j]"});
  b.statement({"i", "j"}, "S3[i, j] : 0 <= i < H and 0 <= j < W", "S3[i, j] -> uT[i, j]",
              {"S3[i, j] -> u[T - 1, i, j]"});
  std::optional<Scheduled> s = scheduled(b);
  ASSERT_TRUE(s);
  auto sweep =
      llvm::find_if(s->schedule.bands, [](const schedule::Band &band) { return !band.hyperplane.empty(); });
  ASSERT_NE(sweep, s->schedule.bands.end());
  EXPECT_EQ(sweep->statements, (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(sweep->hyperplane, (std::vector<int64_t>{2, 1, 1}));
  ASSERT_EQ(s->schedule.folded.size(), 1u);
  EXPECT_EQ(s->schedule.folded[0].array, "u");
  EXPECT_EQ(s->schedule.folded[0].dim, 0u);
  EXPECT_EQ(s->schedule.folded[0].windowValue, 2);
  EXPECT_EQ(errorText(schedule::verifySchedule(b.model, s->deps, s->schedule)), "");
  EXPECT_EQ(errorText(schedule::verifyStorage(b.model, s->deps, s->schedule)), "");
}

TEST(TimeTiling, AStencilGetsBothFormsThatBothChecksAccept) {
  // Its time loop becomes a filter on a new param: the wavefront of tiles under one value, the steps
  // under the others.
  ModelBuilder b("[N, T]", "N >= 0 and T >= 1");
  stencil2d(b);
  std::optional<Scheduled> s = scheduled(b);
  ASSERT_TRUE(s);
  size_t stepBands = s->schedule.bands.size();
  ASSERT_EQ(schedule::timeTile(b.model, s->deps, s->schedule, timeTiles({4, 8})), 1u);
  ASSERT_EQ(s->schedule.timeTiled.size(), 1u);
  EXPECT_NE(s->schedule.timeTiled[0].description.find("tiles of 4 x 8"), std::string::npos);
  ASSERT_EQ(s->schedule.timeTiled[0].stepExtents.size(), 1u); // S1's i and j
  EXPECT_EQ(s->schedule.timeTiled[0].stepExtents[0].size(), 2u);
  // S0's, S2's and the step-by-step bands (t, then i, j) are still there; new: the wavefront, the tile's
  // points and the step's (i, j) inside them.
  EXPECT_EQ(s->schedule.bands.size(), stepBands + 3);
  auto wave =
      std::find_if(s->schedule.bands.begin(), s->schedule.bands.end(), [](const schedule::Band &band) {
        return !band.dimNames.empty() && band.dimNames[0] == "wave";
      });
  ASSERT_NE(wave, s->schedule.bands.end());
  EXPECT_EQ(wave->coincident, (std::vector<bool>{false, true}));
  EXPECT_EQ(errorText(schedule::verifySchedule(b.model, s->deps, s->schedule)), "");
  EXPECT_EQ(errorText(schedule::verifyStorage(b.model, s->deps, s->schedule)), "");
  // The checks see the tiles: with the wavefronts marked parallel too, a tile runs beside the one it
  // depends on.
  unsigned index = static_cast<unsigned>(wave - s->schedule.bands.begin()), k = 0;
  isl::schedule_node waveNode;
  s->schedule.tree.root().foreach_descendant_top_down([&](const isl::schedule_node &node) {
    if (node.isa<isl::schedule_node_band>() && k++ == index)
      waveNode = node;
    return waveNode.is_null();
  });
  ASSERT_FALSE(waveNode.is_null());
  schedule::Schedule allParallel = s->schedule;
  allParallel.tree = waveNode.as<isl::schedule_node_band>().member_set_coincident(0, true).schedule();
  std::string message = errorText(schedule::verifySchedule(b.model, s->deps, allParallel));
  EXPECT_NE(message.find("runs in one parallel loop"), std::string::npos) << message;
  // And the storage check: a tile then overwrites a slot that the tile beside it still reads.
  message = errorText(schedule::verifyStorage(b.model, s->deps, allParallel));
  EXPECT_NE(message.find("may overwrite the slot"), std::string::npos) << message;
}

TEST(TimeTiling, AOneDimensionalStencilsTilePointIsAStep) {
  // r[t, j] from r[t - 1, j] and r[t - 1, j + 1], its last element copied from one or two steps before
  // (the pieces of r's definition: one band of steps, as jacobi-1d has): a tile's points along the row
  // would be single elements, so the points band is the step alone, and the step's own loops over j run
  // under it, bounded by the tile.
  for (int64_t last : {0, 1}) {
    ModelBuilder b("[N, T]", "N >= 1 and T >= 1");
    b.array("r0", "r0[a] : 0 <= a < N", ast::ArrayKind::Input);
    b.array("r", "r[a, c] : 0 <= a < T and 0 <= c < N", ast::ArrayKind::Local);
    b.array("rT", "rT[a] : 0 <= a < N", ast::ArrayKind::Output);
    b.statement({"j"}, "S0[j] : 0 <= j < N", "S0[j] -> r[0, j]", {"S0[j] -> r0[j]"});
    b.statement({"t", "j"}, "S1[t, j] : 1 <= t < T and 0 <= j < N - 1", "S1[t, j] -> r[t, j]",
                {"S1[t, j] -> r[t - 1, j]", "S1[t, j] -> r[t - 1, j + 1]"});
    b.statement({"t", "j"}, "S2[t, j] : 1 <= t < T and j = N - 1", "S2[t, j] -> r[t, j]",
                {"S2[t, j] -> r[t - " + std::to_string(1 + last) + ", j] : t > " + std::to_string(last)});
    b.statement({"j"}, "S3[j] : 0 <= j < N", "S3[j] -> rT[j]", {"S3[j] -> r[T - 1, j]"});
    std::optional<Scheduled> s = scheduled(b);
    ASSERT_TRUE(s);
    ASSERT_EQ(schedule::timeTile(b.model, s->deps, s->schedule, timeTiles({})), 1u);
    EXPECT_NE(s->schedule.timeTiled[0].description.find("tiles of 64 x 8192"), std::string::npos)
        << s->schedule.timeTiled[0].description;
    auto wave = llvm::find_if(s->schedule.bands, [](const schedule::Band &band) {
      return !band.dimNames.empty() && band.dimNames[0] == "wave";
    });
    ASSERT_NE(wave, s->schedule.bands.end());
    ASSERT_NE(wave + 1, s->schedule.bands.end());
    EXPECT_EQ((wave + 1)->coincident, (std::vector<bool>{false})) << "the points: t alone";
    ASSERT_NE(wave + 2, s->schedule.bands.end());
    EXPECT_EQ((wave + 2)->coincident, (std::vector<bool>{true})) << "the step's j";
    EXPECT_EQ(errorText(schedule::verifySchedule(b.model, s->deps, s->schedule)), "");
    EXPECT_EQ(errorText(schedule::verifyStorage(b.model, s->deps, s->schedule)), "");
  }
}

TEST(TimeTiling, RecurrencesScheduledByHyperplanesAreLeftAlone) {
  ModelBuilder b("[H, W, M]", "M = 2 and H >= 0 and W >= 0");
  iir(b);
  std::optional<Scheduled> s = scheduled(b);
  ASSERT_TRUE(s);
  EXPECT_EQ(schedule::timeTile(b.model, s->deps, s->schedule, timeTiles({})), 0u);
  EXPECT_TRUE(s->schedule.timeTiled.empty());
}

TEST(Fusion, StatementsReadingTheSameInputShareALoopNest) {
  ModelBuilder b("[N]", "N >= 0");
  b.array("x", "x[a] : 0 <= a < N", ast::ArrayKind::Input);
  b.array("p", "p[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.array("q", "q[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.array("z", "z[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"i"}, "S0[i] : 0 <= i < N", "S0[i] -> p[i]", {"S0[i] -> x[i]"});
  b.statement({"i"}, "S1[i] : 0 <= i < N", "S1[i] -> q[i]", {"S1[i] -> x[a] : i - 1 <= a <= i + 1"});
  // Reads p at a neighbour: a dependence that fusion into one parallel loop would break.
  b.statement({"i"}, "S2[i] : 0 <= i < N", "S2[i] -> z[i]", {"S2[i] -> x[i]", "S2[i] -> p[i + 1]"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  auto fused = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(fused)) << errorText(fused.takeError());
  ASSERT_EQ(fused->fusionGroups.size(), 1u);
  EXPECT_EQ(fused->fusionGroups[0].statements, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(fused->fusionGroups[0].reason, "all read x over the same domain");
  schedule::ScheduleOptions noFuse;
  noFuse.fuse = false;
  auto separate = schedule::chooseSchedule(b.model, *deps, noFuse);
  ASSERT_TRUE(static_cast<bool>(separate));
  EXPECT_TRUE(separate->fusionGroups.empty());
  EXPECT_EQ(separate->bands.size(), 3u);
}

// The pieces of one array's definition share a loop nest, unless a dependence through another
// statement runs from one piece to the other (y's first element, then z from it, then y's rest).
TEST(Fusion, DefinitionPiecesShareALoopNestUnlessAStatementSitsBetween) {
  ModelBuilder b("[N]", "N >= 1");
  b.array("x", "x[a] : 0 <= a < N", ast::ArrayKind::Input);
  b.array("y", "y[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"i"}, "S0[i] : 0 <= i < 1", "S0[i] -> y[i]", {"S0[i] -> x[i]"});
  b.statement({"i"}, "S1[i] : 1 <= i < N", "S1[i] -> y[i]", {"S1[i] -> x[i - 1]"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  auto fused = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(fused)) << errorText(fused.takeError());
  ASSERT_EQ(fused->fusionGroups.size(), 1u);
  EXPECT_EQ(fused->fusionGroups[0].statements, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(fused->fusionGroups[0].reason, "the pieces of y's definition: one loop nest over the array");
  EXPECT_EQ(fused->bands.size(), 1u);

  ModelBuilder c("[N]", "N >= 1");
  c.array("x", "x[a] : 0 <= a < N", ast::ArrayKind::Input);
  c.array("y", "y[a] : 0 <= a < N", ast::ArrayKind::Output);
  c.array("z", "z[a] : 0 <= a < N", ast::ArrayKind::Output);
  c.statement({"i"}, "S0[i] : 0 <= i < 1", "S0[i] -> y[i]", {"S0[i] -> x[i]"});
  c.statement({"i"}, "S1[i] : 0 <= i < N", "S1[i] -> z[i]", {"S1[i] -> y[0]"});
  c.statement({"i"}, "S2[i] : 1 <= i < N", "S2[i] -> y[i]", {"S2[i] -> z[i]"});
  auto cdeps = analysis::computeDependences(c.model);
  ASSERT_TRUE(static_cast<bool>(cdeps));
  auto apart = schedule::chooseSchedule(c.model, *cdeps, {});
  ASSERT_TRUE(static_cast<bool>(apart)) << errorText(apart.takeError());
  EXPECT_TRUE(apart->fusionGroups.empty());
  EXPECT_EQ(apart->bands.size(), 3u);
}

// Two arrays' definitions with pieces, over one domain, both reading x, independent: one loop nest for
// the GPU targets (fuseSiblings), apart for the CPU's; and apart when one reads the other.
TEST(Fusion, SiblingDefinitionsShareALoopNestOnTheGpuTargets) {
  for (bool dependent : {false, true}) {
    ModelBuilder b("[N]", "N >= 1");
    b.array("x", "x[a] : 0 <= a < N", ast::ArrayKind::Input);
    b.array("y", "y[a] : 0 <= a < N", ast::ArrayKind::Output);
    b.array("z", "z[a] : 0 <= a < N", ast::ArrayKind::Output);
    b.statement({"i"}, "S0[i] : i = 0", "S0[i] -> y[i]", {"S0[i] -> x[i]"});
    b.statement({"i"}, "S1[i] : 1 <= i < N", "S1[i] -> y[i]", {"S1[i] -> x[i - 1]"});
    b.statement({"i"}, "S2[i] : i = N - 1", "S2[i] -> z[i]", {"S2[i] -> x[i]"});
    if (dependent)
      b.statement({"i"}, "S3[i] : 0 <= i < N - 1", "S3[i] -> z[i]", {"S3[i] -> x[i + 1]", "S3[i] -> y[i]"});
    else
      b.statement({"i"}, "S3[i] : 0 <= i < N - 1", "S3[i] -> z[i]", {"S3[i] -> x[i + 1]"});
    auto deps = analysis::computeDependences(b.model);
    ASSERT_TRUE(static_cast<bool>(deps));
    auto gpu = schedule::chooseSchedule(b.model, *deps, {});
    ASSERT_TRUE(static_cast<bool>(gpu)) << errorText(gpu.takeError());
    ASSERT_FALSE(gpu->fusionGroups.empty());
    if (dependent) {
      EXPECT_EQ(gpu->fusionGroups.size(), 2u);
      EXPECT_EQ(gpu->bands.size(), 2u);
      continue;
    }
    ASSERT_EQ(gpu->fusionGroups.size(), 1u);
    EXPECT_EQ(gpu->fusionGroups[0].statements, (std::vector<unsigned>{0, 1, 2, 3}));
    EXPECT_EQ(gpu->fusionGroups[0].reason,
              "the definitions of y and z: no dependence between them, both read x over the same domain");
    EXPECT_EQ(gpu->bands.size(), 1u);
    schedule::ScheduleOptions cpu;
    cpu.fuseSiblings = false;
    auto apart = schedule::chooseSchedule(b.model, *deps, cpu);
    ASSERT_TRUE(static_cast<bool>(apart));
    EXPECT_EQ(apart->fusionGroups.size(), 2u);
    EXPECT_EQ(apart->bands.size(), 2u);
  }
}

TEST(CostModel, CalibratedConstants) {
  // Seed 004's model with its base cost calibrated to polyc's kernels: flexible wins for m > 1 (with
  // p1 = 0), so only a window of one column stays fixed; seed 001: groups of 32..1024 threads.
  EXPECT_EQ(allocate::flexibleThreshold(), 1);
  EXPECT_FALSE(allocate::wavefrontCost(1).flexibleWins);
  EXPECT_TRUE(allocate::wavefrontCost(2).flexibleWins);
  EXPECT_EQ(allocate::reductionGroupSize(31), 0);
  EXPECT_EQ(allocate::reductionGroupSize(32), 32);
  EXPECT_EQ(allocate::reductionGroupSize(100), 128);
  EXPECT_EQ(allocate::reductionGroupSize(1024), 1024);
  EXPECT_EQ(allocate::reductionGroupSize(100000), 1024);
}

static allocate::BandAllocation iirAllocation(const std::string &context, allocate::AllocationChoice choice) {
  ModelBuilder b("[H, W, M]", context);
  iir(b);
  auto deps = analysis::computeDependences(b.model);
  EXPECT_TRUE(static_cast<bool>(deps));
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  EXPECT_TRUE(static_cast<bool>(schedule));
  allocate::AllocationOptions options;
  options.choice = choice;
  auto allocation = allocate::allocate(b.model, *deps, *schedule, options);
  EXPECT_TRUE(static_cast<bool>(allocation));
  return allocation->bands.at(0);
}

TEST(Allocation, WavefrontByWindow) {
  using allocate::AllocationChoice;
  using allocate::AllocationKind;
  EXPECT_EQ(iirAllocation("M = 2 and H >= 0 and W >= 0", AllocationChoice::Auto).kind,
            AllocationKind::FlexibleWavefront);
  EXPECT_EQ(iirAllocation("M = 3 and H >= 0 and W >= 0", AllocationChoice::Auto).kind,
            AllocationKind::FlexibleWavefront);
  allocate::BandAllocation free = iirAllocation("M >= 0 and H >= 0 and W >= 0", AllocationChoice::Auto);
  EXPECT_EQ(free.kind, AllocationKind::FlexibleWavefront);
  EXPECT_EQ(free.otherwise, AllocationKind::FixedWavefront);
  EXPECT_EQ(free.runtimeCondition, "M > 1");
  ASSERT_TRUE(free.wavefront.has_value());
  EXPECT_EQ(free.wavefront->columnDim, 0u);
  EXPECT_EQ(free.wavefront->rowDim, 1u);
  EXPECT_EQ(free.wavefront->window, "M");
  EXPECT_EQ(iirAllocation("M = 9 and H >= 0 and W >= 0", AllocationChoice::Fixed).kind, AllocationKind::FixedWavefront);
  EXPECT_EQ(iirAllocation("M = 2 and H >= 0 and W >= 0", AllocationChoice::Flexible).kind,
            AllocationKind::FlexibleWavefront);
}

// The rate network's shape: r[t, j] from r[t - 1, j] with a reduction over c, over T steps.
static map::Mapping timeLoopMapping(const std::string &context, bool reduce) {
  ModelBuilder b("[N, T]", context);
  b.array("r0", "r0[a] : 0 <= a < N", ast::ArrayKind::Input);
  b.array("r", "r[a, c] : 0 <= a < T and 0 <= c < N", ast::ArrayKind::Local);
  b.array("rT", "rT[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"j"}, "S0[j] : 0 <= j < N", "S0[j] -> r[0, j]", {"S0[j] -> r0[j]"});
  model::Statement &step =
      b.statement({"t", "j"}, "S1[t, j] : 1 <= t < T and 0 <= j < N", "S1[t, j] -> r[t, j]",
                  {reduce ? "S1[t, j] -> r[t - 1, a] : 0 <= a < N" : "S1[t, j] -> r[t - 1, j]"});
  if (reduce)
    step.reductions.push_back({nullptr, b.relation("S1[t, j] -> R[c] : 0 <= c < N")});
  b.statement({"j"}, "S2[j] : 0 <= j < N", "S2[j] -> rT[j]", {"S2[j] -> r[T - 1, j]"});
  auto deps = analysis::computeDependences(b.model);
  EXPECT_TRUE(static_cast<bool>(deps));
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  EXPECT_TRUE(static_cast<bool>(schedule));
  auto allocation = allocate::allocate(b.model, *deps, *schedule, {});
  EXPECT_TRUE(static_cast<bool>(allocation));
  auto mapping = map::mapScheduleTree(b.model, *schedule, *allocation);
  EXPECT_TRUE(static_cast<bool>(mapping)) << errorText(mapping.takeError());
  return *mapping;
}

TEST(Mapping, TimeLoopIsAHostLoopAroundKernels) {
  // With the reduction over all of r[t - 1], the time loop is a band of its own around S1's band.
  map::Mapping mapping = timeLoopMapping("N >= 0 and T >= 1", true);
  ASSERT_EQ(mapping.bands.size(), 4u);
  EXPECT_EQ(mapping.bands[0].placement, map::Placement::Kernel);
  const map::BandMapping &time = mapping.bands[1];
  EXPECT_EQ(time.placement, map::Placement::HostLoop);
  EXPECT_EQ(time.parent, -1);
  EXPECT_EQ(time.iterations, "T - 1");
  EXPECT_TRUE(time.replayable); // no loop on the host inside it
  EXPECT_EQ(mapping.bands[2].placement, map::Placement::Kernel);
  EXPECT_EQ(mapping.bands[2].parent, 1);
  EXPECT_EQ(mapping.bands[2].gridMembers, (std::vector<unsigned>{0}));
  ASSERT_TRUE(time.persistent.has_value());
  EXPECT_EQ(time.persistent->pointsPerStep, "N");
  EXPECT_EQ(time.persistent->threadsPerPoint, 32u); // a warp a point for the reduction
  EXPECT_EQ(time.persistent->condition, "(N) * 32 >= 262144 || (N) * 32 <= 2048");
  EXPECT_FALSE(time.persistent->chosen.has_value());
  EXPECT_EQ(time.persistent->barriersPerStep, 1u);
}

TEST(Mapping, PersistentFormForLargeStepsAndForStepsOfOneBlock) {
  // A warp a point: 40 points are 1280 threads (one block, block barriers); 1000 points are 32000
  // threads, too many for one block and too few for a grid barrier to pay (launches); 10000 are 320000.
  for (auto [n, chosen] : {std::pair{40, true}, {1000, false}, {10000, true}}) {
    map::Mapping mapping = timeLoopMapping("N = " + std::to_string(n) + " and T >= 1", true);
    ASSERT_EQ(mapping.bands.size(), 4u);
    const std::optional<map::PersistentForm> &form = mapping.bands[1].persistent;
    ASSERT_TRUE(form.has_value());
    EXPECT_EQ(form->oneBlockThreadsMax, 2048);
    EXPECT_EQ(form->chosen, std::optional<bool>(chosen)) << "N = " << n;
  }
}

TEST(Mapping, SequentialOuterMemberOfAKernelBandIsAHostLoop) {
  // r[t, j] from r[t - 1, j] alone: one band (t, j), parallel over j, in order over t.
  map::Mapping mapping = timeLoopMapping("N >= 0 and T >= 1", false);
  ASSERT_EQ(mapping.bands.size(), 3u);
  const map::BandMapping &step = mapping.bands[1];
  EXPECT_EQ(step.placement, map::Placement::Kernel);
  EXPECT_EQ(step.gridMembers, (std::vector<unsigned>{1}));
  EXPECT_EQ(step.iterations, "T - 1");
  EXPECT_FALSE(step.persistent.has_value());
}

TEST(Mapping, PersistentChoiceIsFixedWhenTheParamsAre) {
  EXPECT_EQ(timeLoopMapping("N = 1000 and T >= 1", true).bands[1].persistent->chosen, false); // 32000 threads
  EXPECT_EQ(timeLoopMapping("N = 10000 and T >= 1", true).bands[1].persistent->chosen, true); // 320000
}

TEST(Mapping, SequentialBandWithoutParallelWorkRunsInOneThread) {
  // y[i] = y[i - 1] + x[i]: no parallel member and no reduction anywhere under the band.
  ModelBuilder b("[N]", "N >= 0");
  b.array("x", "x[a] : 0 <= a < N", ast::ArrayKind::Input);
  b.array("y", "y[a] : 0 <= a < N", ast::ArrayKind::Output);
  b.statement({"i"}, "S0[i] : 0 <= i < N", "S0[i] -> y[i]", {"S0[i] -> x[i]", "S0[i] -> y[i - 1] : i >= 1"});
  auto deps = analysis::computeDependences(b.model);
  ASSERT_TRUE(static_cast<bool>(deps));
  auto schedule = schedule::chooseSchedule(b.model, *deps, {});
  ASSERT_TRUE(static_cast<bool>(schedule));
  auto allocation = allocate::allocate(b.model, *deps, *schedule, {});
  ASSERT_TRUE(static_cast<bool>(allocation));
  auto mapping = map::mapScheduleTree(b.model, *schedule, *allocation);
  ASSERT_TRUE(static_cast<bool>(mapping));
  ASSERT_EQ(mapping->bands.size(), 1u);
  EXPECT_EQ(mapping->bands[0].placement, map::Placement::SingleThread);
  EXPECT_FALSE(mapping->bands[0].persistent.has_value());
}

TEST(IslUtil, AffinePrinting) {
  IslContext isl;
  isl::ctx ctx(isl.get());
  isl::pw_aff count(ctx, "[H, W] -> { [(H + W - 1)] }");
  EXPECT_EQ(islutil::pwAffToC(count, isl::set(ctx, "[H, W] -> { : H >= 0 and W >= 0 }")), "H + W - 1");
  isl::aff skew(ctx, "[N] -> { [i, j] -> [(2i + j)] }");
  EXPECT_EQ(islutil::affToString(skew), "2*i + j");
  isl::aff reverse(ctx, "[N] -> { [i] -> [(-i + N)] }");
  EXPECT_EQ(islutil::affToString(reverse), "-i + N");
  EXPECT_EQ(islutil::constantValue(isl::pw_aff(ctx, "[N] -> { [(4)] }")), 4);
  EXPECT_FALSE(islutil::constantValue(isl::pw_aff(ctx, "[N] -> { [(N)] }")).has_value());
}

// A box is the product of its projections: parametric extents and an empty set are boxes, a triangle, a
// set whose bound of one dimension depends on another, or a union of two rectangles is not.
TEST(IslUtil, Boxes) {
  IslContext isl;
  isl::ctx ctx(isl.get());
  EXPECT_TRUE(islutil::isBox(isl::set(ctx, "[N, M] -> { S[i, j] : 0 <= i < N and 1 <= j <= M + 2 }")));
  EXPECT_TRUE(islutil::isBox(isl::set(ctx, "[N] -> { S[i, j, k] : 0 <= i, j, k < N }")));
  EXPECT_TRUE(islutil::isBox(isl::set(ctx, "[N] -> { S[i, j] : false }")));
  EXPECT_TRUE(islutil::isBox(isl::set(ctx, "{ S[] }")));
  EXPECT_FALSE(islutil::isBox(isl::set(ctx, "[N] -> { S[i, j] : 0 <= j <= i < N }")));
  EXPECT_FALSE(islutil::isBox(isl::set(ctx, "[N, D] -> { S[r, i] : 0 <= r < D and 0 <= i < N and i <= N + D - 10 - r }")));
  EXPECT_FALSE(islutil::isBox(isl::set(ctx, "{ S[i, j] : (0 <= i < 2 and 0 <= j < 4) or (2 <= i < 4 and 0 <= j < 2) }")));
}

// A count with several pieces (sum(k in 0..D where k < 2): min(D, 2) terms) is printed as C that selects
// the piece, not in isl's notation, in parentheses (it is used inside larger expressions: "... > 1 ? ..."); a
// floor division as C's truncating division made a floor.
TEST(IslUtil, PiecewisePrintedAsC) {
  IslContext isl;
  isl::ctx ctx(isl.get());
  isl::pw_aff terms(ctx, "[D] -> { [(D)] : 0 <= D <= 2; [(2)] : D >= 3 }");
  EXPECT_EQ(islutil::pwAffToC(terms, isl::set(ctx, "[D] -> { : D >= 0 }")), "((D >= 3) ? 2 : D)");
  isl::pw_aff smaller(ctx, "[N, M] -> { [(N)] : N < M; [(M)] : N >= M }");
  EXPECT_EQ(islutil::pwAffToC(smaller, isl::set(ctx, "[N, M] -> { : }")), "((M >= (N + 1)) ? N : M)");
  isl::pw_aff quarter(ctx, "[N] -> { [(floor(N/4))] }");
  EXPECT_EQ(islutil::pwAffToC(quarter, isl::set(ctx, "[N] -> { : }")), "((N) >= 0 ? (N) / 4 : -((-(N) + 4 - 1) / 4))");
}
