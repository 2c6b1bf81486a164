// A rank's private 2 MiB on one huge page, where a broadcast root copies the part of its
// message that sits on small pages in both its own buffer and its peer's, so that the peer's
// cross-memory read of that part pins one huge page instead of hundreds of small ones
// (coll/broadcast_split.hpp). A memcpy plus a read from a huge page cost about 2x memcpy per
// byte, less than a read from small pages where those cost more (broadcast_split's
// kStagingCost).
//
// Made on first use, kept for the team's life, and lent to one operation at a time: a
// non-blocking broadcast that arrives while an earlier one still holds it does without. Claims
// come one at a time, as operations arrive under the team's lock; releases from whichever
// thread destroys the operation (a request's last handle), hence the atomic loan.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace shmcoll::copy {

class StagingBuffer {
 public:
  static constexpr std::uint64_t kBytes = std::uint64_t{2} << 20;

  StagingBuffer() = default;
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  // Lends the buffer to operation `op` (a number above 0), making it first if need be: true
  // if it is free and lies on a huge page. Where the kernel does not give a huge page, the
  // buffer is released and never asked for again.
  bool claim(std::uint64_t op);
  // Ends operation `op`'s loan, if it holds one.
  void release(std::uint64_t op) {
    // release: everything the holder did with the buffer happens before the next claim's
    // acquire sees it free.
    holder_.compare_exchange_strong(op, 0, std::memory_order_release, std::memory_order_relaxed);
  }
  std::byte* data() const { return data_; }

 private:
  std::byte* mapping_ = nullptr;  // kBytes more than the buffer, to align it
  std::byte* data_ = nullptr;
  std::atomic<std::uint64_t> holder_{0};  // the operation holding the loan, 0 for none
  bool refused_ = false;
};

}  // namespace shmcoll::copy
