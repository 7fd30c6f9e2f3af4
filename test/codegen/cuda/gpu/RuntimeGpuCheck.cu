// GPU check of the runtime's CUDA part, independent of the code generator (run by
// scripts/gpu-check.sh on a machine with a GPU): group and block reductions against a sequential sum,
// and the flexible and fixed wavefronts on a hand-written 2D IIR point (the shape polyc emits) against
// a float64 sequential reference, over shapes, window sizes and forced grid sizes; a sliding sum (a thread's
// R points of a 1D filter) against a plain sum. With --bench it
// times the variants instead (strip width, publication interval, fixed plain vs graph).
#include "polyc/cuda/BlockReduce.cuh"
#include "polyc/cuda/Device.h"
#include "polyc/cuda/SlidingSum.cuh"
#include "polyc/cuda/Wavefront.cuh"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace polyc::rt::cuda;

static int failures = 0;
static void expect(bool ok, const std::string &what) {
  if (!ok) {
    ++failures;
    std::printf("FAIL %s\n", what.c_str());
  }
}

// ---- Reductions

template <unsigned G> __global__ void groupSumKernel(const float *in, float *out, int n) {
  const int group = int((blockIdx.x * blockDim.x + threadIdx.x) / G);
  const unsigned lane = threadIdx.x % G;
  float partial = 0;
  for (int k = int(lane); k < n; k += G)
    partial += in[int64_t(group) * n + k];
  float maximum = MaxOp<float>::identity();
  for (int k = int(lane); k < n; k += G)
    maximum = MaxOp<float>()(maximum, in[int64_t(group) * n + k]);
  partial = groupReduce<G>(partial, SumOp<float>());
  maximum = groupReduce<G>(maximum, MaxOp<float>());
  if (lane == 0) {
    out[2 * group] = partial;
    out[2 * group + 1] = maximum;
  }
}

template <unsigned Threads> __global__ void blockMinKernel(const float *in, float *out, int n) {
  __shared__ float scratch[Threads / 32];
  float minimum = MinOp<float>::identity();
  for (int k = int(threadIdx.x); k < n; k += Threads)
    minimum = MinOp<float>()(minimum, in[int64_t(blockIdx.x) * n + k]);
  minimum = blockReduce<Threads>(minimum, MinOp<float>(), scratch);
  float sum = 0;
  for (int k = int(threadIdx.x); k < n; k += Threads)
    sum += in[int64_t(blockIdx.x) * n + k];
  sum = blockReduce<Threads>(sum, SumOp<float>(), scratch);
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = minimum;
    out[2 * blockIdx.x + 1] = sum;
  }
}

template <unsigned G> static void checkGroupReduce(std::mt19937 &rng) {
  for (int n : {0, 1, 7, 32, 100, 1000}) {
    const int groups = 64;
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> host(size_t(groups) * n);
    for (float &v : host)
      v = dist(rng);
    DeviceBuffer in(host.size() * sizeof(float)), out(2 * groups * sizeof(float));
    in.upload(host.data(), host.size() * sizeof(float), nullptr);
    groupSumKernel<G><<<groups * G / 64 > 0 ? groups * G / 64 : 1, 64 < G * groups ? 64 : G * groups>>>(
        in.as<float>(), out.as<float>(), n);
    POLYC_CUDA_CHECK_LAUNCH("groupSumKernel");
    std::vector<float> result(2 * groups);
    out.download(result.data(), result.size() * sizeof(float), nullptr);
    POLYC_CUDA_CHECK(cudaDeviceSynchronize());
    for (int g = 0; g < groups; ++g) {
      double sum = 0;
      float maximum = -3.402823466e38f;
      for (int k = 0; k < n; ++k) {
        sum += host[size_t(g) * n + k];
        maximum = std::max(maximum, host[size_t(g) * n + k]);
      }
      expect(std::fabs(result[2 * g] - sum) <= 1e-4 * (1 + std::fabs(sum)),
             "groupReduce<" + std::to_string(G) + "> sum n=" + std::to_string(n));
      expect(result[2 * g + 1] == maximum, "groupReduce<" + std::to_string(G) + "> max n=" + std::to_string(n));
    }
  }
}

