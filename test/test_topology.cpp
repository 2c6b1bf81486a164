// Topology discovery with hwloc: synthetic descriptions, XML files, this machine, bad specs.
#include <doctest/doctest.h>
#include <hwloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "support/ranks.hpp"
#include "topology/discovery.hpp"

namespace shmcoll::topology {

TEST_CASE("topology: a synthetic description places rank r on PU r mod PUs") {
  const auto t = Topology::load("package:2 numa:2 l3:1 core:4 pu:1");
  const Counts c = t->counts();
  CHECK(c.packages == 2);
  CHECK(c.numa_nodes == 4);
  CHECK(c.l3_caches == 4);
  CHECK(c.pus == 16);
  CHECK_FALSE(t->is_this_machine());
  std::string how;
  CHECK(t->place_of_rank(5, &how) == Place{0, 1, 1, 5});
  CHECK(how.find("PU 5") != std::string::npos);
  CHECK(t->place_of_rank(21, nullptr) == Place{0, 1, 1, 5});
  CHECK(t->place_of_rank(12, nullptr) == Place{1, 3, 3, 12});
  CHECK(Topology::load("package:2 numa:2 l3:1 core:4 pu:1") == t);  // loaded once
}

TEST_CASE("topology: an XML file works like the machine it describes") {
  hwloc_topology_t synthetic;
  hwloc_topology_init(&synthetic);
  REQUIRE(hwloc_topology_set_synthetic(synthetic, "package:1 numa:4 core:2 pu:2") == 0);
  REQUIRE(hwloc_topology_load(synthetic) == 0);
  char path[] = "/tmp/shmcoll-topology-XXXXXX.xml";
  const int fd = mkstemps(path, 4);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(hwloc_topology_export_xml(synthetic, path, 0) == 0);
  hwloc_topology_destroy(synthetic);
  const auto t = Topology::load(path);
  unlink(path);
  CHECK(t->counts().numa_nodes == 4);
  CHECK(t->counts().pus == 16);
  CHECK(t->place_of_rank(7, nullptr).numa == 1);  // PU 7 = core 3 = NUMA 1
  CHECK(t->source().find("xml") == 0);
}

TEST_CASE("topology: this machine places the calling process") {
  const auto t = Topology::load("");
  CHECK(t->is_this_machine());
  CHECK(t->counts().pus >= 1);
  std::string how;
  const Place p = t->place_of_rank(0, &how);
  CHECK_FALSE(how.empty());
  CHECK(p.package >= -1);
  CHECK(t->place_of_bound_rank(0).core == 0);
}

TEST_CASE("topology: a spec hwloc cannot use is an error naming it") {
  CHECK_THROWS_WITH_AS(
      Topology::load("gadget:7 widget:3"),
      "'gadget:7 widget:3' is neither an hwloc synthetic description nor a readable XML "
      "topology file",
      InvalidArgument);
}

TEST_CASE("topology: a rank that cannot load the topology fails team formation on every rank") {
  std::string job;
  auto outcome = test::run_ranks(
      {.nranks = 3},
      [](test::RankContext& ctx) {
        Options o = test::test_options();
        if (ctx.rank == 1) o.topology = "no-such-file.xml";
        try {
          Team team(ctx.bootstrap, o);
          ctx.fail("team formation succeeded");
        } catch (const InvalidArgument& e) {
          ctx.check(std::strstr(e.what(), "rank 1") != nullptr &&
                        std::strstr(e.what(), "no-such-file.xml") != nullptr,
                    "the error names rank 1 and the spec");
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(test::leftover_segments(job).empty());
}

}  // namespace shmcoll::topology

#include "launch/placement.hpp"

namespace shmcoll::launch {

TEST_CASE(
    "launcher placement: --map-by core fills cores in order, --map-by numa deals over NUMA nodes") {
  const std::string machine = "package:2 numa:2 core:4 pu:1";  // 4 NUMA nodes x 4 cores
  Placement by_core(10, BindTo::kCore, MapBy::kCore, machine);
  for (int r = 0; r < 10; ++r) {
    CHECK(by_core.core_of(r) == r);
    CHECK(by_core.numa_of(r) == r / 4);
  }
  Placement by_numa(20, BindTo::kNuma, MapBy::kNuma, machine);
  for (int r = 0; r < 20; ++r) {
    CAPTURE(r);
    CHECK(by_numa.numa_of(r) == r % 4);                      // round-robin over the nodes
    CHECK(by_numa.core_of(r) == (r % 4) * 4 + (r / 4) % 4);  // then over each node's cores
  }
  CHECK_FALSE(by_numa.note().empty());  // 20 ranks on 16 cores
  CHECK_THROWS(Placement(2, BindTo::kCore, MapBy::kCore, "gadget:3"));
}

}  // namespace shmcoll::launch
