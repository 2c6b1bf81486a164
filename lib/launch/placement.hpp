// Where the launcher puts ranks: --map-by chooses each rank's core (core: rank r on core
// r mod cores; numa: ranks dealt round-robin over the NUMA nodes, then over each node's cores),
// --bind chooses how tightly it is held there (core, its NUMA node, or not at all).
#pragma once

#include <string>
#include <vector>

namespace shmcoll::launch {

enum class BindTo { kNone, kCore, kNuma };
enum class MapBy { kCore, kNuma };

class Placement {
 public:
  // Loads this machine's topology with hwloc (or, to plan and test the mapping only, an hwloc
  // synthetic description: bind() is then meaningless); throws std::runtime_error when it
  // cannot.
  Placement(int nranks, BindTo bind, MapBy map, const std::string& synthetic = "");
  ~Placement();
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;

  // In the rank's process: binds it as planned. Returns an empty string or why it failed.
  std::string bind(int rank) const;
  // Warnings for the user (more ranks than cores, say); empty when there are none.
  const std::string& note() const { return note_; }
  // The planned core (logical index) and NUMA node of each rank, for messages and tests.
  int core_of(int rank) const { return cores_[static_cast<std::size_t>(rank)]; }
  int numa_of(int rank) const { return numas_[static_cast<std::size_t>(rank)]; }

 private:
  struct Impl;
  Impl* impl_ = nullptr;
  BindTo bind_;
  std::vector<int> cores_, numas_;
  std::string note_;
};

}  // namespace shmcoll::launch
