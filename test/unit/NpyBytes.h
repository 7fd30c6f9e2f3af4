// .npy files built byte by byte for the runtime's unit tests (NpyTests.cpp, SlicesTests.cpp), independently
// of the writer under test.
#pragma once

#include <cstring>
#include <string>
#include <vector>

namespace polyc::rt::npytest {

using Bytes = std::vector<unsigned char>;

// A .npy file with the given version, header text (padded with spaces and a newline to a multiple
// of 64 like numpy does, unless `pad` is false) and raw data bytes.
inline Bytes makeNpy(const std::string &header, const Bytes &data, int major = 1, bool pad = true) {
  std::string text = header;
  size_t prefix = major == 1 ? 10 : 12;
  if (pad) {
    size_t total = prefix + text.size() + 1;
    text.append((64 - total % 64) % 64, ' ');
    text.push_back('\n');
  }
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(major), 0};
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<unsigned char>((text.size() >> (8 * i)) & 0xff));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T> Bytes littleEndian(const std::vector<T> &values) {
  Bytes out;
  for (T value : values) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    out.insert(out.end(), raw, raw + sizeof(T)); // the host is little-endian (checked in Npy.cpp)
  }
  return out;
}

template <typename T> Bytes bigEndian(const std::vector<T> &values) {
  Bytes out;
  for (T value : values) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    for (size_t i = sizeof(T); i-- > 0;)
      out.push_back(raw[i]);
  }
  return out;
}

} // namespace polyc::rt::npytest
