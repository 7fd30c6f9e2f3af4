// Questions about index expressions (dsl/AST.h) that code generators ask: the coefficient of an index
// variable in an affine index (and ast::mentionsAny: whether an expression involves given index variables).
#pragma once

#include "dsl/AST.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace polyc::codegen {

// The coefficient of `var` in an index expression made of index variables, integer literals, params,
// integer constants and + - *; nullopt when the expression is not of that form.
std::optional<int64_t> coefficientOf(const ast::Expr &expr, const ast::IndexVar *var, const ast::Program &program);

using ast::mentionsAny;

} // namespace polyc::codegen
