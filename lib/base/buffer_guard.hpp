// Debug builds' check of MPI's buffer rule for non-blocking operations: the caller must not touch
// an operation's buffers until the request completes. The bytes an operation reads from the
// caller (the root's send buffer, a sender's block) are fingerprinted when it is queued and again
// when it completes; a difference means they were written -- or freed and reused -- meanwhile,
// and the request completes with an error saying so. Receive buffers cannot be checked this way
// (the operation itself writes them). Release builds compile all of this away.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll {

#ifdef NDEBUG
inline constexpr bool kDebugChecks = false;
#else
inline constexpr bool kDebugChecks = true;
#endif

// Bytes [data, data + bytes) of the caller's memory.
struct ByteRange {
  const std::byte* data = nullptr;
  std::uint64_t bytes = 0;
};

class SendBufferGuard {
 public:
  // Takes the fingerprints of `ranges` (kept for the comparison).
  void arm(std::vector<ByteRange> ranges);
  // Empty while every range holds what it held at arm(); otherwise which range changed, for the
  // error message ("4096 bytes at 0x7f.. changed").
  std::string changed() const;

 private:
  std::vector<ByteRange> ranges_;
  std::vector<std::uint64_t> fingerprints_;
};

}  // namespace shmcoll
