// Questions about index expressions (dsl/AST.h) that code generators ask: the coefficient of an index
// variable in an affine index, and whether an expression involves given index variables.
#pragma once

#include "dsl/AST.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace polyc::codegen {

// The coefficient of `var` in an index expression made of index variables, integer literals, params,
// integer constants and + - *; nullopt when the expression is not of that form.
std::optional<int64_t> coefficientOf(const ast::Expr &expr, const ast::IndexVar *var, const ast::Program &program);

// Whether `expr` mentions any of `vars`; true for an expression it cannot look into.
bool mentionsAny(const ast::Expr &expr, const std::vector<const ast::IndexVar *> &vars);

} // namespace polyc::codegen
