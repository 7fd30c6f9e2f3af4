// The CPU target's rings of a streamed build (runtime/src/Stream.cpp): slices of whole arrays in memory,
// and HostRings moving one slice per step into and out of slot step % slots.
#include "polyc/Stream.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace polyc::rt;

namespace {

ArraySpec spec(const char *name, ArrayRole role, int64_t slots) {
  return {name, role, DType::F32, {}, slots};
}

HostArray hostArray(const ArraySpec &array, std::vector<int64_t> shape) {
  HostArray host;
  host.spec = &array;
  host.shape = std::move(shape);
  host.bytes.resize(size_t(host.elementCount()) * sizeof(float));
  return host;
}

TEST(MemorySlices, ReadersForStreamedInputsWritersForStreamedOutputs) {
  ArraySpec x = spec("x", ArrayRole::Input, 3), w = spec("w", ArrayRole::Input, 0),
            y = spec("y", ArrayRole::Output, 2);
  RunContext context;
  context.arrays = {hostArray(x, {4, 2}), hostArray(w, {2}), hostArray(y, {4, 2})};
  StreamSlices slices = memorySlices(context);
  ASSERT_EQ(slices.readers.size(), 3u);
  ASSERT_EQ(slices.writers.size(), 3u);
  EXPECT_TRUE(slices.readers[0]);
  EXPECT_FALSE(slices.readers[1]);
  EXPECT_FALSE(slices.readers[2]);
  EXPECT_FALSE(slices.writers[0]);
  EXPECT_FALSE(slices.writers[1]);
  EXPECT_TRUE(slices.writers[2]);
  EXPECT_EQ(slices.readers[0]->sliceBytes(), 2 * sizeof(float));
  EXPECT_EQ(sliceBytesOf(context.arrays[0]), int64_t(2 * sizeof(float)));
}

TEST(HostRings, StepsSeeTheirSlicesInSlotStepModuloSlots) {
  const int64_t steps = 5, width = 3, slots = 2;
  std::vector<float> input(steps * width), output(steps * width, -1.0f);
  std::iota(input.begin(), input.end(), 0.0f); // slice t holds 3t, 3t + 1, 3t + 2
  HostRings rings;
  const float *in = rings.input<float>(
      memorySliceReader(DType::F32, {steps, width}, reinterpret_cast<const unsigned char *>(input.data())),
      slots);
  float *out = rings.output<float>(
      memorySliceWriter(DType::F32, {steps, width}, reinterpret_cast<unsigned char *>(output.data())), slots,
      width);
  for (int64_t t = 0; t < steps; ++t) {
    rings.beforeStep(t);
    for (int64_t i = 0; i < width; ++i) {
      EXPECT_EQ(in[(t % slots) * width + i], float(3 * t + i)) << "step " << t;
      if (t > 0) { // the slice before is still in its slot
        EXPECT_EQ(in[((t - 1) % slots) * width + i], float(3 * (t - 1) + i)) << "step " << t;
      }
      out[(t % slots) * width + i] = 10.0f * float(t) + float(i);
    }
    rings.afterStep(t);
  }
  rings.finish();
  for (int64_t t = 0; t < steps; ++t)
    for (int64_t i = 0; i < width; ++i)
      EXPECT_EQ(output[t * width + i], 10.0f * float(t) + float(i));
}

TEST(HostRings, AnOutputWithoutWriterIsComputedNotWritten) {
  HostRings rings;
  float *out = rings.output<float>(nullptr, 2, 4);
  ASSERT_NE(out, nullptr);
  rings.beforeStep(0);
  out[7] = 1.0f; // the last element of slot 1
  EXPECT_NO_THROW(rings.afterStep(0));
  EXPECT_NO_THROW(rings.finish());
}

TEST(HostRings, ReadingPastTheLastSliceIsASliceError) {
  std::vector<float> input(2, 1.0f);
  HostRings rings;
  rings.input<float>(
      memorySliceReader(DType::F32, {2, 1}, reinterpret_cast<const unsigned char *>(input.data())), 2);
  rings.beforeStep(0);
  rings.beforeStep(1);
  EXPECT_THROW(rings.beforeStep(2), SliceError);
}

TEST(HostRings, FinishingBeforeTheLastSliceIsASliceError) {
  std::vector<float> output(3);
  HostRings rings;
  rings.output<float>(memorySliceWriter(DType::F32, {3, 1}, reinterpret_cast<unsigned char *>(output.data())),
                      2, 1);
  rings.beforeStep(0);
  rings.afterStep(0);
  EXPECT_THROW(rings.finish(), SliceError);
}

} // namespace
