#include "copy_kernels.hpp"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace shmcoll::copy {

bool has_avx2() { return __builtin_cpu_supports("avx2"); }
bool has_avx512() { return __builtin_cpu_supports("avx512f"); }

namespace {

// The frame every kernel shares: small copies and the head up to the destination's next cache
// line go to memcpy, `body` copies whole `Step`-byte units to the now aligned destination and
// returns, and memcpy copies the tail.
template <std::size_t Step, class Body>
void aligned_copy(std::byte* dst, const std::byte* src, std::size_t n, Body&& body) {
  if (n < 2 * Step) {
    std::memcpy(dst, src, n);
    return;
  }
  const auto mis = reinterpret_cast<std::uintptr_t>(dst) % 64;
  const std::size_t head = mis == 0 ? 0 : 64 - mis;
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  const std::size_t whole = n / Step * Step;
  body(dst, src, whole);
  std::memcpy(dst + whole, src + whole, n - whole);
}

}  // namespace

__attribute__((target("avx2"))) void copy_avx2(std::byte* dst, const std::byte* src,
                                               std::size_t n) {
  aligned_copy<64>(
      dst, src, n,
      [](std::byte * d, const std::byte* s, std::size_t len) __attribute__((target("avx2"))) {
        for (std::size_t i = 0; i < len; i += 64) {
          const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
          const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
          _mm256_store_si256(reinterpret_cast<__m256i*>(d + i), a);
          _mm256_store_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
        }
      });
}

__attribute__((target("avx512f"))) void copy_avx512(std::byte* dst, const std::byte* src,
                                                    std::size_t n) {
  aligned_copy<128>(
      dst, src, n,
      [](std::byte * d, const std::byte* s, std::size_t len) __attribute__((target("avx512f"))) {
        for (std::size_t i = 0; i < len; i += 128) {
          const __m512i a = _mm512_loadu_si512(s + i);
          const __m512i b = _mm512_loadu_si512(s + i + 64);
          _mm512_store_si512(d + i, a);
          _mm512_store_si512(d + i + 64, b);
        }
      });
}

__attribute__((target("avx512f"))) void copy_avx512_stream(std::byte* dst, const std::byte* src,
                                                           std::size_t n) {
  aligned_copy<128>(
      dst, src, n,
      [](std::byte * d, const std::byte* s, std::size_t len) __attribute__((target("avx512f"))) {
        for (std::size_t i = 0; i < len; i += 128) {
          const __m512i a = _mm512_loadu_si512(s + i);
          const __m512i b = _mm512_loadu_si512(s + i + 64);
          _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), a);
          _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i + 64), b);
        }
        // Streaming stores are weakly ordered: fence them before anything publishes the data.
        _mm_sfence();
      });
}

}  // namespace shmcoll::copy
