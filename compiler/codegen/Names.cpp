// C identifiers for emitted code (see Names.h).
#include "compiler/codegen/Names.h"

#include "dsl/AST.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cctype>

using namespace polyc;
using namespace polyc::codegen;

// Words of the languages that a name of the program may not be spelled as in emitted code, in any
// role: keywords and reserved words of C, C++, OpenCL C and CUDA; macros and lower-case names of the
// headers that emitted code includes (the upper-case ones with an underscore are caught by
// looksLikeMacro); built-in functions of OpenCL C, CUDA and the C math library (a user function of that
// name would be an overload of the built-in, a variable would hide it from the expressions that call it).
static const llvm::StringSet<> &reservedWords() {
  static const llvm::StringSet<> words = [] {
    llvm::StringSet<> set;
    static const char *const list[] = {
        // C and C++ (through C++23), alternative tokens, contextual keywords.
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case",
        "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval",
        "constexpr", "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype",
        "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
        "false", "final", "float", "for", "friend", "goto", "if", "import", "inline", "int", "long", "module",
        "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq",
        "override", "private", "protected", "public", "register", "reinterpret_cast", "requires", "restrict",
        "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
        "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "typeof",
        "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
        // Types of the targets and their headers.
        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
        "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t", "max_align_t", "nullptr_t", "half", "uchar",
        "ushort", "uint", "ulong", "quad", "dim3", "event_t", "sampler_t", "image1d_t", "image2d_t",
        "image3d_t", "cl_mem_fence_flags", "memory_order", "memory_scope", "atomic_int", "atomic_uint",
        "atomic_long", "atomic_ulong", "atomic_float", "atomic_double", "atomic_flag",
        // OpenCL C qualifiers and CUDA built-in variables.
        "kernel", "global", "local", "constant", "generic", "read_only", "write_only", "read_write",
        "uniform", "pipe", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
        // Lower-case macros and objects of the C headers; GNU's predefined macros.
        "errno", "assert", "stdin", "stdout", "stderr", "offsetof", "va_list", "va_arg", "va_start",
        "va_end", "va_copy", "setjmp", "longjmp", "linux", "unix", "i386", "isnan", "isinf", "isfinite",
        "isnormal", "signbit", "fpclassify", "isgreater", "isgreaterequal", "isless", "islessequal",
        "islessgreater", "isunordered", "isordered", "isequal", "isnotequal",
        // Upper-case macros without an underscore.
        "NULL", "EOF", "NAN", "INFINITY", "MAXFLOAT", "BUFSIZ", "EDOM", "ERANGE", "EILSEQ", "EINVAL",
        "ENOMEM", "ENOENT", "EIO", "EPERM", "EAGAIN", "EEXIST", "EINTR", "EBADF", "EACCES",
        // OpenCL C and CUDA built-in functions.
        "get_global_id", "get_local_id", "get_group_id", "get_global_size", "get_local_size",
        "get_num_groups", "get_work_dim", "get_global_offset", "get_enqueued_local_size",
        "get_global_linear_id", "get_local_linear_id", "get_sub_group_size", "get_sub_group_local_id",
        "barrier", "work_group_barrier", "mem_fence", "read_mem_fence", "write_mem_fence",
        "atomic_work_item_fence", "atomic_add", "atomic_sub", "atomic_xchg", "atomic_inc", "atomic_dec",
        "atomic_cmpxchg", "atomic_min", "atomic_max", "atomic_and", "atomic_or", "atomic_xor",
        "atomic_load", "atomic_store", "atomic_exchange", "atomic_init", "atom_add", "atom_cmpxchg",
        "atom_xchg", "atom_max", "atom_min", "as_char", "as_uchar", "as_short", "as_ushort", "as_int",
        "as_uint", "as_long", "as_ulong", "as_float", "as_double", "as_half", "as_uint2", "as_int2",
        "convert_int", "convert_uint", "convert_long", "convert_ulong", "convert_float", "convert_double",
        "vload2", "vload4", "vstore2", "vstore4", "vload_half", "vstore_half", "async_work_group_copy",
        "wait_group_events", "prefetch", "printf", "select", "bitselect", "shuffle", "shuffle2", "any",
        "all", "abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "clz", "ctz", "popcount", "rotate",
        "upsample", "mad_hi", "mad_sat", "mul_hi", "mad24", "mul24", "clamp", "degrees", "radians", "mix",
        "step", "smoothstep", "sign", "cross", "dot", "distance", "length", "normalize", "fast_distance",
        "fast_length", "fast_normalize", "atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax",
        "atomicCAS", "atomicAnd", "atomicOr", "atomicXor", "atomicInc", "atomicDec", "printf", "malloc",
        "free", "memcpy", "memset", "min", "max", "abs", "labs", "llabs",
        "std", "main", "cooperative_groups",
        // Functions of the C headers that emitted code includes (cstdlib, cstdio, cstring; ctime through
        // CUDA's): in CUDA's host code a constant of that name is ambiguous with them (fuzz seed 700503).
        "exit", "abort", "atexit", "quick_exit", "at_quick_exit", "getenv", "system", "calloc", "realloc",
        "aligned_alloc", "qsort", "bsearch", "rand", "srand", "atoi", "atol", "atoll", "atof", "strtol",
        "strtoll", "strtoul", "strtoull", "strtod", "strtof", "strtold", "div", "ldiv", "lldiv", "mblen",
        "mbtowc", "wctomb", "puts", "putchar", "getchar", "fprintf", "sprintf", "snprintf", "vprintf",
        "vfprintf", "vsprintf", "vsnprintf", "scanf", "sscanf", "fscanf", "fopen", "freopen", "fclose", "fread",
        "fwrite", "fflush", "fputs", "fgets", "fputc", "fgetc", "putc", "getc", "ungetc", "fseek", "ftell",
        "rewind", "feof", "ferror", "clearerr", "perror", "remove", "rename", "tmpfile", "tmpnam", "setbuf",
        "setvbuf", "strlen", "strcmp", "strncmp", "strcpy", "strncpy", "strcat", "strncat", "strchr", "strrchr",
        "strstr", "strtok", "strerror", "strspn", "strcspn", "strpbrk", "strcoll", "strxfrm", "memmove",
        "memcmp", "memchr", "time", "clock", "difftime", "mktime", "strftime", "gmtime", "localtime",
        "asctime", "ctime",
    };
    for (const char *word : list)
      set.insert(word);
    // The C math library and OpenCL C's math built-ins, with C's float and long double versions.
    static const char *const math[] = {
        "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atanh", "atanpi", "atan2pi",
        "cbrt", "ceil", "copysign", "cos", "cosh", "cospi", "erf", "erfc", "exp", "exp2", "exp10", "expm1",
        "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "fract", "frexp", "hypot", "ilogb", "ldexp",
        "lgamma", "lgamma_r", "log", "log2", "log10", "log1p", "logb", "mad", "maxmag", "minmag", "modf",
        "nan", "nearbyint", "nextafter", "pow", "pown", "powr", "remainder", "remquo", "rint", "lrint",
        "llrint", "rootn", "round", "lround", "llround", "rsqrt", "scalbn", "scalbln", "sin", "sincos",
        "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma", "trunc", "saturate", "rcbrt", "norm",
        "j0", "j1", "jn", "y0", "y1", "yn", // the Bessel functions of math.h (and CUDA)
    };
    for (const char *name : math) {
      set.insert(name);
      set.insert(std::string(name) + "f");
      set.insert(std::string(name) + "l");
    }
    return set;
  }();
  return words;
}

