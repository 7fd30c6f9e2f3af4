// runMain: the main() of every generated executable. Parses the command line of DESIGN.md, loads and
// validates the .npy inputs against the program's array specs (inferring params from input shapes),
// runs upload/compute K times, downloads once, reports timing, and writes the outputs atomically.
#include "polyc/Npy.h"
#include "polyc/Png.h"
#include "polyc/Runtime.h"
#include "polyc/Stream.h"
#include "polyc/Timer.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace polyc::rt {

int64_t HostArray::elementCount() const {
  // A zero extent first: the other extents' product may not fit int64 then.
  for (int64_t extent : shape)
    if (extent == 0)
      return 0;
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitComputeFailed = 3;

const char *roleName(ArrayRole role) {
  switch (role) {
  case ArrayRole::Input: return "input";
  case ArrayRole::Output: return "output";
  case ArrayRole::InOut: return "inout";
  }
  return "array";
}

bool readsInput(ArrayRole role) { return role != ArrayRole::Output; }
bool writesOutput(ArrayRole role) { return role != ArrayRole::Input; }

std::string extentText(const AffineExtent &extent, const ProgramInfo &info) {
  std::string text;
  for (const auto &[param, coefficient] : extent.terms) {
    if (coefficient == 0)
      continue;
    std::string name = param < info.params.size() ? info.params[param] : "?";
    int64_t magnitude = coefficient < 0 ? -coefficient : coefficient;
    if (text.empty())
      text += coefficient < 0 ? "-" : "";
    else
      text += coefficient < 0 ? " - " : " + ";
    text += magnitude == 1 ? name : std::to_string(magnitude) + "*" + name;
  }
  if (text.empty())
    text = std::to_string(extent.constant);
  else if (extent.constant > 0)
    text += " + " + std::to_string(extent.constant);
  else if (extent.constant < 0)
    text += " - " + std::to_string(-extent.constant);
  if (extent.divisor == 1)
    return text;
  bool single = text.find(' ') == std::string::npos;
  return (single ? text : "(" + text + ")") + " / " + std::to_string(extent.divisor);
}

std::string specShapeText(const ArraySpec &spec, const ProgramInfo &info) {
  std::string text = "[";
  for (size_t d = 0; d < spec.shape.size(); ++d)
    text += (d ? ", " : "") + extentText(spec.shape[d], info);
  return text + "]";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  if (shape.size() == 1)
    text += ",";
  return text + ")";
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

// Strict decimal: digits only, no sign, no spaces, fits int64.
enum class ParseStatus { Ok, Negative, Malformed, Overflow };
ParseStatus parseNonNegative(const std::string &text, int64_t &value) {
  if (!text.empty() && text[0] == '-' && text.size() > 1 &&
      std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return ParseStatus::Negative;
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return ParseStatus::Malformed;
  value = 0;
  for (char c : text)
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, c - '0', &value))
      return ParseStatus::Overflow;
  return ParseStatus::Ok;
}

struct ParamValue {
  bool known = false;
  int64_t value = 0;
  std::string source; // "--param H" or "x.npy dimension 0"
};

class Runner {
public:
  Runner(const ProgramInfo &info, Compute &compute, const RunOptions &options)
      : info_(info), compute_(compute), options_(options) {}
  int run(int argc, char **argv);

private:
  int error(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", info_.name.c_str(), message.c_str());
    return kExitBadInput;
  }
  int usageError(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s (run with --help for usage)\n", info_.name.c_str(),
                 message.c_str());
    return kExitBadInput;
  }
  void printHelp(const char *argv0) const;
  int parseArguments(int argc, char **argv);
  int parseParam(const std::string &text);
  int parseArrayFlag(const std::string &flag, const std::string &text);
  int checkOutputPath(const std::string &flag, const std::string &name, const std::string &path);
  int loadInputs();
  Result<NpyArray> loadWhole(const std::string &path, DType dtype);
  Result<NpyArray> openStreamed(size_t index, const std::string &path);
  bool streamed() const {
    return std::any_of(info_.arrays.begin(), info_.arrays.end(),
                       [](const ArraySpec &a) { return a.streamSlots > 0; });
  }
  int openStreams(bool reopenInputs);
  int inferParams();
  int evaluateExtent(const AffineExtent &extent, int64_t &value, const std::string &what);
  int checkShapes();
  std::string paramSummary(const ArraySpec &spec) const;
  int allocateOutputs();
  int runCompute();
  int writeOutputs();
  void printTiming() const;

  int findArray(const std::string &name) const {
    for (size_t a = 0; a < info_.arrays.size(); ++a)
      if (info_.arrays[a].name == name)
        return int(a);
    return -1;
  }

  const ProgramInfo &info_;
  Compute &compute_;
  std::vector<ParamValue> params_;
  std::map<size_t, std::string> inFiles_;  // array index -> path
  std::map<size_t, std::string> outFiles_; // array index -> path
  std::map<size_t, NpyArray> loaded_;      // inputs and inouts as read
  int64_t repeat_ = 1;
  bool repeatGiven_ = false;
  const RunOptions options_;
  bool json_ = false;
  RunContext context_;
  StreamSlices slices_; // a streamed build's readers and writers, for the run about to start
  std::vector<double> times_;
};

