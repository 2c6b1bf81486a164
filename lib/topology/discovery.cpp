#include "topology/discovery.hpp"

#include <hwloc.h>

#include <map>
#include <mutex>

#include "shmcoll/error.hpp"

namespace shmcoll::topology {

struct Topology::Handle {
  hwloc_topology_t topo = nullptr;
  ~Handle() {
    if (topo != nullptr) hwloc_topology_destroy(topo);
  }
};

namespace {

int count(hwloc_topology_t t, hwloc_obj_type_t type) {
  return std::max(0, hwloc_get_nbobjs_by_type(t, type));
}

// Logical index of the object of `type` whose cpuset contains `set`, or -1.
int covering(hwloc_topology_t t, hwloc_const_cpuset_t set, hwloc_obj_type_t type) {
  const int n = count(t, type);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(t, type, static_cast<unsigned>(i));
    if (o->cpuset != nullptr && hwloc_bitmap_isincluded(set, o->cpuset))
      return static_cast<int>(o->logical_index);
  }
  return -1;
}

Place place_of_set(hwloc_topology_t t, hwloc_const_cpuset_t set) {
  return {covering(t, set, HWLOC_OBJ_PACKAGE), covering(t, set, HWLOC_OBJ_NUMANODE),
          covering(t, set, HWLOC_OBJ_L3CACHE), covering(t, set, HWLOC_OBJ_CORE)};
}

}  // namespace

int Topology::numa_os_index(int logical) const {
  if (logical < 0) return -1;
  hwloc_obj_t o =
      hwloc_get_obj_by_type(handle_->topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(logical));
  return o != nullptr ? static_cast<int>(o->os_index) : -1;
}

std::shared_ptr<const Topology> Topology::load(const std::string& spec) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Topology>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(spec); it != cache.end()) return it->second;

  std::shared_ptr<Topology> t(new Topology);
  t->handle_ = std::make_unique<Handle>();
  hwloc_topology_init(&t->handle_->topo);
  int rc = 0;
  if (spec.empty()) {
    t->source_ = "this machine";
  } else if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".xml") == 0) {
    rc = hwloc_topology_set_xml(t->handle_->topo, spec.c_str());
    t->source_ = "xml " + spec;
    t->this_machine_ = false;
  } else {
    rc = hwloc_topology_set_synthetic(t->handle_->topo, spec.c_str());
    t->source_ = "synthetic \"" + spec + "\"";
    t->this_machine_ = false;
  }
  if (rc != 0 || hwloc_topology_load(t->handle_->topo) != 0) {
    throw InvalidArgument("'" + spec +
                          "' is neither an hwloc synthetic description nor a readable XML "
                          "topology file");
  }
  cache[spec] = t;
  return t;
}

Topology::~Topology() = default;

Counts Topology::counts() const {
  hwloc_topology_t t = handle_->topo;
  return {count(t, HWLOC_OBJ_PACKAGE), count(t, HWLOC_OBJ_NUMANODE), count(t, HWLOC_OBJ_L3CACHE),
          count(t, HWLOC_OBJ_CORE), count(t, HWLOC_OBJ_PU)};
}

Place Topology::place_of_pu(int logical_pu) const {
  hwloc_obj_t pu =
      hwloc_get_obj_by_type(handle_->topo, HWLOC_OBJ_PU, static_cast<unsigned>(logical_pu));
  return pu == nullptr ? Place{} : place_of_set(handle_->topo, pu->cpuset);
}

Place Topology::place_of_bound_rank(int rank) const {
  const int cores = count(handle_->topo, HWLOC_OBJ_CORE);
  if (cores <= 0) return place_of_pu(rank % std::max(1, count(handle_->topo, HWLOC_OBJ_PU)));
  hwloc_obj_t core =
      hwloc_get_obj_by_type(handle_->topo, HWLOC_OBJ_CORE, static_cast<unsigned>(rank % cores));
  return place_of_set(handle_->topo, core->cpuset);
}

Place Topology::place_of_rank(int rank, std::string* how) const {
  hwloc_topology_t t = handle_->topo;
  if (!this_machine_) {
    const int pus = std::max(1, count(t, HWLOC_OBJ_PU));
    if (how)
      *how = "mapped to PU " + std::to_string(rank % pus) + " by rank (rank mod " +
             std::to_string(pus) + ")";
    return place_of_pu(rank % pus);
  }
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  Place p;
  // The calling thread's binding and location, not the process's: a launcher binds a process
  // before its threads exist, which inherit its mask, and ranks that are threads each have
  // their own. The process's would read one /proc file per thread (an MPI runtime's helper
  // threads included) at every team's formation.
  if (hwloc_get_cpubind(t, set, HWLOC_CPUBIND_THREAD) == 0 &&
      !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(t), set)) {
    p = place_of_set(t, set);
    if (how) *how = "bound";
  } else if (hwloc_get_last_cpu_location(t, set, HWLOC_CPUBIND_THREAD) == 0) {
    // Unbound: where it ran just now; it may move, so only a hint.
    p = place_of_set(t, set);
    p.bound = false;
    if (how) *how = "unbound (placed where it last ran)";
  } else {
    p.bound = false;
    if (how) *how = "unbound (location unknown)";
  }
  hwloc_bitmap_free(set);
  return p;
}

std::string Topology::summary() const {
  const Counts c = counts();
  return source_ + ": " + std::to_string(c.packages) + " package(s), " +
         std::to_string(c.numa_nodes) + " NUMA node(s), " + std::to_string(c.l3_caches) +
         " L3 cache(s), " + std::to_string(c.cores) + " core(s), " + std::to_string(c.pus) +
         " PU(s)";
}

}  // namespace shmcoll::topology
