// The contract between generated programs and the runtime: a generated executable describes its params
// and arrays in a ProgramInfo, implements Compute, and hands both to runMain, which parses the command
// line of DESIGN.md, loads and validates the .npy inputs, times the compute region and writes outputs
// atomically. Bad input of any kind exits with status 2 and a message naming the file or flag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace polyc::rt {

enum class DType { F32, F64, I32 };
enum class ArrayRole { Input, Output, InOut };

// An extent affine in the params, or its floor division by a positive constant:
// floor((constant + sum(coefficient * params[index])) / divisor).
struct AffineExtent {
  int64_t constant = 0;
  std::vector<std::pair<unsigned, int64_t>> terms; // (param index, coefficient)
  int64_t divisor = 1;

  // floor(numerator / divisor), for the numerator constant + sum(...) that the caller evaluated.
  int64_t divide(int64_t numerator) const {
    int64_t quotient = numerator / divisor;
    return quotient * divisor > numerator ? quotient - 1 : quotient;
  }
};

struct ArraySpec {
  std::string name;
  ArrayRole role;
  DType dtype;
  std::vector<AffineExtent> shape; // empty: a scalar (an .npy of shape ())
  // A streamed build's (polyc build --stream) array held as a ring of this many slices of dimension 0,
  // one moved per step of the outer loop (Stream.h); 0: the array is moved whole.
  int64_t streamSlots = 0;
};

struct ProgramInfo {
  std::string name;                // the program, for --help
  std::vector<std::string> params; // in declaration order
  std::vector<ArraySpec> arrays;   // inputs, outputs and inouts (locals are the generated code's own)
};

// One array's host storage: row-major (C order), little-endian, of the spec's dtype and shape.
struct HostArray {
  const ArraySpec *spec = nullptr;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  template <typename T> T *data() { return reinterpret_cast<T *>(bytes.data()); }
  int64_t elementCount() const;
};

struct RunContext {
  std::vector<int64_t> params;   // values, in ProgramInfo::params order
  std::vector<HostArray> arrays; // in ProgramInfo::arrays order
};

// What a generated program implements. For a GPU target upload/download move data to and from the
// device; compute returns the seconds the compute region took (device timers on GPUs).
// Before every upload runMain restores the host copies of inouts to their loaded values and zeroes
// outputs, so a CPU program that computes in place on context.arrays sees the same state each run.
struct StreamSlices;
class Compute {
public:
  virtual ~Compute() = default;
  virtual void upload(RunContext &context) = 0;   // called before every timed run; resets inouts
  virtual double compute(RunContext &context) = 0;
  virtual void download(RunContext &context) = 0; // called once, after the last run
  // A streamed build's whole run instead (Stream.h): the streamed arrays come from and go to `slices`
  // one slice per step (their context arrays have shapes, no bytes); the others are in `context`.
  // Returns the seconds from the first slice read to the last written.
  virtual double computeStreamed(RunContext &context, StreamSlices &slices);
};

// The element count of a local array whose extents the generated code computed from the params:
// checked, so that a size beyond 64 bits (params of 2^31 and more) fails the computation with the array's
// name (exit status 3) instead of wrapping to a small allocation. An empty extent makes it 0.
inline int64_t localElements(const char *array, std::initializer_list<int64_t> extents, size_t elementBytes) {
  int64_t elements = 1, bytes = int64_t(elementBytes);
  bool overflow = false;
  for (int64_t extent : extents) {
    if (extent <= 0)
      return 0;
    overflow = overflow || __builtin_mul_overflow(elements, extent, &elements) ||
               __builtin_mul_overflow(bytes, extent, &bytes);
  }
  if (overflow)
    throw std::length_error(std::string("local array '") + array + "' is too large for these params");
  return elements;
}

// The row array `name` of CSR ranges (`c in row[e]..row[e + 1]`, docs/language.md), `count` values: they
// must be non-decreasing, from 0, and at most `bound`, the smallest extent that the ranges' variables index
// (`boundText` says which: "the extent of col"). Throws std::runtime_error naming the array and the index
// otherwise; runMain then exits with status 3.
void checkRowArray(const char *name, const int32_t *row, int64_t count, int64_t bound,
                   const std::string &boundText);

// How runMain reports: `reports` false (an MPI rank other than 0, mpi/Mpi.h) writes no output files and
// prints nothing on stdout (help, timings) nor the notes about outputs not asked for; errors still go to
// stderr.
struct RunOptions {
  bool reports = true;
};

// Parses `--param N=V --in A=a.npy --out B=b.npy [--repeat K] [--json] [--help]`, runs `compute` K
// times (default 1) and writes the outputs. Returns the process exit status (0, or 2 on bad input).
int runMain(int argc, char **argv, const ProgramInfo &info, Compute &compute, const RunOptions &options = {});

} // namespace polyc::rt