// ---- Term tables: warp 0 appends the candidates a `where` keeps (every third dropped), then each
// group of G lanes sums coefficient x cell the way the generated value function does (forEachTerm: a
// lane's LaneTerms::Held slots from registers, the ones without a term reading the zero cell, the rest
// of its share from the table), then the group's sum. The dropped candidates' cells are infinite and the
// zero cell follows the n candidates: a slot padded with 0 x any other cell would make the sum NaN.

// The cells as a strip window's View presents them to LaneTerms::forEachTerm: by element offset (table
// terms) and by byte offset (held terms).
struct CellsView {
  const float *cells;
  __device__ float at(int offset) const { return cells[offset]; }
  __device__ float atBytes(int bytes) const {
    return *reinterpret_cast<const float *>(reinterpret_cast<const unsigned char *>(cells) + bytes);
  }
};

template <unsigned G, int K>
__global__ void termSumKernel(TermTableLayout layout, const float *coefficients, const float *cells, int n,
                              float *out) {
  extern __shared__ __align__(16) unsigned char shared[];
  TermTable<float> table;
  table.bind(layout, shared);
  if (threadIdx.x < WarpSize) {
    TermAppender<float> appender{table};
    for (int base = 0; base < n; base += WarpSize) {
      const int c = base + int(threadIdx.x);
      const bool keep = c < n && c % 3 != 0;
      appender.append(keep, keep ? coefficients[c] : 0.0f, keep ? c : 0);
    }
    appender.finish();
  }
  __syncthreads();
  LaneTerms<float, K> mine;
  const unsigned lane = threadIdx.x % G;
  mine.load(table, lane, G, n * int(sizeof(float)));
  float sum = 0;
  mine.template forEachTerm<G>(lane, CellsView{cells},
                               [&](float coefficient, float cell) { sum += coefficient * cell; });
  sum = groupReduce<G>(sum, SumOp<float>());
  if (lane == 0)
    out[threadIdx.x / G] = sum;
}

template <unsigned G, int K> static void checkLaneTerms(std::mt19937 &rng) {
  const int held = K * int(G); // terms the lanes of a group hold in registers
  for (int n : {0, 1, 5, held, held + 1, 3 * held / 2 + 7, 3 * held}) {
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> coefficients(std::max(n, 1)), cells(n + 1, 0.0f); // cells[n]: the zero cell
    double expected = 0;
    for (int c = 0; c < n; ++c) {
      const bool kept = c % 3 != 0;
      coefficients[c] = dist(rng);
      cells[c] = kept ? dist(rng) : INFINITY;
      if (kept)
        expected += double(coefficients[c]) * cells[c];
    }
    TermTableLayout layout;
    size_t sharedBytes = 0;
    layoutTerms<float>(layout, {int64_t(n)}, sharedBytes);
    const int threads = 64 > int(G) ? 64 : int(G), groups = threads / int(G);
    DeviceBuffer coefficientBuffer(coefficients.size() * sizeof(float)), cellBuffer(cells.size() * sizeof(float)),
        out(groups * sizeof(float));
    coefficientBuffer.upload(coefficients.data(), coefficients.size() * sizeof(float), nullptr);
    cellBuffer.upload(cells.data(), cells.size() * sizeof(float), nullptr);
    termSumKernel<G, K><<<1, threads, sharedBytes>>>(layout, coefficientBuffer.as<float>(), cellBuffer.as<float>(), n,
                                                  out.as<float>());
    POLYC_CUDA_CHECK_LAUNCH("termSumKernel");
    std::vector<float> result(groups);
    out.download(result.data(), result.size() * sizeof(float), nullptr);
    POLYC_CUDA_CHECK(cudaDeviceSynchronize());
    for (int g = 0; g < groups; ++g)
      expect(std::fabs(result[g] - expected) <= 1e-4 * (1 + std::fabs(expected)),
             "LaneTerms<" + std::to_string(G) + " lanes, " + std::to_string(K) + "> n=" + std::to_string(n) + ": " + std::to_string(result[g]) +
                 " vs " + std::to_string(expected));
  }
}

// LaneTerms in the lanes and registers of every strip shape the term tables use (TermTableShapes).
template <int... I> static void checkEveryTableShape(std::mt19937 &rng, std::integer_sequence<int, I...>) {
  (checkLaneTerms<TermTableShapes[I].lanes, TermTableShapes[I].held>(rng), ...);
}

