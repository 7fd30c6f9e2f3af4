// polyc explain --format=dot: the dependence graph for Graphviz, statements as nodes labelled with
// their equations, edges labelled with kind, array, class and the distance vectors when few.
#include "ExplainPrinters.h"

namespace polyc::driver {

static std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

void printExplainDot(const ExplainInput &in, llvm::raw_ostream &os) {
  os << "digraph dependences {\n";
  os << "  node [shape=box, fontname=\"monospace\"];\n";
  for (const model::Statement &stmt : in.model.statements)
    os << "  " << stmt.name << " [label=\"" << stmt.name << ": " << escape(equationText(stmt)) << "\"];\n";
  for (const analysis::Dependence &dep : in.deps.edges) {
    std::string label = escape(std::string(analysis::spelling(dep.kind)) + " " + dep.array + " (" + analysis::spelling(dep.depClass) + ")");
    if (dep.distanceVectors) {
      constexpr size_t kShown = 12;
      std::string vectors;
      for (size_t i = 0; i < dep.distanceVectors->size() && i < kShown; ++i)
        vectors += (i ? " " : "") + vectorText((*dep.distanceVectors)[i]);
      if (dep.distanceVectors->size() > kShown)
        vectors += " ...";
      label += "\\n" + escape(vectors); // a line break in the dot label
    }
    const char *style = dep.kind == analysis::DependenceKind::Flow ? "solid" : "dashed";
    os << "  " << in.model.statements[dep.source].name << " -> " << in.model.statements[dep.target].name
       << " [label=\"" << label << "\", style=" << style << "];\n";
  }
  os << "}\n";
}

} // namespace polyc::driver
