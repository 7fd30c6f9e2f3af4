// The check of CSR row arrays before a run (see polyc/Runtime.h).
#include "polyc/Runtime.h"

#include <string>

namespace polyc::rt {

void checkRowArray(const char *name, const int32_t *row, int64_t count, int64_t bound,
                   const std::string &boundText) {
  auto at = [&](int64_t k) {
    return std::string(name) + "[" + std::to_string(k) + "] = " + std::to_string(row[k]);
  };
  for (int64_t k = 0; k < count; ++k) {
    if (row[k] < 0)
      throw std::runtime_error("the row array " + at(k) + " is negative: a row range starts at 0 or after");
    if (k > 0 && row[k] < row[k - 1])
      throw std::runtime_error("the row array is not non-decreasing: " + at(k) + " is less than " +
                               at(k - 1));
    if (row[k] > bound)
      throw std::runtime_error("the row array points outside what its ranges index: " + at(k) +
                               " is more than " + std::to_string(bound) + ", " + boundText);
  }
}

} // namespace polyc::rt
