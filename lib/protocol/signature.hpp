// What a rank says about the collective it is in, so that peers can compare.
#pragma once

#include <cstdint>
#include <string>

#include "shmcoll/datatype.hpp"

namespace shmcoll {

enum class Kind : std::uint8_t {
  kBarrier = 1,
  kBcast = 2,
  kScatter = 3,
  kScatterv = 4,
  kGather = 5,
  kGatherv = 6,
};
const char* kind_name(Kind kind);

struct OpSignature {
  Kind kind = Kind::kBarrier;
  int root = 0;
  // The bytes this rank moves per rank: bcast the message; scatter/gather (and the v forms on
  // non-roots) one rank's block. Root of a v form: 0 (its per-rank sizes are checked one by one).
  std::uint64_t bytes = 0;
  // For messages only: the count and datatype the bytes came from.
  Count count = 0;
  Datatype type = kByte;

  std::uint64_t packed() const {
    return static_cast<std::uint64_t>(kind) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(root)) << 8);
  }
  static Kind kind_of(std::uint64_t packed) { return static_cast<Kind>(packed & 0xff); }
  static int root_of(std::uint64_t packed) {
    return static_cast<int>(static_cast<std::uint32_t>(packed >> 8));
  }
  std::string describe_bytes() const;
};

// What the root of a scatterv or gatherv publishes as its size (coll/published_sizes.hpp):
// kUniform | size where every other rank's block has that one size, a fingerprint of their
// sizes (kUniform | kFingerprint | ..., odd), or 0 where it says nothing of them.
namespace root_word {
inline constexpr std::uint64_t kUniform = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kFingerprint = std::uint64_t{1} << 62;
inline bool is_fingerprint(std::uint64_t word) {
  return (word & (kUniform | kFingerprint | 1)) == (kUniform | kFingerprint | 1);
}
// The one size the word gives every other rank, or -1 where it gives none.
inline std::int64_t uniform_size(std::uint64_t word) {
  if ((word & kUniform) == 0 || is_fingerprint(word)) return -1;
  return static_cast<std::int64_t>(word & ~kUniform);
}
}  // namespace root_word

}  // namespace shmcoll
