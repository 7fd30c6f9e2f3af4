// C identifiers for emitted code: a .poly name may be a C/C++/CUDA/OpenCL keyword (`float`, `int`) or
// collide with a name the generator introduces; NameScope hands out unique readable names.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <set>
#include <string>

namespace polyc::ast {
struct Program;
}

namespace polyc::codegen {

// How a name of the program (array, param, const, function, function argument, index variable) is
// spelled in emitted code: every printer spells user names through this one function. The name itself,
// or the name with a trailing '_' when it
//  - is a keyword or reserved word of C, C++, OpenCL C or CUDA, a macro or built-in of the headers and
//    languages of the targets (`int`, `kernel`, `NAN`, `errno`, `barrier`, `sin`, `threadIdx`), or a
//    fixed identifier of the emitted code or the runtime (`p`, `program`, `context`, `timer`, `main`);
//  - starts like a statement's name (S0, S1_reduce, ...) or looks like a macro (upper case with an
//    underscore, `INT_MAX`);
//  - starts with '_' or "polyc_" (the prefix of polyc's own identifiers), or with an API's prefix
//    (`cl_`, `cuda`, `native_`, `half_`), or ends with "_run" or "_params" (the C interface's names);
//  - ends with '_' (so that `int` -> `int_` and `int_` -> `int__` stay different).
// So the spelling is injective, an escaped spelling always ends with '_', and an unescaped one never is
// a name that emitted code declares or uses by itself. Emitted code's own identifiers either start with
// "polyc_" and do not end with '_', or come from a NameScope in which the spellings of the program's
// names are taken, or are in the reserved list.
std::string cIdentifier(llvm::StringRef name);

// A C expression over the program's params as the schedule, the allocation and the mapping write it
// (isl's names: "M * M >= 32 && H * W < 65536", "int64_t(N) >= 262144", "false") with every param of
// `program` spelled by cIdentifier and every other word as it is.
std::string spellParams(llvm::StringRef text, const ast::Program &program);

// Whether `name` may name something in emitted code: a spelling of cIdentifier (ends with '_', or needs
// no escape). NameScope::fresh hands out only such names.
bool isSpelling(llvm::StringRef name);

// Whether `name` is an identifier ([A-Za-z_][A-Za-z0-9_]*); a skewed band dimension's name is an
// expression ("t + i") and cannot name a loop.
bool isIdentifier(llvm::StringRef name);

// The name of the struct that emitted host code declares for the program `program`: its words
// (separated by '_') capitalised and joined, "iir_2d" -> "Iir2d", with a leading "P" when that would
// be empty or start with a digit.
std::string programStructName(llvm::StringRef program);

class NameScope;

// Takes the program's global names (params, consts, arrays, functions) as cIdentifier spells them.
void takeGlobalNames(const ast::Program &program, NameScope &scope);

// The names of every item of the program as cIdentifier spells them: the global names, function
// arguments, index variables.
NameScope programNames(const ast::Program &program);

// The struct or class of emitted code for the program `programName` (programStructName) with `suffix`
// ("", "Compute", "Device", "OpenCL"): with a digit after the struct's name where a name of the
// program is spelled like one of them (a program prog.poly with an array Prog: struct Prog1).
std::string programTypeName(const ast::Program &program, llvm::StringRef programName, llvm::StringRef suffix);

// A set of names in use. `fresh("t")` returns "t" if free, else "t1", "t2", ... (or "t1_", ... where
// those are reserved words); never a reserved word (isSpelling); the result is taken. `base` is a
// spelling (cIdentifier of a user name) or a name of the emitted code.
class NameScope {
public:
  void take(const std::string &name) { used_.insert(name); }
  bool isTaken(const std::string &name) const { return used_.count(name) != 0; }
  std::string fresh(const std::string &base);

private:
  std::set<std::string> used_;
};

} // namespace polyc::codegen
