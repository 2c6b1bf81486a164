// The placements of shmcoll-bench --placements on synthetic topologies: which core each rank
// binds to, which node holds its buffers, which rank is the root; and what placement costs.
#include <doctest/doctest.h>

#include "numa/placement_output.hpp"
#include "numa/placement_plan.hpp"

using namespace shmcoll::bench;
using shmcoll::launch::MapBy;

TEST_CASE("placements: ranks by core or by node, buffers own or next, a root per node") {
  // Four NUMA nodes of four cores each.
  const auto cases = placement_cases(4, "package:2 numa:2 core:4 pu:1");
  // By core, all four ranks sit on node 0: one root, two buffer sites. By node, one rank per
  // node: four roots, two buffer sites.
  REQUIRE(cases.size() == 2 + 8);
  const PlacementCase& by_core_next = cases[1];
  CHECK(by_core_next.map == MapBy::kCore);
  CHECK(by_core_next.buffers == BufferSite::kNextNode);
  CHECK(by_core_next.root == 0);
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    const RankSite& s = by_core_next.ranks[static_cast<std::size_t>(r)];
    CHECK(s.core == r);
    CHECK(s.numa_node == 0);
    CHECK(s.buffer_node == 1);
  }
  // By node, buffers on the next node, root on node 2: rank 2, on core 8.
  const PlacementCase& c = cases[2 + 4 + 2];
  CHECK(c.map == MapBy::kNuma);
  CHECK(c.buffers == BufferSite::kNextNode);
  CHECK(c.root == 2);
  CHECK(c.ranks[2].core == 8);
  CHECK(c.ranks[2].numa_node == 2);
  CHECK(c.ranks[2].buffer_node == 3);
  CHECK(c.ranks[3].buffer_node == 0);  // the last node's next is the first
  CHECK(c.describe() == "ranks by numa, buffers on the next node, root 2 on node 2");
  // By node with the buffers at home: each rank's buffer on its own node.
  for (int r = 0; r < 4; ++r)
    CHECK(cases[2].ranks[static_cast<std::size_t>(r)].buffer_node == r);
}

TEST_CASE("placements: more ranks than nodes deal round-robin, roots are each node's first") {
  const auto cases = placement_cases(6, "numa:2 core:4 pu:2");
  // By core: ranks 0-3 on node 0, 4-5 on node 1 (cores 4, 5): roots 0 and 4.
  REQUIRE(cases.size() == 4 + 4);
  CHECK(cases[0].root == 0);
  CHECK(cases[1].root == 4);
  CHECK(cases[1].ranks[4].core == 4);
  CHECK(cases[1].ranks[4].numa_node == 1);
  // By node: even ranks on node 0 (cores 0, 1, 2), odd on node 1 (cores 4, 5, 6).
  const PlacementCase& by_node = cases[4];
  CHECK(by_node.ranks[3].core == 5);
  CHECK(by_node.ranks[3].numa_node == 1);
  CHECK(by_node.ranks[4].core == 2);
  CHECK(cases[5].root == 1);
}

TEST_CASE("placements: one NUMA node has no next node to hold buffers") {
  const auto cases = placement_cases(2, "core:4 pu:1");
  REQUIRE(cases.size() == 2);  // by core and by node, buffers at home, root 0
  for (const PlacementCase& c : cases) {
    CHECK(c.buffers == BufferSite::kOwnNode);
    CHECK(c.root == 0);
  }
}

TEST_CASE("placements: the cost of a placement is its median latency over the best one's") {
  auto point = [](double us) {
    SweepPoint p;
    p.collective = "bcast";
    p.bytes = 8;
    p.slowest_us.median = us;
    return p;
  };
  std::vector<PlacementResult> results(3);
  results[0].points = {point(4)};
  results[1].points = {point(2)};
  results[2].points = {point(3)};
  const auto costs = placement_costs(results);
  REQUIRE(costs.size() == 1);
  CHECK(costs[0].best == 1);
  CHECK(costs[0].ratios == std::vector<double>{2.0, 1.0, 1.5});
}