// The fixed identifiers of emitted code and the runtime: names that emitted code declares or uses
// where the program's names are visible, and that do not come from a NameScope.
static const llvm::StringSet<> &emittedWords() {
  static const llvm::StringSet<> words = {
      "polyc",
      "rt",
      "ocl",
      "omp",
      "p",
      "program",
      "context",
      "device",
      "timer",
      "info",
      "compute",
      "upload",
      "download",
      "prepare",
      "run",
      "verbose",
      "text",
      "params",
      "arrays",
      "launches",
      "argc",
      "argv",
      "describeAllocation",
      "programInfo",
      "sequenceKey",
      "kKernelSource",
      // A streamed build's run (polyc_runStreamed's and computeStreamed's argument).
      "slices",
      "computeStreamed",
      // The CUDA Compute class's members: the run in the index type that indexFitsInt allows.
      "runAs",
      "prepareAs",
      "indexFitsInt",
      // The CUDA printer's own locals and kernel arguments (launch grids, wavefront lanes and cells).
      "wavefront",
      "lane",
      "G",
      "args",
      "grid",
      "row",
      "col",
      "value",
      "sharedBytes",
      "graphKey",
      "view",
  };
  return words;
}

// S0, S1, ...: the member functions of the statements, and the prefix of the names of their kernels and
// helpers (S1_reduce, S0_S1_parallel, S0Instance, S1Rows).
static bool isStatementName(llvm::StringRef name) {
  return name.size() > 1 && name[0] == 'S' && llvm::isDigit(name[1]);
}

