// A ptxas bug of CUDA 13.0 (sm_90, H100), found by the fuzzer (seed 31000350, 2026-11-28): the maximum over
// a loop of i32 quotients by a negative constant (max over j of pre[mirror(e - j)] / -4, as polyc generates
// for `max(j in 0..r) pre[e - j] / -4` with boundary mirror) is wrong once the loop is long enough to be
// unrolled (r >= 4): 15 of 42 results. Dividing by 4, taking the minimum, `#pragma unroll 1`, or
// `-Xptxas -O0` give the right results; so does the CPU target, and OpenCL. polyc does not work around it.
//
//   nvcc -std=c++17 -O3 -gencode arch=compute_90,code=sm_90 ptxas-max-of-negative-quotients.cu -o t && ./t
//   nvcc -std=c++17 -O3 -Xptxas -O0 -gencode arch=compute_90,code=sm_90 ptxas-max-of-negative-quotients.cu -o t0 && ./t0
//
// Measured 2026-11-28 on the H100, CUDA 13.0: "/-4 (as generated): 15 wrong", "-(/4): 15 wrong", "/-4 clamp
// instead of mirror: 12 wrong", the others 0 wrong; with -Xptxas -O0 all 0 wrong.
#include <cstdio>
#include <cstdint>
#include <type_traits>
template <typename A, typename B> using polyc_common = std::common_type_t<A, B>;
template <typename A, typename B, typename T = polyc_common<A, B>>
__host__ __device__ inline T polyc_clamp(A i, B n) { return T(i) < 0 ? T(0) : (T(i) >= T(n) ? T(n) - 1 : T(i)); }
template <typename A, typename B, typename T = polyc_common<A, B>>
__host__ __device__ inline T polyc_mirror(A i, B n) {
  const T x = i, m = n;
  return polyc_clamp(x < 0 ? -x : (x >= m ? 2 * (m - 1) - x : x), m);
}
__host__ __device__ inline int32_t polyc_div_i32(int32_t a, int32_t b) { return b == 0 ? 0 : int32_t(int64_t(a) / b); }
template <int Variant, typename I>
__global__ void k(const int32_t *pre, int32_t *out, I C) {
  I r = threadIdx.y, e = threadIdx.x;
  if (r > C || e >= C) return;
  int32_t max0 = INT32_MIN;
  if (Variant == 0) {
    for (int64_t j = 0; j < r; ++j) max0 = max(max0, polyc_div_i32(__ldg(&pre[polyc_mirror(e - j, C)]), -4));
  } else if (Variant == 1) {
    for (int64_t j = 0; j < r; ++j) max0 = max(max0, polyc_div_i32(__ldg(&pre[polyc_mirror(e - j, C)]), 4));
  } else if (Variant == 2) {
    for (int64_t j = 0; j < r; ++j) max0 = max(max0, -polyc_div_i32(__ldg(&pre[polyc_mirror(e - j, C)]), 4));
  } else if (Variant == 3) {
    for (int64_t j = 0; j < r; ++j) max0 = max(max0, polyc_div_i32(__ldg(&pre[polyc_clamp(e - j, C)]), -4));
  } else if (Variant == 4) {
    for (int64_t j = 0; j < r; ++j) max0 = max(max0, __ldg(&pre[polyc_mirror(e - j, C)]) * -3);
  } else {
    for (int64_t j = 0; j < r; ++j) max0 = min(max0 == INT32_MIN ? INT32_MAX : max0, polyc_div_i32(__ldg(&pre[polyc_mirror(e - j, C)]), 4));
  }
  out[r * C + e] = max(max0, -100);
}
int main() {
  const int C = 6; int32_t h[6] = {2, 2, 4, 8, -1, 3}, o[42], ref[42];
  auto reference = [&](int v) { for (int r = 0; r <= C; ++r) for (int e = 0; e < C; ++e) { int32_t m = INT32_MIN; for (int64_t j = 0; j < r; ++j) { int32_t a = h[v == 3 ? polyc_clamp(e - j, C) : polyc_mirror(e - j, C)]; int32_t t = v == 0 || v == 3 ? polyc_div_i32(a, -4) : v == 1 ? polyc_div_i32(a, 4) : v == 2 ? -polyc_div_i32(a, 4) : v == 4 ? a * -3 : polyc_div_i32(a, 4); m = v == 5 ? std::min(m == INT32_MIN ? INT32_MAX : m, t) : std::max(m, t); } ref[r * C + e] = std::max(m, -100); } };
  int32_t *dp, *dout; cudaMalloc(&dp, 24); cudaMalloc(&dout, 42 * 4); cudaMemcpy(dp, h, 24, cudaMemcpyHostToDevice);
  auto check = [&](const char *name) { cudaMemcpy(o, dout, 168, cudaMemcpyDeviceToHost); int bad = 0; for (int i = 0; i < 42; ++i) bad += o[i] != ref[i]; printf("%s: %d wrong", name, bad); for (int i = 24; i < 30; ++i) printf(" %d/%d", o[i], ref[i]); printf("\n"); };
  const char *names[] = {"/-4 (as generated)", "/4", "-(/4)", "/-4 clamp instead of mirror", "*-3", "min of /4"};
  reference(0); k<0, int64_t><<<1, dim3(6, 7)>>>(dp, dout, C); check(names[0]);
  reference(1); k<1, int64_t><<<1, dim3(6, 7)>>>(dp, dout, C); check(names[1]);
  reference(2); k<2, int64_t><<<1, dim3(6, 7)>>>(dp, dout, C); check(names[2]);
  reference(3); k<3, int64_t><<<1, dim3(6, 7)>>>(dp, dout, C); check(names[3]);
  reference(4); k<4, int64_t><<<1, dim3(6, 7)>>>(dp, dout, C); check(names[4]);
  reference(5); k<5, int64_t><<<1, dim3(6, 7)>>>(dp, dout, C); check(names[5]);
  return 0;
}
