// A key that identifies what a recorded launch sequence depends on (sizes, device buffers): the CUDA
// target's captured graphs and the OpenCL target's command buffers are replayed only for the same key.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace polyc::rt {

// FNV-1a (64 bits) over the values' bytes, in order.
inline uint64_t hashKey(std::initializer_list<uint64_t> values) {
  uint64_t hash = 14695981039346656037ull;
  for (uint64_t value : values)
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (value >> (8 * byte)) & 0xff;
      hash *= 1099511628211ull;
    }
  return hash;
}

} // namespace polyc::rt
