// A buffer whose pages lie on one NUMA node (libnuma), touched at allocation so that no page
// fault falls inside a measurement, with transparent huge pages asked for (fewer TLB misses in
// the dependent-load chase; the kernel may decline).
#pragma once

#include <cstddef>

namespace shmcoll::bench {

class NodeMemory {
 public:
  // Throws std::runtime_error naming the node and the size when the memory cannot be had.
  NodeMemory(int numa_node, std::size_t bytes);
  ~NodeMemory();
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  int node() const { return node_; }
  // The fraction of pages, sampled evenly (at most 64), that move_pages finds on node().
  double fraction_on_node() const;

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  int node_ = -1;
};

}  // namespace shmcoll::bench
