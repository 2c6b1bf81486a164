// Where the two ranks of a flat broadcast split its single copy, by the pages of their buffers.
//
// At np=2 the root writes one part of the message into its peer's buffer (process_vm_writev)
// while the peer reads the rest from the root's (process_vm_readv). Either call pins the other
// process's pages one by one, which on 4 KiB pages can cost more than the copy, and about
// memcpy's cost from 2 MiB pages (copy/huge_pages.hpp). A buffer
// from malloc rarely lies on huge pages whole: the 2 MiB page under its start often reaches
// below its mapping, where the kernel will not collapse it, so its first 0-2 MiB stay on small
// pages, at a different length in each process. An even split with the root's part first made
// the root write that head of its peer's buffer, small pages and all, while the peer read the
// rest from huge pages, and the length of that head, not the message, set the time
// (docs/tuning.md).
//
// So each rank publishes the part of its buffer it put on huge pages (StatusLine::huge_pages),
// and both pick the same split from both parts: the root's part at the head or at the tail of
// the message, of the length that evens out the two sides' costs, counting each byte by the
// pages of the buffer it is pinned from. Whichever rank pins fewer small pages takes the head.
//
// Bytes on small pages in both buffers cost the same whoever pins them. Where the root holds
// its staging buffer (copy/staging_buffer.hpp), the head those bytes form is staged instead:
// the root copies it into that huge page first, the peer reads it from there after its own
// part. That adds the same memcpy-sized work to both sides, and the rest of the message splits
// as before; where the split without a stage ends sooner, there is none.
#pragma once

#include <cstdint>

#include "copy/huge_pages.hpp"

namespace shmcoll::broadcast_split {

// The root stages the message's first stage_bytes, which the peer then reads from the
// staging buffer; of the rest, the root moves [root_at, root_at + root_bytes) into the peer's
// buffer, and the peer the other part from the root's (one range: the root's part lies at
// either end of the rest).
struct Split {
  std::uint64_t root_at = 0;
  std::uint64_t root_bytes = 0;
  std::uint64_t stage_bytes = 0;
  bool operator==(const Split&) const = default;
  // The peer's part of a message of `bytes`, read from the root's buffer.
  std::uint64_t peer_at() const {
    return root_at == stage_bytes ? root_at + root_bytes : stage_bytes;
  }
  std::uint64_t peer_bytes(std::uint64_t bytes) const { return bytes - stage_bytes - root_bytes; }
};

// The even split, the root's half first: what the pair does where neither buffer is known to
// lie on huge pages. `bytes` below 128 give the root nothing.
Split even(std::uint64_t bytes);

// A shorter head is left to the split: staging it saves less than the wait for it costs.
inline constexpr std::uint64_t kMinStageBytes = 64 * 1024;
// The split by pages replaces the even one only where its costs end sooner by this much.
inline constexpr std::uint64_t kMinGainPercent = 5;
// What a staged byte costs both ranks together, in copies from huge pages: the root's memcpy
// and the peer's read. Heads are staged only where small pages cost more.
inline constexpr double kStagingCost = 2.0;

// The split of `bytes` that ends soonest when a byte pinned from small pages costs
// `small_page_cost` times one pinned from huge pages (at least 1; the team's measure of cross-
// memory attach against memcpy). `root_huge` and `peer_huge`: the parts of the root's and the
// peer's buffers on huge pages; `root_stages`: the root holds its staging buffer. The staged
// head is at least kMinStageBytes and at most the staging buffer; the root's part is a
// multiple of 64 bytes, and neither rank's part is empty: the pair's completion protocol
// counts on both moving some. A function of its arguments only, so both ranks reach the same
// split.
Split choose(std::uint64_t bytes, copy::HugeOffsets root_huge, copy::HugeOffsets peer_huge,
             double small_page_cost, bool root_stages);

}  // namespace shmcoll::broadcast_split
