// Helpers shared by the rewrites of the checked AST that run before buildModel (HoistInputTerms,
// SnapshotUpdates); defined in HoistInputTerms.cpp.
#pragma once

#include "dsl/AST.h"

#include <functional>
#include <set>
#include <string>

namespace polyc::model {

// Calls `fn` on `e` and every expression below it, reduction bounds and conditions included.
void walk(ast::Expr &e, const std::function<void(ast::Expr &)> &fn);

// A copy of a shape extent (affine in params and integer constants, so literals, names and arithmetic
// only); null for anything else.
ast::ExprPtr cloneExtent(const ast::Expr &e);

// Every name the program declares or binds, so that a new array or index variable clashes with none.
std::set<std::string> namesInUse(ast::Program &program);

// `base`, or `base` followed by 2, 3, ... where that is taken; the result is added to `names`.
std::string freshName(const std::string &base, std::set<std::string> &names);

} // namespace polyc::model
