#include "numa/matrix_plan.hpp"

namespace shmcoll::bench {

MatrixPlan plan_node_matrix(hwloc_topology_t topology) {
  MatrixPlan plan;
  const int nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nodes; ++i) {
    hwloc_obj_t node =
        hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    plan.memory_nodes.push_back(static_cast<int>(node->os_index));
    if (node->cpuset == nullptr || hwloc_bitmap_iszero(node->cpuset)) continue;
    CpuNode cpus{static_cast<int>(node->os_index), {}};
    // Cores where the topology has them; PUs alone where it does not (some architectures).
    const hwloc_obj_type_t unit =
        hwloc_get_nbobjs_inside_cpuset_by_type(topology, node->cpuset, HWLOC_OBJ_CORE) > 0
            ? HWLOC_OBJ_CORE
            : HWLOC_OBJ_PU;
    hwloc_obj_t core = nullptr;
    while ((core = hwloc_get_next_obj_inside_cpuset_by_type(topology, node->cpuset, unit, core))) {
      const int pu = hwloc_bitmap_first(core->cpuset);
      if (pu >= 0) cpus.core_pus.push_back(pu);
    }
    if (!cpus.core_pus.empty()) plan.cpu_nodes.push_back(std::move(cpus));
  }
  return plan;
}

}  // namespace shmcoll::bench
