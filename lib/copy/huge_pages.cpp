#include "copy/huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1; older C libraries lack the name
#endif

namespace shmcoll::copy {

namespace {
constexpr std::uint64_t kOffsetUnit = 4096;
constexpr int kUnitBits = 31;
constexpr std::uint64_t kMaxUnits = (std::uint64_t{1} << kUnitBits) - 1;
}  // namespace

std::uint64_t pack_offsets(const HugeRun& run, const void* buffer) {
  const auto start = reinterpret_cast<std::uintptr_t>(buffer);
  if (run.empty() || run.begin < start) return 0;
  const std::uint64_t begin =
      std::min((run.begin - start + kOffsetUnit - 1) / kOffsetUnit, kMaxUnits);
  const std::uint64_t end = std::min((run.end - start) / kOffsetUnit, kMaxUnits);
  return end > begin ? begin | end << kUnitBits : 0;
}

HugeOffsets unpack_offsets(std::uint64_t packed) {
  return {(packed & kMaxUnits) * kOffsetUnit, ((packed >> kUnitBits) & kMaxUnits) * kOffsetUnit};
}

HugeRun HugePageCollapser::note_use(const void* buffer, std::uint64_t bytes) {
  if (bytes < kMinBufferBytes) return {};
  const auto start = reinterpret_cast<std::uintptr_t>(buffer);
  const std::uintptr_t begin = start & ~(kHugePageBytes - 1);
  const std::uintptr_t end = (start + bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
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
    *slot = Range{
        .begin = begin, .end = end, .uses = 1, .moved = bytes, .last_use = clock_, .huge = {}};
    return {};
  }
  slot->last_use = clock_;
  ++slot->uses;
  const auto within_buffer = [&] {
    return HugeRun{std::max(slot->huge.begin, start), std::min(slot->huge.end, start + bytes)};
  };
  if (slot->refused) return {};
  if (slot->collapsed_at == 0) {
    slot->moved += bytes;  // below kAmortization x the range's bytes: no overflow
    if (slot->moved < kAmortization * (end - begin)) return {};
    slot->collapsed_at = slot->uses;
  } else if ((slot->uses - slot->collapsed_at) % kRecollapseUses != 0) {
    return within_buffer();
  }
  if (!collapse(*slot)) slot->refused = true;
  return within_buffer();
}

bool HugePageCollapser::collapse(Range& range) {
  ++collapses_;
  // Page by page, so that an edge page the kernel cannot collapse (it reaches beyond the
  // mapping) leaves the others to move.
  bool worth_again = false;
  HugeRun run;  // the run of accepted pages that ends at `page`
  range.huge = {};
  for (std::uintptr_t page = range.begin; page < range.end; page += kHugePageBytes) {
    if (madvise(reinterpret_cast<void*>(page), kHugePageBytes, MADV_COLLAPSE) == 0) {
      worth_again = true;
      if (run.empty()) run.begin = page;
      run.end = page + kHugePageBytes;
      if (run.end - run.begin > range.huge.end - range.huge.begin) range.huge = run;
      continue;
    }
    run = {};
    // EAGAIN and ENOMEM: no huge page free now, a page briefly pinned, or a part not mapped
    // now; a later use may find it. Anything else (EINVAL from a kernel before MADV_COLLAPSE,
    // or for memory it cannot collapse; EPERM where THP is disabled for the process): not this
    // page.
    worth_again = worth_again || errno == EAGAIN || errno == ENOMEM;
  }
  if (!worth_again) ++refusals_;
  return worth_again;
}

}  // namespace shmcoll::copy
