// NUMA placement of the segment: each rank's area (its control lines and slots, which it writes
// and its readers poll) is allocated on that rank's NUMA node. The creator sets a preferred-node
// policy on each area of the shared-memory object before its pages are reserved; tmpfs keeps
// such a policy with the object and allocates every page of the range from it, whichever
// process faults or reserves the page. Preferred, not bound: a full node falls back to another
// instead of failing the team.
//
// The header and abort record stay where the creator's own policy puts them. Rank areas start
// on page boundaries (Geometry), so no page is shared by two ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "segment/layout.hpp"

namespace shmcoll::segment {

// OS NUMA node per rank (-1: unknown, left to the default policy).
using RankNodes = std::vector<int>;

struct PlacementOutcome {
  int placed = 0;     // rank areas given their node's policy
  std::string error;  // why the others were not (empty if none failed)
};

// Sets the policies on the object behind `fd` (the whole segment, not yet reserved).
PlacementOutcome prefer_rank_nodes(int fd, const Geometry& geometry, const RankNodes& nodes);

// The node holding the page at `address` (mapped and touched), or -1 with `error` set.
int node_of_page(const void* address, std::string& error);

// The preferred node of the policy covering `address`, or -1 (no preferred-node policy there)
// with `error` set when the query itself failed.
int preferred_node_at(const void* address, std::string& error);

}  // namespace shmcoll::segment