template <unsigned Threads> static void checkBlockReduce(std::mt19937 &rng) {
  for (int n : {0, 1, 33, 1000, 5000}) {
    const int blocks = 17;
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> host(size_t(blocks) * n);
    for (float &v : host)
      v = dist(rng);
    DeviceBuffer in(host.size() * sizeof(float)), out(2 * blocks * sizeof(float));
    in.upload(host.data(), host.size() * sizeof(float), nullptr);
    blockMinKernel<Threads><<<blocks, Threads>>>(in.as<float>(), out.as<float>(), n);
    POLYC_CUDA_CHECK_LAUNCH("blockMinKernel");
    std::vector<float> result(2 * blocks);
    out.download(result.data(), result.size() * sizeof(float), nullptr);
    POLYC_CUDA_CHECK(cudaDeviceSynchronize());
    for (int b = 0; b < blocks; ++b) {
      float minimum = 3.402823466e38f;
      double sum = 0;
      for (int k = 0; k < n; ++k) {
        minimum = std::min(minimum, host[size_t(b) * n + k]);
        sum += host[size_t(b) * n + k];
      }
      expect(result[2 * b] == minimum, "blockReduce<" + std::to_string(Threads) + "> min n=" + std::to_string(n));
      expect(std::fabs(result[2 * b + 1] - sum) <= 1e-4 * (1 + std::fabs(sum)),
             "blockReduce<" + std::to_string(Threads) + "> sum n=" + std::to_string(n));
    }
  }
}

// ---- The 2D IIR point, as polyc emits it: the G lanes of a group take consecutive values of the
// innermost reduction variable, each runs the other one in order (unrolled, so loads overlap).

struct IirArrays {
  int64_t H, W, M;
  const float *x, *a, *b;
};

template <int G, bool Fused> struct IirPoint {
  int64_t H, W, M;
  const float *a, *b;
  // Index: int64_t for the fixed wavefront's global reads, int for the strip's windows (as polyc emits).
  template <typename Index, typename YRead, typename XRead>
  __device__ float operator()(Index i, Index j, unsigned lane, const YRead &y, const XRead &x) const {
    const Index M = Index(this->M);
    float sum0 = 0.0f;
    for (Index r2 = lane; r2 < M; r2 += G) {
#pragma unroll 4
      for (Index r1 = 0; r1 < M; ++r1)
        sum0 += a[r1 * M + r2] * x(i - r1, j - r2);
    }
    float sum1 = 0.0f;
    for (Index k2 = lane; k2 < M; k2 += G) {
#pragma unroll 4
      for (Index k1 = 0; k1 < M; ++k1)
        if (k1 != 0 || k2 != 0)
          sum1 += b[k1 * M + k2] * y(i - k1, j - k2);
    }
    if constexpr (Fused)
      return groupReduce<G>(sum0 + sum1, SumOp<float>());
    else
      return groupReduce<G>(sum0, SumOp<float>()) + groupReduce<G>(sum1, SumOp<float>());
  }
};

// Global reads with the zero boundary, for the fixed wavefront.
struct GlobalRead {
  const float *array;
  int64_t H, W;
  bool readOnly;
  __device__ float operator()(int64_t r, int64_t c) const {
    if (r < 0 || c < 0 || r >= H || c >= W)
      return 0.0f;
    return readOnly ? __ldg(&array[r * W + c]) : array[r * W + c];
  }
};

template <int G, int P>
__global__ void __launch_bounds__(G *P) iirFixedKernel(int64_t t, int64_t firstJ, int64_t count, IirArrays p, float *y) {
  const int64_t point = int64_t(blockIdx.x) * P + threadIdx.x / G;
  if (point >= count)
    return;
  const int64_t j = firstJ + point, i = t - j;
  const IirPoint<G, false> compute{p.H, p.W, p.M, p.a, p.b};
  const float value = compute(i, j, threadIdx.x % G, GlobalRead{y, p.H, p.W, false}, GlobalRead{p.x, p.H, p.W, true});
  if (threadIdx.x % G == 0)
    y[i * p.W + j] = value;
}