// INT_MAX, M_PI, FLT_EPSILON, CL_SUCCESS, CLK_LOCAL_MEM_FENCE, POLYC_USE_FP64: upper case with an
// underscore, the form of the headers' (and polyc's) macros.
static bool looksLikeMacro(llvm::StringRef name) {
  return name.contains('_') && llvm::any_of(name, llvm::isUpper) &&
         llvm::all_of(name, [](char c) { return llvm::isUpper(c) || llvm::isDigit(c) || c == '_'; });
}

// The vector types of CUDA and OpenCL C (float2, uchar4, half2, longlong3, bfloat162; OpenCL's 8 and 16
// too) and dim3.
static bool isVectorType(llvm::StringRef name) {
  if (name == "dim3")
    return true;
  for (llvm::StringRef base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
                               "ulonglong", "float", "double", "half", "bfloat16"})
    if (name.consume_front(base))
      return name == "1" || name == "2" || name == "3" || name == "4" || name == "8" || name == "16";
  return false;
}

// Names that are not spelled as they are: see Names.h. `native_`, `half_` (OpenCL C), `cl_`, `cuda`,
// `cu` are the prefixes of the OpenCL and CUDA APIs' functions and types.
static bool mustEscape(llvm::StringRef name) {
  return reservedWords().contains(name) || emittedWords().contains(name) || isStatementName(name) ||
         looksLikeMacro(name) || isVectorType(name) ||
         name.starts_with("_") || name.ends_with("_") || name.starts_with("polyc_") ||
         name.starts_with("native_") || name.starts_with("half_") ||
         name.starts_with("cl_") || name.starts_with("cuda") || name.ends_with("_run") ||
         name.ends_with("_params");
}

std::string polyc::codegen::cIdentifier(llvm::StringRef name) {
  if (mustEscape(name))
    return name.str() + "_";
  return name.str();
}

bool polyc::codegen::isSpelling(llvm::StringRef name) {
  return name.ends_with("_") || !mustEscape(name);
}

