// PNG frames as an input: a folder of .png files, sorted by name, read as one [T, H, W] array of grey
// levels (what `--in NAME=FOLDER/` gives a generated program). A strict decoder of its own (zlib inflate,
// the five filters, every bit depth and colour type of PNG 1.2, not interlaced) that returns a message on
// bad bytes, never reads outside its buffer and needs no library.
#pragma once

#include "polyc/Npy.h"

#include <string>
#include <vector>

namespace polyc::rt {

// A decoded picture in grey levels of [0, 255]: 8-bit samples as they are, 16-bit ones divided by 257,
// lower bit depths scaled to 255, RGB as 0.299 R + 0.587 G + 0.114 B (ITU-R BT.601, as Pillow's "L"),
// palette entries through the palette; alpha ignored. Row-major, `height` rows of `width`.
struct GreyImage {
  int64_t width = 0, height = 0;
  std::vector<double> pixels;
};

// Decodes a whole PNG file held in memory; `name` (usually the path) is used in messages.
Result<GreyImage> decodePng(const unsigned char *data, size_t size, const std::string &name);

// The zlib stream `data` (RFC 1950: header, deflate data of RFC 1951, Adler-32), inflated.
Result<std::vector<unsigned char>> inflateZlib(const unsigned char *data, size_t size);

// The names of the `*.png` files of `folder` (other files ignored) in byte order. Fails, starting with
// the folder, when `dtype` is not f32 or f64, the folder cannot be opened or it has no pictures.
Result<std::vector<std::string>> listPngFrames(const std::string &folder, DType dtype);

// Reads and decodes frame `names[index]` of `folder`, failing with its path. With `height` and `width`
// (frame 0's size; 0: any size) a picture of another size fails too: "PATH: W x H pixels, but NAME0 has ...".
Result<GreyImage> loadPngFrame(const std::string &folder, const std::vector<std::string> &names, size_t index,
                               int64_t height = 0, int64_t width = 0);

// The grey levels of `image` as `dtype` (f32 or f64) values, row-major, into `out`
// (width * height * dtypeSize(dtype) bytes).
void greyLevelBytes(const GreyImage &image, DType dtype, unsigned char *out);

// Every `*.png` of `folder` (other files ignored), in byte order of their names, as one array of shape
// [frames, height, width] and type `dtype` (f32 or f64). Fails, naming the file, on a picture that does
// not decode or whose size differs from the first one's, and on a folder without pictures.
Result<NpyArray> loadPngFrames(const std::string &folder, DType dtype);

} // namespace polyc::rt
