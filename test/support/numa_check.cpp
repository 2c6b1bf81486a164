#include "support/numa_check.hpp"

#include <numaif.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

#include "segment/layout.hpp"
#include "segment/numa_placement.hpp"
#include "shmcoll/options.hpp"
#include "topology/discovery.hpp"

namespace shmcoll::test {
namespace {

// The start of the one /dev/shm/shmcoll-* mapping of `bytes` in this process, or nullptr.
std::byte* find_segment(std::uint64_t bytes) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/dev/shm/shmcoll-") == std::string::npos) continue;
    std::istringstream in(line);
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    in >> std::hex >> begin >> dash >> end;
    if (end - begin == bytes) return reinterpret_cast<std::byte*>(begin);
  }
  return nullptr;
}

}  // namespace

int this_rank_node(int rank) {
  const auto topology = topology::Topology::load("");
  return topology->numa_os_index(topology->place_of_rank(rank, nullptr).numa);
}

void check_own_area_on_node(RankContext& ctx, int node) {
  const Options defaults;
  const segment::Geometry geometry{static_cast<std::uint32_t>(ctx.size),
                                   static_cast<std::uint32_t>(defaults.slots_for(ctx.size)),
                                   defaults.slot_bytes};
  std::byte* base = find_segment(geometry.total_bytes());
  if (base == nullptr) {
    ctx.fail("no segment mapping of %llu bytes in /proc/self/maps",
             static_cast<unsigned long long>(geometry.total_bytes()));
    return;
  }
  std::byte* area = base + geometry.ranks_offset() +
                    static_cast<std::uint64_t>(ctx.rank) * geometry.rank_stride();
  std::string error;
  const int preferred = segment::preferred_node_at(area, error);
  if (preferred != node) {
    ctx.fail("rank %d's area prefers node %d, expected %d %s", ctx.rank, preferred, node,
             error.c_str());
  }
  const std::uint64_t last = geometry.rank_stride() - segment::kPageBytes;
  std::vector<void*> pages = {area, area + last / segment::kPageBytes / 2 * segment::kPageBytes,
                              area + last};
  // move_pages reports pages mapped in this process: read each once (the creator reserved them,
  // so the read maps the page that exists, wherever it is).
  for (void* page : pages) (void)*static_cast<volatile const std::uint8_t*>(page);
  std::vector<int> status(pages.size(), -1);
  if (move_pages(0, pages.size(), pages.data(), nullptr, status.data(), 0) != 0) {
    ctx.fail("move_pages failed on rank %d", ctx.rank);
    return;
  }
  for (std::size_t i = 0; i < pages.size(); ++i) {
    if (status[i] != node)
      ctx.fail("rank %d: page %zu of its area is on node %d, expected %d", ctx.rank, i, status[i],
               node);
  }
}

}  // namespace shmcoll::test
