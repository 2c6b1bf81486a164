// Checks of the segment's NUMA placement from inside a rank: the team's segment is found in
// /proc/self/maps (its name is removed once every rank attached, the mapping stays), and the
// rank's own area is located there by the segment's geometry.
#pragma once

#include <string>

#include "support/ranks.hpp"

namespace shmcoll::test {

// The OS NUMA node this rank sits on as the team saw it at formation (the place hwloc gives
// for the calling process now: call it where the rank cannot have moved, bound or on one node).
int this_rank_node(int rank);

// Checks, on rank ctx.rank of a team formed with default slots, that its area carries the
// preferred-node policy for `node` and that the area's first, middle and last pages lie on it
// (move_pages). Failures go to ctx.
void check_own_area_on_node(RankContext& ctx, int node);

}  // namespace shmcoll::test
