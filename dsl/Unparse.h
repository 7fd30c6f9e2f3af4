// Resolved expressions printed back as .poly source, with only the parentheses the grammar needs: how
// polyc explain shows equations that a middle-end rewrite changed, which have no source text of their own.
#pragma once

#include "dsl/AST.h"

#include <string>

namespace polyc::dsl {

// `e` as .poly source that parses back to the same tree: `sum(b in 0..M) gy[y, x, b] * Ix[t, y, x]`.
std::string unparse(const ast::Expr &e);

// The shortest spelling of `v` that reads back as the same double, always marked as a float literal
// ("2.0", "1e-09"), independent of the C locale.
std::string floatLiteral(double v);

} // namespace polyc::dsl
