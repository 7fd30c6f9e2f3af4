// Fusion ("package execution", seed 000): consecutive statements of a region that read a common array
// over the same domain, with no dependence between them other than at the same point, share one loop
// nest, so what they read is loaded once for all of them.
#include "compiler/schedule/Fusion.h"

#include "compiler/model/IslUtil.h"

#include <isl/map.h>
#include <isl/set.h>

#include <set>

namespace polyc::schedule {

using model::Model;
using model::Statement;

static isl::map between(const Model &model, const isl::union_map &deps, unsigned a, unsigned b) {
  return deps.extract_map(polyc::islutil::mapSpace(model.statements[a].domain.space(), model.statements[b].domain.space()));
}

static isl::set anonymousSet(const isl::set &set) { return isl::manage(isl_set_reset_tuple_id(set.copy())); }

static isl::map anonymousMap(const isl::map &map) {
  return isl::manage(isl_map_reset_tuple_id(isl_map_reset_tuple_id(map.copy(), isl_dim_in), isl_dim_out));
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
           anonymousSet(x.domain).is_equal(anonymousSet(y.domain));
  };
  // A dependence between members is allowed only from one point to the same point (kept by their
  // order inside the fused body); one against the order would need the other statement first.
  auto samePointOnly = [&](unsigned from, unsigned to) {
    isl::map rel = between(model, regionDeps, from, to);
    if (rel.is_empty())
      return true;
    isl::map plain = anonymousMap(rel);
    return plain.is_subset(anonymousSet(model.statements[from].domain).identity());
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

} // namespace polyc::schedule
