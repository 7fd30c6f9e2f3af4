// Variants of the 2D IIR's FIR kernel (band0Rows, S1RowsInterior) timed alone (session 19; see README.md):
//   y_in[i, j] = sum(r1, r2 in 0..M) a[r1, r2] * x[i - r1, j - r2]   (zero outside x)
// V0: the generated code before session 19 (SlidingSum<float, 16>, a run's length known at run time).
// V1: as V0, cells by a pointer walking up the column.
// V2: V1 + the coefficients staged in shared memory, transposed (a step's coefficients contiguous), read
//     4 steps at a time as float4.
// V3: V2 with two columns a thread sharing one ring of cells.
// V4: V0 with the run's length a template parameter (what landed), R rows a thread.
// V5: V2 with the run's length a template parameter.
// Every variant is checked against a float64 reference kernel (relative L2 error; WRONG past 1e-5).
//   nvcc -std=c++17 -O3 -arch=sm_90 -I runtime/include -o fir_rows docs/prototypes/fir-rows/fir_rows.cu
//   ./fir_rows [N [M]]     (N x N image, default 8192; M default 3, 9, 17, 31)
//   FIR_PROFILE=1 ncu ... ./fir_rows 8192 17    (one launch of each variant, for ncu)
#include <polyc/cuda/SlidingSum.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s (line %d)\n", #x, \
  cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

struct P {
  int H, W, M;
  const float *x, *a;
  float *y;
};

constexpr int R = 16;

__device__ float edgePoint(const P &p, int i, int j) {
  float s = 0;
  for (int r2 = 0; r2 < p.M; ++r2)
    for (int r1 = 0; r1 < p.M; ++r1)
      s += p.a[r1 * p.M + r2] * (i - r1 >= 0 && j - r2 >= 0 ? p.x[(i - r1) * p.W + (j - r2)] : 0.0f);
  return s;
}

__device__ bool interior(const P &p, int first, int j) { return p.H >= R + first && first + 1 >= p.M && j + 1 >= p.M; }

__device__ void edgeRows(const P &p, int first, int j) {
  for (int o = 0; o < R && first + o < p.H; ++o)
    p.y[(first + o) * p.W + j] = edgePoint(p, first + o, j);
}

// ---- V0: the generated code.
__device__ void v0(const P &p, int first, int j) {
  const int W = p.W, M = p.M;
  const float *x = p.x, *a = p.a;
  polyc::rt::cuda::SlidingSum<float, R> sum0;
  for (int r2 = 0; r2 < M; ++r2) {
    sum0.start([&](int q) { const int i = first + q; return __ldg(&x[i * W + (j - r2)]); });
    sum0.template slide<0>(M, [&](int s, float &c, float &cell) {
      const int i = first;
      c = __ldg(&a[s * M + r2]) * 1.0f;
      cell = __ldg(&x[(i - s) * W + (j - r2)]);
    });
  }
#pragma unroll
  for (int o = 0; o < R; ++o)
    p.y[(first + o) * W + j] = sum0.sum[o];
}

// ---- V1: the same, cells through a pointer.
__device__ void v1(const P &p, int first, int j) {
  const int W = p.W, M = p.M;
  const float *a = p.a;
  polyc::rt::cuda::SlidingSum<float, R> sum0;
  for (int r2 = 0; r2 < M; ++r2) {
    const float *column = p.x + (int64_t(first) * W + (j - r2));
    sum0.start([&](int q) { return __ldg(column + int64_t(q) * W); });
    sum0.template slide<0>(M, [&](int s, float &c, float &cell) {
      c = __ldg(&a[s * M + r2]);
      cell = __ldg(column - int64_t(s) * W);
    });
  }
#pragma unroll
  for (int o = 0; o < R; ++o)
    p.y[(first + o) * W + j] = sum0.sum[o];
}

// ---- shared coefficient table: row r of `rows` (each Mp = M rounded up to 4 floats, zero padded),
// row 0 and row M + 1 zero when `padded` (for V3), else row r2 = coefficient column r2.
__device__ float *stageTable(const P &p, bool padded, int &Mp) {
  extern __shared__ float4 shared4[];
  float *table = reinterpret_cast<float *>(shared4);
  Mp = (p.M + 3) / 4 * 4;
  const int rows = p.M + (padded ? 2 : 0);
  for (int k = threadIdx.x; k < rows * Mp; k += blockDim.x) {
    const int row = k / Mp, s = k % Mp;
    const int r2 = padded ? row - 1 : row;
    table[k] = (r2 >= 0 && r2 < p.M && s < p.M) ? p.a[s * p.M + r2] : 0.0f;
  }
  __syncthreads();
  return table;
}

