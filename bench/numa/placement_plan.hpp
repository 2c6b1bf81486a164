// The placements a collectives placement sweep runs (shmcoll-bench --placements): ranks mapped
// by core (rank r on core r) or round-robin over the NUMA nodes (shmcoll-run's --map-by), each
// bound to its core; every rank's buffers on its own NUMA node or on the next one; the root on
// each NUMA node that holds a rank (that node's first rank). Planned on this machine, or on an
// hwloc synthetic topology for tests.
#pragma once

#include <string>
#include <vector>

#include "launch/placement.hpp"

namespace shmcoll::bench {

enum class BufferSite { kOwnNode, kNextNode };

struct RankSite {
  int core = -1;         // logical index, where the rank is bound
  int numa_node = -1;    // OS index of the core's NUMA node
  int buffer_node = -1;  // OS index of the node that holds the rank's buffers
};

struct PlacementCase {
  launch::MapBy map = launch::MapBy::kCore;
  BufferSite buffers = BufferSite::kOwnNode;
  int root = 0;
  std::vector<RankSite> ranks;

  const char* map_name() const;      // "core", "numa"
  const char* buffers_name() const;  // "own node", "next node"
  // "ranks by numa, buffers on the next node, root 2 on node 1"
  std::string describe() const;
};

// Every case, in this order: ranks by core, then by NUMA node; buffers on the own node, then
// (with more than one NUMA node) on the next one in hwloc's order, the last wrapping to the
// first; the root on each NUMA node holding a rank, in node order. Throws std::runtime_error
// when the topology cannot be used.
std::vector<PlacementCase> placement_cases(int nranks, const std::string& synthetic = {});

}  // namespace shmcoll::bench
