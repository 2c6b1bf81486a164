// Copy kernel candidates, benchmarked against memcpy by copy_bench.cpp (Google Benchmark).
// Each aligns the destination to a cache line (head), copies whole vectors with aligned stores
// (body) and finishes with memcpy (tail). The AVX variants are compiled with target attributes
// and only called where the CPU has the instructions (has_avx2 / has_avx512).
//
// None of them is in the library: they win only in the single-core, hot-cache micro-benchmark
// (AVX-512 at 256 B-16 KiB, AVX2 at 64-256 KiB), and lose end to end in the slot path, where
// the data comes from the other core's cache (lib/copy/copy.hpp has the figures).
#pragma once

#include <cstddef>

namespace shmcoll::copy {

bool has_avx2();
bool has_avx512();

void copy_avx2(std::byte* dst, const std::byte* src, std::size_t n);
void copy_avx512(std::byte* dst, const std::byte* src, std::size_t n);
// Non-temporal (streaming) stores: they bypass the caches, which only pays off when the
// destination will not be read soon and the copy is much larger than the caches.
void copy_avx512_stream(std::byte* dst, const std::byte* src, std::size_t n);

}  // namespace shmcoll::copy
