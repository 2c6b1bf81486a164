#include "copy/huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1; older C libraries lack the name
#endif

namespace shmcoll::copy {

void HugePageCollapser::note_use(const void* buffer, std::uint64_t bytes) {
  const auto start = reinterpret_cast<std::uintptr_t>(buffer);
  const std::uintptr_t begin = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  const std::uintptr_t end = (start + bytes) & ~(kHugePageBytes - 1);
  if (end <= begin) return;  // no whole huge page inside
  ++clock_;
  Range* slot = nullptr;
  for (Range& r : ranges_) {
    if (r.begin == begin && r.end == end) {
      slot = &r;
      break;
    }
  }
  if (slot == nullptr) {
    // First use: remember it in place of the least recently used range.
    slot = &*std::min_element(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) {
      return a.last_use < b.last_use;
    });
    *slot = Range{begin, end, 1, clock_, false};
    return;
  }
  slot->last_use = clock_;
  ++slot->uses;
  if (slot->refused) return;
  if (slot->uses == 2 || (slot->uses - 2) % kRecollapseUses == 0) {
    if (!collapse(*slot)) slot->refused = true;
  }
}

bool HugePageCollapser::collapse(Range& range) {
  ++collapses_;
  if (madvise(reinterpret_cast<void*>(range.begin), range.end - range.begin, MADV_COLLAPSE) == 0)
    return true;
  // EAGAIN and ENOMEM: no huge page free now, or a page briefly pinned; a later use may find
  // one. Anything else (EINVAL from a kernel before MADV_COLLAPSE or for memory it cannot
  // collapse, EPERM where THP is disabled for the process): not for this buffer, which costs
  // one failed call per new buffer.
  if (errno == EAGAIN || errno == ENOMEM) return true;
  ++refusals_;
  return false;
}

}  // namespace shmcoll::copy
