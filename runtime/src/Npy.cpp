// .npy reading and writing for generated programs: validates every field of the format (magic,
// version, header length, the header's Python-literal dict, dtype, shape, data size) with a small
// hand-written parser, converts big-endian and Fortran-order data, and writes files atomically.
#include "polyc/Npy.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <pthread.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace polyc::rt {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "polyc's runtime assumes a little-endian host (its arrays are little-endian)"
#endif

namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// Beyond this nesting the header is certainly not a .npy header; the limit keeps the recursive
// parser's stack small whatever the bytes are.
constexpr int kMaxNesting = 16;

// A Python literal as it may appear in a header dict. Only the kinds a .npy header (or a plausible
// wrong one) contains are represented; anything else is a syntax error.
struct PyValue {
  enum class Kind { String, Bool, None, Int, Tuple, List, Dict };
  Kind kind = Kind::None;
  std::string text;          // String
  bool boolean = false;      // Bool
  int64_t integer = 0;       // Int
  bool overflow = false;     // Int: did not fit int64
  std::vector<PyValue> items; // Tuple, List; Dict: alternating key, value
};

const char *kindName(PyValue::Kind kind) {
  switch (kind) {
  case PyValue::Kind::String: return "a string";
  case PyValue::Kind::Bool: return "a bool";
  case PyValue::Kind::None: return "None";
  case PyValue::Kind::Int: return "an integer";
  case PyValue::Kind::Tuple: return "a tuple";
  case PyValue::Kind::List: return "a list";
  case PyValue::Kind::Dict: return "a dict";
  }
  return "a value";
}

// Recursive-descent parser for the Python literal subset numpy writes with repr(dict).
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  // Parses the whole header: one dict, then only whitespace.
  bool parseHeader(PyValue &dict) {
    skipSpace();
    if (!peekIs('{'))
      return fail("expected the header to start with '{'");
    if (!parseValue(dict, 0))
      return false;
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the header dict");
    return true;
  }

  const std::string &error() const { return error_; }