bool polyc::codegen::isIdentifier(llvm::StringRef name) {
  return !name.empty() && (llvm::isAlpha(name.front()) || name.front() == '_') &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::string NameScope::fresh(const std::string &base) {
  // The base itself when it is free: a spelling of a user name, or a name of the emitted code (which may
  // be one of its own reserved words: "program", "S0Instance"), but never a word of the languages. Then
  // base1, base2, ...: the first that is free and a spelling (isSpelling: not a reserved word either, so
  // that base "S" does not give the statement S1); where baseN is reserved, baseN_ (a spelling: it ends
  // with '_'), so the search ends for every base ("S", "__i_", "polyc_x_Index0").
  auto languageWord = [](llvm::StringRef name) {
    return !name.ends_with("_") && (reservedWords().contains(name) || looksLikeMacro(name) ||
                                    name.starts_with("__") || (name.size() > 1 && name[0] == '_' && llvm::isUpper(name[1])));
  };
  std::string name = base;
  if (isTaken(name) || languageWord(name))
    for (unsigned suffix = 1;; ++suffix) {
      name = base + std::to_string(suffix);
      if (!isSpelling(name))
        name += "_";
      if (!isTaken(name))
        break;
    }
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

std::string polyc::codegen::spellParams(llvm::StringRef text, const ast::Program &program) {
  auto isParam = [&](llvm::StringRef word) {
    return llvm::any_of(program.params, [&](const auto &param) { return param->name == word; });
  };
  std::string result;
  size_t k = 0;
  while (k < text.size()) {
    char c = text[k];
    if (!llvm::isAlnum(c) && c != '_') {
      result += c;
      ++k;
      continue;
    }
    size_t end = k;
    while (end < text.size() && (llvm::isAlnum(text[end]) || text[end] == '_'))
      ++end;
    // A param is a value: a word that is called or cast (`int64_t(N)`, where a param may be named
    // int64_t too) or qualified (`polyc::rt`) is the generated text's own.
    llvm::StringRef word = text.slice(k, end);
    llvm::StringRef after = text.drop_front(end).ltrim(' ');
    bool own = after.starts_with("(") || after.starts_with("::") || text.take_front(k).ends_with("::");
    result += isParam(word) && !own ? cIdentifier(word) : word.str();
    k = end;
  }
  return result;
}

static void takeIndexVars(const ast::Expr &expr, NameScope &scope) {
  if (auto *r = llvm::dyn_cast<ast::Reduction>(&expr)) {
    for (const ast::RangeBinding &binding : r->bindings) {
      for (auto &var : binding.vars)
        scope.take(cIdentifier(var->name));
      takeIndexVars(*binding.lo, scope);
      takeIndexVars(*binding.hi, scope);
    }
    if (r->where)
      takeIndexVars(*r->where, scope);
    takeIndexVars(*r->body, scope);
  } else if (auto *u = llvm::dyn_cast<ast::Unary>(&expr)) {
    takeIndexVars(*u->operand, scope);
  } else if (auto *b = llvm::dyn_cast<ast::Binary>(&expr)) {
    takeIndexVars(*b->lhs, scope);
    takeIndexVars(*b->rhs, scope);
  } else if (auto *c = llvm::dyn_cast<ast::Call>(&expr)) {
    for (auto &arg : c->args)
      takeIndexVars(*arg, scope);
  } else if (auto *a = llvm::dyn_cast<ast::ArrayRead>(&expr)) {
    for (auto &index : a->indices)
      takeIndexVars(*index, scope);
  } else if (auto *t = llvm::dyn_cast<ast::Tuple>(&expr)) {
    for (auto &element : t->elements)
      takeIndexVars(*element, scope);
  }
}

static void takeEquation(const ast::Equation &eq, NameScope &scope) {
  for (auto &var : eq.indexVars)
    if (var)
      scope.take(cIdentifier(var->name));
  takeIndexVars(*eq.rhs, scope);
  if (eq.where)
    takeIndexVars(*eq.where, scope);
}

void polyc::codegen::takeGlobalNames(const ast::Program &program, NameScope &scope) {
  for (auto &p : program.params)
    scope.take(cIdentifier(p->name));
  for (auto &c : program.consts)
    scope.take(cIdentifier(c->name));
  for (auto &a : program.arrays)
    scope.take(cIdentifier(a->name));
  for (auto &f : program.funcs)
    scope.take(cIdentifier(f->name));
}

NameScope polyc::codegen::programNames(const ast::Program &program) {
  NameScope scope;
  takeGlobalNames(program, scope);
  for (auto &f : program.funcs)
    for (const std::string &param : f->params)
      scope.take(cIdentifier(param));
  for (auto &eq : program.equations)
    takeEquation(*eq, scope);
  for (auto &repeat : program.repeats) {
    scope.take(cIdentifier(repeat->var->name));
    for (auto &eq : repeat->body)
      takeEquation(*eq, scope);
  }
  return scope;
}

std::string polyc::codegen::programTypeName(const ast::Program &program, llvm::StringRef programName,
                                            llvm::StringRef suffix) {
  NameScope scope = programNames(program);
  std::string base = programStructName(programName);
  // S0.poly: struct S0 would be its statement S0; NAN.poly: a macro. PS0, PNAN: no reserved word or
  // pattern starts with 'P' and has no '_', so the search below ends.
  if (!isSpelling(base))
    base = "P" + base;
  // The struct and its classes take the same digit, so that IirCompute goes with Iir.
  for (unsigned k = 0;; ++k) {
    std::string name = base + (k ? std::to_string(k) : "");
    bool free = true;
    for (const char *s : {"", "Compute", "Device", "OpenCL"})
      free = free && !scope.isTaken(name + s) && isSpelling(name + s);
    if (free)
      return name + suffix.str();
  }
}
