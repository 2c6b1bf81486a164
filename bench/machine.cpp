#include "machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <tuple>

#include "hwloc_topology.hpp"

namespace shmcoll::bench {

namespace {

std::string cpu_model() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string kernel() {
  utsname u{};
  uname(&u);
  return std::string(u.sysname) + " " + u.release;
}

std::string host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

int count(hwloc_topology_t topology, hwloc_obj_type_t type) {
  return std::max(0, hwloc_get_nbobjs_by_type(topology, type));
}

std::string cpu_list(hwloc_const_cpuset_t set) {
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, set);
  std::string list = text != nullptr ? text : "";
  std::free(text);
  return list;
}

}  // namespace

std::string describe_machine() {
  HwlocTopology topology;
  hwloc_topology_t t = topology.get();
  return cpu_model() + "; " + std::to_string(count(t, HWLOC_OBJ_PACKAGE)) + " package(s), " +
         std::to_string(count(t, HWLOC_OBJ_NUMANODE)) + " NUMA node(s), " +
         std::to_string(count(t, HWLOC_OBJ_CORE)) + " core(s), " +
         std::to_string(count(t, HWLOC_OBJ_PU)) + " PU(s); " + kernel() + "; host " + host();
}

NumaDistances numa_distances(hwloc_topology_t topology) {
  NumaDistances d;
  unsigned nr = 1;
  hwloc_distances_s* found = nullptr;
  // The firmware's matrix (HWLOC_DISTANCES_KIND_FROM_OS), latency-like if it says which.
  if (hwloc_distances_get_by_type(topology, HWLOC_OBJ_NUMANODE, &nr, &found,
                                  HWLOC_DISTANCES_KIND_FROM_OS, 0) != 0 ||
      nr == 0)
    return d;
  d.meaning = (found->kind & HWLOC_DISTANCES_KIND_MEANS_LATENCY)     ? "latency"
              : (found->kind & HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH) ? "bandwidth"
                                                                     : "unspecified";
  for (unsigned i = 0; i < found->nbobjs; ++i) {
    d.nodes.push_back(static_cast<int>(found->objs[i]->os_index));
    std::vector<std::uint64_t> row;
    for (unsigned j = 0; j < found->nbobjs; ++j)
      row.push_back(found->values[i * found->nbobjs + j]);
    d.values.push_back(std::move(row));
  }
  hwloc_distances_release(topology, found);
  return d;
}

nlohmann::ordered_json machine_record(hwloc_topology_t topology) {
  nlohmann::ordered_json m;
  m["cpu_model"] = cpu_model();
  m["kernel"] = kernel();
  m["host"] = host();
  m["packages"] = count(topology, HWLOC_OBJ_PACKAGE);
  m["cores"] = count(topology, HWLOC_OBJ_CORE);
  m["pus"] = count(topology, HWLOC_OBJ_PU);
  m["numa_nodes"] = nlohmann::ordered_json::array();
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node))) {
    const bool has_cpus = node->cpuset != nullptr && !hwloc_bitmap_iszero(node->cpuset);
    m["numa_nodes"].push_back({{"os_index", node->os_index},
                               {"memory_bytes", node->attr->numanode.local_memory},
                               {"cpus", has_cpus ? cpu_list(node->cpuset) : ""},
                               {"cores", has_cpus ? hwloc_get_nbobjs_inside_cpuset_by_type(
                                                        topology, node->cpuset, HWLOC_OBJ_CORE)
                                                  : 0}});
  }
  // Caches grouped by level, kind and size: {"level": 3, "kind": "unified", "bytes": ..,
  // "count": ..}.
  std::map<std::tuple<unsigned, int, std::uint64_t>, int> caches;
  for (int depth = 0; depth < hwloc_topology_get_depth(topology); ++depth) {
    hwloc_obj_t o = nullptr;
    while ((o = hwloc_get_next_obj_by_depth(topology, depth, o))) {
      if (!hwloc_obj_type_is_cache(o->type)) continue;
      ++caches[{o->attr->cache.depth, static_cast<int>(o->attr->cache.type), o->attr->cache.size}];
    }
  }
  m["caches"] = nlohmann::ordered_json::array();
  for (const auto& [key, n] : caches) {
    const auto& [level, kind, bytes] = key;
    const char* kind_name = kind == HWLOC_OBJ_CACHE_DATA          ? "data"
                            : kind == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction"
                                                                  : "unified";
    m["caches"].push_back({{"level", level}, {"kind", kind_name}, {"bytes", bytes}, {"count", n}});
  }
  const NumaDistances d = numa_distances(topology);
  if (d.nodes.empty()) {
    m["numa_distances"] = nullptr;
  } else {
    m["numa_distances"] = {
        {"source", "firmware"}, {"meaning", d.meaning}, {"nodes", d.nodes}, {"values", d.values}};
  }
  return m;
}

}  // namespace shmcoll::bench
