#include "copy/staging_buffer.hpp"

#include <sys/mman.h>

#include <cstring>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1; older C libraries lack the name
#endif

namespace shmcoll::copy {

StagingBuffer::~StagingBuffer() {
  if (mapping_ != nullptr) munmap(mapping_, 2 * kBytes);
}

bool StagingBuffer::claim(std::uint64_t op) {
  // acquire: pairs with release(), so the last holder's use of the buffer happens before ours.
  if (refused_ || holder_.load(std::memory_order_acquire) != 0) return false;
  if (data_ == nullptr) {
    // Twice the size, so that a 2 MiB boundary lies within the first half.
    void* p = mmap(nullptr, 2 * kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      refused_ = true;
      return false;
    }
    mapping_ = static_cast<std::byte*>(p);
    const auto at = (reinterpret_cast<std::uintptr_t>(p) + kBytes - 1) & ~(kBytes - 1);
    data_ = reinterpret_cast<std::byte*>(at);
    // Touched first: a collapse needs present pages (and THP "madvise" wants the hint).
    madvise(data_, kBytes, MADV_HUGEPAGE);
    std::memset(data_, 0, kBytes);
    if (madvise(data_, kBytes, MADV_COLLAPSE) != 0) {
      munmap(mapping_, 2 * kBytes);
      mapping_ = data_ = nullptr;
      refused_ = true;
      return false;
    }
  }
  // Claims come one at a time (operations arrive under the team's lock), so it is still free.
  holder_.store(op, std::memory_order_relaxed);
  return true;
}

}  // namespace shmcoll::copy
