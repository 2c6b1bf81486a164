// How many untimed calls come before a size's timed ones, the same on every rank (a count that
// differed between ranks would hang the collectives).
//
// Besides a tenth of the timed calls (caches, the first touch of each line), the warm-up covers
// the library's one-time move of a reused buffer onto huge pages: a buffer that peers copy from
// or into with cross-memory attach is collapsed once its uses have moved 4 times the bytes of
// the 2 MiB pages it overlaps (copy/huge_pages.hpp: the 5th use of a 16 MiB buffer, up to the
// 256th of a 64 KiB one), and the collapse takes 0.5-6.6 ms a page, a cost of setting up and
// not of the steady state the tables report. 32 MiB of calls, and at least 8, cover it; at most
// the timed count and 512. The MPIs alone get the same warm-up.
#pragma once

#include <algorithm>
#include <cstdint>

#include "copy/huge_pages.hpp"

namespace shmcoll::bench {

// A buffer of B bytes overlaps at most B + 4 MiB of huge pages, so it is collapsed by its
// kAmortization * (1 + 4 MiB / B)-th use: at most 6 uses from 8 MiB, 12 at 2 MiB, and 32 MiB / B
// below. The 32 MiB and the 8 hold for the amortization they were set for.
static_assert(copy::HugePageCollapser::kAmortization == 4 &&
              copy::HugePageCollapser::kHugePageBytes == std::uint64_t{2} << 20);

inline int warmup_iterations(int iters, std::uint64_t bytes) {
  const std::uint64_t per_call = std::max<std::uint64_t>(bytes, 1);  // calls of 0 bytes too
  const std::uint64_t by_bytes =
      std::max<std::uint64_t>(8, ((32u << 20) + per_call - 1) / per_call);
  const auto cover = static_cast<int>(
      std::min<std::uint64_t>({by_bytes, 512, static_cast<std::uint64_t>(std::max(iters, 0))}));
  return std::max(iters / 10 + 2, cover);
}

}  // namespace shmcoll::bench
