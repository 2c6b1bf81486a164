#include "machine.hpp"

#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

namespace shmcoll::bench {

std::string describe_machine() {
  std::string cpu = "unknown CPU";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  const int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  const int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  hwloc_topology_destroy(topo);
  utsname u{};
  uname(&u);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(cpu) + "; " + std::to_string(packages) + " package(s), " +
         std::to_string(numa) + " NUMA node(s), " + std::to_string(cores) + " core(s), " +
         std::to_string(pus) + " PU(s); " + u.sysname + " " + u.release + "; host " + host;
}

}  // namespace shmcoll::bench
