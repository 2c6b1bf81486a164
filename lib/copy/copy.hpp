// Copy kernels. The data slots are cache-line aligned, so every copy has at least one aligned
// side; this is the single place where the kernel is chosen.
//
// It is glibc's memcpy, by measurement (bench/copy_bench.cpp, bench/results/copy-2026-11-22-*):
// hand-written AVX-512 and AVX2 loops beat it only single-core with hot caches (256 B-16 KiB
// and 64-256 KiB), and dispatching to them made the slot path slower end to end, np=2 with the
// single copy off (bcast 4 KiB 0.86 -> 1.24 us, 32 KiB 4.4 -> 5.8 us; scatter and gather
// alike), where the source lines come from the other core. Non-temporal stores lost below
// 4 MiB and are not needed above: large blocks move with the single copy (cross_process.hpp).
#pragma once

#include <cstddef>
#include <cstring>

namespace shmcoll::copy {

inline void copy_bytes(std::byte* dst, const std::byte* src, std::size_t n) {
  std::memcpy(dst, src, n);
}

}  // namespace shmcoll::copy