void Runner::printHelp(const char *argv0) const {
  std::string exe = argv0 ? argv0 : info_.name;
  std::printf("usage: %s [--param NAME=VALUE]... --in NAME=FILE... [--out NAME=FILE]... "
              "[--repeat K] [--json]\n\n",
              exe.c_str());
  std::printf("Runs the polyc program '%s'. Arrays are .npy files (format 1.0-3.0, either byte "
              "order, C or Fortran order); a float input may also be a folder of PNG frames, read in "
              "name order as [frames, height, width] grey levels in [0, 255].\n\n",
              info_.name.c_str());
  std::printf("params (non-negative integers; one that an input's shape determines may be "
              "omitted):\n");
  if (info_.params.empty())
    std::printf("  (none)\n");
  for (const std::string &param : info_.params)
    std::printf("  --param %s=VALUE\n", param.c_str());
  std::printf("\narrays:\n");
  std::vector<std::string> flags;
  size_t width = 0;
  for (const ArraySpec &spec : info_.arrays) {
    std::string flag = spec.role == ArrayRole::Input    ? "--in "
                       : spec.role == ArrayRole::Output ? "--out "
                                                        : "--in/--out ";
    flags.push_back(flag + spec.name + "=FILE");
    width = std::max(width, flags.back().size());
  }
  for (size_t a = 0; a < info_.arrays.size(); ++a) {
    const ArraySpec &spec = info_.arrays[a];
    std::string shape = spec.shape.empty() ? "scalar, shape ()" : specShapeText(spec, info_);
    std::printf("  %-*s  %-6s  %-7s  %s\n", int(width), flags[a].c_str(), roleName(spec.role),
                dtypeName(spec.dtype), shape.c_str());
  }
  std::printf("\noptions:\n"
              "  --repeat K  run upload+compute K times (inouts reset each time), download once,\n"
              "              and print the median, min and max compute time\n"
              "  --json      print the timing as one JSON object\n"
              "  --help      print this text\n\n"
              "An output without --out is computed but not written. Outputs are written only after\n"
              "the computation succeeded, each to a temporary file renamed into place.\n"
              "exit status: 0 success; 2 bad command line or input file; 3 the computation "
              "failed\n");
  if (streamed()) {
    std::string arrays;
    for (const ArraySpec &spec : info_.arrays)
      if (spec.streamSlots > 0)
        arrays += (arrays.empty() ? "" : ", ") + spec.name;
    std::printf(
        "\nBuilt with --stream: %s move one slice of their first dimension per step of the outer\n"
        "loop, overlapped with the steps. An input is read as the steps need it (a .npy file may be a\n"
        "named pipe); an output slice is written after its step (to a named pipe directly, else to\n"
        "the temporary file renamed into place at the end). --repeat reads the inputs again each run,\n"
        "and the time is from the first slice read to the last written.\n",
        arrays.c_str());
  }
}

int Runner::parseParam(const std::string &text) {
  size_t equals = text.find('=');
  if (equals == std::string::npos)
    return usageError("--param " + text + ": expected NAME=VALUE");
  std::string name = text.substr(0, equals), valueText = text.substr(equals + 1);
  auto found = std::find(info_.params.begin(), info_.params.end(), name);
  if (found == info_.params.end()) {
    std::string known;
    for (const std::string &param : info_.params)
      known += (known.empty() ? "" : ", ") + param;
    return usageError("--param " + text + ": unknown param '" + name + "' (the program's params: " +
                      (known.empty() ? "none" : known) + ")");
  }
  ParamValue &param = params_[size_t(found - info_.params.begin())];
  if (param.known)
    return usageError("--param " + name + " is given twice");
  int64_t value = 0;
  switch (parseNonNegative(valueText, value)) {
  case ParseStatus::Ok: break;
  case ParseStatus::Negative:
    return usageError("--param " + text + ": a param must be non-negative, got " + valueText);
  case ParseStatus::Malformed:
    return usageError("--param " + text + ": '" + valueText +
                      "' is not a non-negative decimal integer");
  case ParseStatus::Overflow:
    return usageError("--param " + text + ": " + valueText + " does not fit a 64-bit integer");
  }
  param.known = true;
  param.value = value;
  param.source = "--param " + name;
  return 0;
}

