// Package execution (seed 000): statements of one fusion group whose right-hand sides are the same sums
// but for the arrays they read are computed by one loop nest, with an accumulator per statement, so that
// the factors they share (the kernel weights, the loop and index arithmetic) are computed once for all
// of them. The optical flow's five spatial sums `sum(b) gy[y, x, b] * sum(c) gx[y, x, c] * P_k[...]` are
// the case it is made for. Which statements form a package is decided here, for every target; a printer
// that computes a point in one thread (ExprPrinter::printsPackages: CUDA's thread functions, OpenCL's
// one-item kernels, the CPU's pointwise functions) prints the package at its first member and nothing at
// the others.
#pragma once

#include "compiler/model/Model.h"
#include "compiler/schedule/Schedule.h"

#include <string>
#include <vector>

namespace polyc::codegen {

struct Package {
  std::vector<unsigned> statements; // model statement indices, in execution order; two or more
};

// The packages of the schedule's fusion groups: runs of members whose right-hand sides hold a sum and
// have the same shape (the same operators, constants, index variables by name, sums with the same ranges
// and no `where`, reads with the same indices) but for the arrays of some reads; the same element type
// and dimension names, left-hand sides of index variables alone, no `where`, `=` only, and no member
// reading another member's array. A sum may sit under `+`, `-`, `*` and negation only (what the package
// printer combines); anything around a sum that is the same for every member would still be computed
// once per member.
std::vector<Package> findPackages(const model::Model &model, const schedule::Schedule &schedule);

} // namespace polyc::codegen