template <int G, int P> static void enqueueFixed(const IirArrays &p, float *y, cudaStream_t stream) {
  for (int64_t t = 0; t <= p.H + p.W - 2; ++t) {
    const int64_t firstJ = std::max<int64_t>(0, t - p.H + 1), lastJ = std::min<int64_t>(p.W - 1, t);
    const int64_t count = lastJ - firstJ + 1;
    iirFixedKernel<G, P><<<unsigned((count + P - 1) / P), G * P, 0, stream>>>(t, firstJ, count, p, y);
    POLYC_CUDA_CHECK_LAUNCH("iirFixedKernel");
  }
}

// The flexible wavefront as polyc emits it: the strip's windows of y and x and the staged a and b.
struct IirFlexibleArgs {
  int64_t H, W, M;
  float *y;
  WindowGeometry<float> yWindow, xWindow;
  StagedArray<float> aStaged, bStaged;
};

template <int S, int G, bool Fused> struct IirStrip {
  static constexpr int Threads = S * G;
  const IirFlexibleArgs &args;
  unsigned char *shared;
  StripWindow<float, S, true> y;
  StripWindow<float, S, false> x;
  const float *a = nullptr, *b = nullptr;

  __device__ IirStrip(const IirFlexibleArgs &args, unsigned char *shared) : args(args), shared(shared) {
    y.geometry = args.yWindow;
    y.bind(shared, Threads, 0, 2);
    x.geometry = args.xWindow;
    x.bind(shared, Threads, 1, 2);
  }
  __device__ void start() {
    a = stageArray(args.aStaged, shared, Threads);
    b = stageArray(args.bStaged, shared, Threads);
  }
  __device__ void prepare(int column, int step) {
    y.prepare(column, step);
    x.prepare(column, step);
  }
  __device__ void enter(int column, int step) {
    y.enter(step);
    x.enter(step);
  }
  __device__ void step(int column, int step) {
    y.prefetch(step);
    x.prefetch(step);
    const int i = step - stripLane<G>(), j = column * S + stripLane<G>();
    if (i >= 0 && i < args.H && j < args.W) {
      const IirPoint<G, Fused> compute{args.H, args.W, args.M, a, b};
      const float value = compute(i, j, groupLane<G>(), y.view(i, j), x.view(i, j));
      if (groupLane<G>() == 0)
        y.store(value, args.y);
    }
    y.commit();
    x.commit();
  }
};

template <int S, int G, bool Fused>
__global__ void __launch_bounds__(flexibleBlockThreads(S *G))
    iirFlexibleKernel(FlexibleBoard board, IirFlexibleArgs args, int publishInterval) {
  extern __shared__ __align__(16) unsigned char dynamicShared[];
  __shared__ FlexibleShared scheduler;
  IirStrip<S, G, Fused> strip(args, dynamicShared);
  runFlexibleWavefront(board, strip, scheduler, publishInterval);
}

struct Problem {
  int64_t H, W, M;
  std::vector<float> x, a, b;
  std::vector<double> reference;
};

static Problem makeProblem(int64_t H, int64_t W, int64_t M, std::mt19937 &rng, bool withReference) {
  Problem pr{H, W, M, {}, {}, {}, {}};
  std::uniform_real_distribution<float> dist(-1, 1);
  pr.x.resize(size_t(H * W));
  for (float &v : pr.x)
    v = dist(rng);
  pr.a.resize(size_t(M * M));
  pr.b.resize(size_t(M * M));
  for (float &v : pr.a)
    v = dist(rng) / float(M);
  double total = 0;
  for (float &v : pr.b) {
    v = dist(rng);
    total += std::fabs(v);
  }
  // A stable filter: the feedback's absolute sum below one.
  for (float &v : pr.b)
    v = float(v * 0.9 / (total > 0 ? total : 1));
  if (withReference) {
    pr.reference.assign(size_t(H * W), 0.0);
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < W; ++j) {
        double acc = 0;
        for (int64_t r1 = 0; r1 < M; ++r1)
          for (int64_t r2 = 0; r2 < M; ++r2)
            if (i - r1 >= 0 && j - r2 >= 0)
              acc += double(pr.a[r1 * M + r2]) * pr.x[(i - r1) * W + (j - r2)];
        for (int64_t k1 = 0; k1 < M; ++k1)
          for (int64_t k2 = 0; k2 < M; ++k2)
            if ((k1 || k2) && i - k1 >= 0 && j - k2 >= 0)
              acc += double(pr.b[k1 * M + k2]) * pr.reference[(i - k1) * W + (j - k2)];
        pr.reference[i * W + j] = acc;
      }
  }
  return pr;
}