int Runner::checkOutputPath(const std::string &flag, const std::string &name,
                            const std::string &path) {
  size_t slash = path.rfind('/');
  std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return error(flag + " " + name + "=" + path + ": the folder '" + folder + "' does not exist");
  if (::access(folder.c_str(), W_OK) != 0)
    return error(flag + " " + name + "=" + path + ": the folder '" + folder +
                 "' is not writable: " + std::strerror(errno));
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    return error(flag + " " + name + "=" + path + ": is a folder, expected a file path");
  return 0;
}

int Runner::parseArrayFlag(const std::string &flag, const std::string &text) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    return usageError(flag + " " + text + ": expected NAME=FILE");
  std::string name = text.substr(0, equals), path = text.substr(equals + 1);
  int index = findArray(name);
  if (index < 0) {
    std::string known;
    for (const ArraySpec &spec : info_.arrays)
      known += (known.empty() ? "" : ", ") + spec.name;
    return usageError(flag + " " + text + ": unknown array '" + name +
                      "' (the program's arrays: " + (known.empty() ? "none" : known) + ")");
  }
  const ArraySpec &spec = info_.arrays[size_t(index)];
  bool in = flag == "--in";
  if (in && !readsInput(spec.role))
    return usageError(flag + " " + text + ": '" + name + "' is an output; give it with --out");
  if (!in && !writesOutput(spec.role))
    return usageError(flag + " " + text + ": '" + name + "' is an input; give it with --in");
  auto &files = in ? inFiles_ : outFiles_;
  if (files.count(size_t(index)))
    return usageError(flag + " " + name + " is given twice");
  struct stat target {};
  bool device = ::stat(path.c_str(), &target) == 0 && S_ISCHR(target.st_mode); // /dev/null takes any output
  if (!in && !device) {
    for (const auto &[other, otherPath] : outFiles_)
      if (otherPath == path)
        return usageError(flag + " " + text + ": the file is also the output of '" +
                          info_.arrays[other].name + "'");
    if (int status = checkOutputPath(flag, name, path))
      return status;
  }
  files[size_t(index)] = path;
  return 0;
}

int Runner::parseArguments(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--json") {
      if (json_)
        return usageError("--json is given twice");
      json_ = true;
      continue;
    }
    std::string flag = arg, value;
    bool hasValue = false;
    size_t equals = arg.find('=');
    if (arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
      hasValue = true;
    }
    if (flag != "--param" && flag != "--in" && flag != "--out" && flag != "--repeat")
      return usageError("unknown argument '" + arg + "'");
    if (!hasValue) {
      if (i + 1 >= argc)
        return usageError(flag + " needs a value");
      value = argv[++i];
    }
    int status = 0;
    if (flag == "--param") {
      status = parseParam(value);
    } else if (flag == "--in" || flag == "--out") {
      status = parseArrayFlag(flag, value);
    } else {
      if (repeatGiven_)
        return usageError("--repeat is given twice");
      repeatGiven_ = true;
      switch (parseNonNegative(value, repeat_)) {
      case ParseStatus::Ok:
        if (repeat_ >= 1)
          break;
        [[fallthrough]];
      case ParseStatus::Negative:
      case ParseStatus::Malformed:
        return usageError("--repeat " + value + ": expected a positive integer");
      case ParseStatus::Overflow:
        return usageError("--repeat " + value + ": does not fit a 64-bit integer");
      }
    }
    if (status)
      return status;
  }
  for (size_t a = 0; a < info_.arrays.size(); ++a) {
    const ArraySpec &spec = info_.arrays[a];
    if (readsInput(spec.role) && !inFiles_.count(a))
      return usageError("missing --in " + spec.name + "=FILE for " + roleName(spec.role) + " '" +
                        spec.name + "' (" + dtypeName(spec.dtype) + " " +
                        specShapeText(spec, info_) + ")");
  }
  return 0;
}

Result<NpyArray> Runner::loadWhole(const std::string &path, DType dtype) {
  struct stat info;
  bool folder = ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
  return folder ? loadPngFrames(path, dtype) : loadNpy(path);
}