template <int N> struct Ring {
  float ring[R];
  float sum[N][R];
  __device__ Ring() {
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int o = 0; o < R; ++o)
        sum[n][o] = 0;
  }
  __device__ __forceinline__ void step(int slot, const float (&c)[N], float cell) {
    ring[(R - slot) % R] = cell;
#pragma unroll
    for (int n = 0; n < N; ++n)
#pragma unroll
      for (int o = 0; o < R; ++o)
        sum[n][o] += c[n] * ring[(o - slot + R) % R];
  }
  // A run of M steps down `column` (cell of step s at column - s * W), the coefficients of output n at
  // coefficient[n][s] (16-byte aligned, zero padded to a multiple of 4).
  __device__ void run(int M, int64_t W, const float *column, const float *const (&coefficient)[N]) {
#pragma unroll
    for (int q = 1; q < R; ++q)
      ring[q] = __ldg(column + q * W);
    int base = 0;
    for (; base + R <= M; base += R) {
#pragma unroll
      for (int u = 0; u < R; u += 4) {
        float4 c4[N];
#pragma unroll
        for (int n = 0; n < N; ++n)
          c4[n] = *reinterpret_cast<const float4 *>(coefficient[n] + base + u);
        const float *cell = column - (base + u) * W;
        float c[N];
#pragma unroll
        for (int n = 0; n < N; ++n) c[n] = c4[n].x;
        step(u, c, __ldg(cell));
#pragma unroll
        for (int n = 0; n < N; ++n) c[n] = c4[n].y;
        step(u + 1, c, __ldg(cell - W));
#pragma unroll
        for (int n = 0; n < N; ++n) c[n] = c4[n].z;
        step(u + 2, c, __ldg(cell - 2 * W));
#pragma unroll
        for (int n = 0; n < N; ++n) c[n] = c4[n].w;
        step(u + 3, c, __ldg(cell - 3 * W));
      }
    }
#pragma unroll
    for (int u = 0; u < R - 1; ++u)
      if (base + u < M) {
        float c[N];
#pragma unroll
        for (int n = 0; n < N; ++n) c[n] = coefficient[n][base + u];
        step(u, c, __ldg(column - (base + u) * W));
      }
  }
};

__device__ void v2(const P &p, const float *table, int Mp, int first, int j) {
  Ring<1> r;
  for (int r2 = 0; r2 < p.M; ++r2) {
    const float *const coefficient[1] = {table + r2 * Mp};
    r.run(p.M, p.W, p.x + (int64_t(first) * p.W + (j - r2)), coefficient);
  }
#pragma unroll
  for (int o = 0; o < R; ++o)
    p.y[(first + o) * p.W + j] = r.sum[0][o];
}

// Columns j and j + 1: cell column j + 1 - cc feeds output j + 1 with r2 = cc and output j with r2 = cc - 1.
__device__ void v3(const P &p, const float *table, int Mp, int first, int j) {
  Ring<2> r;
  for (int cc = 0; cc <= p.M; ++cc) {
    const float *const coefficient[2] = {table + cc * Mp, table + (cc + 1) * Mp};
    r.run(p.M, p.W, p.x + (int64_t(first) * p.W + (j + 1 - cc)), coefficient);
  }
#pragma unroll
  for (int o = 0; o < R; ++o) {
    p.y[(first + o) * p.W + j] = r.sum[0][o];
    p.y[(first + o) * p.W + j + 1] = r.sum[1][o];
  }
}

// ---- V4: V0 with the run length a template parameter (every step unrolled, no guards).
template <int Count, int R = ::R> struct FixedSlidingSum {
  float sum[R];
  float ring[R];
  __device__ FixedSlidingSum() {
#pragma unroll
    for (int o = 0; o < R; ++o) sum[o] = 0;
  }
  template <typename Cell> __device__ void start(Cell cell) {
#pragma unroll
    for (int q = 1; q < R; ++q) ring[q] = cell(q);
  }
  template <typename Term> __device__ void slide(Term term) {
#pragma unroll
    for (int s = 0; s < Count; ++s) {
      float c, cell;
      term(s, c, cell);
      const int slot = s % R;
      ring[(R - slot) % R] = cell;
#pragma unroll
      for (int o = 0; o < R; ++o) sum[o] += c * ring[(o - slot + R) % R];
    }
  }
};

