// The segment's NUMA placement on this machine: every rank's area carries the preferred-node
// policy of the node the rank runs on, and its pages lie there. On a machine with one NUMA node
// the second half holds trivially; numa_placement_main.cpp checks it across nodes and reports
// itself skipped where there is only one.
#include <doctest/doctest.h>
#include <sched.h>

#include "support/numa_check.hpp"

namespace shmcoll::test {

TEST_CASE("segment: each rank's area is placed on its rank's NUMA node") {
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = 4},
      [&](RankContext& ctx) {
        // Stay on the CPU this rank runs on, so that the node it reports at formation is the
        // one this check expects.
        cpu_set_t here;
        CPU_ZERO(&here);
        CPU_SET(sched_getcpu(), &here);
        sched_setaffinity(0, sizeof here, &here);
        const int node = this_rank_node(ctx.rank);
        Team team(ctx.bootstrap, Options{});
        check_own_area_on_node(ctx, node);
        team.barrier();
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

}  // namespace shmcoll::test
