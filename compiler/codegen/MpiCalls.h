// What the targets' printers emit around a band the MPI ranks share (map::Decomposition, built with
// --mpi): the rank's block of the band's member 0 (polyc_rank), its loops narrowed to that block, and
// the calls of the runtime's MPI layer (runtime/include/polyc/mpi/Mpi.h) that move the rows afterwards.
// The CPU target calls them on its arrays; a GPU target on its device arrays, staging through host
// memory (`copies`).
#pragma once

#include "compiler/codegen/CodeWriter.h"
#include "compiler/codegen/ExprPrinter.h"
#include "compiler/codegen/IslAstPrinter.h"
#include "compiler/codegen/Packages.h"
#include "compiler/map/Decompose.h"

#include <functional>
#include <map>
#include <string>

namespace polyc::codegen {


// Narrows a loop of the shared band's member 0 to this rank's block: the point loop from its first value
// to its end, the tile loop from the tile that holds its first value. The condition keeps OpenMP's
// canonical form (the iterator compared with one bound).
void narrowToRankBlock(LoopView &loop);

// The guard of an instance outside the loops of the rank's block: it runs only on the rank whose block
// holds `row`, its value of member 0.
std::string ownsRowCondition(const std::string &row);

// How the printed calls reach the arrays: the expression of an array's data (its name, `program.A` for a
// device array, a RunContext's bytes), and what the exchanges are called on: the MPI layer
// ("polyc::rt::mpi::") or a GPU rank's RankRows ("polyc_rows.", polyc/cuda/MpiRows.h).
struct MpiArrays {
  const model::Model &model;
  const ExprPrinter &exprs;
  std::function<std::string(const model::ArrayInfo &)> data;
  std::string exchanges = "polyc::rt::mpi::";
  // The RowCopies a pipeline's messages stage through (a GPU rank's device arrays), or empty.
  std::string copies = {};
  // How a halo exchange is begun before a block's interior and finished after it (printSharedBand): the
  // declaration of what holds the messages under way (or empty), the call that begins one (its
  // arguments follow, as exchangeHalo's), the statement that finishes them all.
  struct {
    std::string declare, begin, finish;
  } overlap = {};
};

// A band the ranks share, in a block of its own: `polyc_rank` (this rank's block of the band's member 0)
// declared, the band printed by `printBand`, then each array's rows sent to the ranks that read them
// (exchangeHalo or shareRowBlocks), or a comment when no rank reads another's rows. Where it sends halos
// (and is neither widened nor a pipeline), the band runs in a loop over three parts of the block,
// `polyc_rank` each in turn: the rows other ranks read first, then, their messages begun
// (`arrays.overlap`), the interior, and the halos are finished after it.
void printSharedBand(CodeWriter &w, unsigned band, const map::BandDecomposition &shared, const MpiArrays &arrays,
                     const std::function<void()> &printBand);

// The strips of a band the ranks run as a pipeline (map::Pipeline), as printSharedBand's `printBand`:
// `polyc_pipeline` (the MPI layer's PipelineStrips over the band's array), then a loop over the strips of
// columns, [polyc_column, polyc_columnEnd) from the first column: the rows before the rank's block
// received, the strip's points printed by `printStrip`, the rank's rows that later blocks read sent.
void printPipelineStrips(CodeWriter &w, const map::BandDecomposition &shared, const MpiArrays &arrays,
                         const std::function<void()> &printStrip);
// The pipeline's array, blocks and depth as the arguments of PipelineStrips (and of a GPU target's
// PeerPipeline): RowLayout, RowBlocks, depth.
std::string pipelineArguments(const map::BandDecomposition &shared, const MpiArrays &arrays);

// Reductions the ranks split by their terms (map::TermSplit), as the program prints them: each split
// statement's block of terms is the program member splitBlockName(statement), set once a run
// (printSplitBlocks); a statement combined after its band keeps its partial values in the member array
// splitBufferName(statement), of the written array's storage size, and has a function of its own for them,
// partialFunctionName(its function). The GPU targets, whose statements cannot call MPI, keep the partial
// value of an instance combined at once in such a buffer too, of one element (`instanceBuffers`).
std::string splitBlockName(const model::Statement &statement);
std::string splitBufferName(const model::Statement &statement);
std::string partialFunctionName(const std::string &statementFunction);
// The split of a statement's reduction by its terms, if the ranks split it (none without --mpi), and the
// splits combined after each run of a band.
const map::TermSplit *splitOf(const map::Decomposition *decomposition, unsigned statement);
std::vector<const map::TermSplit *> bandSplits(const map::Decomposition *decomposition, unsigned band);
// The polyc::rt::mpi::Combine of a reduction's operation.
std::string combineOperation(const ast::Reduction &reduction);
// What the ExprPrinter needs to print the splits (ExprPrinter::setSplitReductions).
std::map<const ast::Reduction *, ExprPrinter::SplitReduction>
splitReductions(const map::Decomposition &decomposition, const model::Model &model, bool instanceBuffers = false);
// The elements of a split statement's buffer (a C expression of the params; `checked` where it is
// allocated: ExprPrinter::checkedStorageSize).
std::string splitBufferSize(const map::TermSplit &split, const model::Model &model, const ExprPrinter &exprs,
                            bool checked = false);
// Removes the packages (Packages.h) that hold a split statement: it prints its reduction alone (its
// partial value), not with others.
void dropSplitPackages(std::vector<Package> &packages, const map::Decomposition &decomposition);
// Sets each split statement's block of terms (in a function of the program, params in scope), a member
// of `owner` ("program." on a GPU target) or of the program itself.
void printSplitBlocks(CodeWriter &w, const map::Decomposition &decomposition, const model::Model &model,
                      const std::string &owner = "");

// At the end of a run: rank 0 collects the rows of the outputs that only halos shared.
void printGathers(CodeWriter &w, const map::Decomposition &decomposition, const MpiArrays &arrays);

// The same in a GPU target's download (a function of `context`), once every rank has copied its outputs
// back to the RunContext: host to host, outside the timed region as the download is. Declares the params.
void printGathersOfContext(CodeWriter &w, const map::Decomposition &decomposition, const model::Model &model,
                           const ExprPrinter &exprs);

} // namespace polyc::codegen