struct DeviceProblem {
  DeviceBuffer x, a, b, y;
  IirArrays arrays;
  explicit DeviceProblem(const Problem &pr)
      : x(pr.x.size() * 4), a(pr.a.size() * 4), b(pr.b.size() * 4), y(size_t(pr.H * pr.W) * 4) {
    x.upload(pr.x.data(), pr.x.size() * 4, nullptr);
    a.upload(pr.a.data(), pr.a.size() * 4, nullptr);
    b.upload(pr.b.data(), pr.b.size() * 4, nullptr);
    arrays = {pr.H, pr.W, pr.M, x.as<float>(), a.as<float>(), b.as<float>()};
  }
};

template <int S, int G, bool Fused = false>
static bool runFlexible(DeviceProblem &dp, FlexibleBoardStorage &board, int publishInterval, cudaStream_t stream) {
  const IirArrays &p = dp.arrays;
  IirFlexibleArgs args;
  args.H = p.H;
  args.W = p.W;
  args.M = p.M;
  args.y = dp.y.as<float>();
  const int window = int(std::max<int64_t>(0, p.M - 1));
  args.yWindow = {dp.y.as<float>(), p.H, p.W, p.W, 1, window, 0, window, 0, BoundaryRule::Zero, 0, 0, 0};
  args.xWindow = {p.x, p.H, p.W, p.W, 1, window, 0, window, 0, BoundaryRule::Zero, 0, 0, 0};
  args.aStaged = {p.a, p.M * p.M, 0};
  args.bStaged = {p.b, p.M * p.M, 0};
  size_t sharedBytes = 0;
  layoutWindow(args.yWindow, S, sharedBytes);
  layoutWindow(args.xWindow, S, sharedBytes);
  layoutStaged(args.aStaged, sharedBytes);
  layoutStaged(args.bStaged, sharedBytes);
  if (!fitsInSharedMemory(sharedBytes))
    return false;
  const int columns = int((p.W + S - 1) / S), steps = int(p.H) + S - 1;
  launchFlexible(iirFlexibleKernel<S, G, Fused>, board, args, S * G, sharedBytes, columns, steps, S + 1,
                 publishInterval, stream, "iir flexible");
  return true;
}

static double compare(const Problem &pr, const std::vector<float> &y) {
  double worst = 0, scale = 0;
  for (double v : pr.reference)
    scale = std::max(scale, std::fabs(v));
  for (size_t k = 0; k < y.size(); ++k) {
    const double error = std::fabs(double(y[k]) - pr.reference[k]);
    if (!(error <= worst)) // NaN counts as the worst
      worst = std::isnan(error) ? INFINITY : error;
  }
  return worst / (scale > 0 ? scale : 1);
}

static std::vector<float> download(DeviceProblem &dp, cudaStream_t stream) {
  std::vector<float> y(size_t(dp.arrays.H * dp.arrays.W));
  dp.y.download(y.data(), y.size() * 4, stream);
  POLYC_CUDA_CHECK(cudaStreamSynchronize(stream));
  return y;
}

