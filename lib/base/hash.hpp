// FNV-1a over the bytes of 64-bit words, low byte first: a fingerprint that processes compute
// alike from the same numbers (the segment's layout, the parts of an adopted shared range).
// Equal inputs give equal fingerprints; unequal ones almost never do.
#pragma once

#include <cstdint>
#include <span>

namespace shmcoll {

inline std::uint64_t fnv1a_words(std::span<const std::uint64_t> words) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::uint64_t w : words) {
    for (int i = 0; i < 8; ++i) {
      h ^= (w >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

}  // namespace shmcoll
