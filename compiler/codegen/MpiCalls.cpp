// The MPI calls around shared bands (see MpiCalls.h).
#include "compiler/codegen/MpiCalls.h"

#include "compiler/codegen/Names.h"
#include "compiler/codegen/ProgramInterface.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace polyc;
using namespace polyc::codegen;

void polyc::codegen::narrowToRankBlock(LoopView &loop) {
  const std::string init = "(" + loop.init + ")";
  if (loop.tileLoop)
    // The tile holding the block's first value.
    loop.init = "polyc_max(" + init + ", " + init + " + (polyc_rank.first - " + init + ") / " + loop.inc +
                " * " + loop.inc + ")";
  else if (loop.inc != "1")
    // A loop by steps (a skewed band's `c += 3`): its first value in the block, on its own steps (fuzz seed
    // 93000277: starting at the block's first value ran the points between them).
    loop.init = "polyc_max(" + init + ", " + init + " - polyc_floord(" + init + " - polyc_rank.first, " +
                loop.inc + ") * " + loop.inc + ")";
  else
    loop.init = "polyc_max(" + init + ", polyc_rank.first)";
  // isl prints `i < B` or `i <= B`.
  const std::string below = loop.iterator + " < ", upTo = loop.iterator + " <= ";
  if (llvm::StringRef(loop.cond).starts_with(upTo))
    loop.cond = upTo + "polyc_min(" + loop.cond.substr(upTo.size()) + ", polyc_rank.end - 1)";
  else if (llvm::StringRef(loop.cond).starts_with(below))
    loop.cond = below + "polyc_min(" + loop.cond.substr(below.size()) + ", polyc_rank.end)";
  else
    loop.cond = "(" + loop.cond + ") && " + loop.iterator + " < polyc_rank.end";
}

std::string polyc::codegen::ownsRowCondition(const std::string &row) {
  return "polyc_rank.first <= " + row + " && " + row + " < polyc_rank.end";
}

// {data, element bytes, runs before the row dimension, rows, elements a row}: the RowLayout of the
// exchanged array, in its storage (a folded dimension counts its window).
static std::string rowLayout(const map::RowExchange &exchange, const MpiArrays &arrays) {
  const model::ArrayInfo &array =
      *llvm::find_if(arrays.model.arrays, [&](const model::ArrayInfo &a) { return a.name == exchange.array; });
  auto storageExtent = [&](unsigned dim) {
    const schedule::FoldedStorage *fold = arrays.exprs.folding(array.name, dim);
    return "(" + (fold ? fold->window : arrays.exprs.extent(array, dim)) + ")";
  };
  std::vector<std::string> before, after;
  for (unsigned d = 0; d < array.decl->rank(); ++d)
    if (d != exchange.dim)
      (d < exchange.dim ? before : after).push_back(storageExtent(d));
  auto product = [](const std::vector<std::string> &factors) {
    return factors.empty() ? std::string("1") : llvm::join(factors, " * ");
  };
  return "polyc::rt::mpi::RowLayout{" + arrays.data(array) + ", sizeof(" +
         arrays.exprs.typeName(array.decl->elemType) + "), " + product(before) + ", " +
         storageExtent(exchange.dim) + ", " + product(after) + "}";
}

// The RowLayout and RowBlocks arguments of a call for `exchange`, blocks of [first, first + extent), in
// `chunks` chunks a rank where more than 1.
static std::string rowArguments(const map::RowExchange &exchange, const std::string &first,
                                const std::string &extent, const MpiArrays &arrays, int64_t chunks = 1) {
  const ast::Program &program = *arrays.model.program;
  return rowLayout(exchange, arrays) + ", polyc::rt::mpi::RowBlocks{" + spellParams(first, program) + ", " +
         spellParams(extent, program) + ", " + std::to_string(exchange.shift) +
         (chunks > 1 ? ", " + std::to_string(chunks) : "") + "}";
}