// A streamed input's reader, opened on its header; the array it returns has the file's dtype and shape and
// no bytes: the slices are read during the run.
Result<NpyArray> Runner::openStreamed(size_t index, const std::string &path) {
  Result<std::unique_ptr<SliceReader>> reader = openSliceReader(path, info_.arrays[index].dtype);
  if (!reader)
    return Result<NpyArray>::failure(reader.message());
  NpyArray header;
  header.dtype = reader.value()->dtype();
  header.shape = reader.value()->shape();
  slices_.readers[index] = std::move(reader.value());
  return Result<NpyArray>::success(std::move(header));
}

int Runner::loadInputs() {
  slices_.readers.resize(info_.arrays.size());
  slices_.writers.resize(info_.arrays.size());
  for (const auto &[index, path] : inFiles_) {
    const ArraySpec &spec = info_.arrays[index];
    std::string flag = "--in " + spec.name + "=" + path;
    Result<NpyArray> result = spec.streamSlots ? openStreamed(index, path) : loadWhole(path, spec.dtype);
    if (!result)
      return error(flag + ": " + result.message());
    NpyArray &array = result.value();
    if (array.dtype != spec.dtype)
      return error(flag + ": dtype " + dtypeName(array.dtype) + ", expected " +
                   dtypeName(spec.dtype) + " ('" + dtypeDescr(spec.dtype) + "')");
    if (array.shape.size() != spec.shape.size())
      return error(flag + ": shape " + shapeText(array.shape) + " has rank " +
                   std::to_string(array.shape.size()) + ", expected rank " +
                   std::to_string(spec.shape.size()) + " " + specShapeText(spec, info_));
    loaded_[index] = std::move(array);
  }
  return 0;
}

// Solves every input dimension extent = constant + sum(c * P) that has exactly one unknown param,
// until nothing changes; consistency with everything else is checked afterwards by checkShapes.
int Runner::inferParams() {
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto &[index, array] : loaded_) {
      const ArraySpec &spec = info_.arrays[index];
      for (size_t d = 0; d < spec.shape.size(); ++d) {
        const AffineExtent &extent = spec.shape[d];
        if (extent.divisor != 1)
          continue; // H / 2 = 5 holds for H = 10 and 11: such an extent only checks
        std::map<unsigned, int64_t> unknown;
        int64_t rest = array.shape[d];
        bool overflow = __builtin_sub_overflow(rest, extent.constant, &rest);
        for (const auto &[param, coefficient] : extent.terms) {
          if (param >= params_.size())
            continue;
          if (params_[param].known) {
            int64_t product = 0;
            overflow = overflow ||
                       __builtin_mul_overflow(coefficient, params_[param].value, &product) ||
                       __builtin_sub_overflow(rest, product, &rest);
          } else {
            unknown[param] += coefficient;
          }
        }
        for (auto it = unknown.begin(); it != unknown.end();)
          it = it->second == 0 ? unknown.erase(it) : std::next(it);
        if (unknown.size() != 1 || overflow)
          continue;
        auto [param, coefficient] = *unknown.begin();
        const std::string &name = info_.params[param];
        std::string where = "--in " + spec.name + "=" + inFiles_[index] + ": dimension " +
                            std::to_string(d) + " has extent " + std::to_string(array.shape[d]);
        if (rest % coefficient != 0 || rest / coefficient < 0)
          return error(where + ", which is not " + extentText(extent, info_) +
                       " for any non-negative " + name + paramSummary(spec) + " (shape " +
                       shapeText(array.shape) + ", expected " + specShapeText(spec, info_) + ")");
        params_[param].known = true;
        params_[param].value = rest / coefficient;
        params_[param].source = inFiles_[index] + " dimension " + std::to_string(d);
        changed = true;
      }
    }
  }
  for (size_t p = 0; p < params_.size(); ++p)
    if (!params_[p].known)
      return usageError("param " + info_.params[p] +
                        " is not given and no input's shape determines it; give --param " +
                        info_.params[p] + "=VALUE");
  context_.params.clear();
  for (const ParamValue &param : params_)
    context_.params.push_back(param.value);
  return 0;
}

