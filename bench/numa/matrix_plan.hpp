// Which NUMA nodes the node matrix measures, and which CPUs its threads run on. Rows are the
// NUMA nodes that hold memory (every hwloc NUMA node does); columns are the NUMA nodes with
// CPUs. For a CPU node, the one-core figures run on its first core and the all-core figures on
// every core, one thread per core on the core's first PU (a second hardware thread shares the
// core's load and store units, so it adds contention rather than bandwidth).
#pragma once

#include <hwloc.h>

#include <string>
#include <vector>

namespace shmcoll::bench {

struct CpuNode {
  int numa_os_index = -1;
  std::vector<int> core_pus;  // OS index of the first PU of each core, in hwloc's order
};

struct MatrixPlan {
  std::vector<int> memory_nodes;  // OS indexes, in hwloc's logical order
  std::vector<CpuNode> cpu_nodes;
};

MatrixPlan plan_node_matrix(hwloc_topology_t topology);

}  // namespace shmcoll::bench