template <int MC, int R = ::R> __device__ void v4(const P &p, int first, int j) {
  const int W = p.W;
  constexpr int M = MC;
  const float *x = p.x, *a = p.a;
  FixedSlidingSum<MC, R> sum0;
  for (int r2 = 0; r2 < M; ++r2) {
    sum0.start([&](int q) { const int i = first + q; return __ldg(&x[i * W + (j - r2)]); });
    sum0.slide([&](int s, float &c, float &cell) {
      const int i = first;
      c = __ldg(&a[s * M + r2]) * 1.0f;
      cell = __ldg(&x[(i - s) * W + (j - r2)]);
    });
  }
#pragma unroll
  for (int o = 0; o < R; ++o) p.y[(first + o) * W + j] = sum0.sum[o];
}

// ---- V5: V2 with the run length a template parameter.
template <int MC> __device__ void v5(const P &p, const float *table, int Mp, int first, int j) {
  FixedSlidingSum<MC> sum0;
  const int64_t W = p.W;
  for (int r2 = 0; r2 < MC; ++r2) {
    const float *column = p.x + (int64_t(first) * W + (j - r2));
    const float *coefficient = table + r2 * Mp;
    sum0.start([&](int q) { return __ldg(column + q * W); });
    float4 c4;
    sum0.slide([&](int s, float &c, float &cell) {
      if (s % 4 == 0) c4 = *reinterpret_cast<const float4 *>(coefficient + s);
      c = s % 4 == 0 ? c4.x : s % 4 == 1 ? c4.y : s % 4 == 2 ? c4.z : c4.w;
      cell = __ldg(column - s * W);
    });
  }
#pragma unroll
  for (int o = 0; o < R; ++o) p.y[(first + o) * p.W + j] = sum0.sum[o];
}

template <int V, int MinBlocks, int MC = 0, int RR = R> __global__ void __launch_bounds__(256, MinBlocks) fir(P p) {
  const int first = blockIdx.y * RR;
  constexpr int Cols = V == 3 ? 2 : 1;
  const int j = (blockIdx.x * blockDim.x + threadIdx.x) * Cols;
  const float *table = nullptr;
  int Mp = 0;
  if (V >= 2 && V != 4)
    table = stageTable(p, V == 3, Mp);
  if (j >= p.W)
    return;
  const bool in = p.H >= RR + first && first + 1 >= p.M && j + 1 >= p.M && j + Cols - 1 < p.W;
  if (!in) {
    for (int c = 0; c < Cols && j + c < p.W; ++c)
      for (int o = 0; o < RR && first + o < p.H; ++o)
        p.y[(first + o) * p.W + j + c] = edgePoint(p, first + o, j + c);
    return;
  }
  if (V == 0) v0(p, first, j);
  if (V == 1) v1(p, first, j);
  if (V == 2) v2(p, table, Mp, first, j);
  if (V == 3) v3(p, table, Mp, first, j);
  if constexpr (V == 4) v4<MC, RR>(p, first, j);
  if constexpr (V == 5) v5<MC>(p, table, Mp, first, j);
}

__global__ void reference(P p, double *out) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= p.W) return;
  double s = 0;
  for (int r1 = 0; r1 < p.M; ++r1)
    for (int r2 = 0; r2 < p.M; ++r2)
      if (i - r1 >= 0 && j - r2 >= 0) s += double(p.a[r1 * p.M + r2]) * p.x[(i - r1) * p.W + (j - r2)];
  out[int64_t(i) * p.W + j] = s;
}

