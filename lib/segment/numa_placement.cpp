#include "segment/numa_placement.hpp"

#include <numaif.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace shmcoll::segment {
namespace {

// A node mask large enough for any node number the kernel reports (MAX_NUMNODES is at most
// 1024 on Linux).
constexpr int kMaskBits = 1024;
constexpr int kWordBits = 8 * sizeof(unsigned long);
using NodeMask = unsigned long[kMaskBits / kWordBits];

}  // namespace

PlacementOutcome prefer_rank_nodes(int fd, const Geometry& geometry, const RankNodes& nodes) {
  PlacementOutcome outcome;
  const std::uint64_t total = geometry.total_bytes();
  // A mapping only to name the ranges: the policy belongs to the object and outlives it.
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    outcome.error = std::string("cannot map the segment to place it: ") + std::strerror(errno);
    return outcome;
  }
  for (std::size_t r = 0; r < nodes.size() && r < geometry.nranks; ++r) {
    const int node = nodes[r];
    if (node < 0 || node >= kMaskBits) continue;
    NodeMask mask = {};
    mask[node / kWordBits] = 1ul << (node % kWordBits);
    auto* area =
        static_cast<std::byte*>(base) + geometry.ranks_offset() + r * geometry.rank_stride();
    if (mbind(area, geometry.rank_stride(), MPOL_PREFERRED, mask, kMaskBits, 0) == 0) {
      ++outcome.placed;
    } else if (outcome.error.empty()) {
      outcome.error = "mbind of rank " + std::to_string(r) + "'s area to NUMA node " +
                      std::to_string(node) + ": " + std::strerror(errno);
    }
  }
  munmap(base, total);
  return outcome;
}

int node_of_page(const void* address, std::string& error) {
  int node = -1;
  if (get_mempolicy(&node, nullptr, 0, const_cast<void*>(address), MPOL_F_NODE | MPOL_F_ADDR) !=
      0) {
    error = std::string("get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR): ") + std::strerror(errno);
    return -1;
  }
  return node;
}

int preferred_node_at(const void* address, std::string& error) {
  int mode = 0;
  NodeMask mask = {};
  if (get_mempolicy(&mode, mask, kMaskBits, const_cast<void*>(address), MPOL_F_ADDR) != 0) {
    error = std::string("get_mempolicy(MPOL_F_ADDR): ") + std::strerror(errno);
    return -1;
  }
  if (mode != MPOL_PREFERRED) return -1;
  for (int node = 0; node < kMaskBits; ++node) {
    if ((mask[node / kWordBits] >> (node % kWordBits)) & 1ul) return node;
  }
  return -1;
}

}  // namespace shmcoll::segment
