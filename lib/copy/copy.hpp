// Copy kernels. The data slots are cache-line aligned, so every copy has at least one aligned
// side; this is the single place where the kernel is chosen (non-temporal and vector variants
// belong here once measurements justify them).
#pragma once

#include <cstddef>
#include <cstring>

namespace shmcoll::copy {

inline void copy_bytes(std::byte* dst, const std::byte* src, std::size_t n) {
  std::memcpy(dst, src, n);
}

}  // namespace shmcoll::copy
