// The body of a round-tile kernel, shared by the GPU printers (RoundTileKernel.h).
#include "compiler/codegen/RoundTileKernel.h"

#include "llvm/ADT/StringExtras.h"

namespace polyc::codegen {

namespace {

// Names and sizes of one dimension of the tile: the block's own points from `own` (`tile` of them), the
// points it holds from `origin` (`count` of them, in a buffer row of `stride` points), and whether the
// array goes on below (`cutBelow`) and above (`cutAbove`) them.
struct TileDim {
  std::string n; // the dimension's number
  std::string own, origin, count, cutBelow, cutAbove, position, index, extent;
  int64_t tile = 0, held = 0, reach = 0, halo = 0;
};

std::vector<TileDim> tileDims(const map::RoundTiles &tiles, const ExprPrinter &exprs) {
  const model::ArrayInfo &array = *exprs.model().findArray(tiles.array);
  std::vector<TileDim> dims(tiles.tile.size());
  for (unsigned k = 0; k < dims.size(); ++k) {
    const std::string n = std::to_string(k);
    dims[k] = {n,
               "polyc_own" + n,
               "polyc_o" + n,
               "polyc_n" + n,
               "polyc_below" + n,
               "polyc_above" + n,
               "polyc_a" + n,
               "polyc_i" + n,
               exprs.extent(array, k)};
    dims[k].tile = tiles.tile[k];
    dims[k].held = tiles.held(k);
    dims[k].reach = tiles.reach[k];
    dims[k].halo = int64_t(tiles.rounds) * tiles.reach[k];
  }
  return dims;
}

// The positions in the held box of the flat position polyc_k (row-major over `sizes`, constants) as
// polyc_a<k>.
void declarePositions(const std::vector<TileDim> &dims, const std::vector<int64_t> &sizes, CodeWriter &w) {
  std::string rest = "polyc_k";
  for (size_t k = dims.size(); k-- > 0;) {
    w.line("const int " + dims[k].position + " = " +
           (k == 0 ? rest : rest + " % " + std::to_string(sizes[k])) + ";");
    rest = "(" + rest + " / " + std::to_string(sizes[k]) + ")";
  }
}

} // namespace

ExprPrinter::RoundTileStorage roundTileStorage(const map::RoundTiles &tiles) {
  ExprPrinter::RoundTileStorage storage{
      tiles.array, tiles.snapshot, "polyc_from", "polyc_to", "polyc_delta", {}, {}};
  for (unsigned k = 0; k < tiles.tile.size(); ++k) {
    storage.origin.push_back("polyc_o" + std::to_string(k));
    storage.stride.push_back(std::to_string(tiles.held(k)));
  }
  return storage;
}

std::string roundTileBlocks(const map::RoundTiles &tiles, const ExprPrinter &exprs) {
  const model::ArrayInfo &array = *exprs.model().findArray(tiles.array);
  std::vector<std::string> counts;
  for (unsigned k = 0; k < tiles.tile.size(); ++k)
    counts.push_back("int64_t((" + exprs.extent(array, k) + " + " + std::to_string(tiles.tile[k] - 1) +
                     ") / " + std::to_string(tiles.tile[k]) + ")");
  return llvm::join(counts, " * ");
}

std::string describeRoundTileKernel(const map::RoundTiles &tiles, const std::string &block,
                                    const std::string &memory) {
  return "a " + block + " holds up to " + tiles.heldPoints() + ", the halo around them) in two buffers in " +
         memory + " memory, runs up to " + std::to_string(tiles.rounds) +
         " rounds on them, each over fewer points (" +
         "those whose reads the block holds), and writes its own points to polyc_target";
}

void printRoundTileBody(const map::RoundTiles &tiles, const ExprPrinter &exprs,
                        const RoundTileDialect &dialect, CodeWriter &w) {
  const model::ArrayInfo &array = *exprs.model().findArray(tiles.array);
  const std::vector<TileDim> dims = tileDims(tiles, exprs);
  const std::string &ix = dialect.index;
  std::vector<int64_t> held, own;
  int64_t heldPoints = 1, ownPoints = 1;
  for (const TileDim &d : dims) {
    held.push_back(d.held);
    own.push_back(d.tile);
    heldPoints *= d.held;
    ownPoints *= d.tile;
  }
  const std::string size = std::to_string(heldPoints);
  auto heldOffset = [&](const std::vector<std::string> &positions) {
    std::string offset;
    for (size_t k = 0; k < dims.size(); ++k)
      offset = offset.empty() ? positions[k]
                              : "(" + offset + ") * " + std::to_string(dims[k].held) + " + " + positions[k];
    return offset;
  };
  auto indices = [&](const std::vector<std::string> &from) {
    std::vector<std::string> point;
    for (size_t k = 0; k < dims.size(); ++k)
      point.push_back(from[k] + " + " + dims[k].position);
    return point;
  };
  std::vector<std::string> origins, owns, positions;
  for (const TileDim &d : dims) {
    origins.push_back(d.origin);
    owns.push_back(d.own);
    positions.push_back(d.position);
  }

  w.line(dialect.buffers + " polyc_buffers[" + std::to_string(2 * heldPoints) + "];");
  w.line("const int polyc_item = " + dialect.item + ", polyc_items = " + dialect.items + ";");
  w.comment(
      "The block's own points from polyc_own<k>; those it holds from polyc_o<k>, polyc_n<k> of them, and "
      "whether the array goes on below and above them.");
  w.line(ix + " polyc_block = (" + ix + ")" + dialect.group + ";");
  for (size_t k = dims.size(); k-- > 0;) {
    const TileDim &d = dims[k];
    const std::string tiles =
        "((" + d.extent + " + " + std::to_string(d.tile - 1) + ") / " + std::to_string(d.tile) + ")";
    w.line("const " + ix + " " + d.own + " = " + (k == 0 ? "polyc_block" : "polyc_block % " + tiles) + " * " +
           std::to_string(d.tile) + ";");
    if (k > 0)
      w.line("polyc_block /= " + tiles + ";");
    w.line("const " + ix + " " + d.origin + " = " + d.own + " > " + std::to_string(d.halo) + " ? " + d.own +
           " - " + std::to_string(d.halo) + " : (" + ix + ")0;");
    w.line("const " + ix + " " + d.count + " = (" + d.own + " + " + std::to_string(d.tile + d.halo) + " < " +
           d.extent + " ? " + d.own + " + " + std::to_string(d.tile + d.halo) + " : (" + ix + ")(" +
           d.extent + ")) - " + d.origin + ";");
    w.line("const int " + d.cutBelow + " = " + d.origin + " > 0, " + d.cutAbove + " = " + d.origin + " + " +
           d.count + " < " + d.extent + ";");
  }

  w.openBlock("for (int polyc_k = polyc_item; polyc_k < " + size + "; polyc_k += polyc_items)");
  declarePositions(dims, held, w);
  std::vector<std::string> loaded;
  for (const TileDim &d : dims)
    loaded.push_back(d.position + " < " + d.count);
  w.line("if (" + llvm::join(loaded, " && ") + ")");
  w.line("  polyc_buffers[polyc_k] = " + dialect.source + "[" + exprs.elementIndex(array, indices(origins)) +
         "];");
  w.closeBlock();
  w.line(dialect.barrier);

  w.line("bool polyc_moved = false; // an own point changed in the last round");
  w.openBlock("for (int polyc_j = 0; polyc_j < polyc_rounds; ++polyc_j)");
  w.line("const " + dialect.bufferPointer + " *const polyc_from = polyc_buffers + (polyc_j & 1) * " + size +
         ";");
  w.line(dialect.bufferPointer + " *const polyc_to = polyc_buffers + ((polyc_j & 1) ^ 1) * " + size + ";");
  w.comment("The points of this round: those held, less (polyc_j + 1) x reach where the array goes on.");
  for (const TileDim &d : dims) {
    const std::string shrink = "(polyc_j + 1) * " + std::to_string(d.reach);
    w.line("const int polyc_lo" + d.n + " = " + d.cutBelow + " * " + shrink + ", polyc_hi" + d.n +
           " = (int)(" + d.count + ") - " + d.cutAbove + " * " + shrink + ";");
  }
  w.openBlock("for (int polyc_k = polyc_item; polyc_k < " + size + "; polyc_k += polyc_items)");
  declarePositions(dims, held, w);
  std::vector<std::string> outside, ownTests;
  for (const TileDim &d : dims) {
    outside.push_back(d.position + " < polyc_lo" + d.n + " || " + d.position + " >= polyc_hi" + d.n);
    ownTests.push_back(d.origin + " + " + d.position + " >= " + d.own + " && " + d.origin + " + " +
                       d.position + " < " + d.own + " + " + std::to_string(d.tile));
  }
  w.line("if (" + llvm::join(outside, " || ") + ")");
  w.line("  continue;");
  std::vector<std::string> point;
  for (const TileDim &d : dims) {
    w.line("const " + ix + " " + d.index + " = " + d.origin + " + " + d.position + ";");
    point.push_back(d.index);
  }
  std::vector<std::string> inside;
  for (const TileDim &d : dims)
    if (d.reach > 0)
      inside.push_back(d.index + " >= " + std::to_string(d.reach) + " && " + d.index + " + " +
                       std::to_string(d.reach) + " < " + d.extent);
  w.line("bool polyc_delta = false;");
  dialect.update(w, point, inside.empty() ? "true" : llvm::join(inside, " && "));
  w.line("polyc_moved = polyc_moved || (polyc_delta && polyc_j == polyc_rounds - 1 && " +
         llvm::join(ownTests, " && ") + ");");
  w.closeBlock();
  w.line(dialect.barrier);
  w.closeBlock();
  if (!dialect.reportChange.empty())
    w.line(dialect.reportChange);

  w.openBlock("for (int polyc_k = polyc_item; polyc_k < " + std::to_string(ownPoints) +
              "; polyc_k += polyc_items)");
  declarePositions(dims, own, w);
  std::vector<std::string> fits, fromOrigin;
  for (const TileDim &d : dims) {
    fits.push_back(d.own + " + " + d.position + " < " + d.extent);
    fromOrigin.push_back("(int)(" + d.own + " - " + d.origin + ") + " + d.position);
  }
  w.line("if (" + llvm::join(fits, " && ") + ")");
  w.line("  " + dialect.target + "[" + exprs.elementIndex(array, indices(owns)) +
         "] = polyc_buffers[(polyc_rounds & 1) * " + size + " + " + heldOffset(fromOrigin) + "];");
  w.closeBlock();
}

} // namespace polyc::codegen
