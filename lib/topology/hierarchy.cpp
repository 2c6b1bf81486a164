#include "topology/hierarchy.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace shmcoll::topology {
namespace {

int key(const Place& p, Level level) {
  switch (level) {
    case Level::kPackage:
      return p.package;
    case Level::kNuma:
      return p.numa;
    case Level::kL3:
      return p.l3;
  }
  return -1;
}

// The partition of the ranks by their keys at all levels up to and including `upto`.
std::size_t partition_size(const std::vector<Place>& places, const std::vector<Level>& levels) {
  std::set<std::vector<int>> groups;
  for (const Place& p : places) {
    std::vector<int> k;
    for (Level l : levels) k.push_back(key(p, l));
    groups.insert(k);
  }
  return groups.size();
}

}  // namespace

const char* level_name(Level level) {
  switch (level) {
    case Level::kPackage:
      return "package";
    case Level::kNuma:
      return "numa";
    case Level::kL3:
      return "l3";
  }
  return "?";
}

std::vector<Level> splitting_levels(const std::vector<Place>& places) {
  std::vector<Level> kept;
  std::size_t groups = 1;
  for (Level l : {Level::kPackage, Level::kNuma, Level::kL3}) {
    std::vector<Level> with = kept;
    with.push_back(l);
    const std::size_t refined = partition_size(places, with);
    if (refined > groups) {
      kept = with;
      groups = refined;
    }
  }
  return kept;
}

Tree build_tree(const std::vector<Place>& places, int root) {
  const int n = static_cast<int>(places.size());
  Tree t;
  t.root = root;
  t.parent.assign(static_cast<std::size_t>(n), -1);
  t.children.assign(static_cast<std::size_t>(n), {});
  t.levels = splitting_levels(places);

  // `group` holds ranks in increasing order and contains `leader`.
  std::function<void(const std::vector<int>&, int, std::size_t, int)> serve =
      [&](const std::vector<int>& group, int leader, std::size_t level, int depth) {
        t.depth = std::max(t.depth, depth);
        if (level == t.levels.size()) {  // last level: flat
          for (int r : group) {
            if (r == leader) continue;
            t.parent[static_cast<std::size_t>(r)] = leader;
            t.children[static_cast<std::size_t>(leader)].push_back(r);
            t.depth = std::max(t.depth, depth + 1);
          }
          return;
        }
        std::map<int, std::vector<int>> sub;  // by key at this level, in key order
        for (int r : group)
          sub[key(places[static_cast<std::size_t>(r)], t.levels[level])].push_back(r);
        // The other subgroups first, by key (the farthest boundary is served first, so the
        // deepest subtrees start earliest), then the leader's own subgroup, which it keeps
        // leading.
        const int own_key = key(places[static_cast<std::size_t>(leader)], t.levels[level]);
        for (auto& [k, members] : sub) {
          if (k == own_key) continue;
          const int sub_leader = members.front();  // the lowest rank
          t.parent[static_cast<std::size_t>(sub_leader)] = leader;
          t.children[static_cast<std::size_t>(leader)].push_back(sub_leader);
          serve(members, sub_leader, level + 1, depth + 1);
        }
        serve(sub[own_key], leader, level + 1, depth);
      };
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
  if (n > 0) serve(all, root, 0, 0);

  t.position.assign(static_cast<std::size_t>(n), -1);
  t.subtree_size.assign(static_cast<std::size_t>(n), 1);
  std::function<void(int)> visit = [&](int r) {
    t.position[static_cast<std::size_t>(r)] = static_cast<int>(t.preorder.size());
    t.preorder.push_back(r);
    for (int c : t.children[static_cast<std::size_t>(r)]) {
      visit(c);
      t.subtree_size[static_cast<std::size_t>(r)] += t.subtree_size[static_cast<std::size_t>(c)];
    }
  };
  if (n > 0) visit(root);
  return t;
}

std::string draw_tree(const Tree& tree, const std::vector<Place>& places) {
  std::string out = "levels:";
  for (Level l : tree.levels) out += std::string(" ") + level_name(l);
  if (tree.levels.empty()) out += " (none: flat)";
  out += "\n";
  std::function<void(int, int)> draw = [&](int r, int indent) {
    const Place& p = places[static_cast<std::size_t>(r)];
    auto field = [](int v) { return v < 0 ? std::string("?") : std::to_string(v); };
    out += std::string(static_cast<std::size_t>(2 * indent), ' ') + "rank " + std::to_string(r) +
           "  [package " + field(p.package) + ", numa " + field(p.numa) + ", l3 " + field(p.l3) +
           ", core " + field(p.core) + "]\n";
    for (int c : tree.children[static_cast<std::size_t>(r)]) draw(c, indent + 1);
  };
  if (!places.empty()) draw(tree.root, 0);
  return out;
}

}  // namespace shmcoll::topology
