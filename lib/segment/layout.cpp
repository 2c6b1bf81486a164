#include "segment/layout.hpp"

#include <cstddef>

#include "base/hash.hpp"

namespace shmcoll::segment {

namespace {
std::uint64_t whole_pages(std::uint64_t bytes) {
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}
}  // namespace

Geometry Geometry::of(int ranks, const Options& options) {
  Geometry g;
  g.nranks = static_cast<std::uint32_t>(ranks);
  g.slots = static_cast<std::uint32_t>(options.slots_for(ranks));
  g.slot_bytes = (options.slot_bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
  return g;
}

std::uint64_t Geometry::ranks_offset() const {
  return whole_pages(sizeof(SegmentHeader) + sizeof(AbortRecord));
}

std::uint64_t Geometry::rank_stride() const {
  return whole_pages((RankArea::kControlLines + std::uint64_t{slots}) * kCacheLine +
                     std::uint64_t{slots} * slot_bytes);
}

std::uint64_t Geometry::total_bytes() const {
  return ranks_offset() + std::uint64_t{nranks} * rank_stride();
}

std::uint64_t layout_hash() {
  // The sizes and offsets that both sides must agree on.
  const std::uint64_t parts[] = {
      kVersion,
      sizeof(SegmentHeader),
      offsetof(SegmentHeader, ready),
      sizeof(AbortRecord),
      offsetof(AbortRecord, message),
      sizeof(StatusLine),
      offsetof(StatusLine, address),
      offsetof(StatusLine, writing_op),
      offsetof(StatusLine, shared_id),
      offsetof(StatusLine, huge_pages),
      sizeof(ProgressLine),
      offsetof(ProgressLine, copied_op),
      offsetof(ProgressLine, shared_op),
      offsetof(ProgressLine, staged_address),
      RankArea::kControlLines,
      sizeof(SignatureHistory),
      SignatureHistory::kEntries,
      sizeof(InboxRecord),
      offsetof(InboxRecord, payload),
      Inbox::kRecords,
      sizeof(WakeLine),
      sizeof(SlotHeader),
      offsetof(SlotHeader, inline_data),
      SlotHeader::kInlineBytes,
  };
  return fnv1a_words(parts);
}

}  // namespace shmcoll::segment
