// The NUMA node matrix of shmcoll-bench: which CPUs and nodes it measures (on synthetic
// topologies), where its memory lies (move_pages), and its figures and record on this machine.
#include <doctest/doctest.h>
#include <numa.h>

#include <string>

#include "hwloc_topology.hpp"
#include "machine.hpp"
#include "numa/matrix_output.hpp"
#include "numa/node_matrix.hpp"
#include "numa/node_memory.hpp"

using namespace shmcoll::bench;

TEST_CASE("numa matrix: every NUMA node is a row, every node with cores a column") {
  HwlocTopology topology("package:2 numa:2 core:4 pu:2");
  const MatrixPlan plan = plan_node_matrix(topology.get());
  REQUIRE(plan.memory_nodes == std::vector<int>{0, 1, 2, 3});
  REQUIRE(plan.cpu_nodes.size() == 4);
  // Node 1 holds cores 4-7, PUs 8-15: one thread per core, on the core's first PU.
  CHECK(plan.cpu_nodes[1].numa_os_index == 1);
  CHECK(plan.cpu_nodes[1].core_pus == std::vector<int>{8, 10, 12, 14});
  CHECK(plan.cpu_nodes[3].core_pus == std::vector<int>{24, 26, 28, 30});
}

TEST_CASE("numa matrix: a topology without cores runs a thread per PU") {
  HwlocTopology topology("numa:2 pu:3");
  const MatrixPlan plan = plan_node_matrix(topology.get());
  REQUIRE(plan.cpu_nodes.size() == 2);
  CHECK(plan.cpu_nodes[0].core_pus == std::vector<int>{0, 1, 2});
  CHECK(plan.cpu_nodes[1].core_pus == std::vector<int>{3, 4, 5});
}

TEST_CASE("numa matrix: the buffers are four times a node's last-level caches, 64 MiB at least") {
  HwlocTopology small("numa:2 l3:1 core:2 pu:1");  // synthetic caches: 4 MiB L3 by default
  CHECK(MatrixOptions::for_topology(small.get(), false).copy_bytes == 64u << 20);
  HwlocTopology large("numa:2 l3:2(size=32MiB) core:4 pu:1");
  const MatrixOptions o = MatrixOptions::for_topology(large.get(), false);
  CHECK(o.copy_bytes == 4 * 2 * (32u << 20));  // two 32 MiB L3 per node
  CHECK(o.chase_bytes == o.copy_bytes);
  const MatrixOptions quick = MatrixOptions::for_topology(large.get(), true);
  CHECK(quick.copy_bytes == o.copy_bytes);  // never smaller: that would measure a cache
  CHECK(quick.copy_rounds < o.copy_rounds);
  CHECK(quick.chase_loads < o.chase_loads);
}

TEST_CASE("numa matrix: a spread is the minimum, median and maximum") {
  const Spread s = spread_of({5, 1, 4, 2, 3});
  CHECK(s.min == 1);
  CHECK(s.median == 3);
  CHECK(s.max == 5);
}

TEST_CASE("numa matrix: the machine record lists a synthetic topology's nodes and caches") {
  HwlocTopology topology("package:2 numa:2 l3:1(size=16MiB) core:4 pu:2");
  const auto m = machine_record(topology.get());
  CHECK(m["packages"] == 2);
  CHECK(m["cores"] == 16);
  CHECK(m["pus"] == 32);
  REQUIRE(m["numa_nodes"].size() == 4);
  CHECK(m["numa_nodes"][2]["os_index"] == 2);
  CHECK(m["numa_nodes"][2]["cpus"] == "16-23");
  CHECK(m["numa_nodes"][2]["cores"] == 4);
  bool l3 = false;
  for (const auto& c : m["caches"])
    l3 = l3 || (c["level"] == 3 && c["bytes"] == 16u << 20 && c["count"] == 4);
  CHECK(l3);
  CHECK(m["numa_distances"].is_null());  // a synthetic topology has no firmware
}

TEST_CASE("numa matrix: memory placed on a node is found there by move_pages") {
  REQUIRE(numa_available() >= 0);
  for (int node = 0; node <= numa_max_node(); ++node) {
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, static_cast<unsigned>(node)) == 0) continue;
    CAPTURE(node);
    NodeMemory memory(node, 8u << 20);
    CHECK(memory.fraction_on_node() == 1.0);
  }
}

TEST_CASE("numa matrix: on this machine every cell has positive figures and a record") {
  HwlocTopology topology;
  const MatrixPlan plan = plan_node_matrix(topology.get());
  REQUIRE(!plan.memory_nodes.empty());
  REQUIRE(!plan.cpu_nodes.empty());
  MatrixOptions options;  // small and short: this checks the mechanism, not the machine
  options.copy_bytes = options.chase_bytes = 4u << 20;
  options.copy_rounds = options.chase_rounds = 2;
  options.chase_loads = 10'000;
  double estimate = -1;
  int last_done = 0, last_total = 0;
  MatrixObserver observer;
  observer.estimated = [&](double s) { estimate = s; };
  observer.progressed = [&](int done, int total) {
    CHECK(done == last_done + 1);
    last_done = done;
    last_total = total;
  };
  const NodeMatrix m = measure_node_matrix(topology.get(), plan, options, observer);
  CHECK(estimate > 0);
  CHECK(last_done == last_total);
  REQUIRE(m.rows.size() == plan.memory_nodes.size());
  const auto record = matrix_json(m);
  REQUIRE(record.size() == plan.memory_nodes.size());
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    REQUIRE(record[i].size() == plan.cpu_nodes.size());
    for (std::size_t j = 0; j < plan.cpu_nodes.size(); ++j) {
      const MatrixCell& c = m.rows[i][j];
      CHECK(c.copy_one_core_gbps.min > 0);
      CHECK(c.copy_all_cores_gbps.min > 0);
      CHECK(c.latency_ns.min > 0);
      CHECK(c.copy_one_core_gbps.min <= c.copy_one_core_gbps.median);
      CHECK(c.copy_one_core_gbps.median <= c.copy_one_core_gbps.max);
      CHECK(c.memory_on_node == 1.0);
      const auto& cell = record[i][j];
      CHECK(cell["memory_node"] == plan.memory_nodes[i]);
      CHECK(cell["cpu_node"] == plan.cpu_nodes[j].numa_os_index);
      CHECK(cell["bandwidth_gbps"] == c.copy_one_core_gbps.median);
      CHECK(cell["latency_ns"] == c.latency_ns.median);
      CHECK(cell["repetitions"]["latency_ns"]["max"] == c.latency_ns.max);
    }
  }
  const std::string script = matrix_heatmap_script(m, "t", "/tmp/x.png");
  CHECK(script.find("set output '/tmp/x.png'") != std::string::npos);
  CHECK(script.find("load latency") != std::string::npos);
}
