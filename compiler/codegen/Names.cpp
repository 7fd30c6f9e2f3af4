// C identifiers for emitted code (see Names.h).
#include "compiler/codegen/Names.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include "llvm/ADT/StringSet.h"

#include <cctype>

using namespace polyc::codegen;

// Keywords of C, C++, CUDA C++ and OpenCL C, plus names emitted code depends on (std, the runtime
// namespace, math functions that generated expressions call unqualified).
static const llvm::StringSet<> &reservedNames() {
  static const llvm::StringSet<> names = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
      "const", "constexpr", "const_cast", "continue", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend",
      "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
      "operator", "or", "private", "protected", "public", "register", "reinterpret_cast", "restrict",
      "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor",
      // C-family types and qualifiers of the targets.
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
      "half", "uchar", "ushort", "uint", "ulong", "float2", "float4", "double2", "int2", "int4",
      "kernel", "__kernel", "global", "__global", "local", "__local", "constant", "__constant",
      "private", "__private", "read_only", "write_only", "__global__", "__device__", "__host__",
      "__shared__", "__constant__", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
      // Names emitted code uses unqualified.
      "std", "polyc", "main", "omp", "exp", "expf", "log", "logf", "sqrt", "sqrtf", "fabs", "fabsf",
      "abs", "tanh", "tanhf", "pow", "powf", "fmin", "fminf", "fmax", "fmaxf", "fmod", "fmodf", "min",
      "max", "FLT_MAX", "DBL_MAX", "INT32_MIN", "INT32_MAX", "NULL",
  };
  return names;
}

std::string polyc::codegen::cIdentifier(llvm::StringRef name) {
  if (reservedNames().contains(name) || name.starts_with("polyc_") || name.starts_with("__"))
    return name.str() + "_";
  return name.str();
}

bool polyc::codegen::isIdentifier(llvm::StringRef name) {
  return !name.empty() && (llvm::isAlpha(name.front()) || name.front() == '_') &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::string NameScope::fresh(const std::string &base) {
  std::string name = base;
  for (unsigned suffix = 1; isTaken(name) || name != cIdentifier(name); ++suffix)
    name = base + std::to_string(suffix);
  take(name);
  return name;
}

std::string polyc::codegen::programStructName(llvm::StringRef program) {
  std::string name;
  bool upper = true;
  for (char ch : program) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "P" + name;
  return name;
}
