// Moves the buffers that peers reach through cross-memory attach (CMA) onto 2 MiB pages.
//
// process_vm_readv and process_vm_writev pin the remote process's pages one by one before they
// copy, and on 4 KiB pages that costs more than the copy saves, while from huge pages they copy
// at about memcpy's speed (the remote side's page size counts, the local side's does not;
// docs/tuning.md). Buffers from malloc sit on 4 KiB pages
// unless the system sets THP to "always", so a rank collapses its own buffer with
// madvise(MADV_COLLAPSE) (Linux 6.1) before its peers can see it: the kernel copies the pages
// onto huge pages in place, the contents and addresses stay, and pages not yet touched become
// zero-filled ones, which is what they would read as anyway.
//
// Every huge page the buffer overlaps moves, not only those wholly inside it: a malloc'd buffer
// of 4 MiB rarely starts on a 2 MiB boundary, and one of 1 MiB never holds a whole huge page.
// The memory around the buffer within those pages keeps its contents (the kernel does to it
// what khugepaged does to any memory where THP is "always"), and costs up to 2 MiB more at each
// end where it was not touched before. An edge page that reaches beyond the buffer's mapping,
// or into memory the kernel cannot collapse, stays as it is.
//
// A collapse costs time once, milliseconds per 2 MiB page, against what each small page costs
// a peer's copy, a fraction of a microsecond: one page's collapse pays for itself after its
// 2 MiB have moved some 1-65 times on small pages (docs/tuning.md). So a buffer is
// collapsed once the bytes peers moved through it reach kAmortization times the bytes the
// collapse moves (and never on its first use): a buffer of 16 MiB on its 5th use, of 1 MiB on
// its 8th or 16th, of 64 KiB on its 128th or 256th, and one a program uses a few times never.
// The memory may be unmapped and mapped again at the same address, on small pages again, so a
// collapsed buffer is collapsed again every kRecollapseUses uses; on memory already on huge
// pages the call only walks the page tables.
#pragma once

#include <array>
#include <cstdint>

namespace shmcoll::copy {

// The addresses [begin, end) of a buffer's memory that a collapse put on huge pages, as far as
// this process knows: empty before the first collapse, or where the kernel refused. A hint for
// planning copies, not a promise: the memory may have been unmapped and mapped again since.
struct HugeRun {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  bool empty() const { return end <= begin; }
};

// A run's place within its buffer, as a rank publishes it with its arrival (StatusLine::
// huge_pages): byte offsets [begin, end) from the buffer's start, kept in 4 KiB units (begin
// rounded up, end down), 31 bits each (8 TiB). The empty run packs to 0. The word's top bit
// is kStagesBit.
struct HugeOffsets {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool empty() const { return end <= begin; }
};
std::uint64_t pack_offsets(const HugeRun& run, const void* buffer);
HugeOffsets unpack_offsets(std::uint64_t packed);
// Set in the published word by a broadcast pair's root that holds its staging buffer for the
// operation (copy/staging_buffer.hpp, coll/broadcast_split.hpp).
inline constexpr std::uint64_t kStagesBit = std::uint64_t{1} << 63;

class HugePageCollapser {
 public:
  static constexpr std::uint64_t kHugePageBytes = std::uint64_t{2} << 20;
  static constexpr std::uint64_t kRecollapseUses = 128;
  static constexpr std::uint64_t kAmortization = 4;
  // Smaller buffers are left alone: pinning their at most 16 small pages costs a few
  // microseconds a call, not worth up to 4 MiB of memory around them.
  static constexpr std::uint64_t kMinBufferBytes = 64 * 1024;

  // A buffer of this rank's that peers will copy from or into with CMA in the call starting
  // now, before they can: collapses it once its uses have moved kAmortization times the bytes
  // of the huge pages it overlaps (and again every kRecollapseUses uses after that). Returns
  // the part of the buffer the last collapse put on huge pages: the longest run of pages the
  // kernel accepted, clipped to the buffer (an edge page that reaches beyond the buffer's
  // mapping stays on 4 KiB pages, and so does the buffer's part in it).
  HugeRun note_use(const void* buffer, std::uint64_t bytes);

  // How many collapses were asked of the kernel, and how many it refused (tests, logs).
  std::uint64_t collapses() const { return collapses_; }
  std::uint64_t refusals() const { return refusals_; }

 private:
  // The huge pages one buffer overlaps, and how often the buffer was used.
  struct Range {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    std::uint64_t uses = 0;
    std::uint64_t moved = 0;         // bytes of all its uses, until the first collapse
    std::uint64_t collapsed_at = 0;  // the use that first collapsed it (0: none yet)
    std::uint64_t last_use = 0;      // clock_ at the last use: the least recent one is replaced
    bool refused = false;            // the kernel refused every page (not anonymous, THP off)
    HugeRun huge;                    // the longest run of pages the last collapse moved
  };
  // Enough for the buffers of one program's collectives; more only replace the oldest.
  static constexpr std::size_t kRanges = 8;

  bool collapse(Range& range);

  std::array<Range, kRanges> ranges_{};
  std::uint64_t clock_ = 0;
  std::uint64_t collapses_ = 0;
  std::uint64_t refusals_ = 0;
};

}  // namespace shmcoll::copy
