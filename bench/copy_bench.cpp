// Copy kernels against memcpy (Google Benchmark): sizes 64 B to 256 MiB, destination aligned to
// a cache line, source aligned or misaligned by 8 or 1 bytes. Each iteration copies the same
// buffers, so sizes within the caches measure cache bandwidth and larger ones memory bandwidth.
// usage: copy-bench [--benchmark_filter=...] [--benchmark_min_time=0.05]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

#include "copy_kernels.hpp"

namespace {

using Kernel = void (*)(std::byte*, const std::byte*, std::size_t);

void plain_memcpy(std::byte* dst, const std::byte* src, std::size_t n) { std::memcpy(dst, src, n); }

struct Buffers {
  std::byte* src;
  std::byte* dst;
  explicit Buffers(std::size_t n) {
    src = static_cast<std::byte*>(std::aligned_alloc(4096, n + 4096));
    dst = static_cast<std::byte*>(std::aligned_alloc(4096, n + 4096));
    std::memset(src, 1, n + 4096);
    std::memset(dst, 2, n + 4096);
  }
  ~Buffers() {
    std::free(src);
    std::free(dst);
  }
};

void run(benchmark::State& state, Kernel kernel, bool supported) {
  if (!supported) {
    state.SkipWithError("this CPU lacks the instructions");
    return;
  }
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto misalign = static_cast<std::size_t>(state.range(1));
  Buffers b(n);
  for (auto _ : state) {
    kernel(b.dst, b.src + misalign, n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(n));
}

void sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t misalign : {0, 8, 1}) {
    for (std::int64_t n = 64; n <= (std::int64_t{256} << 20); n *= 4) b->Args({n, misalign});
  }
  b->ArgNames({"bytes", "misalign"});
}

}  // namespace

BENCHMARK_CAPTURE(run, memcpy, plain_memcpy, true)->Apply(sizes);
BENCHMARK_CAPTURE(run, avx2, shmcoll::copy::copy_avx2, shmcoll::copy::has_avx2())->Apply(sizes);
BENCHMARK_CAPTURE(run, avx512, shmcoll::copy::copy_avx512, shmcoll::copy::has_avx512())
    ->Apply(sizes);
BENCHMARK_CAPTURE(run, avx512_stream, shmcoll::copy::copy_avx512_stream,
                  shmcoll::copy::has_avx512())
    ->Apply(sizes);

// A kernel that copies wrongly would win for the wrong reason: check every candidate against
// memcpy first (sizes 0-1100 and a few large ones, every destination and source offset mod 8).
bool kernels_copy_correctly() {
  const std::pair<const char*, Kernel> kernels[] = {
      {"avx2", shmcoll::copy::has_avx2() ? shmcoll::copy::copy_avx2 : nullptr},
      {"avx512", shmcoll::copy::has_avx512() ? shmcoll::copy::copy_avx512 : nullptr},
      {"avx512_stream", shmcoll::copy::has_avx512() ? shmcoll::copy::copy_avx512_stream : nullptr}};
  Buffers want(1 << 20), got(1 << 20);
  for (std::size_t i = 0; i < (1 << 20) + 4096; ++i) want.src[i] = std::byte(i * 131 % 251);
  for (const auto& [name, kernel] : kernels) {
    if (kernel == nullptr) continue;
    for (std::size_t n :
         {0ul, 1ul, 63ul, 64ul, 127ul, 128ul, 129ul, 1000ul, 1100ul, 65599ul, (1ul << 20) - 3}) {
      for (std::size_t d = 0; d < 8; ++d) {
        for (std::size_t s = 0; s < 8; s += 3) {
          std::memset(want.dst, 0, n + 64);
          std::memset(got.dst, 0, n + 64);
          std::memcpy(want.dst + d, want.src + s, n);
          kernel(got.dst + d, want.src + s, n);
          if (std::memcmp(want.dst, got.dst, n + 64) != 0) {
            std::fprintf(stderr, "copy-bench: %s copies %zu bytes wrongly (offsets %zu, %zu)\n",
                         name, n, d, s);
            return false;
          }
        }
      }
    }
  }
  return true;
}

int main(int argc, char** argv) {
  if (!kernels_copy_correctly()) return 1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