static void checkIir(std::mt19937 &rng, bool quick) {
  Stream stream;
  FlexibleBoardStorage board;
  std::vector<std::array<int64_t, 2>> shapes = {{1, 1}, {1, 37}, {41, 1}, {97, 131}, {300, 257}};
  std::vector<int64_t> windows = {1, 2, 3, 5, 8};
  if (quick) {
    shapes = {{1, 1}, {3, 40}, {40, 3}, {33, 47}};
    windows = {1, 3};
  }
  const int resident = [] {
    int perSm = 0;
    POLYC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, iirFlexibleKernel<8, 32, false>, 256, 3 * 64 * 64 * 4));
    return perSm * deviceProperties().multiProcessorCount;
  }();
  for (auto shape : shapes)
    for (int64_t M : windows) {
      Problem pr = makeProblem(shape[0], shape[1], M, rng, true);
      DeviceProblem dp(pr);
      const std::string name = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " M=" + std::to_string(M);
      // Fixed, plain launches.
      dp.y.fill(0xff, stream.get());
      enqueueFixed<32, 8>(dp.arrays, dp.y.as<float>(), stream.get());
      double error = compare(pr, download(dp, stream.get()));
      expect(error < 1e-5, "fixed " + name + " error " + std::to_string(error));
      // Flexible, default grid and forced grids from 1 block to 4x the resident count.
      std::vector<int> grids = {0, 1, 2, 3, 7};
      if (!quick)
        grids.push_back(4 * resident);
      for (int grid : grids) {
        if (grid)
          setenv("POLYC_CUDA_GRID", std::to_string(grid).c_str(), 1);
        else
          unsetenv("POLYC_CUDA_GRID");
        for (int publish : {1, 4}) {
          dp.y.fill(0xff, stream.get());
          expect(runFlexible<8, 32>(dp, board, publish, stream.get()), "flexible fits " + name);
          error = compare(pr, download(dp, stream.get()));
          expect(error < 1e-5, "flexible S=8 " + name + " grid " + std::to_string(grid) + " publish " +
                                   std::to_string(publish) + " error " + std::to_string(error));
        }
        dp.y.fill(0xff, stream.get());
        runFlexible<4, 8, true>(dp, board, 2, stream.get());
        error = compare(pr, download(dp, stream.get()));
        expect(error < 1e-5, "flexible S=4 G=8 fused " + name + " grid " + std::to_string(grid) + " error " +
                                 std::to_string(error));
      }
      unsetenv("POLYC_CUDA_GRID");
    }
}

// ---- Timing