void polyc::codegen::printSharedBand(CodeWriter &w, unsigned band, const map::BandDecomposition &shared,
                                     const MpiArrays &arrays, const std::function<void()> &printBand) {
  const ast::Program &program = *arrays.model.program;
  w.line("{");
  w.indent();
  w.comment("Band " + std::to_string(band) + " shared by the MPI ranks: " + shared.reason +
            ", then send the rows they wrote.");
  const std::string first = spellParams(shared.first, program), extent = spellParams(shared.extent, program);
  std::string block = "polyc::rt::mpi::rankBlock(" + first + ", " + extent + ")";
  if (shared.widenBefore || shared.widenAfter) {
    w.comment("The block widened by " + std::to_string(shared.widenBefore) + " before and " +
              std::to_string(shared.widenAfter) + " after: it " + shared.widenWhy + ".");
    block = "polyc::rt::mpi::widenBlock(" + block + ", " + first + ", " + extent + ", " +
            std::to_string(shared.widenBefore) + ", " + std::to_string(shared.widenAfter) + ")";
  }
  // The halos that travel while the block's interior runs: not beside a widened block, whose rows other
  // ranks read are not at its edges, nor a pipeline, whose strips span its block.
  std::vector<const map::RowExchange *> overlapped;
  int64_t firstRows = 0, lastRows = 0; // the rows at the block's edges that other ranks read
  for (const map::RowExchange &exchange : shared.exchanges)
    if (!shared.widenBefore && !shared.widenAfter && !shared.pipeline &&
        exchange.kind == map::ExchangeKind::Halo && exchange.sends()) {
      overlapped.push_back(&exchange);
      firstRows = std::max(firstRows, exchange.hi - exchange.shift);
      lastRows = std::max(lastRows, exchange.shift - exchange.lo);
    }
  if (shared.chunks > 1) {
    w.comment("Block-cyclic: " + shared.chunksWhy + ", so each rank runs " + std::to_string(shared.chunks) +
              " chunks dealt along the range in snake order.");
    w.openBlock("for (const polyc::rt::mpi::Block polyc_rank : polyc::rt::mpi::rankChunks(" + first + ", " +
                extent + ", " + std::to_string(shared.chunks) + "))");
    printBand();
    w.closeBlock();
  } else if (overlapped.empty()) {
    w.line("const polyc::rt::mpi::Block polyc_rank = " + block + ";");
    printBand();
  } else {
    w.comment("Its first " + std::to_string(firstRows) + " and last " + std::to_string(lastRows) +
              " rows first, which other ranks read; then, while they travel, the rows between.");
    w.line("const std::array<polyc::rt::mpi::Block, 3> polyc_parts = polyc::rt::mpi::edgesFirst(" + block +
           ", " + std::to_string(firstRows) + ", " + std::to_string(lastRows) + ");");
    if (!arrays.overlap.declare.empty())
      w.line(arrays.overlap.declare);
    w.openBlock("for (int polyc_part = 0; polyc_part < 3; ++polyc_part)");
    w.openBlock("if (polyc_part == 2)");
    for (const map::RowExchange *exchange : overlapped)
      w.line(arrays.overlap.begin + rowArguments(*exchange, shared.first, shared.extent, arrays) + ", " +
             std::to_string(exchange->lo) + ", " + std::to_string(exchange->hi) + ");");
    w.closeBlock();
    w.line("const polyc::rt::mpi::Block polyc_rank = polyc_parts[polyc_part];");
    printBand();
    w.closeBlock();
    w.line(arrays.overlap.finish);
  }
  for (const map::RowExchange &exchange : shared.exchanges) {
    if (llvm::is_contained(overlapped, &exchange))
      continue;
    std::string rows = rowArguments(exchange, shared.first, shared.extent, arrays, shared.chunks);
    if (exchange.recomputed)
      w.comment("No message for " + exchange.array +
                ": the widened block computed the rows other blocks read.");
    else if (exchange.kind == map::ExchangeKind::Broadcast)
      w.line(arrays.exchanges + "shareRowBlocks(" + rows + ");");
    else if (exchange.sends())
      w.line(arrays.exchanges + "exchangeHalo(" + rows + ", " + std::to_string(exchange.lo) + ", " +
             std::to_string(exchange.hi) + ");");
    else
      w.comment("No rank reads another's rows of " + exchange.array + ".");
  }
  w.dedent();
  w.line("}");
}

std::string polyc::codegen::pipelineArguments(const map::BandDecomposition &shared, const MpiArrays &arrays) {
  return rowArguments(shared.exchanges.front(), shared.first, shared.extent, arrays) + ", " +
         spellParams(shared.pipeline->depth, *arrays.model.program);
}

void polyc::codegen::printPipelineStrips(CodeWriter &w, const map::BandDecomposition &shared,
                                         const MpiArrays &arrays, const std::function<void()> &printStrip) {
  const map::Pipeline &pipeline = *shared.pipeline;
  const ast::Program &program = *arrays.model.program;
  const std::string columnFirst = spellParams(pipeline.columnFirst, program);
  const std::string columnExtent = "int64_t(" + spellParams(pipeline.columnExtent, program) + ")";
  auto arrayColumn = [&](const std::string &offset) {
    std::string column = columnFirst == "0" ? offset : columnFirst + " + " + offset;
    return pipeline.columnShift ? column + " + " + std::to_string(pipeline.columnShift) : column;
  };
  const std::string columns = "{" + arrayColumn("polyc_column") + ", " + arrayColumn("polyc_columnEnd") + "}";
  w.comment("The columns in strips: before one, the rows of " + pipeline.array +
            " before this rank's block that it reads, from the ranks that wrote them; after it, its own rows "
            "that later blocks read, to those ranks.");
  w.line("const polyc::rt::mpi::PipelineStrips polyc_pipeline(" + pipelineArguments(shared, arrays) +
         (arrays.copies.empty() ? "" : ", " + arrays.copies) + ");");
  w.line("const int64_t polyc_strip = polyc::rt::mpi::PipelineStrips::stripWidth(" + columnExtent + ");");
  w.openBlock("for (int64_t polyc_column = 0; polyc_column < " + columnExtent +
              "; polyc_column += polyc_strip)");
  w.line("const int64_t polyc_columnEnd = std::min<int64_t>(" + columnExtent +
         ", polyc_column + polyc_strip);");
  w.line("polyc_pipeline.receive(" + columns + ");");
  printStrip();
  w.line("polyc_pipeline.send(" + columns + ");");
  w.closeBlock();
}