// " with H=5 (--param H), W=4 (x.npy dimension 1)" for the params the spec's shape uses.
std::string Runner::paramSummary(const ArraySpec &spec) const {
  std::vector<unsigned> used;
  for (const AffineExtent &extent : spec.shape)
    for (const auto &term : extent.terms)
      if (term.first < params_.size() && params_[term.first].known &&
          std::find(used.begin(), used.end(), term.first) == used.end())
        used.push_back(term.first);
  std::string text;
  for (unsigned param : used)
    text += (text.empty() ? " with " : ", ") + info_.params[param] + "=" +
            std::to_string(params_[param].value) + " (" + params_[param].source + ")";
  return text;
}

int Runner::evaluateExtent(const AffineExtent &extent, int64_t &value, const std::string &what) {
  value = extent.constant;
  bool overflow = false;
  for (const auto &[param, coefficient] : extent.terms) {
    int64_t product = 0;
    overflow = overflow || param >= params_.size() ||
               __builtin_mul_overflow(coefficient, params_[param].value, &product) ||
               __builtin_add_overflow(value, product, &value);
  }
  if (overflow)
    return error(what + ": the extent " + extentText(extent, info_) +
                 " overflows a 64-bit integer");
  value = extent.divide(value);
  if (value < 0)
    return error(what + ": the extent " + extentText(extent, info_) + " is negative (" +
                 std::to_string(value) + ")");
  return 0;
}

int Runner::checkShapes() {
  for (size_t a = 0; a < info_.arrays.size(); ++a) {
    const ArraySpec &spec = info_.arrays[a];
    std::vector<int64_t> expected;
    for (const AffineExtent &extent : spec.shape) {
      int64_t value = 0;
      if (int status = evaluateExtent(extent, value,
                                      std::string(roleName(spec.role)) + " '" + spec.name + "'" +
                                          paramSummary(spec)))
        return status;
      expected.push_back(value);
    }
    auto found = loaded_.find(a);
    if (found != loaded_.end() && found->second.shape != expected)
      return error("--in " + spec.name + "=" + inFiles_[a] + ": shape " +
                   shapeText(found->second.shape) + ", expected " + specShapeText(spec, info_) +
                   " = " + shapeText(expected) + paramSummary(spec));
    HostArray host;
    host.spec = &spec;
    host.shape = expected;
    context_.arrays.push_back(std::move(host));
  }
  return 0;
}

int Runner::allocateOutputs() {
  for (size_t a = 0; a < info_.arrays.size(); ++a) {
    HostArray &host = context_.arrays[a];
    if (host.spec->streamSlots > 0)
      continue; // moved one slice at a time, never whole
    auto found = loaded_.find(a);
    if (found != loaded_.end()) {
      host.bytes = found->second.bytes;
      // Inputs are not needed again; inouts keep their loaded value to reset every run.
      if (info_.arrays[a].role == ArrayRole::Input)
        loaded_.erase(found);
      continue;
    }
    uint64_t bytes = dtypeSize(host.spec->dtype);
    bool overflow = false, empty = false;
    for (int64_t extent : host.shape) {
      overflow = overflow || __builtin_mul_overflow(bytes, uint64_t(extent), &bytes);
      empty = empty || extent == 0;
    }
    if (empty)
      bytes = 0;
    else if (overflow || bytes > uint64_t(PTRDIFF_MAX))
      return error("output '" + host.spec->name + "' of shape " + shapeText(host.shape) +
                   " is too large to allocate");
    try {
      host.bytes.assign(size_t(bytes), 0);
    } catch (const std::bad_alloc &) {
      return error("cannot allocate " + std::to_string(bytes) + " bytes for output '" +
                   host.spec->name + "' of shape " + shapeText(host.shape));
    }
  }
  return 0;
}

// The slices of the next streamed run: the inputs' readers (opened again after the first run: each run reads
// its files from the start) and a writer for each streamed output given --out.
int Runner::openStreams(bool reopenInputs) {
  for (size_t a = 0; a < info_.arrays.size(); ++a) {
    const ArraySpec &spec = info_.arrays[a];
    if (spec.streamSlots == 0)
      continue;
    if (spec.role == ArrayRole::Input) {
      if (!reopenInputs)
        continue;
      Result<NpyArray> reopened = openStreamed(a, inFiles_[a]);
      if (!reopened)
        return error("--in " + spec.name + "=" + inFiles_[a] + ": " + reopened.message());
      continue;
    }
    auto out = outFiles_.find(a);
    if (out == outFiles_.end())
      continue;
    Result<std::unique_ptr<SliceWriter>> writer =
        openSliceWriter(out->second, spec.dtype, context_.arrays[a].shape);
    if (!writer)
      return error("--out " + spec.name + "=" + out->second + ": " + writer.message());
    slices_.writers[a] = std::move(writer.value());
  }
  return 0;
}