template <typename Run> static double medianMs(Run &&run, cudaStream_t stream, int repeats) {
  EventTimer timer;
  run(); // warm-up
  POLYC_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> times;
  for (int k = 0; k < repeats; ++k) {
    timer.start(stream);
    run();
    times.push_back(timer.stop(stream) * 1e3);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template <int S, int G, bool Fused = false>
static double timeFlexible(DeviceProblem &dp, FlexibleBoardStorage &board, int publish, cudaStream_t stream,
                           int repeats = 5) {
  return medianMs([&] { runFlexible<S, G, Fused>(dp, board, publish, stream); }, stream, repeats);
}

__global__ void copyKernel(const float4 *in, float4 *out, int64_t n) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
    out[k] = in[k];
}

static void bench(std::mt19937 &rng, int64_t size, const std::vector<int64_t> &windows, bool all) {
  Stream stream;
  FlexibleBoardStorage board;
  if (all)
    std::printf("%6s %4s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "size", "M", "fixed", "graph", "S8p4",
                "S16p1", "S16p4", "S16p16", "S32p4", "S16G16", "S16fuse", "copy");
  else
    std::printf("%6s %4s %8s %8s %8s %8s\n", "size", "M", "graph", "S16p4", "S16fuse", "copy");
  for (int64_t M : windows) {
    Problem pr = makeProblem(size, size, M, rng, false);
    DeviceProblem dp(pr);
    const int repeats = all ? 3 : 1;
    double fixed = 0;
    if (all)
      fixed = medianMs([&] { enqueueFixed<32, 8>(dp.arrays, dp.y.as<float>(), stream.get()); }, stream.get(), repeats);
    CapturedGraph graph;
    graph.beginCapture(stream.get());
    enqueueFixed<32, 8>(dp.arrays, dp.y.as<float>(), stream.get());
    graph.endCapture(stream.get(), 1);
    const double replay = medianMs([&] { graph.launch(stream.get()); }, stream.get(), repeats);
    const double copy = medianMs(
        [&] {
          copyKernel<<<1056, 256, 0, stream.get()>>>(reinterpret_cast<const float4 *>(dp.x.get()),
                                                     reinterpret_cast<float4 *>(dp.y.get()), size * size / 4);
        },
        stream.get(), 5);
    if (all) {
      const double s8p4 = timeFlexible<8, 32>(dp, board, 4, stream.get());
      const double s16p1 = timeFlexible<16, 32>(dp, board, 1, stream.get());
      const double s16p4 = timeFlexible<16, 32>(dp, board, 4, stream.get());
      const double s16p16 = timeFlexible<16, 32>(dp, board, 16, stream.get());
      const double s32p4 = timeFlexible<32, 32>(dp, board, 4, stream.get());
      const double s16g16 = timeFlexible<16, 16>(dp, board, 4, stream.get());
      const double s16fuse = timeFlexible<16, 32, true>(dp, board, 4, stream.get());
      std::printf("%6lld %4lld %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.4f\n", (long long)size,
                  (long long)M, fixed, replay, s8p4, s16p1, s16p4, s16p16, s32p4, s16g16, s16fuse, copy);
    } else {
      const double s16p4 = timeFlexible<16, 32>(dp, board, 4, stream.get(), 1);
      const double s16fuse = timeFlexible<16, 32, true>(dp, board, 4, stream.get(), 1);
      std::printf("%6lld %4lld %8.3f %8.3f %8.3f %8.4f\n", (long long)size, (long long)M, replay, s16p4, s16fuse,
                  copy);
    }
    std::fflush(stdout);
  }
}

// ---- Floors for the benchmark (examples/iir2d/bench-gpu.sh)

__global__ void barrierSteps(float *out, int steps) {
  __shared__ float cells[1024];
  float value = float(threadIdx.x);
  for (int step = 0; step < steps; ++step) {
    cells[threadIdx.x] = value;
    __syncthreads();
    value = cells[(threadIdx.x + 1) % blockDim.x] * 0.5f + 1.0f;
    __syncthreads();
  }
  out[threadIdx.x] = value;
}

__global__ void emptyKernel() {}

// For an H x W image: the device-to-device copy of the image (the bandwidth floor: every element read
// and written once), one dependent step of a block (a barrier and a shared-memory round trip, the least
// a step of the flexible wavefront waits for), and one node of a graph of empty kernels (the least a
// launch of the fixed wavefront costs). Prints one line of milliseconds per quantity.
static void floors(int64_t H, int64_t W) {
  Stream stream;
  const size_t bytes = size_t(H * W) * sizeof(float);
  DeviceBuffer from(bytes), to(bytes);
  from.fill(0x3f, stream.get());
  const double copy = medianMs(
      [&] { POLYC_CUDA_CHECK(cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, stream.get())); },
      stream.get(), 21);
  const int steps = 20000;
  DeviceBuffer out(1024 * sizeof(float));
  const double barrier = medianMs(
      [&] {
        barrierSteps<<<1, 512, 0, stream.get()>>>(out.as<float>(), steps);
        POLYC_CUDA_CHECK_LAUNCH("barrierSteps");
      },
      stream.get(), 5) / steps;
  const int64_t hyperplanes = H + W - 1;
  CapturedGraph graph;
  graph.beginCapture(stream.get());
  for (int64_t t = 0; t < hyperplanes; ++t) {
    emptyKernel<<<1, 32, 0, stream.get()>>>();
    POLYC_CUDA_CHECK_LAUNCH("emptyKernel");
  }
  graph.endCapture(stream.get(), 1);
  const double node = medianMs([&] { graph.launch(stream.get()); }, stream.get(), 5) / double(hyperplanes);
  const double plain = medianMs(
      [&] {
        for (int64_t t = 0; t < hyperplanes; ++t)
          emptyKernel<<<1, 32, 0, stream.get()>>>();
        POLYC_CUDA_CHECK_LAUNCH("emptyKernel");
      },
      stream.get(), 3) / double(hyperplanes);
  std::printf("floors %lldx%lld: copy_ms %.4f copy_GBps %.0f barrier_step_us %.4f graph_node_us %.3f "
              "plain_launch_us %.3f hyperplanes %lld\n",
              (long long)H, (long long)W, copy, 2.0 * double(bytes) / (copy * 1e-3) / 1e9, barrier * 1e3, node * 1e3,
              plain * 1e3, (long long)hyperplanes);
}

