// Dead instances: statement instances that write an element of a local array that no statement reads.
// A local array must be defined everywhere it is declared (DefinitionCheck), so programs define elements
// that nothing reads: durbin's `ys[k, i] = 0.0 where i > k` is N^2 / 2 stores of which none is read.
// They are removed from their statements' domains (and access relations) before dependences are
// computed; nothing observable changes, since only inputs, outputs and inouts leave the program.
#pragma once

#include "compiler/model/Model.h"

namespace polyc::model {

// Empties the domain of every statement that writes a local array no output or inout depends on, then
// shrinks the domain of every statement that writes a local array to the instances whose element some
// instance reads (must- and may-reads, reductions' operands included), repeated while a round removes
// readers. Returns the number of statements whose domain shrank.
unsigned removeDeadInstances(Model &model);

} // namespace polyc::model
