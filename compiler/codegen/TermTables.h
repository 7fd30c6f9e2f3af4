// Which window sums of a flexible wavefront's statement the GPU targets compute from term tables (a list
// of (coefficient, offset) pairs built once per block or work-group: polyc::rt::cuda::Term on CUDA,
// polyc_term_* on OpenCL): the AST test behind both code generators' choice, kept apart from the printing.
#pragma once

#include "dsl/AST.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace polyc::codegen {

// The reductions of `expr` that are not inside another reduction, in the order they are printed.
std::vector<const ast::Reduction *> outerReductions(const ast::Expr &expr);

// If `red` can be computed from a table of (coefficient, offset) pairs built once, the name of the
// windowed array its terms read: a sum over independent ranges whose bounds and `where` condition are
// the same at every point, with a body that is one read of a windowed array times factors that are
// the same at every point (literals, params, constants, reduction variables, builtins, and reads of
// `staged` arrays at such indices). `pointVars` are the statement's index variables.
std::optional<std::string> termTableWindow(const ast::Reduction &red,
                                           const std::vector<const ast::IndexVar *> &pointVars,
                                           const std::set<std::string> &windowed, const std::set<std::string> &staged);

} // namespace polyc::codegen