private:
  bool fail(const std::string &message) {
    if (error_.empty())
      error_ = message + " (at byte " + std::to_string(pos_) + " of the header)";
    return false;
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool peekIs(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool startsWith(std::string_view word) const {
    return text_.substr(pos_, word.size()) == word;
  }
  bool isIdentChar(size_t at) const {
    if (at >= text_.size())
      return false;
    char c = text_[at];
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  bool keyword(std::string_view word) {
    if (!startsWith(word) || isIdentChar(pos_ + word.size()))
      return false;
    pos_ += word.size();
    return true;
  }

  bool parseValue(PyValue &value, int depth) {
    if (depth > kMaxNesting)
      return fail("the header nests too deeply");
    skipSpace();
    if (pos_ >= text_.size())
      return fail("unexpected end of the header");
    char c = text_[pos_];
    if (c == '\'' || c == '"')
      return parseString(value);
    if (c == '{')
      return parseSequence(value, PyValue::Kind::Dict, '}', depth);
    if (c == '(')
      return parseSequence(value, PyValue::Kind::Tuple, ')', depth);
    if (c == '[')
      return parseSequence(value, PyValue::Kind::List, ']', depth);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9'))
      return parseInt(value);
    if (keyword("True")) {
      value.kind = PyValue::Kind::Bool;
      value.boolean = true;
      return true;
    }
    if (keyword("False")) {
      value.kind = PyValue::Kind::Bool;
      value.boolean = false;
      return true;
    }
    if (keyword("None")) {
      value.kind = PyValue::Kind::None;
      return true;
    }
    return fail("unexpected character '" + printable(c) + "'");
  }

  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
      return std::string(1, c);
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "\\x%02x", u);
    return buffer;
  }

  bool parseString(PyValue &value) {
    char quote = text_[pos_++];
    value.kind = PyValue::Kind::String;
    value.text.clear();
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == quote)
        return true;
      if (c == '\n')
        return fail("newline inside a string");
      if (c == '\\') {
        if (pos_ >= text_.size())
          break;
        c = text_[pos_++];
      }
      value.text.push_back(c);
    }
    return fail("unterminated string");
  }

  bool parseInt(PyValue &value) {
    value.kind = PyValue::Kind::Int;
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') {
      negative = text_[pos_] == '-';
      ++pos_;
    }
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
      return fail("expected digits after the sign");
    // Accumulate the magnitude as a negative number so that INT64_MIN fits.
    int64_t magnitude = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int digit = text_[pos_++] - '0';
      if (!value.overflow &&
          (__builtin_mul_overflow(magnitude, 10, &magnitude) ||
           __builtin_sub_overflow(magnitude, digit, &magnitude)))
        value.overflow = true;
    }
    // Python 2 numpy wrote shapes as longs: (3L, 4L).
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l'))
      ++pos_;
    if (isIdentChar(pos_) || peekIs('.'))
      return fail("malformed integer");
    if (!negative && !value.overflow) {
      if (magnitude == std::numeric_limits<int64_t>::min())
        value.overflow = true;
      else
        magnitude = -magnitude;
    }
    value.integer = magnitude;
    return true;
  }

  // Tuples, lists and dicts: comma-separated items, a trailing comma allowed. A dict's items are
  // stored as key, value, key, value.
  bool parseSequence(PyValue &value, PyValue::Kind kind, char close, int depth) {
    value.kind = kind;
    ++pos_;
    bool sawComma = false;
    size_t count = 0;
    while (true) {
      skipSpace();
      if (peekIs(close)) {
        ++pos_;
        break;
      }
      if (count > 0 && !sawComma)
        return fail(std::string("expected ',' or '") + close + "'");
      PyValue item;
      if (!parseValue(item, depth + 1))
        return false;
      value.items.push_back(std::move(item));
      if (kind == PyValue::Kind::Dict) {
        skipSpace();
        if (!peekIs(':'))
          return fail("expected ':' after a dict key");
        ++pos_;
        PyValue entry;
        if (!parseValue(entry, depth + 1))
          return false;
        value.items.push_back(std::move(entry));
      }
      ++count;
      skipSpace();
      sawComma = peekIs(',');
      if (sawComma)
        ++pos_;
    }
    // "(3)" is the integer 3 in Python, not a tuple; numpy always writes "(3,)".
    if (kind == PyValue::Kind::Tuple && count == 1 && !sawComma)
      return fail("a one-element tuple needs a trailing comma, as in (3,)");
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

uint32_t readLittleEndian(const unsigned char *bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

// The size of the header-length field of format version major.minor; 0 for an unsupported version.
int lengthFieldBytes(unsigned major, unsigned minor) {
  // Version 1.0 has a 2-byte header length; 2.0 and 3.0 (3.0: UTF-8 header) have 4 bytes.
  if (minor != 0)
    return 0;
  return major == 1 ? 2 : major == 2 || major == 3 ? 4 : 0;
}

// Interprets descr: '<f4', '>f8', '<i4'. Byte-order marks '|' (not applicable) and '=' (the
// writer's native order) say nothing about the order of a multi-byte type in a file, so they are
// refused rather than guessed.
bool parseDescr(const std::string &descr, DType &dtype, bool &bigEndian, std::string &error) {
  if (descr.size() == 3) {
    std::string code = descr.substr(1);
    bool known = true;
    if (code == "f4")
      dtype = DType::F32;
    else if (code == "f8")
      dtype = DType::F64;
    else if (code == "i4")
      dtype = DType::I32;
    else
      known = false;
    if (known) {
      if (descr[0] == '<' || descr[0] == '>') {
        bigEndian = descr[0] == '>';
        return true;
      }
      if (descr[0] == '|' || descr[0] == '=') {
        error = "dtype '" + descr + "' has byte order '" + descr[0] +
                "', which does not say the byte order of a multi-byte type; expected '<" + code +
                "' or '>" + code + "'";
        return false;
      }
    }
  }
  error = "dtype '" + descr +
          "' is not supported; expected float32 ('<f4' or '>f4'), float64 ('<f8' or '>f8') or "
          "int32 ('<i4' or '>i4')";
  return false;
}

void byteSwap(std::vector<unsigned char> &bytes, size_t elementSize) {
  for (size_t offset = 0; offset + elementSize <= bytes.size(); offset += elementSize)
    for (size_t i = 0; i < elementSize / 2; ++i)
      std::swap(bytes[offset + i], bytes[offset + elementSize - 1 - i]);
}

// Fortran order stores the first index fastest; walk the C-order indices and gather.
std::vector<unsigned char> fortranToC(const std::vector<unsigned char> &source,
                                      const std::vector<int64_t> &shape, size_t elementSize) {
  std::vector<unsigned char> target(source.size());
  size_t rank = shape.size();
  std::vector<int64_t> fortranStride(rank, 1);
  for (size_t d = 1; d < rank; ++d)
    fortranStride[d] = fortranStride[d - 1] * shape[d - 1];
  std::vector<int64_t> index(rank, 0);
  size_t count = source.size() / elementSize;
  for (size_t linear = 0; linear < count; ++linear) {
    int64_t sourceElement = 0;
    for (size_t d = 0; d < rank; ++d)
      sourceElement += index[d] * fortranStride[d];
    std::memcpy(&target[linear * elementSize], &source[size_t(sourceElement) * elementSize],
                elementSize);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return target;
}

} // namespace

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32: return 4;
  case DType::F64: return 8;
  case DType::I32: return 4;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "float32";
  case DType::F64: return "float64";
  case DType::I32: return "int32";
  }
  return "unknown";
}

