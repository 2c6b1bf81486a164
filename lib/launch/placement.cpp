#include "launch/placement.hpp"

#include <hwloc.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace shmcoll::launch {

struct Placement::Impl {
  hwloc_topology_t topo = nullptr;
  ~Impl() {
    if (topo != nullptr) hwloc_topology_destroy(topo);
  }
};

Placement::Placement(int nranks, BindTo bind, MapBy map, const std::string& synthetic)
    : impl_(new Impl), bind_(bind) {
  hwloc_topology_init(&impl_->topo);
  if (!synthetic.empty() && hwloc_topology_set_synthetic(impl_->topo, synthetic.c_str()) != 0) {
    delete impl_;
    throw std::runtime_error("bad synthetic topology '" + synthetic + "'");
  }
  if (hwloc_topology_load(impl_->topo) != 0) {
    delete impl_;
    throw std::runtime_error("hwloc could not load the topology");
  }
  hwloc_topology_t t = impl_->topo;
  const int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  if (ncores <= 0) {
    delete impl_;
    throw std::runtime_error("hwloc found no cores");
  }
  // The NUMA nodes that have cores, each with its cores in logical order.
  std::vector<std::vector<int>> node_cores;
  std::vector<int> node_index;
  const int nnuma = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  for (int n = 0; n < nnuma; ++n) {
    hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
    std::vector<int> cores;
    for (int c = 0; c < ncores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
      if (hwloc_bitmap_isincluded(core->cpuset, node->cpuset)) cores.push_back(c);
    }
    if (!cores.empty()) {
      node_cores.push_back(cores);
      node_index.push_back(n);
    }
  }
  auto numa_of_core = [&](int core) {
    for (std::size_t i = 0; i < node_cores.size(); ++i) {
      for (int c : node_cores[i]) {
        if (c == core) return node_index[i];
      }
    }
    return 0;
  };
  for (int r = 0; r < nranks; ++r) {
    int core = r % ncores;
    if (map == MapBy::kNuma && !node_cores.empty()) {
      const auto& cores = node_cores[static_cast<std::size_t>(r) % node_cores.size()];
      core = cores[(static_cast<std::size_t>(r) / node_cores.size()) % cores.size()];
    }
    cores_.push_back(core);
    numas_.push_back(numa_of_core(core));
  }
  if (bind != BindTo::kNone && nranks > ncores) {
    note_ = std::to_string(nranks) + " ranks on " + std::to_string(ncores) +
            " cores; ranks share cores";
  }
}

Placement::~Placement() { delete impl_; }

std::string Placement::bind(int rank) const {
  if (bind_ == BindTo::kNone) return {};
  hwloc_topology_t t = impl_->topo;
  hwloc_obj_t obj =
      bind_ == BindTo::kCore
          ? hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, static_cast<unsigned>(core_of(rank)))
          : hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(numa_of(rank)));
  if (obj == nullptr || hwloc_set_cpubind(t, obj->cpuset, HWLOC_CPUBIND_PROCESS) != 0) {
    return std::string("binding to ") +
           (bind_ == BindTo::kCore ? "core " + std::to_string(core_of(rank))
                                   : "NUMA node " + std::to_string(numa_of(rank))) +
           " failed: " + std::strerror(errno);
  }
  return {};
}

}  // namespace shmcoll::launch
