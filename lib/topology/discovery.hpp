// Filling the ranks' places with hwloc. The topology is this machine's, or, for tests and
// planning, an hwloc synthetic description ("package:2 numa:2 l3:1 core:4 pu:1") or an XML
// file (SHMCOLL_TOPOLOGY).
//
// Where a rank is: on this machine, the set of PUs it is bound to (each level known if that set
// lies inside one object of the level); an unbound rank is placed where it ran when asked and
// marked unbound. With a synthetic or XML topology the process runs elsewhere, so rank r is
// placed on PU (r mod number of PUs) in hwloc's logical order: the rule a launcher binding one
// rank per PU in order would follow.
#pragma once

#include <memory>
#include <string>

#include "topology/hierarchy.hpp"

namespace shmcoll::topology {

struct Counts {
  int packages = 0, numa_nodes = 0, l3_caches = 0, cores = 0, pus = 0;
};

class Topology {
 public:
  // Loads (once per process and spec; later calls share it). Throws InvalidArgument naming the
  // spec when hwloc cannot use it.
  static std::shared_ptr<const Topology> load(const std::string& spec);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const std::string& source() const {
    return source_;
  }  // "this machine", "synthetic ...", "xml ..."
  bool is_this_machine() const { return this_machine_; }
  Counts counts() const;
  Place place_of_pu(int logical_pu) const;
  // The operating system's number of NUMA node `logical` (Place::numa), or -1.
  int numa_os_index(int logical) const;
  // Where `shmcoll-run --bind core` puts rank r on this topology: core r mod (number of cores).
  Place place_of_bound_rank(int rank) const;
  // How a rank is placed (see above); `how` says which rule applied.
  Place place_of_rank(int rank, std::string* how) const;
  std::string summary() const;  // one line per level with counts

 private:
  Topology() = default;
  struct Handle;
  std::unique_ptr<Handle> handle_;
  std::string source_;
  bool this_machine_ = true;
};

}  // namespace shmcoll::topology
