// PNG frames as input (see polyc/Png.h): inflate (RFC 1950/1951), PNG chunks with their CRCs, the
// scanline filters, the conversion to grey, and the folder of frames.
#include "polyc/Png.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

namespace polyc::rt {

namespace {

// ---------------------------------------------------------------------------------------------
// Inflate: a bit reader and canonical Huffman codes decoded a bit at a time (small and obviously
// right; frames are megabytes, not gigabytes).

class BitReader {
public:
  BitReader(const unsigned char *data, size_t size) : data_(data), size_(size) {}
  // The next `count` bits (up to 16), least significant first; false past the end.
  bool bits(unsigned count, unsigned &value) {
    value = 0;
    for (unsigned k = 0; k < count; ++k) {
      if (byte_ >= size_)
        return false;
      value |= unsigned((data_[byte_] >> bit_) & 1) << k;
      if (++bit_ == 8) {
        bit_ = 0;
        ++byte_;
      }
    }
    return true;
  }
  void alignToByte() {
    if (bit_) {
      bit_ = 0;
      ++byte_;
    }
  }
  size_t byte() const { return byte_; }
  void skipBytes(size_t n) { byte_ += n; }
  const unsigned char *at() const { return data_ + byte_; }
  size_t left() const { return byte_ <= size_ ? size_ - byte_ : 0; }

private:
  const unsigned char *data_;
  size_t size_, byte_ = 0;
  unsigned bit_ = 0;
};

constexpr unsigned kMaxBits = 15;

// A canonical Huffman code: how many codes of each length, and the symbols in code order.
struct Huffman {
  std::array<uint16_t, kMaxBits + 1> counts{};
  std::vector<uint16_t> symbols;
};

// Builds the code from symbol lengths (0: unused); false for an over-subscribed set of lengths.
bool buildHuffman(const uint8_t *lengths, unsigned n, Huffman &code) {
  code.counts.fill(0);
  for (unsigned s = 0; s < n; ++s)
    ++code.counts[lengths[s]];
  code.counts[0] = 0;
  int left = 1;
  for (unsigned len = 1; len <= kMaxBits; ++len) {
    left = left * 2 - code.counts[len];
    if (left < 0)
      return false;
  }
  std::array<uint16_t, kMaxBits + 2> offsets{};
  for (unsigned len = 1; len <= kMaxBits; ++len)
    offsets[len + 1] = uint16_t(offsets[len] + code.counts[len]);
  code.symbols.assign(n, 0);
  for (unsigned s = 0; s < n; ++s)
    if (lengths[s])
      code.symbols[offsets[lengths[s]]++] = uint16_t(s);
  return true;
}

// The next symbol of `code`, or -1 on a code that is not in it or past the end.
int decodeSymbol(BitReader &in, const Huffman &code) {
  int value = 0, first = 0, index = 0;
  for (unsigned len = 1; len <= kMaxBits; ++len) {
    unsigned bit;
    if (!in.bits(1, bit))
      return -1;
    value |= int(bit);
    int count = code.counts[len];
    if (value - first < count)
      return code.symbols[size_t(index + value - first)];
    index += count;
    first = (first + count) << 1;
    value <<= 1;
  }
  return -1;
}

constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistanceBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                        33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                        1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistanceExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// One Huffman-coded block into `out`; "" on success, else what was wrong.
std::string inflateCodes(BitReader &in, const Huffman &literals, const Huffman &distances,
                         std::vector<unsigned char> &out) {
  while (true) {
    int symbol = decodeSymbol(in, literals);
    if (symbol < 0)
      return "a bad literal/length code or truncated data";
    if (symbol < 256) {
      out.push_back(static_cast<unsigned char>(symbol));
      continue;
    }
    if (symbol == 256)
      return "";
    symbol -= 257;
    if (symbol >= 29)
      return "a length code out of range";
    unsigned extra;
    if (!in.bits(kLengthExtra[symbol], extra))
      return "truncated data";
    size_t length = kLengthBase[symbol] + extra;
    int d = decodeSymbol(in, distances);
    if (d < 0 || d >= 30)
      return "a bad distance code or truncated data";
    if (!in.bits(kDistanceExtra[d], extra))
      return "truncated data";
    size_t distance = kDistanceBase[d] + extra;
    if (distance > out.size())
      return "a distance back past the start of the data";
    size_t from = out.size() - distance;
    for (size_t k = 0; k < length; ++k)
      out.push_back(out[from + k]);
  }
}

bool fixedCodes(Huffman &literals, Huffman &distances) {
  uint8_t lengths[288];
  std::fill(lengths, lengths + 144, 8);
  std::fill(lengths + 144, lengths + 256, 9);
  std::fill(lengths + 256, lengths + 280, 7);
  std::fill(lengths + 280, lengths + 288, 8);
  uint8_t distanceLengths[30];
  std::fill(distanceLengths, distanceLengths + 30, 5);
  return buildHuffman(lengths, 288, literals) && buildHuffman(distanceLengths, 30, distances);
}

std::string dynamicCodes(BitReader &in, Huffman &literals, Huffman &distances) {
  unsigned hlit, hdist, hclen;
  if (!in.bits(5, hlit) || !in.bits(5, hdist) || !in.bits(4, hclen))
    return "truncated data";
  hlit += 257;
  hdist += 1;
  hclen += 4;
  if (hlit > 286 || hdist > 30)
    return "too many length or distance codes";
  static constexpr uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  uint8_t codeLengths[19] = {};
  for (unsigned k = 0; k < hclen; ++k) {
    unsigned v;
    if (!in.bits(3, v))
      return "truncated data";
    codeLengths[order[k]] = uint8_t(v);
  }
  Huffman lengthCode;
  if (!buildHuffman(codeLengths, 19, lengthCode))
    return "a bad code-length code";
  uint8_t lengths[286 + 30] = {};
  for (unsigned k = 0; k < hlit + hdist;) {
    int symbol = decodeSymbol(in, lengthCode);
    if (symbol < 0)
      return "a bad code length or truncated data";
    if (symbol < 16) {
      lengths[k++] = uint8_t(symbol);
      continue;
    }
    unsigned repeat, extra;
    uint8_t value = 0;
    if (symbol == 16) {
      if (k == 0)
        return "a repeat of no previous length";
      value = lengths[k - 1];
      if (!in.bits(2, extra))
        return "truncated data";
      repeat = 3 + extra;
    } else if (symbol == 17) {
      if (!in.bits(3, extra))
        return "truncated data";
      repeat = 3 + extra;
    } else {
      if (!in.bits(7, extra))
        return "truncated data";
      repeat = 11 + extra;
    }
    if (k + repeat > hlit + hdist)
      return "code lengths past their count";
    for (unsigned r = 0; r < repeat; ++r)
      lengths[k++] = value;
  }
  if (lengths[256] == 0)
    return "no end-of-block code";
  if (!buildHuffman(lengths, hlit, literals) || !buildHuffman(lengths + hlit, hdist, distances))
    return "over-subscribed Huffman code lengths";
  return "";
}

uint32_t adler32(const std::vector<unsigned char> &data) {
  uint32_t a = 1, b = 0;
  for (unsigned char c : data) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

uint32_t bigEndian32(const unsigned char *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

uint32_t crc32(const unsigned char *data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t k = 0; k < size; ++k)
    c = table[(c ^ data[k]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// ---------------------------------------------------------------------------------------------
// PNG

struct Header {
  uint32_t width = 0, height = 0;
  unsigned depth = 0, colour = 0;
};

unsigned channels(unsigned colour) {
  switch (colour) {
  case 0:
    return 1; // grey
  case 2:
    return 3; // RGB
  case 3:
    return 1; // palette index
  case 4:
    return 2; // grey, alpha
  case 6:
    return 4; // RGB, alpha
  }
  return 0;
}

bool validDepth(unsigned colour, unsigned depth) {
  switch (colour) {
  case 0:
    return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
  case 3:
    return depth == 1 || depth == 2 || depth == 4 || depth == 8;
  case 2:
  case 4:
  case 6:
    return depth == 8 || depth == 16;
  }
  return false;
}

int paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Undoes the filters in place: `data` holds height rows of 1 + stride bytes (the filter type first).
std::string unfilter(std::vector<unsigned char> &data, size_t height, size_t stride, size_t bpp) {
  for (size_t y = 0; y < height; ++y) {
    unsigned char *row = data.data() + y * (stride + 1);
    unsigned type = row[0];
    unsigned char *cur = row + 1;
    const unsigned char *prev = y ? data.data() + (y - 1) * (stride + 1) + 1 : nullptr;
    for (size_t x = 0; x < stride; ++x) {
      int a = x >= bpp ? cur[x - bpp] : 0, b = prev ? prev[x] : 0, c = prev && x >= bpp ? prev[x - bpp] : 0;
      int add;
      switch (type) {
      case 0:
        add = 0;
        break;
      case 1:
        add = a;
        break;
      case 2:
        add = b;
        break;
      case 3:
        add = (a + b) / 2;
        break;
      case 4:
        add = paeth(a, b, c);
        break;
      default:
        return "row " + std::to_string(y) + " has filter type " + std::to_string(type) + " (0 to 4 exist)";
      }
      cur[x] = static_cast<unsigned char>(cur[x] + add);
    }
  }
  return "";
}

// Sample `k` of a row of `depth`-bit samples.
unsigned sampleAt(const unsigned char *row, size_t k, unsigned depth) {
  if (depth == 16)
    return (unsigned(row[2 * k]) << 8) | row[2 * k + 1];
  if (depth == 8)
    return row[k];
  size_t bit = k * depth;
  return (row[bit / 8] >> (8 - depth - bit % 8)) & ((1u << depth) - 1);
}

} // namespace

Result<std::vector<unsigned char>> inflateZlib(const unsigned char *data, size_t size) {
  using R = Result<std::vector<unsigned char>>;
  if (size < 6)
    return R::failure("zlib stream of " + std::to_string(size) + " bytes, too short");
  if ((data[0] & 0x0F) != 8 || ((unsigned(data[0]) << 8) | data[1]) % 31 != 0)
    return R::failure("not a zlib stream of deflate data");
  if (data[1] & 0x20)
    return R::failure("a zlib stream with a preset dictionary");
  BitReader in(data + 2, size - 2);
  std::vector<unsigned char> out;
  for (bool last = false; !last;) {
    unsigned final, type;
    if (!in.bits(1, final) || !in.bits(2, type))
      return R::failure("deflate data: truncated");
    last = final;
    std::string problem;
    if (type == 0) {
      in.alignToByte();
      if (in.left() < 4)
        return R::failure("deflate data: truncated stored block");
      const unsigned char *p = in.at();
      unsigned len = p[0] | (unsigned(p[1]) << 8), nlen = p[2] | (unsigned(p[3]) << 8);
      if ((len ^ 0xFFFF) != nlen)
        return R::failure("deflate data: a stored block's length check fails");
      in.skipBytes(4);
      if (in.left() < len)
        return R::failure("deflate data: truncated stored block");
      out.insert(out.end(), in.at(), in.at() + len);
      in.skipBytes(len);
    } else if (type == 1 || type == 2) {
      Huffman literals, distances;
      if (type == 1)
        fixedCodes(literals, distances);
      else
        problem = dynamicCodes(in, literals, distances);
      if (problem.empty())
        problem = inflateCodes(in, literals, distances, out);
    } else {
      problem = "a block of type 3 (reserved)";
    }
    if (!problem.empty())
      return R::failure("deflate data: " + problem);
  }
  in.alignToByte();
  if (in.left() < 4)
    return R::failure("zlib stream: no Adler-32 checksum after the data");
  if (bigEndian32(in.at()) != adler32(out))
    return R::failure("zlib stream: the Adler-32 checksum does not match the data");
  return R::success(std::move(out));
}

Result<GreyImage> decodePng(const unsigned char *data, size_t size, const std::string &name) {
  using R = Result<GreyImage>;
  static constexpr unsigned char signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  if (size < 8 || std::memcmp(data, signature, 8) != 0)
    return R::failure(name + ": not a PNG file (no PNG signature)");
  Header header;
  bool haveHeader = false, ended = false;
  std::vector<unsigned char> compressed, palette;
  for (size_t at = 8; !ended;) {
    if (size - at < 12)
      return R::failure(name + ": truncated chunk at byte " + std::to_string(at));
    uint32_t length = bigEndian32(data + at);
    if (length > size - at - 12)
      return R::failure(name + ": truncated chunk at byte " + std::to_string(at));
    const unsigned char *type = data + at + 4, *body = data + at + 8;
    if (crc32(type, length + 4) != bigEndian32(body + length))
      return R::failure(name + ": chunk " + std::string(reinterpret_cast<const char *>(type), 4) +
                        " at byte " + std::to_string(at) + " fails its CRC");
    std::string kind(reinterpret_cast<const char *>(type), 4);
    if (!haveHeader && kind != "IHDR")
      return R::failure(name + ": the first chunk is " + kind + ", not IHDR");
    if (kind == "IHDR") {
      if (length != 13)
        return R::failure(name + ": IHDR of " + std::to_string(length) + " bytes, not 13");
      header.width = bigEndian32(body);
      header.height = bigEndian32(body + 4);
      header.depth = body[8];
      header.colour = body[9];
      if (header.width == 0 || header.height == 0 || header.width > (1u << 24) || header.height > (1u << 24))
        return R::failure(name + ": a picture of " + std::to_string(header.width) + " x " +
                          std::to_string(header.height) + " pixels");
      if (!validDepth(header.colour, header.depth))
        return R::failure(name + ": colour type " + std::to_string(header.colour) + " with bit depth " +
                          std::to_string(header.depth) + " is not PNG");
      if (body[10] != 0 || body[11] != 0)
        return R::failure(name + ": unknown compression or filter method");
      if (body[12] != 0)
        return R::failure(name + ": interlaced PNG (Adam7) is not supported; save it without interlacing");
      haveHeader = true;
    } else if (kind == "PLTE") {
      palette.assign(body, body + length);
    } else if (kind == "IDAT") {
      compressed.insert(compressed.end(), body, body + length);
    } else if (kind == "IEND") {
      ended = true;
    } else if (!(type[0] & 0x20)) {
      return R::failure(name + ": unknown critical chunk " + kind);
    }
    at += 12 + size_t(length);
  }
  if (compressed.empty())
    return R::failure(name + ": no image data (IDAT)");
  if (header.colour == 3 && (palette.empty() || palette.size() % 3 != 0))
    return R::failure(name + ": a palette picture without a valid PLTE chunk");
  Result<std::vector<unsigned char>> raw = inflateZlib(compressed.data(), compressed.size());
  if (!raw)
    return R::failure(name + ": " + raw.message());
  std::vector<unsigned char> &rows = raw.value();
  const unsigned samples = channels(header.colour);
  const size_t stride = (size_t(header.width) * samples * header.depth + 7) / 8;
  const size_t bpp = std::max<size_t>(1, samples * header.depth / 8);
  if (rows.size() != size_t(header.height) * (stride + 1))
    return R::failure(name + ": image data of " + std::to_string(rows.size()) + " bytes, expected " +
                      std::to_string(size_t(header.height) * (stride + 1)));
  if (std::string problem = unfilter(rows, header.height, stride, bpp); !problem.empty())
    return R::failure(name + ": " + problem);

  GreyImage image;
  image.width = header.width;
  image.height = header.height;
  image.pixels.resize(size_t(header.width) * header.height);
  const double scale = header.depth == 16 ? 1.0 / 257.0 : 255.0 / double((1u << header.depth) - 1);
  for (size_t y = 0; y < header.height; ++y) {
    const unsigned char *row = rows.data() + y * (stride + 1) + 1;
    for (size_t x = 0; x < header.width; ++x) {
      double grey;
      if (header.colour == 3) {
        unsigned index = sampleAt(row, x, header.depth);
        if (size_t(index) * 3 + 2 >= palette.size())
          return R::failure(name + ": palette index " + std::to_string(index) + " past the palette");
        const unsigned char *rgb = &palette[size_t(index) * 3];
        grey = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
      } else if (header.colour == 2 || header.colour == 6) {
        grey = scale * (0.299 * sampleAt(row, x * samples, header.depth) +
                        0.587 * sampleAt(row, x * samples + 1, header.depth) +
                        0.114 * sampleAt(row, x * samples + 2, header.depth));
      } else {
        grey = scale * sampleAt(row, x * samples, header.depth);
      }
      image.pixels[y * header.width + x] = grey;
    }
  }
  return R::success(std::move(image));
}

Result<std::vector<std::string>> listPngFrames(const std::string &folder, DType dtype) {
  using R = Result<std::vector<std::string>>;
  if (dtype != DType::F32 && dtype != DType::F64)
    return R::failure(folder + ": PNG frames are grey levels, for an f32 or f64 array, not " +
                      dtypeName(dtype));
  DIR *dir = opendir(folder.c_str());
  if (!dir)
    return R::failure(folder + ": cannot open the folder: " + std::strerror(errno));
  std::vector<std::string> names;
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".png") == 0)
      names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  if (names.empty())
    return R::failure(folder + ": no .png files in the folder");
  return R::success(std::move(names));
}

Result<GreyImage> loadPngFrame(const std::string &folder, const std::vector<std::string> &names, size_t index,
                               int64_t height, int64_t width) {
  using R = Result<GreyImage>;
  std::string path = folder + (folder.back() == '/' ? "" : "/") + names[index];
  Result<std::vector<unsigned char>> contents = readWholeFile(path);
  if (!contents)
    return R::failure(contents.message());
  Result<GreyImage> image = decodePng(contents.value().data(), contents.value().size(), path);
  if (!image)
    return image;
  const GreyImage &picture = image.value();
  if (height && width && (picture.height != height || picture.width != width))
    return R::failure(path + ": " + std::to_string(picture.width) + " x " + std::to_string(picture.height) +
                      " pixels, but " + names.front() + " has " + std::to_string(width) + " x " +
                      std::to_string(height));
  return image;
}

void greyLevelBytes(const GreyImage &image, DType dtype, unsigned char *out) {
  for (double grey : image.pixels) {
    if (dtype == DType::F32) {
      float v = float(grey);
      std::memcpy(out, &v, sizeof v);
      out += sizeof v;
    } else {
      std::memcpy(out, &grey, sizeof grey);
      out += sizeof grey;
    }
  }
}

Result<NpyArray> loadPngFrames(const std::string &folder, DType dtype) {
  using R = Result<NpyArray>;
  Result<std::vector<std::string>> names = listPngFrames(folder, dtype);
  if (!names)
    return R::failure(names.message());
  NpyArray frames;
  frames.dtype = dtype;
  for (size_t index = 0; index < names.value().size(); ++index) {
    bool first = frames.shape.empty();
    Result<GreyImage> image =
        loadPngFrame(folder, names.value(), index, first ? 0 : frames.shape[1], first ? 0 : frames.shape[2]);
    if (!image)
      return R::failure(image.message());
    const GreyImage &picture = image.value();
    size_t frameBytes = picture.pixels.size() * dtypeSize(dtype);
    if (first) {
      frames.shape = {int64_t(names.value().size()), picture.height, picture.width};
      frames.bytes.reserve(names.value().size() * frameBytes);
    }
    size_t at = frames.bytes.size();
    frames.bytes.resize(at + frameBytes);
    greyLevelBytes(picture, dtype, frames.bytes.data() + at);
  }
  return R::success(std::move(frames));
}

} // namespace polyc::rt
