// libFuzzer target for the runtime's .npy reader (runtime/src/Npy.cpp): any bytes must give either
// an array or a message naming the file, never a crash; an accepted array must be self-consistent
// and survive a write/read round trip unchanged.
#include "polyc/Npy.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace polyc::rt;

static void fail(const char *what) {
  std::fprintf(stderr, "NpyFuzzer: %s\n", what);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<NpyArray> parsed = parseNpy(data, size, "fuzz.npy");
  if (!parsed) {
    if (parsed.message().rfind("fuzz.npy: ", 0) != 0 || parsed.message().size() <= 10)
      fail("a failure message does not name the file");
    return 0;
  }
  const NpyArray &array = parsed.value();
  if (array.shape.size() > kNpyMaxRank)
    fail("accepted a rank above the limit");
  uint64_t count = 1;
  for (int64_t extent : array.shape) {
    if (extent < 0)
      fail("accepted a negative extent");
    count *= uint64_t(extent); // cannot overflow: the data is in memory
  }
  if (array.bytes.size() != count * dtypeSize(array.dtype))
    fail("data size does not match the shape");
  Result<std::vector<unsigned char>> encoded =
      encodeNpy(array.dtype, array.shape, array.bytes.data(), array.bytes.size());
  if (!encoded)
    fail("cannot encode an accepted array");
  Result<NpyArray> again = parseNpy(encoded.value().data(), encoded.value().size(), "again.npy");
  if (!again)
    fail("cannot read back what was written");
  if (again.value().dtype != array.dtype || again.value().shape != array.shape ||
      again.value().bytes != array.bytes)
    fail("the round trip changed the array");
  return 0;
}
