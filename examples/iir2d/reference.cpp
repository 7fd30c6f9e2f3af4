// The 2D IIR example's reference: a plain sequential float64 evaluation of iir2d.poly, independent of
// polyc and of its runtime (it has its own small .npy reader and writer), so it can check them.
//   iir2d-reference x.npy a.npy b.npy y_ref.npy
// y[i, j] = sum_{r1, r2 < M} a[r1, r2] x[i - r1, j - r2]
//         + sum_{k1, k2 < M, (k1, k2) != (0, 0)} b[k1, k2] y[i - k1, j - k2], zero outside the image.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Matrix {
  int64_t rows = 0, columns = 0;
  std::vector<double> values; // row-major
  double at(int64_t i, int64_t j) const { return values[size_t(i * columns + j)]; }
};

bool fail(const std::string &message) {
  std::fprintf(stderr, "iir2d-reference: %s\n", message.c_str());
  return false;
}

// Reads a 2D little-endian float32 or float64 C-order .npy (any format version). Deliberately small:
// it finds the header's fields by text search, which suffices for numpy's own files.
bool readMatrix(const std::string &path, Matrix &matrix) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(path + ": cannot open");
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (file.size() < 10 || file.compare(0, 6, "\x93NUMPY") != 0)
    return fail(path + ": not a .npy file");
  unsigned major = static_cast<unsigned char>(file[6]);
  size_t lengthBytes = major == 1 ? 2 : 4, headerLength = 0;
  if (major < 1 || major > 3 || file.size() < 8 + lengthBytes)
    return fail(path + ": unsupported .npy version");
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= size_t(static_cast<unsigned char>(file[8 + i])) << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (dataStart > file.size())
    return fail(path + ": truncated header");
  std::string header = file.substr(8 + lengthBytes, headerLength);
  size_t elementSize = 0;
  if (header.find("'descr': '<f4'") != std::string::npos)
    elementSize = 4;
  else if (header.find("'descr': '<f8'") != std::string::npos)
    elementSize = 8;
  else
    return fail(path + ": expected dtype '<f4' or '<f8'");
  if (header.find("'fortran_order': False") == std::string::npos)
    return fail(path + ": expected C order");
  size_t shapeAt = header.find("'shape': (");
  long long rows = -1, columns = -1;
  if (shapeAt == std::string::npos ||
      std::sscanf(header.c_str() + shapeAt, "'shape': (%lld, %lld)", &rows, &columns) != 2 ||
      rows < 0 || columns < 0)
    return fail(path + ": expected a 2D shape");
  matrix.rows = rows;
  matrix.columns = columns;
  size_t count = size_t(rows) * size_t(columns);
  if (file.size() - dataStart != count * elementSize)
    return fail(path + ": data size does not match the shape");
  matrix.values.resize(count);
  const char *data = file.data() + dataStart;
  for (size_t k = 0; k < count; ++k) {
    if (elementSize == 4) {
      float value;
      std::memcpy(&value, data + 4 * k, 4);
      matrix.values[k] = value;
    } else {
      std::memcpy(&matrix.values[k], data + 8 * k, 8);
    }
  }
  return true;
}

bool writeMatrix(const std::string &path, const Matrix &matrix) {
  std::ostringstream header;
  header << "{'descr': '<f8', 'fortran_order': False, 'shape': (" << matrix.rows << ", "
         << matrix.columns << "), }";
  std::string text = header.str();
  text.append((64 - (10 + text.size() + 1) % 64) % 64, ' ');
  text.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return fail(path + ": cannot create");
  out.write("\x93NUMPY\x01\x00", 8);
  char length[2] = {char(text.size() & 0xff), char(text.size() >> 8)};
  out.write(length, 2);
  out.write(text.data(), std::streamsize(text.size()));
  out.write(reinterpret_cast<const char *>(matrix.values.data()),
            std::streamsize(matrix.values.size() * sizeof(double)));
  out.close();
  return out ? true : fail(path + ": write failed");
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: iir2d-reference x.npy a.npy b.npy y_ref.npy\n");
    return 2;
  }
  Matrix x, a, b;
  if (!readMatrix(argv[1], x) || !readMatrix(argv[2], a) || !readMatrix(argv[3], b))
    return 1;
  int64_t window = a.rows;
  if (a.columns != window || b.rows != window || b.columns != window) {
    fail("a and b must both be M x M");
    return 1;
  }
  Matrix y;
  y.rows = x.rows;
  y.columns = x.columns;
  y.values.assign(x.values.size(), 0.0);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.columns; ++j) {
      double sum = 0.0;
      for (int64_t r1 = 0; r1 < window; ++r1)
        for (int64_t r2 = 0; r2 < window; ++r2)
          if (i - r1 >= 0 && j - r2 >= 0)
            sum += a.at(r1, r2) * x.at(i - r1, j - r2);
      for (int64_t k1 = 0; k1 < window; ++k1)
        for (int64_t k2 = 0; k2 < window; ++k2)
          if ((k1 != 0 || k2 != 0) && i - k1 >= 0 && j - k2 >= 0)
            sum += b.at(k1, k2) * y.at(i - k1, j - k2);
      y.values[size_t(i * y.columns + j)] = sum;
    }
  return writeMatrix(argv[4], y) ? 0 : 1;
}
