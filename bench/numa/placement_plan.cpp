#include "numa/placement_plan.hpp"

#include <algorithm>

#include "hwloc_topology.hpp"

namespace shmcoll::bench {

const char* PlacementCase::map_name() const {
  return map == launch::MapBy::kCore ? "core" : "numa";
}

const char* PlacementCase::buffers_name() const {
  return buffers == BufferSite::kOwnNode ? "own node" : "next node";
}

std::string PlacementCase::describe() const {
  return std::string("ranks by ") + map_name() + ", buffers on the " + buffers_name() + ", root " +
         std::to_string(root) + " on node " +
         std::to_string(ranks[static_cast<std::size_t>(root)].numa_node);
}

std::vector<PlacementCase> placement_cases(int nranks, const std::string& synthetic) {
  HwlocTopology topology(synthetic);
  std::vector<int> os_index;  // of each NUMA node, by logical index
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, node)))
    os_index.push_back(static_cast<int>(node->os_index));
  const int nodes = static_cast<int>(os_index.size());
  std::vector<PlacementCase> cases;
  for (launch::MapBy map : {launch::MapBy::kCore, launch::MapBy::kNuma}) {
    const launch::Placement planned(nranks, launch::BindTo::kCore, map, synthetic);
    std::vector<BufferSite> sites = {BufferSite::kOwnNode};
    if (nodes > 1) sites.push_back(BufferSite::kNextNode);
    for (BufferSite site : sites) {
      PlacementCase c;
      c.map = map;
      c.buffers = site;
      for (int r = 0; r < nranks; ++r) {
        const int logical = planned.numa_of(r);
        const int buffer_logical = site == BufferSite::kOwnNode ? logical : (logical + 1) % nodes;
        c.ranks.push_back({planned.core_of(r), os_index[static_cast<std::size_t>(logical)],
                           os_index[static_cast<std::size_t>(buffer_logical)]});
      }
      for (int n : os_index) {  // node order; the node's first rank is its root
        const auto first = std::find_if(c.ranks.begin(), c.ranks.end(),
                                        [n](const RankSite& s) { return s.numa_node == n; });
        if (first == c.ranks.end()) continue;
        c.root = static_cast<int>(first - c.ranks.begin());
        cases.push_back(c);
      }
    }
  }
  return cases;
}

}  // namespace shmcoll::bench