template <int V, int MinBlocks, int MC = 0, int RR = R> float timeVariant(P p, const std::vector<double> &ref, float *err) {
  constexpr int Cols = V == 3 ? 2 : 1;
  const int threads = (p.W + Cols - 1) / Cols;
  dim3 grid((threads + 255) / 256, (p.H + RR - 1) / RR);
  const int Mp = (p.M + 3) / 4 * 4;
  const size_t shared = V >= 2 && V != 4 ? size_t(p.M + 2) * Mp * 4 : 0;
  CK(cudaMemset(p.y, 0xff, size_t(p.H) * p.W * 4));
  fir<V, MinBlocks, MC, RR><<<grid, 256, shared>>>(p);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> y(size_t(p.H) * p.W);
  CK(cudaMemcpy(y.data(), p.y, y.size() * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t k = 0; k < y.size(); ++k) {
    const double d = y[k] - ref[k];
    num += std::isnan(y[k]) ? 1e30 : d * d;
    den += ref[k] * ref[k];
  }
  *err = float(std::sqrt(num / den));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  const int reps = getenv("FIR_PROFILE") ? 0 : 9;
  for (int rep = 0; rep < reps; ++rep) {
    CK(cudaEventRecord(e0));
    for (int k = 0; k < 5; ++k)
      fir<V, MinBlocks, MC, RR><<<grid, 256, shared>>>(p);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t / 5);
  }
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main(int argc, char **argv) {
  const int N = argc > 1 ? atoi(argv[1]) : 8192;
  std::vector<int> windows = {3, 9, 17, 31};
  if (argc > 2) windows = {atoi(argv[2])};
  printf("| M | V0 | V2 (256,4) | V3 | V4 | V4 (256,4) | V5 (256,4) | V4 R8 (256,6) | V4 R32 (256,3) | FMA floor |\n"
         "|---|---|---|---|---|---|---|---|---|---|\n");
  for (int M : windows) {
    std::mt19937 gen(M);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> x(size_t(N) * N), a(M * M);
    for (auto &v : x) v = u(gen);
    for (auto &v : a) v = u(gen);
    P p{N, N, M, nullptr, nullptr, nullptr};
    float *dx, *da, *dy;
    double *dref;
    CK(cudaMalloc(&dx, x.size() * 4));
    CK(cudaMalloc(&da, a.size() * 4));
    CK(cudaMalloc(&dy, x.size() * 4));
    CK(cudaMalloc(&dref, x.size() * 8));
    CK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    p.x = dx; p.a = da; p.y = dy;
    reference<<<dim3((N + 255) / 256, N), 256>>>(p, dref);
    CK(cudaGetLastError());
    std::vector<double> ref(x.size());
    CK(cudaMemcpy(ref.data(), dref, ref.size() * 8, cudaMemcpyDeviceToHost));
    constexpr int K = 8;
    float e[K];
    float t[K] = {timeVariant<0, 1>(p, ref, &e[0]), timeVariant<2, 4>(p, ref, &e[1]), timeVariant<3, 1>(p, ref, &e[2])};
    auto fixed = [&](auto mc) {
      constexpr int MC = decltype(mc)::value;
      t[3] = timeVariant<4, 1, MC>(p, ref, &e[3]);
      t[4] = timeVariant<4, 4, MC>(p, ref, &e[4]);
      t[5] = timeVariant<5, 4, MC>(p, ref, &e[5]);
      t[6] = timeVariant<4, 6, MC, 8>(p, ref, &e[6]);
      t[7] = timeVariant<4, 3, MC, 32>(p, ref, &e[7]);
    };
    switch (M) {
    case 3: fixed(std::integral_constant<int, 3>()); break;
    case 9: fixed(std::integral_constant<int, 9>()); break;
    case 17: fixed(std::integral_constant<int, 17>()); break;
    case 31: fixed(std::integral_constant<int, 31>()); break;
    default: printf("M must be 3, 9, 17 or 31\n"); return 1;
    }
    // H100 SXM: 132 SMs x 128 FP32 lanes x 1.98 GHz boost (nominal; measured clocks vary).
    const double floor = double(N) * N * M * M / (132.0 * 128 * 1.98e9) * 1e3;
    printf("| %d |", M);
    for (int k = 0; k < K; ++k)
      printf(" %.3f%s |", t[k], e[k] < 1e-5 ? "" : " WRONG");
    printf(" %.3f |\n", floor);
    fprintf(stderr, "M=%d errors:", M);
    for (int k = 0; k < K; ++k) fprintf(stderr, " %.2e", e[k]);
    fprintf(stderr, "\n");
    CK(cudaFree(dx)); CK(cudaFree(da)); CK(cudaFree(dy)); CK(cudaFree(dref));
  }
}