void polyc::codegen::printGathers(CodeWriter &w, const map::Decomposition &decomposition, const MpiArrays &arrays) {
  if (decomposition.gathers.empty())
    return;
  w.comment("MPI: rank 0 collects the other ranks' rows of the outputs that only halos shared.");
  for (const map::RowGather &gather : decomposition.gathers)
    w.line("polyc::rt::mpi::gatherRowBlocks(" + rowArguments(gather.rows, gather.first, gather.extent, arrays) +
           ");");
}

void polyc::codegen::printGathersOfContext(CodeWriter &w, const map::Decomposition &decomposition,
                                           const model::Model &model, const ExprPrinter &exprs) {
  if (decomposition.gathers.empty())
    return;
  std::vector<const model::ArrayInfo *> interface = interfaceArrays(model);
  auto hostBytes = [&](const model::ArrayInfo &array) {
    size_t k = size_t(llvm::find(interface, &array) - interface.begin());
    return "context.arrays[" + std::to_string(k) + "].bytes.data()";
  };
  const ast::Program &program = *model.program;
  for (unsigned k = 0; k < program.params.size(); ++k)
    w.line("[[maybe_unused]] const int64_t " + cIdentifier(program.params[k]->name) + " = context.params[" +
           std::to_string(k) + "];");
  printGathers(w, decomposition, {model, exprs, hostBytes});
}

std::string polyc::codegen::splitBlockName(const model::Statement &statement) {
  return "polyc_terms" + statement.name;
}

std::string polyc::codegen::splitBufferName(const model::Statement &statement) {
  return "polyc_partial" + statement.name;
}

std::string polyc::codegen::partialFunctionName(const std::string &statementFunction) {
  return statementFunction + "Partial";
}

const map::TermSplit *polyc::codegen::splitOf(const map::Decomposition *decomposition, unsigned statement) {
  if (decomposition)
    for (const map::TermSplit &split : decomposition->splits)
      if (split.statement == statement)
        return &split;
  return nullptr;
}

std::vector<const map::TermSplit *> polyc::codegen::bandSplits(const map::Decomposition *decomposition,
                                                               unsigned band) {
  std::vector<const map::TermSplit *> splits;
  if (decomposition)
    for (const map::TermSplit &split : decomposition->splits)
      if (split.band == int(band))
        splits.push_back(&split);
  return splits;
}

std::string polyc::codegen::combineOperation(const ast::Reduction &reduction) {
  switch (reduction.op) {
  case ast::ReductionOp::Sum: return "polyc::rt::mpi::Combine::Sum";
  case ast::ReductionOp::Max: return "polyc::rt::mpi::Combine::Max";
  case ast::ReductionOp::Min: return "polyc::rt::mpi::Combine::Min";
  }
  return "";
}

std::map<const ast::Reduction *, ExprPrinter::SplitReduction>
polyc::codegen::splitReductions(const map::Decomposition &decomposition, const model::Model &model,
                                bool instanceBuffers) {
  std::map<const ast::Reduction *, ExprPrinter::SplitReduction> result;
  for (const map::TermSplit &split : decomposition.splits) {
    const model::Statement &statement = model.statements[split.statement];
    const ast::Reduction &reduction = *statement.reductions[0].reduction;
    const bool buffered = split.band >= 0 || instanceBuffers;
    result[&reduction] = {split.variable, splitBlockName(statement), buffered ? splitBufferName(statement) : "",
                          combineOperation(reduction), split.band < 0 && instanceBuffers};
  }
  return result;
}

std::string polyc::codegen::splitBufferSize(const map::TermSplit &split, const model::Model &model,
                                            const ExprPrinter &exprs, bool checked) {
  if (split.band < 0)
    return "1";
  const model::ArrayInfo &array = *model.findArray(model.statements[split.statement].write.array);
  return checked ? exprs.checkedStorageSize(array) : exprs.storageSize(array);
}

void polyc::codegen::dropSplitPackages(std::vector<Package> &packages, const map::Decomposition &decomposition) {
  llvm::erase_if(packages, [&](const Package &package) {
    return llvm::any_of(decomposition.splits, [&](const map::TermSplit &split) {
      return llvm::is_contained(package.statements, split.statement);
    });
  });
}

void polyc::codegen::printSplitBlocks(CodeWriter &w, const map::Decomposition &decomposition,
                                      const model::Model &model, const std::string &owner) {
  const ast::Program &program = *model.program;
  for (const map::TermSplit &split : decomposition.splits)
    w.line(owner + splitBlockName(model.statements[split.statement]) + " = polyc::rt::mpi::rankBlock(" +
           spellParams(split.first, program) + ", " + spellParams(split.extent, program) + ");");
}