// out[p] = sum(s in 0..count) coefficients[s] * cells[p - s] (0 before the first cell), for p < n: a
// thread's R points from p0 = R * thread, rows = min(R, n - p0), as the code generator's Rows kernels call
// it: Run is the run's length built in (count), or 0 for a run of any length.
template <int R, int Run>
__global__ void slidingKernel(const float *coefficients, int count, const float *cells, int n, float *out) {
  const int first = R * int(blockIdx.x * blockDim.x + threadIdx.x);
  if (first >= n)
    return;
  const int rows = n - first < R ? n - first : R;
  SlidingSum<float, R> sum;
  auto cell = [&](int p) { return p >= 0 && p < n ? cells[p] : 0.0f; };
  sum.start([&](int q) { return q < rows ? cell(first + q) : 0.0f; });
  sum.template slide<Run>(count, [&](int s, float &coefficient, float &value) {
    coefficient = coefficients[s];
    value = cell(first - s);
  });
  for (int o = 0; o < rows; ++o)
    out[first + o] = sum.sum[o];
}

template <int R> static void checkSlidingSum(std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int n : {1, R - 1, R, R + 1, 5 * R + 3})
    for (int count : {0, 1, R - 1, R, R + 1, 3 * R + 2}) {
      if (n < 1)
        continue;
      std::vector<float> cells(n), coefficients(std::max(count, 1));
      for (float &c : cells)
        c = dist(rng);
      for (float &c : coefficients)
        c = dist(rng);
      DeviceBuffer cellBuffer(n * sizeof(float)), coefficientBuffer(coefficients.size() * sizeof(float)),
          out(n * sizeof(float));
      cellBuffer.upload(cells.data(), n * sizeof(float), nullptr);
      coefficientBuffer.upload(coefficients.data(), coefficients.size() * sizeof(float), nullptr);
      const int threads = (n + R - 1) / R;
      // The run's length as a value (Run = 0), then as the kernel that withSlidingRun picks for it.
      auto check = [&](auto run) {
        constexpr int Run = decltype(run)::value;
        slidingKernel<R, Run><<<(threads + 63) / 64, 64>>>(coefficientBuffer.as<float>(), count,
                                                           cellBuffer.as<float>(), n, out.as<float>());
        POLYC_CUDA_CHECK_LAUNCH("slidingKernel");
        std::vector<float> result(n);
        out.download(result.data(), n * sizeof(float), nullptr);
        POLYC_CUDA_CHECK(cudaDeviceSynchronize());
        for (int p = 0; p < n; ++p) {
          double expected = 0;
          for (int s = 0; s < count && s <= p; ++s)
            expected += double(coefficients[s]) * cells[p - s];
          expect(std::fabs(result[p] - expected) <= 1e-5 * (1 + std::fabs(expected)),
                 "SlidingSum<" + std::to_string(R) + "> run " + std::to_string(Run) + " n=" +
                     std::to_string(n) + " count=" + std::to_string(count) + " p=" + std::to_string(p) +
                     ": " + std::to_string(result[p]) + " vs " + std::to_string(expected));
        }
      };
      check(std::integral_constant<int, 0>());
      withSlidingRun(count, check);
    }
}

int main(int argc, char **argv) {
  try {
    std::mt19937 rng(20240601);
    if (argc > 3 && !std::strcmp(argv[1], "--floors")) {
      floors(std::atoll(argv[2]), std::atoll(argv[3]));
      return 0;
    }
    const bool benchMode = argc > 1 && !std::strcmp(argv[1], "--bench");
    const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
    if (benchMode) {
      bench(rng, 2048, {3, 5, 9, 17, 31}, true);
      bench(rng, 8192, {3, 31}, false);
      return 0;
    }
    if (!quick) {
      checkGroupReduce<1>(rng);
      checkGroupReduce<4>(rng);
      checkGroupReduce<32>(rng);
      checkBlockReduce<32>(rng);
      checkBlockReduce<256>(rng);
      checkBlockReduce<1024>(rng);
      checkEveryTableShape(rng, std::make_integer_sequence<int, TermTableShapeCount>());
      checkSlidingSum<1>(rng);
      checkSlidingSum<4>(rng);
      checkSlidingSum<16>(rng);
    }
    checkIir(rng, quick);
    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
  } catch (const std::exception &error) {
    std::printf("error: %s\n", error.what());
    return 3;
  }
}
