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
// The decoupled step (session 16, `Decoupled` and decoupledWindow below) moves the window's work to warps of
// its own, which run one step behind the chain and meet it at named barriers: the chain then waits only
// for its two nearest terms.
//
// Build: nvcc -std=c++20 -O3 -arch=sm_90 -o diagonal_chain diagonal_chain.cu
// Run:   ./diagonal_chain check            (against a float64 sequential reference)
//        ./diagonal_chain time H W [reps]  (median ms for each M and shape; time-old, time-dec,
//                                           time-static and time-ahead time one family)
//        ./diagonal_chain small            (a few small checks, for compute-sanitizer)
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

template <class Sh>
__global__ void diagonalChain(const float *__restrict__ f, const float *__restrict__ b, float *y, int H, int W, int *progress);
template <class Sh>
__global__ void decoupledWindow(const float *__restrict__ f, const float *__restrict__ b, float *y, int H, int W, int *progress);

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
  static_assert(Halo <= S, "the halo lies in the left strip");
  static_assert(Threads <= 1024 && Threads >= 32, "block size");
  static constexpr const char *Name = Coordinator ? " +c" : "";
  static constexpr bool Dynamic = false; // one block a strip, all resident
  static constexpr auto kernel = diagonalChain<Shape>;
};

// The decoupled step (`dec` in the tables). Two groups of warps in a block, which meet at named barriers:
// - the chain: one thread a column (S) and one coordinator warp (halo loads, publication). At step u a
//   column thread adds its two nearest terms, (1, 0) and (0, 1), both in slot u - 1, to its f and to the
//   window sum `far[u]`, and stores the cell into slot u.
// - the window: G lanes a column, as in diagonalChain, but without the two nearest terms. At iteration v
//   they take slot v's cells into their accumulators and leave in `far` the window sum of the points at
//   step v + 2, whose other terms all lie in slots <= v.
// So the window group works one step behind the chain and off its path: its iteration v runs beside the
// chain's step v + 1. The chain waits for it only when the window's work is longer than a chain step.
template <int M_, int G_, int S_, int Prefetch_ = Prefetch, bool Dynamic_ = true>
struct Decoupled {
  static constexpr int M = M_, G = G_, S = S_;
  static constexpr int Ahead = Prefetch_; // steps between a halo cell's load and its store into the ring
  static constexpr int B = (M + G - 1) / G;
  static constexpr int K = M + B - 1;
  static constexpr int Halo = M - 1;
  static constexpr int RingCols = S + Halo;
  static constexpr int ChainThreads = (S + 31) / 32 * 32 + 32; // columns, then the coordinator warp
  static constexpr int Threads = G * S; // window threads
  static constexpr int BlockThreads = ChainThreads + Threads;
  static_assert(M >= 2 && Halo <= 32, "the halo threads are one warp");
  static_assert(Halo <= S, "the halo lies in the left strip");
  static_assert(G * S % 32 == 0 && 32 % G == 0, "whole warps; a column's lanes in one warp");
  static_assert(G == 1 || B >= 2, "a lane's partial sum reaches lane 0 in time");
  static_assert(BlockThreads <= 1024, "block size");
  static constexpr bool Coordinator = true;
  // Strips taken in order by any number of blocks, or (static) one block a strip, all resident.
  static constexpr bool Dynamic = Dynamic_;
  static constexpr const char *Name
      = !Dynamic ? " dec static" : Ahead == Prefetch ? " dec" : Ahead == 6 ? " dec p6" : " dec p10";
  static constexpr auto kernel = decoupledWindow<Decoupled>;
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

// Named barriers (ids 1-4; 0 is __syncthreads). bar.arrive does not wait; both order the shared-memory
// accesses before them for the threads that wait at the barrier.
__device__ __forceinline__ void barSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void barArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Slot u is in the ring (the chain arrives, the window waits). Alternate ids by parity, so that a group
// that arrives early for step u + 1 cannot count toward step u.
__device__ __forceinline__ int slotWritten(int u) { return 1 + (u & 1); }
// The window sums of step u + 1 are in `far`, and the chain's step u is done (the window arrives, the
// chain waits).
__device__ __forceinline__ int stepDone(int u) { return 3 + (u & 1); }

// The window group's part of one strip: iteration v takes slot v into the accumulators and leaves the
// window sums of step v + 2 in `far`.
template <class Sh>
__device__ void windowStrip(const float (&coef)[Sh::B][Sh::M], const float (*ring)[Sh::RingCols], float (*far)[Sh::S],
    int first, int last) {
  constexpr int M = Sh::M, G = Sh::G, B = Sh::B, K = Sh::K, Halo = Sh::Halo, All = Sh::BlockThreads;
  const int t = threadIdx.x - Sh::ChainThreads;
  const int g = t / G, j = t % G;
  float acc[K]; // acc[p]: this lane's part of column g's point at step v + jB + p
#pragma unroll
  for (int p = 0; p < K; ++p) acc[p] = 0.0f;
  float received = 0.0f;
  barArrive(stepDone(first), All); // far[first + 1] is zero
  for (int v = first; v <= last; ++v) {
    barSync(slotWritten(v), All);
    acc[B - 1] += received;
    const float *newest = ring[v & 1] + Halo + g;
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
    float down = 0.0f;
    if constexpr (G > 1) down = __shfl_down_sync(0xffffffffu, acc[0], 1, G);
    // Lane 0's acc[2] is the point at step v + 2. With B = 2, lane 1's part of it is complete only now.
    if (j == 0) far[v & 1][g] = acc[2] + (B == 2 ? down : 0.0f);
    received = (j == G - 1) ? 0.0f : down;
#pragma unroll
    for (int p = 0; p + 1 < K; ++p) acc[p] = acc[p + 1];
    acc[K - 1] = 0.0f;
    if (v < last) barArrive(stepDone(v + 1), All);
  }
}

// The chain group's part of one strip.
template <class Sh>
__device__ void chainStrip(const float *__restrict__ f, float b10, float b01, float *y, int H, int W,
    int *progress, int strip, float (*ring)[Sh::RingCols], const float (*far)[Sh::S], int first, int last) {
  constexpr int M = Sh::M, S = Sh::S, Halo = Sh::Halo, All = Sh::BlockThreads;
  const int C0 = strip * S;
  const bool column = threadIdx.x < S;
  const int g = threadIdx.x;
  const int helper = int(threadIdx.x) - (Sh::ChainThreads - 32); // the coordinator warp's lane
  const bool publisher = helper == 0;
  const bool haloThread = helper >= 0 && helper < Halo;
  const int h = helper + 1;
  const int *left = strip > 0 ? progress + strip - 1 : nullptr;
  int leftDone = -M;
  float haloPipe[Sh::Ahead];
  auto loadHalo = [&](int slot) -> float {
    const int row = slot + h, col = C0 - h;
    if (strip == 0 || row < 0 || row >= H) return 0.0f;
    const int needed = min(slot + S, last);
    while (leftDone < needed) leftDone = loadAcquire(left);
    return __ldcg(y + size_t(row) * W + col);
  };
  if (haloThread) {
#pragma unroll
    for (int q = 0; q < Sh::Ahead; ++q) haloPipe[q] = loadHalo(first + q);
  }
  float fPipe[2] = {0.0f, 0.0f};
  auto loadF = [&](int step) -> float {
    const int row = step - g, col = C0 + g;
    return (column && row >= 0 && row < H && col < W) ? __ldg(f + size_t(row) * W + col) : 0.0f;
  };
  fPipe[0] = loadF(first);
  fPipe[1] = loadF(first + 1);

  for (int u = first; u <= last; ++u) {
    float *own = ring[u & 1];
    if (column) {
      const float *newest = ring[(u - 1) & 1] + Halo + g;
      const int row = u - g, col = C0 + g;
      const bool inside = row >= 0 && row < H && col < W;
      const float value = inside ? fPipe[0] + far[u & 1][g] + b10 * newest[0] + b01 * newest[-1] : 0.0f;
      own[Halo + g] = value;
      if (inside) y[size_t(row) * W + col] = value;
      fPipe[0] = fPipe[1];
      fPipe[1] = loadF(u + 2);
    }
    if (haloThread) {
      own[Halo - h] = haloPipe[0];
#pragma unroll
      for (int q = 0; q + 1 < Sh::Ahead; ++q) haloPipe[q] = haloPipe[q + 1];
      haloPipe[Sh::Ahead - 1] = loadHalo(u + Sh::Ahead);
    }
    barArrive(slotWritten(u), All);
    barSync(stepDone(u), All);
    if (publisher && ((u - first) % Publish == Publish - 1 || u == last)) storeRelease(progress + strip, u);
  }
}

// progress[Ticket]: the next strip to take. Blocks take strips in order and keep each to its end, so a
// block waits only on a strip taken earlier by a running block: no deadlock, whatever the grid, and no
// strip is ever entered mid-way.
constexpr int Ticket = 65535;

template <class Sh>
__global__ void __launch_bounds__(Sh::BlockThreads) decoupledWindow(const float *__restrict__ f,
    const float *__restrict__ b, float *y, int H, int W, int *progress) {
  constexpr int M = Sh::M, G = Sh::G, S = Sh::S, B = Sh::B, RC = Sh::RingCols;
  __shared__ float ring[2][RC];
  __shared__ float far[2][S]; // far[u & 1][g]: the window sum of column g's point at step u
  __shared__ int taken;
  const int strips = (W + S - 1) / S;
  const int first = -(M - 1), last = H + S - 2;
  const bool window = threadIdx.x >= Sh::ChainThreads;
  float coef[B][M]; // the window lanes' coefficients, without the two nearest terms
  if (window) {
    const int j = (threadIdx.x - Sh::ChainThreads) % G;
#pragma unroll
    for (int kb = 0; kb < B; ++kb)
#pragma unroll
      for (int k1 = 0; k1 < M; ++k1) {
        const int k2 = j * B + kb;
        coef[kb][k1] = (k2 < M && k1 + k2 >= 2) ? b[k1 * M + k2] : 0.0f;
      }
  }
  const float b10 = b[M], b01 = b[1];
  for (;;) {
    if (threadIdx.x == 0) taken = Sh::Dynamic ? atomicAdd(progress + Ticket, 1) : blockIdx.x;
    for (int i = threadIdx.x; i < 2 * RC; i += blockDim.x) (&ring[0][0])[i] = 0.0f;
    for (int i = threadIdx.x; i < 2 * S; i += blockDim.x) (&far[0][0])[i] = 0.0f;
    __syncthreads();
    const int strip = taken;
    if (strip >= strips) return;
    if (window)
      windowStrip<Sh>(coef, ring, far, first, last);
    else
      chainStrip<Sh>(f, b10, b01, y, H, W, progress, strip, ring, far, first, last);
    if (!Sh::Dynamic) return;
    __syncthreads(); // every thread has read `taken` and is done with the ring
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
int residentBlocks() {
  int perSm = 0, sms = 0, dev = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, Sh::kernel, Sh::BlockThreads, 0));
  return perSm * sms;
}

// Whether the kernel can run `strips`: the static allocation cannot deadlock only if every strip is resident.
template <class Sh>
bool fits(int strips) {
  return Sh::Dynamic || strips <= residentBlocks<Sh>();
}

// `grid` blocks if given, else one a strip (static) or as many as are resident, at most one a strip.
template <class Sh>
int gridFor(int strips, int grid) {
  if (grid > 0) return grid;
  return Sh::Dynamic ? std::min(strips, residentBlocks<Sh>()) : strips;
}

template <class Sh>
float runOnce(const Problem &p, Device &d, cudaEvent_t start, cudaEvent_t stop, int grid = 0) {
  const int strips = (p.W + Sh::S - 1) / Sh::S;
  std::vector<int> initial(strips, -p.M);
  CHECK(cudaMemcpy(d.progress, initial.data(), strips * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d.progress + Ticket, 0, sizeof(int)));
  CHECK(cudaEventRecord(start));
  Sh::kernel<<<gridFor<Sh>(strips, grid), Sh::BlockThreads>>>(d.f, d.b, d.y, p.H, p.W, d.progress);
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
bool checkShape(int H, int W, unsigned seed, int grid = 0) {
  const Problem p = makeProblem(H, W, Sh::M, seed);
  if (!fits<Sh>((W + Sh::S - 1) / Sh::S)) {
    std::printf("check M=%d G=%d S=%d%s %dx%d: skipped (strips not all resident)\n", Sh::M, Sh::G, Sh::S, Sh::Name, H, W);
    return true;
  }
  Device d = upload(p);
  cudaEvent_t a, z;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&z));
  runOnce<Sh>(p, d, a, z, grid);
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
  std::printf("check M=%d G=%d S=%d%s %dx%d grid %d: %s (max rel err %.2e, %zu bad)\n", Sh::M, Sh::G, Sh::S,
      Sh::Name, H, W, grid,
      bad ? "FAIL" : "ok", worst, bad);
  return bad == 0;
}

