// Diagonal chain: a standalone prototype of the flexible wavefront's recurrence step (issue 5, session 15).
// Not part of polyc. It computes only the recursive part of the 2D IIR filter,
//
//   y[r, c] = f[r, c] + sum((k1, k2) in [0, M)^2 minus (0, 0)) b[k1, k2] * y[r - k1, c - k2]   (y = 0 outside),
//
// with f given (polyc's FIR band), in strips of S columns, one block a strip, all strips resident.
//
// The step. In a strip, lane group g (column g) computes row u - g at step u, so cell (r, c) is made at
// step r + c: its anti-diagonal. The shared ring is indexed by that step, two slots deep: a step writes
// slot u and reads only slot u - 1, the newest. A cell of slot u - 1 in column g - k2 is the (k1, k2)
// term of the group's point at step u - 1 + k1 + k2, for every k1. So each lane owns B column offsets k2
// (lane j: k2 in [jB, jB + B)), loads their B cells once a step, and adds them with its B x M
// coefficients (registers) into M + B - 1 accumulators, one for each future point they feed. A lane's
// accumulator for a point is complete k2 - 1 steps before the point is due, so the G lanes pass a
// point's partial sum down to lane 0 one lane a step, with one shuffle a step whose result is used at
// the next step. What a step waits for is then the same for every M: the barrier, lane 0's loads of
// the two newest cells, two FMAs and the store. The M-dependent work (B loads, B x M FMAs) has no
// dependence on this step's loads beyond those, so it can overlap the chain.
//
// Halo: the M - 1 columns left of the strip come from the left strip's y in global memory. Thread
// h - 1 (h = 1 .. M - 1) loads cell (u + P + h, C0 - h), the left strip's step u + P + S, P steps
// before it stores it into slot u's halo column, after polling the left strip's progress (acquire).
// Progress is published every PUBLISH steps by thread 0 after the step's barrier (release).
//
// Build: nvcc -std=c++20 -O3 -arch=sm_90 -o diagonal_chain diagonal_chain.cu
// Run:   ./diagonal_chain check            (against a float64 sequential reference)
//        ./diagonal_chain time H W [reps]  (median ms for each M and shape)
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#define CHECK(call)                                                                                         \
  do {                                                                                                      \
    cudaError_t e_ = (call);                                                                                \
    if (e_ != cudaSuccess) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));           \
      std::exit(1);                                                                                         \
    }                                                                                                       \
  } while (0)

constexpr int Prefetch = 3; // steps between a halo cell's load and its store into the ring
constexpr int Publish = 2;  // steps between progress stores

__device__ __forceinline__ int loadAcquire(const int *p) {
  return cuda::atomic_ref<const int, cuda::thread_scope_device>(*p).load(cuda::memory_order_acquire);
}
__device__ __forceinline__ void storeRelease(int *p, int v) {
  cuda::atomic_ref<int, cuda::thread_scope_device>(*p).store(v, cuda::memory_order_release);
}

template <int M_, int G_, int S_, bool Coordinator_ = false>
struct Shape {
  static constexpr int M = M_, G = G_, S = S_;
  // With a coordinator, an extra warp does the halo loads and the publication, and the compute warps
  // only compute.
  static constexpr bool Coordinator = Coordinator_;
  static constexpr int B = (M + G - 1) / G; // column offsets a lane
  static constexpr int K = M + B - 1;       // accumulators a lane
  static constexpr int Halo = M - 1;
  static constexpr int RingCols = S + Halo;
  static constexpr int Threads = G * S; // compute threads
  static constexpr int BlockThreads = Threads + (Coordinator ? 32 : 0);
  static_assert(B >= 2, "lane 0 must receive a point's chain value one step before it is due");
  static_assert(Halo <= 32, "the halo threads are warp 0");
  static_assert(Threads <= 1024 && Threads >= 32, "block size");
};

