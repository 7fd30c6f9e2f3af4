// Unit tests of the runtime's zlib inflate and PNG decoder (polyc/Png.h) on streams written by Python's
// zlib: a fixed-code block, a stored block, and what a damaged stream must be reported as.
#include "polyc/Png.h"

#include <gtest/gtest.h>

using namespace polyc::rt;

namespace {

std::string inflated(const std::vector<unsigned char> &stream) {
  Result<std::vector<unsigned char>> out = inflateZlib(stream.data(), stream.size());
  if (!out)
    return "error: " + out.message();
  return std::string(out.value().begin(), out.value().end());
}

// zlib.compress(b"hello hello hello hello, polyc", 9): fixed Huffman codes with back references.
const std::vector<unsigned char> kHello = {120, 218, 203, 72,  205, 201, 201, 87,  200, 64, 39, 117,
                                           20,  10,  242, 115, 42,  147, 1,   173, 83,  11, 36};
// zlib.compress(b"stored!", 0): one stored block.
const std::vector<unsigned char> kStored = {120, 1,   1,   7,   0,  248, 255, 115, 116,
                                            111, 114, 101, 100, 33, 11,  239, 2,   179};

TEST(Inflate, ReadsFixedCodesAndStoredBlocks) {
  EXPECT_EQ(inflated(kHello), "hello hello hello hello, polyc");
  EXPECT_EQ(inflated(kStored), "stored!");
}

TEST(Inflate, ReportsDamage) {
  std::vector<unsigned char> badHeader = kHello;
  badHeader[1] ^= 1;
  EXPECT_EQ(inflated(badHeader), "error: not a zlib stream of deflate data");
  std::vector<unsigned char> badSum = kHello;
  badSum.back() ^= 1;
  EXPECT_EQ(inflated(badSum), "error: zlib stream: the Adler-32 checksum does not match the data");
  std::vector<unsigned char> badLength = kStored;
  badLength[5] ^= 1; // NLEN no longer the complement of LEN
  EXPECT_EQ(inflated(badLength), "error: deflate data: a stored block's length check fails");
  std::vector<unsigned char> truncated(kHello.begin(), kHello.begin() + 10);
  EXPECT_NE(inflated(truncated).find("error: "), std::string::npos);
  // Every shorter prefix and every single-bit change is reported, never read past the end.
  for (size_t n = 0; n < kHello.size(); ++n) {
    std::vector<unsigned char> prefix(kHello.begin(), kHello.begin() + n);
    EXPECT_NE(inflated(prefix).find("error: "), std::string::npos) << n;
  }
  for (size_t byte = 2; byte < kHello.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<unsigned char> flipped = kHello;
      flipped[byte] ^= static_cast<unsigned char>(1 << bit);
      EXPECT_NE(inflated(flipped), "hello hello hello hello, polyc") << byte << ":" << bit;
    }
}

TEST(Png, RefusesWhatIsNotAPng) {
  const unsigned char text[] = "not a picture";
  Result<GreyImage> image = decodePng(text, sizeof text, "x.png");
  ASSERT_FALSE(image);
  EXPECT_EQ(image.message(), "x.png: not a PNG file (no PNG signature)");
}

} // namespace
