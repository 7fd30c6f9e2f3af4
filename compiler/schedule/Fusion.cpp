// Fusion. "Package execution" (seed 000): consecutive statements of a region that read a common array
// over the same domain, with no dependence between them other than at the same point, share one loop
// nest, so what they read is loaded once for all of them. Definition pieces: the equations of one array
// (interior and boundary) share one loop nest over the array. Sibling definitions: whole definitions of
// several arrays that read a common array over the same domain and do not depend on each other.
#include "compiler/schedule/Fusion.h"

#include "compiler/model/IslUtil.h"

#include <isl/map.h>
#include <isl/set.h>

#include <llvm/ADT/STLExtras.h>

#include <optional>
#include <set>

namespace polyc::schedule {

using model::Model;
using model::Statement;

static isl::map between(const Model &model, const isl::union_map &deps, unsigned a, unsigned b) {
  return deps.extract_map(polyc::islutil::mapSpace(model.statements[a].domain.space(), model.statements[b].domain.space()));
}

static std::set<std::string> readArrays(const Statement &stmt) {
  std::set<std::string> names;
  for (const model::Access &read : stmt.reads)
    names.insert(read.array);
  return names;
}

std::vector<FusionGroup> findFusionGroups(const Model &model, const std::vector<unsigned> &order,
                                          unsigned fixedDims, const isl::union_map &regionDeps) {
  auto selfFree = [&](unsigned s) { return between(model, regionDeps, s, s).is_empty(); };
  auto sameDomain = [&](unsigned a, unsigned b) {
    const Statement &x = model.statements[a], &y = model.statements[b];
    return x.dimNames.size() == y.dimNames.size() && x.dimNames.size() > fixedDims &&
           polyc::islutil::anonymousSet(x.domain).is_equal(polyc::islutil::anonymousSet(y.domain));
  };
  // A dependence between members is allowed only from one point to the same point (kept by their
  // order inside the fused body); one against the order would need the other statement first.
  auto samePointOnly = [&](unsigned from, unsigned to) {
    isl::map rel = between(model, regionDeps, from, to);
    if (rel.is_empty())
      return true;
    isl::map plain = polyc::islutil::anonymousMap(rel);
    return plain.is_subset(polyc::islutil::anonymousSet(model.statements[from].domain).identity());
  };
  std::vector<FusionGroup> groups;
  for (size_t i = 0; i < order.size();) {
    unsigned first = order[i];
    std::vector<unsigned> members{first};
    std::set<std::string> common = readArrays(model.statements[first]);
    size_t j = i + 1;
    if (selfFree(first)) {
      for (; j < order.size(); ++j) {
        unsigned next = order[j];
        if (!selfFree(next) || !sameDomain(first, next))
          break;
        bool ok = true;
        for (unsigned m : members)
          ok &= samePointOnly(m, next) && between(model, regionDeps, next, m).is_empty();
        std::set<std::string> shared;
        for (const std::string &name : readArrays(model.statements[next]))
          if (common.count(name))
            shared.insert(name);
        if (!ok || shared.empty())
          break;
        members.push_back(next);
        common = shared;
      }
    }
    if (members.size() >= 2) {
      FusionGroup group;
      group.statements = members;
      std::string names;
      for (const std::string &name : common)
        names += (names.empty() ? "" : ", ") + name;
      group.reason = "all read " + names + " over the same domain";
      groups.push_back(std::move(group));
      i = j;
    } else {
      ++i;
    }
  }
  return groups;
}

PieceMerge mergeDefinitionPieces(const Model &model, const std::vector<std::vector<unsigned>> &components,
                                 unsigned fixedDims, const isl::union_map &regionDeps) {
  const size_t n = components.size();
  auto edge = [&](size_t a, size_t b) {
    for (unsigned s : components[a])
      for (unsigned t : components[b])
        if (!between(model, regionDeps, s, t).is_empty())
          return true;
    return false;
  };
  // Equations (`=`): updates of one array are not pieces, each applies to what the one before left.
  // No reductions: a GPU kernel reduces with a group of threads a point and barriers the whole group
  // reaches, which the threads of another piece's points would not (syrk hung on OpenCL).
  auto piece = [&](size_t c) {
    if (components[c].size() != 1)
      return false;
    unsigned s = components[c].front();
    const Statement &stmt = model.statements[s];
    return !stmt.isUpdate() && stmt.reductions.empty() && stmt.dimNames.size() > fixedDims &&
           between(model, regionDeps, s, s).is_empty();
  };
  // Sets of pieces by array, in order of their first component.
  std::vector<std::vector<size_t>> sets;
  for (size_t c = 0; c < n; ++c) {
    if (!piece(c))
      continue;
    const Statement &stmt = model.statements[components[c].front()];
    auto same = llvm::find_if(sets, [&](const std::vector<size_t> &set) {
      const Statement &other = model.statements[components[set.front()].front()];
      return other.write.array == stmt.write.array && other.dimNames.size() == stmt.dimNames.size();
    });
    if (same != sets.end())
      same->push_back(c);
    else
      sets.push_back({c});
  }
  // Merge a set when no dependence joins its members, directly or through components outside it (the
  // contracted graph stays acyclic): node[c] is the merged node of component c.
  std::vector<size_t> node(n);
  for (size_t c = 0; c < n; ++c)
    node[c] = c;
  std::vector<std::vector<bool>> reaches(n, std::vector<bool>(n, false)); // transitive, in `components` order
  for (size_t a = n; a-- > 0;)
    for (size_t b = a + 1; b < n; ++b)
      if (edge(a, b))
        for (size_t c = 0; c < n; ++c)
          if (c == b || reaches[b][c])
            reaches[a][c] = true;
  // The merged graph in dependence order, or nothing when merging made a cycle: a node is ready when
  // every component that reaches one of its members is placed; the earliest ready one goes first.
  auto order = [&](const std::vector<size_t> &node) -> std::optional<std::vector<std::vector<unsigned>>> {
    std::vector<std::vector<unsigned>> ordered;
    std::vector<bool> placed(n, false);
    for (size_t done = 0; done < n;) {
      bool progress = false;
      for (size_t c = 0; c < n && !progress; ++c) {
        if (placed[c] || node[c] != c)
          continue;
        bool ready = true;
        for (size_t a = 0; a < n && ready; ++a)
          for (size_t m = 0; m < n && ready; ++m)
            ready = placed[a] || node[a] == c || node[m] != c || !reaches[a][m];
        if (!ready)
          continue;
        std::vector<unsigned> merged;
        for (size_t m = 0; m < n; ++m)
          if (node[m] == c) {
            merged.insert(merged.end(), components[m].begin(), components[m].end());
            placed[m] = true;
            ++done;
          }
        ordered.push_back(std::move(merged));
        progress = true;
      }
      if (!progress)
        return std::nullopt;
    }
    return ordered;
  };
  PieceMerge result{components, {}};
  for (const std::vector<size_t> &set : sets) {
    if (set.size() < 2)
      continue;
    bool joined = false; // a dependence between two pieces (their contraction would hide it)
    for (size_t a : set)
      for (size_t b : set)
        joined |= a != b && edge(a, b);
    if (joined)
      continue;
    std::vector<size_t> tried = node;
    for (size_t c : set)
      tried[c] = set.front();
    std::optional<std::vector<std::vector<unsigned>>> ordered = order(tried);
    if (!ordered)
      continue; // a dependence joins two pieces, directly or through other statements
    node = tried;
    result.components = std::move(*ordered);
    FusionGroup group;
    for (size_t c : set)
      group.statements.push_back(components[c].front());
    group.reason = "the pieces of " + model.statements[group.statements.front()].write.array +
                   "'s definition: one loop nest over the array";
    result.groups.push_back(std::move(group));
  }
  return result;
}

PieceMerge fuseSiblingDefinitions(const Model &model, PieceMerge merged, unsigned fixedDims,
                                  const isl::union_map &regionDeps) {
  const std::vector<std::vector<unsigned>> &components = merged.components;
  // A definition: a merged set of pieces, or one statement that could have been a piece.
  auto definition = [&](const std::vector<unsigned> &component) {
    if (component.size() > 1)
      return llvm::any_of(merged.groups, [&](const FusionGroup &g) { return g.statements == component; });
    const Statement &stmt = model.statements[component.front()];
    return !stmt.isUpdate() && stmt.reductions.empty() && stmt.dimNames.size() > fixedDims &&
           between(model, regionDeps, component.front(), component.front()).is_empty();
  };
  auto domain = [&](const std::vector<unsigned> &component) {
    isl::set all = polyc::islutil::anonymousSet(model.statements[component.front()].domain);
    for (unsigned s : component)
      all = all.unite(polyc::islutil::anonymousSet(model.statements[s].domain));
    return all;
  };
  auto reads = [&](const std::vector<unsigned> &component) {
    std::set<std::string> names;
    for (unsigned s : component)
      names.merge(readArrays(model.statements[s]));
    return names;
  };
  auto independent = [&](const std::vector<unsigned> &a, const std::vector<unsigned> &b) {
    for (unsigned s : a)
      for (unsigned t : b)
        if (!between(model, regionDeps, s, t).is_empty() || !between(model, regionDeps, t, s).is_empty())
          return false;
    return true;
  };
  auto dims = [&](const std::vector<unsigned> &component) {
    return model.statements[component.front()].dimNames.size();
  };

  PieceMerge result;
  for (size_t c = 0; c < components.size();) {
    std::vector<std::vector<unsigned>> run{components[c]};
    std::set<std::string> common = reads(components[c]);
    size_t next = c + 1;
    if (definition(components[c])) {
      for (; next < components.size(); ++next) {
        const std::vector<unsigned> &candidate = components[next];
        if (!definition(candidate) || dims(candidate) != dims(run.front()) ||
            !domain(candidate).is_equal(domain(run.front())) ||
            !llvm::all_of(
                run, [&](const std::vector<unsigned> &member) { return independent(member, candidate); }))
          break;
        std::set<std::string> shared;
        for (const std::string &name : reads(candidate))
          if (common.count(name))
            shared.insert(name);
        if (shared.empty())
          break;
        run.push_back(candidate);
        common = std::move(shared);
      }
    }
    // Pairs of single statements are package execution's (findFusionGroups): a run here holds pieces.
    // Without one, the next component may still start a run of its own.
    bool hasPieces = llvm::any_of(run, [](const std::vector<unsigned> &member) { return member.size() > 1; });
    if (run.size() < 2 || !hasPieces) {
      result.components.push_back(components[c]);
      auto own =
          llvm::find_if(merged.groups, [&](const FusionGroup &g) { return g.statements == components[c]; });
      if (own != merged.groups.end())
        result.groups.push_back(*own);
      ++c;
      continue;
    }
    FusionGroup group;
    std::string arrays, names;
    for (const std::vector<unsigned> &member : run) {
      group.statements.insert(group.statements.end(), member.begin(), member.end());
      arrays += (arrays.empty() ? "" : " and ") + model.statements[member.front()].write.array;
    }
    for (const std::string &name : common)
      names += (names.empty() ? "" : ", ") + name;
    group.reason = "the definitions of " + arrays + ": no dependence between them, " +
                   (run.size() == 2 ? "both" : "all") + " read " + names + " over the same domain";
    result.components.push_back(group.statements);
    result.groups.push_back(std::move(group));
    c = next;
  }
  // Every set of pieces keeps its group, fused or not.
  for (const FusionGroup &own : merged.groups)
    if (llvm::none_of(result.groups, [&](const FusionGroup &g) {
          return llvm::is_contained(g.statements, own.statements.front());
        }))
      result.groups.push_back(own);
  return result;
}

} // namespace polyc::schedule
