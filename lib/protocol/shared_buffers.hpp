// The team's side of Team::allocate_shared and Team::adopt_shared: the memory every rank maps,
// and the translation of a peer's buffer address into this process's mapping of the same bytes.
//
// Identity: each allocation has a team-wide id (1, 2, ...). A rank announces, with its arrival
// in an operation, the id of the allocation its buffer lies in (StatusLine::shared_id, 0 for
// none), so a peer never mistakes a new allocation that a process mapped at a reused address
// for an old one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "segment/shared_region.hpp"

namespace shmcoll {

namespace detail {
struct SharedMapping {
  std::uint64_t id = 0;
  int rank = 0;
  // The bytes every rank maps, as this process maps them: the team's own object
  // (allocate_shared, which `region` keeps mapped) or the caller's (adopt_shared, `region` empty).
  std::byte* base = nullptr;
  std::uint64_t bytes = 0;
  segment::SharedRegion region;
  std::vector<std::uint64_t> part_offset;  // per rank, from base
  std::vector<std::uint64_t> part_bytes;   // per rank
  std::vector<std::uint64_t> peer_base;    // per rank: where that rank maps base
};
}  // namespace detail

class SharedBuffers {
 public:
  void add(const std::shared_ptr<detail::SharedMapping>& mapping) { mappings_.push_back(mapping); }
  std::uint64_t next_id() { return ++last_id_; }

  // The id of the live allocation holding [p, p + bytes) in this process, or 0.
  std::uint64_t id_of(const void* p, std::uint64_t bytes) {
    // Inline for the common case: every call's arrival asks, most teams share no buffers.
    return mappings_.empty() || p == nullptr ? 0 : look_up(p, bytes);
  }

  // Where [remote, remote + bytes) of `peer` (an address in peer's space, inside allocation
  // `id`) is mapped here; null when id is 0, this rank no longer maps it, or the range is not
  // inside it. `hold` keeps the mapping alive while the caller copies.
  std::byte* resolve(int peer, std::uint64_t id, std::uint64_t remote, std::uint64_t bytes,
                     std::shared_ptr<detail::SharedMapping>& hold);

  bool empty() const { return mappings_.empty(); }

 private:
  std::uint64_t look_up(const void* p, std::uint64_t bytes);
  std::vector<std::weak_ptr<detail::SharedMapping>> mappings_;
  std::uint64_t last_id_ = 0;
};

}  // namespace shmcoll
