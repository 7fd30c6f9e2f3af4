// polyc explain --format=svg: a 2D iteration space drawn like seed 004's Fig. 2, for small concrete
// params: the points, the dependences of one representative point, the schedule's hyperplanes (lines
// of equal t) and the allocation's columns (one processor per column).
#include "ExplainPrinters.h"

#include "compiler/model/IslUtil.h"
#include "compiler/support/SourceError.h"

#include <isl/set.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <set>

namespace polyc::driver {

namespace {
constexpr int64_t kMaxSide = 40; // points per side: more would not be readable
constexpr double kStep = 40, kMargin = 60;

struct Point {
  int64_t column, row;
};
} // namespace

// Coordinates with at most one decimal: readable, and exact enough for a picture.
static std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  std::string text = buffer;
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0)
    text.resize(text.size() - 2);
  return text;
}

static std::string xmlEscape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

llvm::Error printExplainSvg(const ExplainInput &in, llvm::raw_ostream &os) {
  const model::Model &model = in.model;
  // The statement to draw: the first wavefront, else the first 2D statement outside repeat blocks.
  int chosen = -1, bandIndex = -1;
  for (size_t b = 0; b < in.schedule.bands.size() && chosen < 0; ++b)
    if (!in.schedule.bands[b].hyperplane.empty()) {
      chosen = static_cast<int>(in.schedule.bands[b].statements.front());
      bandIndex = static_cast<int>(b);
    }
  for (size_t s = 0; s < model.statements.size() && chosen < 0; ++s)
    if (model.statements[s].dimNames.size() == 2 && model.statements[s].repeatDims == 0)
      chosen = static_cast<int>(s);
  if (chosen < 0 || model.statements[chosen].dimNames.size() != 2 || model.statements[chosen].repeatDims != 0)
    return makeError("--format=svg draws a 2D iteration space, and this program has no statement with two "
                     "dimensions outside repeat blocks");
  const model::Statement &stmt = model.statements[chosen];
  if (bandIndex < 0)
    for (size_t b = 0; b < in.schedule.bands.size(); ++b)
      if (std::find(in.schedule.bands[b].statements.begin(), in.schedule.bands[b].statements.end(),
                    static_cast<unsigned>(chosen)) != in.schedule.bands[b].statements.end()) {
        bandIndex = static_cast<int>(b);
        break;
      }

  isl::set points = stmt.domain.intersect_params(model.context).project_out_all_params();
  std::string free;
  isl::set domain = stmt.domain.gist_params(model.context);
  for (unsigned p = 0; p < model.params.size(); ++p)
    if (!model.paramValues.count(model.params[p]) &&
        isl_set_involves_dims(domain.get(), isl_dim_param, p, 1) == isl_bool_true)
      free += (free.empty() ? "" : ", ") + model.params[p];
  if (!free.empty() || !islutil::isBounded(points))
    return makeError("--format=svg needs concrete sizes: fix " + (free.empty() ? std::string("the params") : free) +
                     " with --param NAME=VALUE");
  // Which dimension is the column (a processor) and which the row (walked in order).
  unsigned columnDim = 0, rowDim = 1;
  const allocate::BandAllocation *alloc = nullptr;
  if (bandIndex >= 0)
    for (const allocate::BandAllocation &a : in.allocation.bands)
      if (static_cast<int>(a.band) == bandIndex)
        alloc = &a;
  if (alloc && alloc->wavefront) {
    columnDim = alloc->wavefront->columnDim;
    rowDim = alloc->wavefront->rowDim;
  }
  int64_t minC = INT64_MAX, maxC = INT64_MIN, minR = INT64_MAX, maxR = INT64_MIN;
  std::vector<Point> all;
  bool tooMany = false;
  points.foreach_point([&](isl::point p) {
    if (all.size() > static_cast<size_t>(kMaxSide * kMaxSide)) {
      tooMany = true;
      return;
    }
    isl::multi_val v = p.multi_val();
    Point pt{v.at(static_cast<int>(columnDim)).get_num_si(), v.at(static_cast<int>(rowDim)).get_num_si()};
    minC = std::min(minC, pt.column), maxC = std::max(maxC, pt.column);
    minR = std::min(minR, pt.row), maxR = std::max(maxR, pt.row);
    all.push_back(pt);
  });
  if (all.empty())
    return makeError("--format=svg: the iteration space of " + stmt.name + " is empty for these params");
  if (tooMany || maxC - minC + 1 > kMaxSide || maxR - minR + 1 > kMaxSide)
    return makeError("--format=svg draws at most " + std::to_string(kMaxSide) + " x " + std::to_string(kMaxSide) +
                     " points; choose smaller params");

  auto x = [&](int64_t column) { return kMargin + static_cast<double>(column - minC) * kStep; };
  auto y = [&](int64_t row) { return kMargin + static_cast<double>(row - minR) * kStep; };
  double width = x(maxC) + kMargin, height = y(maxR) + kMargin + 40;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
     << "\" viewBox=\"0 0 " << num(width) << " " << num(height) << "\">\n";
  os << "  <defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" "
        "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#c0392b\"/></marker></defs>\n";
  os << "  <title>" << xmlEscape(stmt.name + ": " + equationText(stmt)) << "</title>\n";
  os << "  <text x=\"10\" y=\"20\" font-family=\"monospace\" font-size=\"12\">" << xmlEscape(equationText(stmt))
     << "</text>\n";
  os << "  <text x=\"10\" y=\"" << num(height - 12) << "\" font-family=\"monospace\" font-size=\"11\">columns: "
     << xmlEscape(stmt.dimNames[columnDim]) << " (processors), rows: " << xmlEscape(stmt.dimNames[rowDim]);

  // Lines of equal time: the hyperplane t = pi . x, or the band's first (sequential) dimension.
  std::vector<int64_t> pi;
  const schedule::Band *band = bandIndex >= 0 ? &in.schedule.bands[bandIndex] : nullptr;
  if (band && !band->hyperplane.empty()) {
    pi = band->hyperplane;
    os << "; lines: " << xmlEscape(band->dimNames[0]) << " = " << xmlEscape(band->hyperplaneExpr);
  } else if (band && !band->coincident.empty() && !band->coincident[0]) {
    pi = {0, 0};
    pi[band->dimNames[0] == stmt.dimNames[0] ? 0 : 1] = 1;
    os << "; lines: t = " << xmlEscape(band->dimNames[0]);
  }
  os << "; allocation: " << (alloc ? allocate::spelling(alloc->kind) : "none");
  if (bandIndex >= 0 && unsigned(bandIndex) < in.mapping.bands.size())
    os << "; gpu: " << map::spelling(in.mapping.bands[bandIndex].placement);
  os << "</text>\n";

  os << "  <g class=\"columns\" stroke=\"#2980b9\" stroke-width=\"1\" stroke-dasharray=\"4,3\">\n";
  std::set<int64_t> columns;
  for (const Point &p : all)
    columns.insert(p.column);
  for (int64_t c : columns)
    os << "    <line class=\"column\" x1=\"" << num(x(c)) << "\" y1=\"" << num(y(minR) - kStep / 2) << "\" x2=\""
       << num(x(c)) << "\" y2=\"" << num(y(maxR) + kStep / 2) << "\"/>\n";
  os << "  </g>\n";

  if (!pi.empty()) {
    // pi is over the statement's dimensions; in picture coordinates (column, row) it is permuted.
    int64_t pc = pi[columnDim], pr = pi[rowDim];
    std::map<int64_t, std::vector<Point>> byTime;
    for (const Point &p : all)
      byTime[pc * p.column + pr * p.row].push_back(p);
    // Direction along a line of equal t: perpendicular to (pc, pr).
    double dc = static_cast<double>(pr), dr = -static_cast<double>(pc), norm = std::sqrt(dc * dc + dr * dr);
    dc /= norm, dr /= norm;
    os << "  <g class=\"hyperplanes\" stroke=\"#27ae60\" stroke-width=\"1.5\">\n";
    for (const auto &[t, members] : byTime) {
      auto along = [&](const Point &p) { return dc * static_cast<double>(p.column) + dr * static_cast<double>(p.row); };
      auto [lo, hi] = std::minmax_element(members.begin(), members.end(),
                                          [&](const Point &a, const Point &b) { return along(a) < along(b); });
      double ext = 0.4;
      os << "    <line class=\"hyperplane\" data-t=\"" << t << "\" x1=\"" << num(x(lo->column) - ext * kStep * dc)
         << "\" y1=\"" << num(y(lo->row) - ext * kStep * dr) << "\" x2=\"" << num(x(hi->column) + ext * kStep * dc)
         << "\" y2=\"" << num(y(hi->row) + ext * kStep * dr) << "\"/>\n";
    }
    os << "  </g>\n";
  }

  os << "  <g class=\"points\" fill=\"#34495e\">\n";
  for (const Point &p : all)
    os << "    <circle class=\"point\" cx=\"" << num(x(p.column)) << "\" cy=\"" << num(y(p.row)) << "\" r=\"4\"/>\n";
  os << "  </g>\n";

  // The dependences of the point nearest the middle: an arrow from each source it reads.
  Point mid = all.front();
  double cc = (static_cast<double>(minC) + maxC) / 2, cr = (static_cast<double>(minR) + maxR) / 2, best = 1e300;
  for (const Point &p : all) {
    double d = std::abs(static_cast<double>(p.column) - cc) + std::abs(static_cast<double>(p.row) - cr);
    if (d < best)
      best = d, mid = p;
  }
  std::set<std::pair<int64_t, int64_t>> present;
  for (const Point &p : all)
    present.insert({p.column, p.row});
  std::set<std::pair<int64_t, int64_t>> sources;
  for (const analysis::Dependence &dep : in.deps.edges) {
    if (dep.source != static_cast<unsigned>(chosen) || dep.target != dep.source || !dep.distanceVectors)
      continue;
    for (const auto &v : *dep.distanceVectors) {
      std::pair<int64_t, int64_t> from{mid.column - v[columnDim], mid.row - v[rowDim]};
      if (present.count(from) && from != std::make_pair(mid.column, mid.row))
        sources.insert(from);
    }
  }
  os << "  <g class=\"dependences\" stroke=\"#c0392b\" stroke-width=\"1.5\">\n";
  for (const auto &[c, r] : sources) {
    double x1 = x(c), y1 = y(r), x2 = x(mid.column), y2 = y(mid.row);
    double len = std::sqrt((x2 - x1) * (x2 - x1) + (y2 - y1) * (y2 - y1));
    double shorten = 7 / len; // stop at the target circle's edge
    os << "    <line class=\"dependence\" x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\""
       << num(x2 - (x2 - x1) * shorten) << "\" y2=\"" << num(y2 - (y2 - y1) * shorten)
       << "\" marker-end=\"url(#arrow)\"/>\n";
  }
  os << "  </g>\n";
  os << "</svg>\n";
  return llvm::Error::success();
}

} // namespace polyc::driver
