// 64-bit monotone tags: every flag in the segment holds (operation number, step).
//
// Operation numbers count the collectives of a team (identical on every rank, since all ranks
// call collectives in the same order); steps count progress inside one operation. Because the
// operation number sits in the high bits, a tag only ever grows for a given flag, so waiters
// compare with >= and never reset anything. 44 bits of operations last 1.7e13 collectives
// (40 days of back-to-back 0.2 us calls); 20 bits of steps allow 2^20 - 3 chunks per message.
#pragma once

#include <cstdint>

namespace shmcoll::sync {

inline constexpr int kStepBits = 20;
inline constexpr std::uint64_t kStepMask = (std::uint64_t{1} << kStepBits) - 1;
inline constexpr std::uint64_t kMaxOperation = (std::uint64_t{1} << (64 - kStepBits)) - 1;

constexpr std::uint64_t make_tag(std::uint64_t op, std::uint64_t step) {
  return (op << kStepBits) | step;
}
constexpr std::uint64_t op_of(std::uint64_t tag) { return tag >> kStepBits; }
constexpr std::uint64_t step_of(std::uint64_t tag) { return tag & kStepMask; }

// Steps of a rank's status line within operation `op`:
inline constexpr std::uint64_t kStepWriting = 0;  // signature of `op` being written
inline constexpr std::uint64_t kStepArrived = 1;  // signature valid: the rank is in `op`
constexpr std::uint64_t step_consumed(std::uint64_t chunk) { return chunk + 2; }
inline constexpr std::uint64_t kStepDone = kStepMask;  // the rank has left `op`

// Steps of a slot flag: chunk c of operation `op` is in the slot.
constexpr std::uint64_t step_chunk(std::uint64_t chunk) { return chunk + 1; }

inline constexpr std::uint64_t kMaxChunks = kStepMask - 3;

}  // namespace shmcoll::sync