const char *dtypeDescr(DType dtype) {
  switch (dtype) {
  case DType::F32: return "<f4";
  case DType::F64: return "<f8";
  case DType::I32: return "<i4";
  }
  return "?";
}

std::string npyShapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

int64_t NpyArray::elementCount() const {
  // A zero extent first: the other extents' product may not fit int64 then.
  for (int64_t extent : shape)
    if (extent == 0)
      return 0;
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

size_t npyHeaderSize(const unsigned char *data, size_t size) {
  if (size < 8)
    return 8;
  int lengthBytes = lengthFieldBytes(data[6], data[7]);
  if (std::memcmp(data, kMagic, sizeof kMagic) != 0 || lengthBytes == 0)
    return size;
  size_t prefix = 8 + size_t(lengthBytes);
  if (size < prefix)
    return prefix;
  return prefix + readLittleEndian(data + 8, lengthBytes);
}

Result<NpyHeader> parseNpyHeader(const unsigned char *data, size_t size, const std::string &name) {
  auto failure = [&](const std::string &message) {
    return Result<NpyHeader>::failure(name + ": " + message);
  };
  if (size < sizeof kMagic || std::memcmp(data, kMagic, sizeof kMagic) != 0)
    return failure("not a .npy file (expected the magic string \\x93NUMPY at the start)");
  if (size < 8)
    return failure("truncated: the file ends inside the format version");
  unsigned major = data[6], minor = data[7];
  int lengthBytes = lengthFieldBytes(major, minor);
  if (lengthBytes == 0)
    return failure("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (expected 1.0, 2.0 or 3.0)");
  size_t prefix = 8 + size_t(lengthBytes);
  if (size < prefix)
    return failure("truncated: the file ends inside the header length");
  size_t headerLength = readLittleEndian(data + 8, lengthBytes);
  if (headerLength > size - prefix)
    return failure("truncated header: the header length says " + std::to_string(headerLength) +
                   " bytes, the file has " + std::to_string(size - prefix) + " after the prefix");
  std::string_view headerText(reinterpret_cast<const char *>(data + prefix), headerLength);

  PyValue dict;
  HeaderParser parser(headerText);
  if (!parser.parseHeader(dict))
    return failure("malformed header: " + parser.error());
  if (dict.kind != PyValue::Kind::Dict)
    return failure("malformed header: expected a dict");

  const PyValue *descr = nullptr, *fortranOrder = nullptr, *shape = nullptr;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue &key = dict.items[i];
    if (key.kind != PyValue::Kind::String)
      return failure(std::string("malformed header: a key is ") + kindName(key.kind) +
                     ", expected one of 'descr', 'fortran_order', 'shape'");
    const PyValue **slot = key.text == "descr"           ? &descr
                           : key.text == "fortran_order" ? &fortranOrder
                           : key.text == "shape"         ? &shape
                                                         : nullptr;
    if (!slot)
      return failure("malformed header: unexpected key '" + key.text +
                     "' (expected exactly 'descr', 'fortran_order', 'shape')");
    if (*slot)
      return failure("malformed header: key '" + key.text + "' appears twice");
    *slot = &dict.items[i + 1];
  }
  if (!descr || !fortranOrder || !shape)
    return failure(std::string("malformed header: missing key '") +
                   (!descr ? "descr" : !fortranOrder ? "fortran_order" : "shape") + "'");

  NpyHeader header;
  if (descr->kind == PyValue::Kind::List)
    return failure("structured dtypes (a list as 'descr') are not supported; expected float32, "
                   "float64 or int32");
  if (descr->kind != PyValue::Kind::String)
    return failure(std::string("malformed header: 'descr' is ") + kindName(descr->kind) +
                   ", expected a string such as '<f4'");
  std::string descrError;
  if (!parseDescr(descr->text, header.dtype, header.bigEndian, descrError))
    return failure(descrError);

  if (fortranOrder->kind != PyValue::Kind::Bool)
    return failure(std::string("malformed header: 'fortran_order' is ") +
                   kindName(fortranOrder->kind) + ", expected True or False");
  header.fortranOrder = fortranOrder->boolean;

  if (shape->kind != PyValue::Kind::Tuple)
    return failure(std::string("malformed header: 'shape' is ") + kindName(shape->kind) +
                   ", expected a tuple of non-negative integers");
  if (shape->items.size() > kNpyMaxRank)
    return failure("the shape has rank " + std::to_string(shape->items.size()) +
                   ", more than the supported " + std::to_string(kNpyMaxRank));
  size_t elementSize = dtypeSize(header.dtype);
  uint64_t byteCount = elementSize;
  bool sizeOverflow = false;
  for (const PyValue &extent : shape->items) {
    if (extent.kind != PyValue::Kind::Int)
      return failure(std::string("malformed header: a shape entry is ") + kindName(extent.kind) +
                     ", expected a non-negative integer");
    if (extent.overflow)
      return failure("a shape entry does not fit a 64-bit integer");
    if (extent.integer < 0)
      return failure("the shape has a negative extent " + std::to_string(extent.integer));
    header.shape.push_back(extent.integer);
    if (__builtin_mul_overflow(byteCount, uint64_t(extent.integer), &byteCount))
      sizeOverflow = true;
  }
  // A zero extent makes the size zero even if other extents overflow when multiplied.
  bool empty = false;
  for (int64_t extent : header.shape)
    empty = empty || extent == 0;
  if (empty)
    byteCount = 0;
  else if (sizeOverflow || byteCount > uint64_t(std::numeric_limits<int64_t>::max()))
    return failure("the shape " + npyShapeText(header.shape) + " of " + dtypeName(header.dtype) +
                   " is too large (its size in bytes overflows)");

  header.dataOffset = prefix + headerLength;
  header.byteCount = byteCount;
  return Result<NpyHeader>::success(std::move(header));
}