template <class Sh>
void timeShape(int H, int W, int reps) {
  const Problem p = makeProblem(H, W, Sh::M, 7);
  const int strips = (W + Sh::S - 1) / Sh::S;
  if (!fits<Sh>(strips)) {
    std::printf("| %dx%d | %d | %d x %d%s | - | not all resident |\n", H, W, Sh::M, Sh::G, Sh::S, Sh::Name);
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
      Sh::S, Sh::Name, median, median * 1e6 / steps, steps);
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

#define DECOUPLED                                                                                           \
  Decoupled<3, 1, 64>, Decoupled<3, 1, 32>, Decoupled<5, 1, 64>, Decoupled<9, 2, 64>, Decoupled<9, 4, 64>,  \
      Decoupled<17, 4, 64>, Decoupled<17, 8, 64>, Decoupled<17, 8, 32>, Decoupled<17, 16, 32>,              \
      Decoupled<17, 8, 16>, Decoupled<31, 16, 32>

#define AHEAD                                                                                               \
  Decoupled<3, 1, 64, 6>, Decoupled<3, 1, 64, 10>, Decoupled<17, 4, 64, 6>, Decoupled<17, 4, 64, 10>,       \
      Decoupled<17, 8, 32, 6>, Decoupled<31, 16, 32, 6>

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
    ok &= checkAll<DECOUPLED>(300, 517);
    ok &= checkAll<DECOUPLED>(1031, 2053);
    ok &= checkAll<AHEAD>(1031, 2053);
    ok &= checkAll<Decoupled<3, 1, 64, Prefetch, false>, Decoupled<17, 4, 64, Prefetch, false>>(1031, 2053);
    for (int grid : {1, 3, 1000}) { // strips taken in turn, fewer or more blocks than strips
      ok &= checkShape<Decoupled<3, 1, 64>>(1031, 2053, 5, grid);
      ok &= checkShape<Decoupled<17, 8, 32>>(1031, 2053, 6, grid);
      ok &= checkShape<Decoupled<31, 16, 32>>(300, 517, 7, grid);
    }
    ok &= checkAll<Decoupled<3, 1, 64>, Decoupled<17, 8, 64>, Decoupled<17, 16, 32>>(2048, 2048);
    std::printf("%s\n", ok ? "all ok" : "FAILED");
    return ok ? 0 : 1;
  }
  if (mode == "small") { // for compute-sanitizer
    const bool ok = checkAll<Decoupled<3, 1, 32>, Decoupled<17, 8, 32>, Decoupled<17, 16, 32>, Decoupled<9, 2, 64>>(70, 100);
    return ok ? 0 : 1;
  }
  const int H = argc > 2 ? std::atoi(argv[2]) : 2048, W = argc > 3 ? std::atoi(argv[3]) : 2048;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 7;
  std::printf("| image | M | G x S | ms | per step |\n|---|---|---|---|---|\n");
  if (mode == "time" || mode == "time-old") timeAll<SHAPES>(H, W, reps);
  if (mode == "time" || mode == "time-dec") timeAll<DECOUPLED>(H, W, reps);
  if (mode == "time-static")
    timeAll<Decoupled<3, 1, 64>, Decoupled<3, 1, 64, Prefetch, false>, Decoupled<17, 4, 64>,
        Decoupled<17, 4, 64, Prefetch, false>, Decoupled<17, 8, 64>, Decoupled<17, 8, 64, Prefetch, false>,
        Decoupled<17, 8, 32>, Decoupled<17, 8, 32, Prefetch, false>>(H, W, reps);
  if (mode == "time-ahead") timeAll<Decoupled<3, 1, 64>, Decoupled<17, 4, 64>, AHEAD>(H, W, reps);
  return 0;
}
