// The segment's NUMA placement across nodes: ranks bound round-robin to the NUMA nodes of this
// machine (two per node, at most 16) form a team, and each checks with get_mempolicy and
// move_pages that its area lies on its own node. Exits 77 (reported by ctest as skipped, not
// passed) on a machine with one NUMA node, where nothing could tell a placed area from an
// unplaced one.
#include <numa.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>

#include "support/numa_check.hpp"

namespace {
constexpr int kSkipped = 77;
}

int main() {
  using namespace shmcoll::test;
  if (numa_available() < 0 || numa_num_configured_nodes() < 2) {
    std::printf("SKIPPED: this machine has %d NUMA node(s); placement needs two to be checked\n",
                numa_available() < 0 ? 0 : numa_num_configured_nodes());
    return kSkipped;
  }
  std::vector<int> nodes;  // with CPUs to run on
  for (int node = 0; node <= numa_max_node(); ++node) {
    bitmask* cpus = numa_allocate_cpumask();
    if (numa_node_to_cpus(node, cpus) == 0 && numa_bitmask_weight(cpus) > 0) nodes.push_back(node);
    numa_free_cpumask(cpus);
  }
  if (nodes.size() < 2) {
    std::printf("SKIPPED: only %zu NUMA node(s) have CPUs\n", nodes.size());
    return kSkipped;
  }
  const int ranks = std::min<int>(16, 2 * static_cast<int>(nodes.size()));
  std::string job;
  const auto outcome = run_ranks(
      {.nranks = ranks},
      [&](RankContext& ctx) {
        const int node = nodes[static_cast<std::size_t>(ctx.rank) % nodes.size()];
        bitmask* cpus = numa_allocate_cpumask();
        numa_node_to_cpus(node, cpus);
        numa_sched_setaffinity(0, cpus);
        numa_free_cpumask(cpus);
        if (this_rank_node(ctx.rank) != node)
          ctx.fail("rank %d bound to node %d but hwloc places it on node %d", ctx.rank, node,
                   this_rank_node(ctx.rank));
        shmcoll::Team team(ctx.bootstrap, shmcoll::Options{});
        check_own_area_on_node(ctx, node);
        team.barrier();
      },
      &job);
  std::printf("%d ranks over %zu NUMA nodes: %s\n", ranks, nodes.size(), outcome.summary().c_str());
  const bool clean = leftover_segments(job).empty();
  if (!clean) std::printf("segments left in /dev/shm\n");
  return outcome.succeeded() && clean ? 0 : 1;
}
