#include "numa/node_memory.hpp"

#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace shmcoll::bench {

NodeMemory::NodeMemory(int numa_node, std::size_t bytes) : bytes_(bytes), node_(numa_node) {
  if (numa_available() < 0)
    throw std::runtime_error(
        "libnuma reports no NUMA support in this kernel: cannot place "
        "memory on NUMA node " +
        std::to_string(numa_node));
  data_ = static_cast<std::byte*>(numa_alloc_onnode(bytes, numa_node));
  if (data_ == nullptr)
    throw std::runtime_error("cannot allocate " + std::to_string(bytes) + " bytes on NUMA node " +
                             std::to_string(numa_node));
  madvise(data_, bytes, MADV_HUGEPAGE);  // a hint: failure leaves 4 KiB pages
  std::memset(data_, 0x5a, bytes);
}

NodeMemory::~NodeMemory() {
  if (data_ != nullptr) numa_free(data_, bytes_);
}

double NodeMemory::fraction_on_node() const {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t pages = std::max<std::size_t>(1, bytes_ / page);
  const std::size_t samples = std::min<std::size_t>(64, pages);
  std::vector<void*> addresses;
  for (std::size_t i = 0; i < samples; ++i)
    addresses.push_back(data_ + (i * pages / samples) * page);
  std::vector<int> status(samples, -1);
  // With no target nodes, move_pages moves nothing and reports where each page is.
  if (move_pages(0, samples, addresses.data(), nullptr, status.data(), 0) != 0) return 0;
  const auto on_node = std::count(status.begin(), status.end(), node_);
  return static_cast<double>(on_node) / static_cast<double>(samples);
}

}  // namespace shmcoll::bench
