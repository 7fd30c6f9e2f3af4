// A rewrite of the checked AST run after FactorSums: a term inside a sum that depends on the equation's
// point and the sums' variables only through a few coordinates is computed once per coordinate point, by
// an equation of its own over a new local array, and read from there (seed 000's hoisted products, and
// the spatial part of its convolution, which every one of the L frames that reads a frame would redo):
//
//   Sxx[t, y, x] = sum(a in 0..L) gt[y, x, a] * sum(b in 0..M) gy[y, x, b] * sum(c in 0..N) gx[y, x, c]
//                  * (Ix[t - a, y + b - 7, x + c - 7] * Ix[t - a, y + b - 7, x + c - 7])
//   -> Sxx[t, y, x] = sum(a in 0..L) gt[y, x, a] * Sxx_pt[t - a, y, x]
//      Sxx_pt[t, y, x] = sum(b in 0..M) gy[y, x, b] * sum(c in 0..N) gx[y, x, c]
//                        * Sxx_pt2[t, y + b - 7, x + c - 7]
//      Sxx_pt2[t, y, x] = Ix[t, y, x] * Ix[t, y, x]
//
// Each coordinate belongs to one index variable i of the equation: either i itself, or i plus enclosing
// sum variables (`t - a`), which is then the whole index of every read it appears in, of arrays with the
// same extent there and the same boundary rule, so that the new array's boundary gives what the reads
// gave. Equal in every arithmetic: the same operations on the same values, only fewer times.
#pragma once

#include "dsl/AST.h"

namespace polyc::model {

// Applies the rewrite to every top-level equation (and to the equations it adds) whose left-hand side
// is an index variable in every position; takes the largest terms first. A term qualifies when it holds a
// sum, a call or two array reads, reads an enclosing sum variable, reads neither the equation's own
// array nor one that an update or a repeat block writes, has no gather, and is zero wherever a moving
// coordinate leaves its array under `boundary zero`, or where that array may be empty under the others. The equation gets a note in
// `Equation::rewrites`; the new equation has `pointTermOf` set. Returns the number of terms taken out.
unsigned computeTermsOncePerPoint(ast::Program &program);

} // namespace polyc::model