// progress[s]: the last step strip s has finished (its first step is -(M - 1)); the host sets every entry
// to -M first.
template <class Sh>
__global__ void __launch_bounds__(Sh::BlockThreads) diagonalChain(const float *__restrict__ f, const float *__restrict__ b,
    float *y, int H, int W, int *progress) {
  constexpr int M = Sh::M, G = Sh::G, S = Sh::S, B = Sh::B, K = Sh::K, Halo = Sh::Halo, RC = Sh::RingCols;
  __shared__ float ring[2][RC];
  const int strip = blockIdx.x;
  const int C0 = strip * S;
  const bool computes = threadIdx.x < Sh::Threads;
  const int g = threadIdx.x / G, j = threadIdx.x % G; // meaningful where `computes`
  const int helper = Sh::Coordinator ? int(threadIdx.x) - Sh::Threads : int(threadIdx.x);
  const bool publisher = helper == 0;
  const int first = -(M - 1), last = H + S - 2; // steps: before `first` every cell a step reads is zero

  float coef[B][M];
#pragma unroll
  for (int kb = 0; kb < B; ++kb)
#pragma unroll
    for (int k1 = 0; k1 < M; ++k1) {
      const int k2 = j * B + kb;
      coef[kb][k1] = (k2 < M && (k1 | k2) != 0) ? b[k1 * M + k2] : 0.0f;
    }
  float acc[K];
#pragma unroll
  for (int p = 0; p < K; ++p) acc[p] = 0.0f;
  float received = 0.0f; // the chain value from lane j + 1, for the point at acc[B - 1] next step

  for (int i = threadIdx.x; i < 2 * RC; i += blockDim.x) (&ring[0][0])[i] = 0.0f;

  // Halo thread h - 1: the cells of column C0 - h, Prefetch steps ahead.
  const bool haloThread = helper >= 0 && helper < Halo;
  const int h = helper + 1;
  const int *left = strip > 0 ? progress + strip - 1 : nullptr;
  int leftDone = -M;
  float haloPipe[Prefetch];
  auto loadHalo = [&](int slot) -> float {
    const int row = slot + h, col = C0 - h;
    if (strip == 0 || row < 0 || row >= H) return 0.0f; // rows above the image are zero
    const int needed = min(slot + S, last); // the left strip makes this cell at its step slot + S
    while (leftDone < needed) leftDone = loadAcquire(left);
    return __ldcg(y + size_t(row) * W + col);
  };
  if (haloThread) {
#pragma unroll
    for (int q = 0; q < Prefetch; ++q) haloPipe[q] = loadHalo(first + q);
  }
  // Lane 0's f, two steps ahead.
  float fPipe[2] = {0.0f, 0.0f};
  auto loadF = [&](int step) -> float {
    const int row = step - g, col = C0 + g;
    return (computes && j == 0 && row >= 0 && row < H && col < W) ? __ldg(f + size_t(row) * W + col) : 0.0f;
  };
  fPipe[0] = loadF(first);
  fPipe[1] = loadF(first + 1);
  __syncthreads();

  for (int u = first; u <= last; ++u) {
    const float *newest = ring[(u - 1) & 1] + Halo + g; // slot u - 1, column g
    float *own = ring[u & 1];
    if (computes) {
    // The chain value sent last step belongs to the point now at acc[B - 1].
    acc[B - 1] += received;
    float cell[B];
#pragma unroll
    for (int kb = 0; kb < B; ++kb) {
      const int k2 = j * B + kb;
      cell[kb] = (k2 < M) ? newest[-k2] : 0.0f;
    }
#pragma unroll
    for (int kb = 0; kb < B; ++kb)
#pragma unroll
      for (int k1 = 0; k1 < M; ++k1) acc[k1 + kb] = fmaf(coef[kb][k1], cell[kb], acc[k1 + kb]);
    // Lane 0 finishes its point (acc[1]: step u); lanes j >= 1 finish theirs (acc[0]) and pass it down.
    if (j == 0) {
      const int row = u - g, col = C0 + g;
      const bool inside = row >= 0 && row < H && col < W;
      const float value = inside ? acc[1] + fPipe[0] : 0.0f;
      own[Halo + g] = value;
      if (inside) y[size_t(row) * W + col] = value;
    }
    const float down = __shfl_down_sync(0xffffffffu, acc[0], 1, G);
    received = (j == G - 1) ? 0.0f : down;
    }
    if (haloThread) {
      own[Halo - h] = haloPipe[0];
#pragma unroll
      for (int q = 0; q + 1 < Prefetch; ++q) haloPipe[q] = haloPipe[q + 1];
      haloPipe[Prefetch - 1] = loadHalo(u + Prefetch);
    }
    fPipe[0] = fPipe[1];
    fPipe[1] = loadF(u + 2);
#pragma unroll
    for (int p = 0; p + 1 < K; ++p) acc[p] = acc[p + 1];
    acc[K - 1] = 0.0f;
    __syncthreads();
    if (publisher && ((u - first) % Publish == Publish - 1 || u == last)) storeRelease(progress + strip, u);
  }
}

