// Copy kernels. The data slots are cache-line aligned, so every copy has at least one aligned
// side; this is the single place where the kernel is chosen.
//
// It is glibc's memcpy, by measurement (bench/copy_bench.cpp; docs/tuning.md): hand-written
// AVX-512 and AVX2 loops beat it only single-core with hot caches, and made the slot path
// slower end to end, where the source lines come from the other core. Non-temporal stores
// lost below 4 MiB and are not needed above: large blocks move with the single copy
// (cross_process.hpp).
#pragma once

#include <cstddef>
#include <cstring>

namespace shmcoll::copy {

inline void copy_bytes(std::byte* dst, const std::byte* src, std::size_t n) {
  std::memcpy(dst, src, n);
}

}  // namespace shmcoll::copy
