#include "protocol/shared_buffers.hpp"

#include <algorithm>

#include "shmcoll/shared_buffer.hpp"

namespace shmcoll {

SharedBuffer::SharedBuffer(std::shared_ptr<detail::SharedMapping> mapping)
    : mapping_(std::move(mapping)) {}

std::span<std::byte> SharedBuffer::part(int r) const {
  if (!mapping_ || r < 0 || static_cast<std::size_t>(r) >= mapping_->part_bytes.size()) return {};
  const auto i = static_cast<std::size_t>(r);
  return {mapping_->base + mapping_->part_offset[i], mapping_->part_bytes[i]};
}

std::span<std::byte> SharedBuffer::local() const {
  return mapping_ ? part(mapping_->rank) : std::span<std::byte>();
}

std::uint64_t SharedBuffers::look_up(const void* p, std::uint64_t bytes) {
  // Forget what this rank has freed.
  std::erase_if(mappings_, [](const auto& w) { return w.expired(); });
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  for (const auto& w : mappings_) {
    const std::shared_ptr<detail::SharedMapping> m = w.lock();
    if (!m) continue;
    const auto base = reinterpret_cast<std::uintptr_t>(m->base);
    if (at >= base && at - base <= m->bytes && bytes <= m->bytes - (at - base)) return m->id;
  }
  return 0;
}

std::byte* SharedBuffers::resolve(int peer, std::uint64_t id, std::uint64_t remote,
                                  std::uint64_t bytes,
                                  std::shared_ptr<detail::SharedMapping>& hold) {
  if (id == 0) return nullptr;
  for (const auto& w : mappings_) {
    std::shared_ptr<detail::SharedMapping> m = w.lock();
    if (!m || m->id != id) continue;
    const std::uint64_t base = m->peer_base[static_cast<std::size_t>(peer)];
    const std::uint64_t size = m->bytes;
    // A peer's claim is checked, not trusted: the range must lie inside the allocation.
    if (remote < base || remote - base > size || bytes > size - (remote - base)) return nullptr;
    hold = std::move(m);
    return hold->base + (remote - base);
  }
  return nullptr;
}

}  // namespace shmcoll
