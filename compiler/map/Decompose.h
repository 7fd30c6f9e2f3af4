// The MPI decomposition of a CPU program (polyc build --mpi): which bands the ranks share, each rank taking
// a block of the band's outermost parallel dimension, and the rows every rank then sends to the others.
// Every array is replicated: after a distributed band, each rank broadcasts the rows of each array the
// band wrote that its block owns. A band is distributed when its first member is parallel, no enclosing
// band is parallel (its loops are not inside an OpenMP loop or another distributed band), and every array
// it writes is written at an index equal to the statement dimension of that member plus a constant, in a
// dimension that is not folded: then a rank's writes lie in its block's rows of that dimension, in every
// run of the dimensions before it. Other bands run whole on every rank (the same result everywhere).
#pragma once

#include "compiler/allocate/Allocation.h"

#include <string>
#include <vector>

namespace polyc::map {

// After a distributed band: `array`'s rows along `dim`, each rank's block shifted by `shift`.
struct RowExchange {
  std::string array;
  unsigned dim = 0;
  int64_t shift = 0;
};

struct BandDecomposition {
  unsigned band = 0;
  bool distributed = false;
  std::string first, extent;          // the range of member 0, C expressions of the params
  std::vector<RowExchange> exchanges; // one per array the band writes
  std::string reason;                 // why it is or is not distributed
};

struct Decomposition {
  std::vector<BandDecomposition> bands; // one per schedule band, same order
};

Decomposition decompose(const model::Model &model, const schedule::Schedule &schedule,
                        const allocate::Allocation &allocation);

} // namespace polyc::map