int Runner::runCompute() {
  try {
    for (int64_t k = 0; k < repeat_; ++k) {
      if (k > 0) {
        // Every run starts from the same state: inouts as loaded, outputs zero.
        for (size_t a = 0; a < info_.arrays.size(); ++a) {
          HostArray &host = context_.arrays[a];
          if (info_.arrays[a].role == ArrayRole::InOut)
            host.bytes = loaded_[a].bytes;
          else if (info_.arrays[a].role == ArrayRole::Output)
            std::fill(host.bytes.begin(), host.bytes.end(), 0);
        }
      }
      if (streamed()) {
        if (int status = openStreams(k > 0))
          return status;
        times_.push_back(compute_.computeStreamed(context_, slices_));
        continue;
      }
      compute_.upload(context_);
      times_.push_back(compute_.compute(context_));
    }
    if (!streamed())
      compute_.download(context_);
  } catch (const SliceError &failure) {
    return error(failure.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "%s: error: the computation ran out of memory\n", info_.name.c_str());
    return kExitComputeFailed;
  } catch (const std::exception &failure) {
    std::fprintf(stderr, "%s: error: the computation failed: %s\n", info_.name.c_str(),
                 failure.what());
    return kExitComputeFailed;
  } catch (...) {
    std::fprintf(stderr, "%s: error: the computation failed with an unknown exception\n",
                 info_.name.c_str());
    return kExitComputeFailed;
  }
  return 0;
}

int Runner::writeOutputs() {
  for (size_t a = 0; a < info_.arrays.size(); ++a) {
    const ArraySpec &spec = info_.arrays[a];
    if (!writesOutput(spec.role))
      continue;
    auto found = outFiles_.find(a);
    if (found == outFiles_.end()) {
      std::fprintf(stderr, "%s: note: %s '%s' is not written (no --out %s=FILE)\n",
                   info_.name.c_str(), roleName(spec.role), spec.name.c_str(), spec.name.c_str());
      continue;
    }
    if (spec.streamSlots > 0)
      continue; // written slice by slice during the run
    const HostArray &host = context_.arrays[a];
    Status status = saveNpy(found->second, spec.dtype, host.shape, host.bytes.data(),
                            host.bytes.size());
    if (!status)
      return error("--out " + spec.name + "=" + found->second + ": " + status.message());
  }
  return 0;
}

void Runner::printTiming() const {
  double mid = median(times_);
  double low = *std::min_element(times_.begin(), times_.end());
  double high = *std::max_element(times_.begin(), times_.end());
  if (json_) {
    std::string params;
    for (size_t p = 0; p < info_.params.size(); ++p)
      params += (p ? ", " : "") + jsonString(info_.params[p]) + ": " +
                std::to_string(context_.params[p]);
    std::printf("{\"program\": %s, \"repeat\": %" PRId64
                ", \"median_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g, \"params\": {%s}}\n",
                jsonString(info_.name).c_str(), repeat_, mid, low, high, params.c_str());
  } else {
    std::printf("%s: compute median %.6g s, min %.6g s, max %.6g s over %" PRId64 " runs\n",
                info_.name.c_str(), mid, low, high, repeat_);
  }
  std::fflush(stdout);
}

int Runner::run(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      if (options_.reports)
        printHelp(argc > 0 ? argv[0] : nullptr);
      return 0;
    }
  }
  params_.assign(info_.params.size(), ParamValue());
  if (int status = parseArguments(argc, argv))
    return status;
  if (int status = loadInputs())
    return status;
  if (int status = inferParams())
    return status;
  if (int status = checkShapes())
    return status;
  if (int status = allocateOutputs())
    return status;
  if (int status = runCompute())
    return status;
  if (!options_.reports)
    return 0;
  if (int status = writeOutputs())
    return status;
  if (repeatGiven_ || json_)
    printTiming();
  return 0;
}

} // namespace

int runMain(int argc, char **argv, const ProgramInfo &info, Compute &compute, const RunOptions &options) {
  // Nothing may escape main: a failure inside the runtime itself (out of memory while loading a
  // huge input, say) is reported like bad input.
  try {
    Runner runner(info, compute, options);
    return runner.run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "%s: error: out of memory\n", info.name.c_str());
    return kExitBadInput;
  } catch (const std::exception &failure) {
    std::fprintf(stderr, "%s: error: %s\n", info.name.c_str(), failure.what());
    return kExitBadInput;
  }
}

} // namespace polyc::rt
