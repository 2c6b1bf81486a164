// Moves the buffers that peers reach through cross-memory attach (CMA) onto 2 MiB pages.
//
// process_vm_readv and process_vm_writev pin the remote process's pages one by one before they
// copy, and on 4 KiB pages that costs more than the copy saves: two processes on a 2-core Intel
// VM each reading 8 MiB from the other at once took 800-1020 us where memcpy took 590-610; with
// the remote buffer on transparent huge pages 605-620 us, as fast as memcpy (the local side's
// page size made no difference). On a 2-core AMD EPYC VM the pinning costs more still: one
// process_vm_readv took 4x memcpy's time from 4 KiB pages at 1 MiB and 8x at 256 KiB (about
// 0.28 us per page), and 1.1x and 2.1x from huge pages. Buffers from malloc sit on 4 KiB pages
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
// A collapse costs about 0.25-2.5 ms per 2 MiB page (the first one of a run the most), so only
// a buffer used a second time is collapsed: a buffer a program reuses pays once, one it uses
// once never pays. The memory may be unmapped and mapped again at the same address, on small
// pages again, so a buffer in use is collapsed again every kRecollapseUses uses; on memory that
// is already on huge pages the call only walks the page tables (3-110 us for 8 MiB), against at
// least 100 cross-memory copies in between.
#pragma once

#include <array>
#include <cstdint>

namespace shmcoll::copy {

class HugePageCollapser {
 public:
  static constexpr std::uint64_t kHugePageBytes = std::uint64_t{2} << 20;
  static constexpr std::uint64_t kRecollapseUses = 128;
  // Smaller buffers are left alone: pinning their at most 16 small pages costs a few
  // microseconds a call, not worth up to 4 MiB of memory around them.
  static constexpr std::uint64_t kMinBufferBytes = 64 * 1024;

  // A buffer of this rank's that peers will copy from or into with CMA in the call starting
  // now, before they can: collapses it on its second use (and every kRecollapseUses after).
  void note_use(const void* buffer, std::uint64_t bytes);

  // How many collapses were asked of the kernel, and how many it refused (tests, logs).
  std::uint64_t collapses() const { return collapses_; }
  std::uint64_t refusals() const { return refusals_; }

 private:
  // The huge pages one buffer overlaps, and how often the buffer was used.
  struct Range {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    std::uint64_t uses = 0;
    std::uint64_t last_use = 0;  // clock_ at the last use: the least recent one is replaced
    bool refused = false;        // the kernel refused every page (not anonymous, THP disabled)
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
