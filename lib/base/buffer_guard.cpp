#include "base/buffer_guard.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace shmcoll {
namespace {

// FNV-1a over 8-byte words (then the tail bytes): any change of a byte changes it with
// near certainty, and debug builds can afford one pass over the buffer at start and completion.
std::uint64_t fingerprint(const ByteRange& r) {
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t h = 0xcbf29ce484222325ULL;
  std::uint64_t i = 0;
  for (; i + 8 <= r.bytes; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, r.data + i, 8);
    h = (h ^ word) * kPrime;
  }
  for (; i < r.bytes; ++i) h = (h ^ static_cast<std::uint64_t>(r.data[i])) * kPrime;
  return h;
}

// False where part of the range is no longer mapped (a large buffer freed goes back to the
// kernel): reading it would crash. msync fails with ENOMEM on unmapped pages and does nothing
// else with MS_ASYNC.
bool mapped(const ByteRange& r) {
  if (r.bytes == 0) return true;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(r.data) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(r.data) + r.bytes;
  return msync(reinterpret_cast<void*>(begin), end - begin, MS_ASYNC) == 0 || errno != ENOMEM;
}

}  // namespace

void SendBufferGuard::arm(std::vector<ByteRange> ranges) {
  ranges_ = std::move(ranges);
  fingerprints_.clear();
  for (const ByteRange& r : ranges_) fingerprints_.push_back(fingerprint(r));
}

std::string SendBufferGuard::changed() const {
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    const bool still_mapped = mapped(ranges_[i]);
    if (still_mapped && fingerprint(ranges_[i]) == fingerprints_[i]) continue;
    char where[32];
    std::snprintf(where, sizeof where, "%p", static_cast<const void*>(ranges_[i].data));
    return std::to_string(ranges_[i].bytes) + " bytes at " + where +
           (still_mapped ? " changed" : " are no longer mapped (freed?)");
  }
  return {};
}

}  // namespace shmcoll
