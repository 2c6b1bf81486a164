// Buffers with guard bytes, and the deterministic data patterns the collective tests compare.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace shmcoll::test {

inline constexpr std::byte kGuard{0xA5};
inline constexpr std::byte kUnwritten{0x5A};

// The byte at position `i` of the block that `rank` owns in operation `seq`.
inline std::byte pattern(std::uint64_t seq, int rank, std::uint64_t i) {
  std::uint64_t x =
      seq * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(rank) * 0xBF58476D1CE4E5B9ull + i;
  x ^= x >> 29;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 32;
  std::byte b{static_cast<unsigned char>(x)};
  // Never produce the sentinels, so "unchanged" and "written" are always distinguishable.
  return (b == kGuard || b == kUnwritten) ? std::byte{0} : b;
}

// A buffer of `bytes` bytes surrounded by guard bytes; data() is cache-line aligned plus
// `misalign` bytes.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t bytes, std::size_t misalign = 0)
      : bytes_(std::min(bytes, kMaxBytes)), storage_(bytes_ + 2 * kPad + 64, kGuard) {
    const auto base = reinterpret_cast<std::uintptr_t>(storage_.data()) + kPad;
    offset_ = (64 - base % 64) % 64 + misalign + kPad;
    std::fill(data(), data() + bytes_, kUnwritten);
  }
  std::byte* data() { return storage_.data() + offset_; }
  std::size_t size() const { return bytes_; }
  std::byte& operator[](std::size_t i) { return data()[i]; }
  bool guards_intact() const {
    for (std::size_t i = 0; i < storage_.size(); ++i) {
      if ((i < offset_ || i >= offset_ + bytes_) && storage_[i] != kGuard) return false;
    }
    return true;
  }

 private:
  static constexpr std::size_t kPad = 64;
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 40;  // far beyond any test
  std::size_t bytes_;
  std::vector<std::byte> storage_;
  std::size_t offset_ = 0;
};

}  // namespace shmcoll::test