Status checkNpyDataSize(const NpyHeader &header, uint64_t available, const std::string &name) {
  uint64_t byteCount = header.byteCount;
  std::string needs = "the shape " + npyShapeText(header.shape) + " of " + dtypeName(header.dtype) +
                      " needs " + std::to_string(byteCount) + " bytes of data";
  if (available < byteCount)
    return Status::failure(name + ": truncated data: " + needs + ", the file has " +
                           std::to_string(available));
  if (available > byteCount)
    return Status::failure(name + ": trailing bytes: " + needs + ", the file has " +
                           std::to_string(available) + " (" + std::to_string(available - byteCount) +
                           " too many)");
  return Status::success();
}

Result<NpyArray> parseNpy(const unsigned char *data, size_t size, const std::string &name) {
  Result<NpyHeader> parsed = parseNpyHeader(data, size, name);
  if (!parsed)
    return Result<NpyArray>::failure(parsed.message());
  const NpyHeader &header = parsed.value();
  if (Status sized = checkNpyDataSize(header, size - header.dataOffset, name); !sized)
    return Result<NpyArray>::failure(sized.message());
  NpyArray array;
  array.dtype = header.dtype;
  array.shape = header.shape;
  size_t elementSize = dtypeSize(header.dtype);
  array.bytes.assign(data + header.dataOffset, data + header.dataOffset + header.byteCount);
  if (header.bigEndian)
    byteSwap(array.bytes, elementSize);
  if (header.fortranOrder && header.shape.size() > 1)
    array.bytes = fortranToC(array.bytes, header.shape, elementSize);
  return Result<NpyArray>::success(std::move(array));
}

