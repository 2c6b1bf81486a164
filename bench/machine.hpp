// A description of the machine a benchmark ran on, printed with every result and kept in its
// record.
#pragma once

#include <hwloc.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shmcoll::bench {

// One line: CPU model, packages, NUMA nodes, cores, PUs, kernel, host.
std::string describe_machine();

// The NUMA nodes' distances as the firmware gives them to hwloc (ACPI SLIT: relative, 10 for a
// node to itself), or none (`nodes` empty).
struct NumaDistances {
  std::string meaning;     // "latency", "bandwidth" or "unspecified"
  std::vector<int> nodes;  // OS indexes, the rows' and columns' order
  std::vector<std::vector<std::uint64_t>> values;
};
NumaDistances numa_distances(hwloc_topology_t topology);

// The machine for a record: "cpu_model", "kernel", "host", "packages", "cores", "pus",
// "numa_nodes" (each with "os_index", "memory_bytes", "cpus" as a list like "0-15", "cores"),
// "caches" (each level and kind with its size and count) and "numa_distances" (null when the
// firmware gives none). The CPU model, kernel and host are this machine's even when
// `topology` is synthetic.
nlohmann::ordered_json machine_record(hwloc_topology_t topology);

}  // namespace shmcoll::bench
