#include "copy_kernels.hpp"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace shmcoll::copy {

bool has_avx2() { return __builtin_cpu_supports("avx2"); }
bool has_avx512() { return __builtin_cpu_supports("avx512f"); }

namespace {

// Bytes up to the next multiple of 64 of dst (the head copied with memcpy).
std::size_t head_bytes(const std::byte* dst, std::size_t n) {
  const auto mis = reinterpret_cast<std::uintptr_t>(dst) % 64;
  const std::size_t head = mis == 0 ? 0 : 64 - mis;
  return head < n ? head : n;
}

}  // namespace

__attribute__((target("avx2"))) void copy_avx2(std::byte* dst, const std::byte* src,
                                                std::size_t n) {
  if (n < 128) {
    std::memcpy(dst, src, n);
    return;
  }
  const std::size_t head = head_bytes(dst, n);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  for (; n >= 64; n -= 64, dst += 64, src += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32));
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst), a);
    _mm256_store_si256(reinterpret_cast<__m256i*>(dst + 32), b);
  }
  std::memcpy(dst, src, n);
}

__attribute__((target("avx512f"))) void copy_avx512(std::byte* dst, const std::byte* src,
                                                     std::size_t n) {
  if (n < 128) {
    std::memcpy(dst, src, n);
    return;
  }
  const std::size_t head = head_bytes(dst, n);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  for (; n >= 128; n -= 128, dst += 128, src += 128) {
    const __m512i a = _mm512_loadu_si512(src);
    const __m512i b = _mm512_loadu_si512(src + 64);
    _mm512_store_si512(dst, a);
    _mm512_store_si512(dst + 64, b);
  }
  std::memcpy(dst, src, n);
}

__attribute__((target("avx512f"))) void copy_avx512_stream(std::byte* dst, const std::byte* src,
                                                            std::size_t n) {
  if (n < 128) {
    std::memcpy(dst, src, n);
    return;
  }
  const std::size_t head = head_bytes(dst, n);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  for (; n >= 128; n -= 128, dst += 128, src += 128) {
    const __m512i a = _mm512_loadu_si512(src);
    const __m512i b = _mm512_loadu_si512(src + 64);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + 64), b);
  }
  // Streaming stores are weakly ordered: fence them before anything publishes the data.
  _mm_sfence();
  std::memcpy(dst, src, n);
}

}  // namespace shmcoll::copy