Result<std::vector<unsigned char>> readWholeFile(const std::string &path) {
  using R = Result<std::vector<unsigned char>>;
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return R::failure(path + ": cannot open: " + std::strerror(errno));
  std::vector<unsigned char> contents;
  unsigned char buffer[1 << 16];
  while (true) {
    size_t got = std::fread(buffer, 1, sizeof buffer, file);
    contents.insert(contents.end(), buffer, buffer + got);
    if (got < sizeof buffer)
      break;
  }
  int readError = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (readError)
    return R::failure(path + ": cannot read: " + std::strerror(readError));
  return R::success(std::move(contents));
}

Result<NpyArray> loadNpy(const std::string &path) {
  Result<std::vector<unsigned char>> contents = readWholeFile(path);
  if (!contents)
    return Result<NpyArray>::failure(contents.message());
  return parseNpy(contents.value().data(), contents.value().size(), path);
}

Result<uint64_t> npyDataBytes(DType dtype, const std::vector<int64_t> &shape) {
  uint64_t bytes = dtypeSize(dtype);
  bool overflow = false, empty = false;
  for (int64_t extent : shape) {
    if (extent < 0)
      return Result<uint64_t>::failure("cannot write a negative extent " + std::to_string(extent));
    overflow = overflow || __builtin_mul_overflow(bytes, uint64_t(extent), &bytes);
    empty = empty || extent == 0;
  }
  // As in parseNpy: a zero extent makes the array empty whatever the other extents multiply to.
  if (empty)
    return Result<uint64_t>::success(0);
  if (overflow)
    return Result<uint64_t>::failure("the shape " + npyShapeText(shape) + " is too large");
  return Result<uint64_t>::success(bytes);
}

std::vector<unsigned char> npyHeaderBytes(DType dtype, const std::vector<int64_t> &shape) {
  std::string header = std::string("{'descr': '") + dtypeDescr(dtype) +
                       "', 'fortran_order': False, 'shape': " + npyShapeText(shape) + ", }";
  // numpy pads the header with spaces and a final newline so that the data starts at a multiple
  // of 64 bytes; version 2.0 only when the header does not fit a 2-byte length.
  size_t prefix = 10;
  if (header.size() + 1 + 63 > 0xffff)
    prefix = 12;
  size_t total = prefix + header.size() + 1;
  size_t padding = (64 - total % 64) % 64;
  header.append(padding, ' ');
  header.push_back('\n');
  std::vector<unsigned char> out(kMagic, kMagic + sizeof kMagic);
  out.push_back(prefix == 10 ? 1 : 2);
  out.push_back(0);
  size_t length = header.size();
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<unsigned char>((length >> (8 * i)) & 0xff));
  out.insert(out.end(), header.begin(), header.end());
  return out;
}

Result<std::vector<unsigned char>> encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                                             const unsigned char *bytes, size_t byteCount) {
  using ResultType = Result<std::vector<unsigned char>>;
  Result<uint64_t> expected = npyDataBytes(dtype, shape);
  if (!expected)
    return ResultType::failure(expected.message());
  if (expected.value() != byteCount)
    return ResultType::failure("the data has " + std::to_string(byteCount) + " bytes, the shape " +
                               npyShapeText(shape) + " of " + dtypeName(dtype) + " needs " +
                               std::to_string(expected.value()));
  std::vector<unsigned char> out = npyHeaderBytes(dtype, shape);
  out.insert(out.end(), bytes, bytes + byteCount);
  return ResultType::success(std::move(out));
}

