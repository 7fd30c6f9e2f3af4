// C identifiers for emitted code: a .poly name may be a C/C++/CUDA/OpenCL keyword (`float`, `int`) or
// collide with a name the generator introduces; NameScope hands out unique readable names.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <set>
#include <string>

namespace polyc::codegen {

// The identifier generated code uses for the .poly name `name`: the name itself, or the name with a
// trailing '_' when it is a keyword of any C-family target or starts with the reserved prefix "polyc_".
std::string cIdentifier(llvm::StringRef name);

// Whether `name` is an identifier ([A-Za-z_][A-Za-z0-9_]*); a skewed band dimension's name is an
// expression ("t + i") and cannot name a loop.
bool isIdentifier(llvm::StringRef name);

// The name of the struct that emitted host code declares for the program `program`: its words
// (separated by '_') capitalised and joined, "iir_2d" -> "Iir2d", with a leading "P" when that would
// be empty or start with a digit.
std::string programStructName(llvm::StringRef program);

// A set of names in use. `fresh("t")` returns "t" if free, else "t1", "t2", ...; the result is taken.
class NameScope {
public:
  void take(const std::string &name) { used_.insert(name); }
  bool isTaken(const std::string &name) const { return used_.count(name) != 0; }
  std::string fresh(const std::string &base);

private:
  std::set<std::string> used_;
};

} // namespace polyc::codegen
