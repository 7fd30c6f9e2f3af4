// Resolved expressions printed back as .poly source, with only the parentheses the grammar needs: how
// polyc explain shows equations that a middle-end rewrite changed, which have no source text of their own.
#pragma once

#include "dsl/AST.h"

#include <string>

namespace polyc::dsl {

// `e` as .poly source that parses back to the same tree: `sum(b in 0..M) gy[y, x, b] * Ix[t, y, x]`.
std::string unparse(const ast::Expr &e);

} // namespace polyc::dsl