// ---- host ----

struct Problem {
  int H, W, M;
  std::vector<float> f, b;
};

Problem makeProblem(int H, int W, int M, unsigned seed) {
  Problem p{H, W, M, std::vector<float>(size_t(H) * W), std::vector<float>(size_t(M) * M)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f), sym(-1.0f, 1.0f);
  for (auto &v : p.f) v = unit(rng);
  double total = 0;
  for (auto &v : p.b) total += std::fabs(v = sym(rng));
  const float scale = float(0.9 / total); // sum |b| = 0.9: a stable filter
  for (auto &v : p.b) v *= scale;
  p.b[0] = 0.0f;
  return p;
}

// The plain sequential recurrence, in float64: the reference.
std::vector<double> reference(const Problem &p) {
  std::vector<double> y(size_t(p.H) * p.W, 0.0);
  for (int r = 0; r < p.H; ++r)
    for (int c = 0; c < p.W; ++c) {
      double s = p.f[size_t(r) * p.W + c];
      for (int k1 = 0; k1 < p.M && k1 <= r; ++k1)
        for (int k2 = 0; k2 < p.M && k2 <= c; ++k2)
          if (k1 || k2) s += double(p.b[k1 * p.M + k2]) * y[size_t(r - k1) * p.W + (c - k2)];
      y[size_t(r) * p.W + c] = s;
    }
  return y;
}

struct Device {
  float *f = nullptr, *b = nullptr, *y = nullptr;
  int *progress = nullptr;
  int strips = 0;
};

template <class Sh>
bool fits(int strips) {
  int perSm = 0, sms = 0, dev = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, diagonalChain<Sh>, Sh::BlockThreads, 0));
  return strips <= perSm * sms; // every strip resident: the static allocation cannot deadlock
}

