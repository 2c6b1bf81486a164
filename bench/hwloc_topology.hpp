// An hwloc topology owned for a scope: this machine's, or a synthetic description for tests
// ("pack:2 numa:2 core:4 pu:2").
#pragma once

#include <hwloc.h>

#include <stdexcept>
#include <string>

namespace shmcoll::bench {

class HwlocTopology {
 public:
  explicit HwlocTopology(const std::string& synthetic = {}) {
    hwloc_topology_init(&topology_);
    if (!synthetic.empty() && hwloc_topology_set_synthetic(topology_, synthetic.c_str()) != 0) {
      hwloc_topology_destroy(topology_);
      throw std::invalid_argument("hwloc cannot use the synthetic topology '" + synthetic + "'");
    }
    hwloc_topology_load(topology_);
  }
  ~HwlocTopology() { hwloc_topology_destroy(topology_); }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;

  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_{};
};

}  // namespace shmcoll::bench