Result<TemporaryFile> createTemporaryBeside(const std::string &path) {
  // Beside the file, under its name cut short enough that the suffix keeps it within a file name's
  // 255 bytes (an output named by a 250-character array name is a valid file; its name + suffix is not).
  const size_t slash = path.find_last_of('/');
  const size_t nameStart = slash == std::string::npos ? 0 : slash + 1;
  const std::string suffix = ".tmp-XXXXXX";
  TemporaryFile file;
  file.path = path.substr(0, nameStart) + path.substr(nameStart, 255 - suffix.size()) + suffix;
  file.fd = ::mkstemp(file.path.data());
  if (file.fd < 0)
    return Result<TemporaryFile>::failure(
        path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  // mkstemp creates the file readable by its owner only; give it the usual permissions.
  if (::fchmod(file.fd, 0644) != 0) {
    int error = errno;
    abandonTemporaryFile(file);
    return Result<TemporaryFile>::failure(
        path + ": cannot set the permissions of the temporary file: " + std::strerror(error));
  }
  return Result<TemporaryFile>::success(std::move(file));
}

void abandonTemporaryFile(TemporaryFile &file) {
  if (file.fd < 0)
    return;
  ::close(file.fd);
  ::unlink(file.path.c_str());
  file.fd = -1;
}

Status commitTemporaryFile(TemporaryFile &file, const std::string &path) {
  if (::fsync(file.fd) != 0) {
    int error = errno;
    abandonTemporaryFile(file);
    return Status::failure(path + ": cannot flush to disk: " + std::strerror(error));
  }
  int fd = file.fd;
  file.fd = -1;
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(file.path.c_str());
    return Status::failure(path + ": cannot close: " + std::strerror(error));
  }
  if (::rename(file.path.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(file.path.c_str());
    return Status::failure(path + ": cannot rename the temporary file onto it: " + std::strerror(error));
  }
  return Status::success();
}

// Writes all of `data`; false (errno set) on an error. SIGPIPE is blocked in this thread meanwhile and one
// this write raised is consumed, so a FIFO whose reader went away fails with EPIPE instead of killing the
// program.
bool writeFully(int fd, const unsigned char *data, size_t size) {
  sigset_t pipeSignal, previous, pending;
  sigemptyset(&pipeSignal);
  sigaddset(&pipeSignal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous);
  sigpending(&pending);
  bool wasPending = sigismember(&pending, SIGPIPE) == 1;
  bool ok = true;
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      ok = false;
      break;
    }
    data += n;
    size -= size_t(n);
  }
  int error = errno;
  if (!ok && error == EPIPE && !wasPending) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipeSignal, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = error;
  return ok;
}

bool writtenInPlace(const std::string &path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISCHR(info.st_mode));
}

static Status writeInPlace(const std::string &path, const std::vector<unsigned char> &contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::failure(path + ": cannot open: " + std::strerror(errno));
  if (!writeFully(fd, contents.data(), contents.size())) {
    int error = errno;
    ::close(fd);
    return Status::failure(path + ": cannot write: " + std::strerror(error));
  }
  if (::close(fd) != 0)
    return Status::failure(path + ": cannot close: " + std::strerror(errno));
  return Status::success();
}

Status writeFileAtomically(const std::string &path, const std::vector<unsigned char> &contents) {
  if (writtenInPlace(path))
    return writeInPlace(path, contents);
  Result<TemporaryFile> created = createTemporaryBeside(path);
  if (!created)
    return Status::failure(created.message());
  TemporaryFile &file = created.value();
  if (!writeFully(file.fd, contents.data(), contents.size())) {
    int error = errno;
    abandonTemporaryFile(file);
    return Status::failure(path + ": cannot write: " + std::strerror(error));
  }
  return commitTemporaryFile(file, path);
}

Status saveNpy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
               const unsigned char *bytes, size_t byteCount) {
  Result<std::vector<unsigned char>> encoded = encodeNpy(dtype, shape, bytes, byteCount);
  if (!encoded)
    return Status::failure(path + ": " + encoded.message());
  return writeFileAtomically(path, encoded.value());
}

} // namespace polyc::rt