template <class Sh>
float runOnce(const Problem &p, Device &d, cudaEvent_t start, cudaEvent_t stop) {
  const int strips = (p.W + Sh::S - 1) / Sh::S;
  std::vector<int> initial(strips, -p.M);
  CHECK(cudaMemcpy(d.progress, initial.data(), strips * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaEventRecord(start));
  diagonalChain<Sh><<<strips, Sh::BlockThreads>>>(d.f, d.b, d.y, p.H, p.W, d.progress);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

Device upload(const Problem &p) {
  Device d;
  CHECK(cudaMalloc(&d.f, p.f.size() * sizeof(float)));
  CHECK(cudaMalloc(&d.b, p.b.size() * sizeof(float)));
  CHECK(cudaMalloc(&d.y, p.f.size() * sizeof(float)));
  CHECK(cudaMalloc(&d.progress, 65536 * sizeof(int)));
  CHECK(cudaMemcpy(d.f, p.f.data(), p.f.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d.b, p.b.data(), p.b.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

void release(Device &d) {
  CHECK(cudaFree(d.f));
  CHECK(cudaFree(d.b));
  CHECK(cudaFree(d.y));
  CHECK(cudaFree(d.progress));
}

// check: returns false on a wrong result
template <class Sh>
bool checkShape(int H, int W, unsigned seed) {
  const Problem p = makeProblem(H, W, Sh::M, seed);
  if (!fits<Sh>((W + Sh::S - 1) / Sh::S)) {
    std::printf("check M=%d G=%d S=%d%s %dx%d: skipped (strips not all resident)\n", Sh::M, Sh::G, Sh::S, Sh::Coordinator ? " +c" : "", H, W);
    return true;
  }
  Device d = upload(p);
  cudaEvent_t a, z;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&z));
  runOnce<Sh>(p, d, a, z);
  std::vector<float> y(p.f.size());
  CHECK(cudaMemcpy(y.data(), d.y, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
  release(d);
  const std::vector<double> ref = reference(p);
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double err = std::fabs(y[i] - ref[i]) / std::max(1.0, std::fabs(ref[i]));
    if (!(err <= 1e-4)) ++bad; // NaN counts as bad
    worst = std::max(worst, std::isfinite(err) ? err : 1e30);
  }
  std::printf("check M=%d G=%d S=%d%s %dx%d: %s (max rel err %.2e, %zu bad)\n", Sh::M, Sh::G, Sh::S,
      Sh::Coordinator ? " +c" : "", H, W,
      bad ? "FAIL" : "ok", worst, bad);
  return bad == 0;
}

template <class Sh>
void timeShape(int H, int W, int reps) {
  const Problem p = makeProblem(H, W, Sh::M, 7);
  const int strips = (W + Sh::S - 1) / Sh::S;
  if (!fits<Sh>(strips)) {
    std::printf("| %dx%d | %d | %d x %d%s | - | not all resident |\n", H, W, Sh::M, Sh::G, Sh::S, Sh::Coordinator ? " +c" : "");
    return;
  }
  Device d = upload(p);
  cudaEvent_t a, z;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&z));
  runOnce<Sh>(p, d, a, z); // warm-up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) ms.push_back(runOnce<Sh>(p, d, a, z));
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  const double steps = double(H) + double(strips) * (Sh::S + Prefetch + Publish) + Sh::M;
  std::printf("| %dx%d | %d | %d x %d%s | %.3f | %.0f ns/step (est. %.0f critical steps) |\n", H, W, Sh::M, Sh::G,
      Sh::S, Sh::Coordinator ? " +c" : "", median, median * 1e6 / steps, steps);
  release(d);
}

template <class... Sh>
bool checkAll(int H, int W) {
  bool ok = true;
  ((ok &= checkShape<Sh>(H, W, 11 + Sh::M)), ...);
  return ok;
}
template <class... Sh>
void timeAll(int H, int W, int reps) {
  (timeShape<Sh>(H, W, reps), ...);
}

#define SHAPES                                                                                              \
  Shape<3, 1, 64>, Shape<3, 1, 128>, Shape<3, 2, 64>, Shape<5, 2, 64>, Shape<5, 1, 64>, Shape<9, 4, 64>,     \
      Shape<9, 2, 64>, Shape<17, 8, 64>, Shape<17, 4, 64>, Shape<17, 8, 32>, Shape<17, 16, 32>,            \
      Shape<31, 8, 64>, Shape<31, 16, 32>, Shape<3, 1, 64, true>, Shape<5, 1, 64, true>, Shape<9, 4, 64, true>,     \
      Shape<17, 8, 64, true>, Shape<17, 16, 32, true>, Shape<31, 16, 32, true>

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode == "check") {
    bool ok = checkAll<SHAPES>(300, 517);
    ok &= checkAll<Shape<3, 1, 64>, Shape<17, 8, 64>, Shape<31, 16, 32>, Shape<17, 16, 32, true>>(1031, 2053);
    ok &= checkAll<Shape<17, 4, 64>, Shape<9, 4, 64, true>>(2048, 2048);
    std::printf("%s\n", ok ? "all ok" : "FAILED");
    return ok ? 0 : 1;
  }
  const int H = argc > 2 ? std::atoi(argv[2]) : 2048, W = argc > 3 ? std::atoi(argv[3]) : 2048;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 7;
  std::printf("| image | M | G x S | ms | per step |\n|---|---|---|---|---|\n");
  timeAll<SHAPES>(H, W, reps);
  return 0;
}
