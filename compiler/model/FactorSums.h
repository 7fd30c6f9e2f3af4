// A rewrite of the checked AST run before buildModel: a sum over several variables whose body is a
// product with factors of one variable each is nested, one sum per such variable, so that each factor is
// multiplied in where its variable changes (seed 000's separable kernels):
//
//   sum(a in 0..L, b in 0..M, c in 0..N) gt[y, x, a] * gy[y, x, b] * gx[y, x, c] * P[...]
//   -> sum(a in 0..L) gt[y, x, a] * sum(b in 0..M) gy[y, x, b] * sum(c in 0..N) gx[y, x, c] * P[...]
//
// n*m*l + m*l + l multiplications per output instead of 3*n*m*l. Equal in exact arithmetic; in floating
// point the products round in another order, as a parallel reduction's do.
#pragma once

#include "dsl/AST.h"

namespace polyc::model {

// For every `sum` without a where condition over two or more variables whose bounds read none of them:
// the body's factors (its chain of `*`) are grouped by the sum's variables they read. Taking the variables
// in the order they are bound, the first one that some factor reads alone becomes the outer sum, with
// those factors (and the factors that read no variable of the sum) as its body's left operand, the rest
// nested inside; repeated on the inner sum. Sums with nothing to split are left as written. A note on each
// rewritten equation (`Equation::rewrites`) names the order. Returns the number of sums factored.
unsigned factorSeparableSums(ast::Program &program);

} // namespace polyc::model
