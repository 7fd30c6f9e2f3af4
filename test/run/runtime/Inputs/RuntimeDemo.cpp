// A hand-written "generated program" for the runtime's lit tests: it exercises runMain's command
// line, .npy validation, param inference, inout reset under --repeat, and exit status 3.
// Program: params H, W, K, N; inputs f32 x[H, W], f64 s (scalar), i32 idx[2*K + 1]; inout f64
// acc[W]; outputs f32 y[H, W] = s * x, i32 total = sum(idx), f64 ramp[N + 1] = s * k, and
// acc[j] += sum_i x[i, j]. N appears in no input, so it must always be given.
#include "polyc/Runtime.h"
#include "polyc/Timer.h"

#include <cmath>
#include <stdexcept>

using namespace polyc::rt;

namespace {

AffineExtent param(unsigned index, int64_t coefficient = 1, int64_t constant = 0) {
  AffineExtent extent;
  extent.constant = constant;
  extent.terms.push_back({index, coefficient});
  return extent;
}

enum : unsigned { ParamH, ParamW, ParamK, ParamN };
enum : size_t { ArrayX, ArrayS, ArrayIdx, ArrayAcc, ArrayY, ArrayTotal, ArrayRamp };

class Demo : public Compute {
public:
  void upload(RunContext &) override {}
  double compute(RunContext &context) override {
    Timer timer;
    int64_t height = context.params[ParamH], width = context.params[ParamW];
    double scale = *context.arrays[ArrayS].data<double>();
    if (!std::isfinite(scale))
      throw std::runtime_error("the scale s is not finite");
    const float *x = context.arrays[ArrayX].data<float>();
    float *y = context.arrays[ArrayY].data<float>();
    double *acc = context.arrays[ArrayAcc].data<double>();
    for (int64_t i = 0; i < height; ++i)
      for (int64_t j = 0; j < width; ++j) {
        y[i * width + j] = float(scale * x[i * width + j]);
        acc[j] += x[i * width + j];
      }
    const int32_t *idx = context.arrays[ArrayIdx].data<int32_t>();
    int32_t total = 0;
    for (int64_t k = 0; k < context.arrays[ArrayIdx].elementCount(); ++k)
      total += idx[k];
    *context.arrays[ArrayTotal].data<int32_t>() = total;
    double *ramp = context.arrays[ArrayRamp].data<double>();
    for (int64_t k = 0; k <= context.params[ParamN]; ++k)
      ramp[k] = scale * double(k);
    return timer.seconds();
  }
  void download(RunContext &) override {}
};

} // namespace

int main(int argc, char **argv) {
  ProgramInfo info;
  info.name = "runtime_demo";
  info.params = {"H", "W", "K", "N"};
  info.arrays = {
      {"x", ArrayRole::Input, DType::F32, {param(ParamH), param(ParamW)}},
      {"s", ArrayRole::Input, DType::F64, {}},
      {"idx", ArrayRole::Input, DType::I32, {param(ParamK, 2, 1)}},
      {"acc", ArrayRole::InOut, DType::F64, {param(ParamW)}},
      {"y", ArrayRole::Output, DType::F32, {param(ParamH), param(ParamW)}},
      {"total", ArrayRole::Output, DType::I32, {}},
      {"ramp", ArrayRole::Output, DType::F64, {param(ParamN, 1, 1)}},
  };
  Demo demo;
  return runMain(argc, argv, info, demo);
}
