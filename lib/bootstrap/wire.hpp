// Framing of bootstrap messages between ranks and their hub over a stream socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll::bootstrap {

enum class MessageType : std::uint32_t {
  kAllgather = 1,        // rank -> hub: this rank's contribution
  kAllgatherResult = 2,  // hub -> rank: every contribution, by rank
  kError = 3,            // hub -> rank: the exchange failed; payload is the reason
};

struct FrameHeader {
  static constexpr std::uint32_t kMagic = 0x53484342;  // "BCHS"
  std::uint32_t magic = kMagic;
  std::uint32_t type = 0;
  std::uint64_t length = 0;  // payload bytes that follow
};
static_assert(sizeof(FrameHeader) == 16);

// Largest payload a hub accepts from one rank; protects the hub from a corrupt length.
inline constexpr std::uint64_t kMaxContribution = 1 << 20;

// Writes a whole frame; false if the peer is gone.
bool send_frame(int fd, MessageType type, const void* payload, std::size_t length);

// Reads exactly `length` bytes, waiting at most until `deadline_ns` (steady clock; <0 = none).
// Returns an empty string on success, else why it failed.
std::string read_exact(int fd, void* out, std::size_t length, std::int64_t deadline_ns);

std::int64_t steady_now_ns();

}  // namespace shmcoll::bootstrap
