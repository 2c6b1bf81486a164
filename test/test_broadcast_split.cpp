// How a flat broadcast pair splits its single copy by the pages of both buffers
// (coll/broadcast_split.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "coll/broadcast_split.hpp"

namespace shmcoll::test {
namespace {

using broadcast_split::choose;
using broadcast_split::Split;
using copy::HugeOffsets;
constexpr std::uint64_t kMiB = 1 << 20;

// The cost of a split as choose() weighs it, in bytes-from-huge-pages: the larger side's. A
// staged byte costs each side one (the root's memcpy, the peer's read from the huge page).
double finish(std::uint64_t bytes, Split s, HugeOffsets root_huge, HugeOffsets peer_huge,
              double small) {
  auto cost = [&](std::uint64_t begin, std::uint64_t end, HugeOffsets huge) {
    const std::uint64_t lo = std::max(begin, huge.begin), hi = std::min(end, huge.end);
    const double on_huge = hi > lo ? static_cast<double>(hi - lo) : 0.0;
    return on_huge + (static_cast<double>(end - begin) - on_huge) * small;
  };
  const auto staged = static_cast<double>(s.stage_bytes);
  return std::max(staged + cost(s.root_at, s.root_at + s.root_bytes, peer_huge),
                  staged + cost(s.peer_at(), s.peer_at() + s.peer_bytes(bytes), root_huge));
}

TEST_CASE("broadcast split: even, the root's half first, where no pages are known") {
  CHECK(choose(4 * kMiB, {}, {}, 4.0, true) == Split{0, 2 * kMiB});
  CHECK(choose(1000, {}, {}, 4.0, true) == Split{0, 448});  // a whole number of cache lines
  CHECK(broadcast_split::even(100) == Split{0, 0});         // too small to share
}

TEST_CASE("broadcast split: the rank whose peer's buffer is on huge pages takes the head") {
  const std::uint64_t n = 4 * kMiB;
  const HugeOffsets all{0, n};
  SUBCASE("the peer's first MiB on small pages: the root writes the tail") {
    const Split s = choose(n, all, {kMiB, n}, 4.0, true);
    CHECK(s == Split{n / 2, n / 2});
  }
  SUBCASE("the root's first MiB on small pages: the root writes the head") {
    const Split s = choose(n, {kMiB, n}, all, 4.0, true);
    CHECK(s == Split{0, n / 2});
  }
  SUBCASE("both whole on huge pages: even") {
    CHECK(choose(n, all, all, 4.0, true) == Split{0, n / 2});
  }
}

TEST_CASE("broadcast split: bytes on small pages in both buffers weigh on whoever moves them") {
  // Both first MiBs on small pages at 4x: the root moves 0.875 MiB of that MiB (3.5 MiB of
  // work), the peer the other 0.125 (0.5) and the 3 MiB on huge pages.
  const std::uint64_t n = 4 * kMiB;
  const HugeOffsets head_small{kMiB, n};
  const Split s = choose(n, head_small, head_small, 4.0, false);
  CHECK(s.root_at == 0);
  CHECK(s.root_bytes == 7 * kMiB / 8);
  CHECK(finish(n, s, head_small, head_small, 4.0) == 3.5 * kMiB);
  // The even split leaves the root 2 MiB, its first at 4x: 5 MiB of work.
  CHECK(finish(n, broadcast_split::even(n), head_small, head_small, 4.0) == 5.0 * kMiB);
}

TEST_CASE("broadcast split: a head on small pages in both buffers is staged where that pays") {
  const std::uint64_t n = 4 * kMiB;
  const HugeOffsets root_huge{kMiB + 4096, n}, peer_huge{kMiB, n};
  // The root stages the first MiB; the other 3 split evenly, all on huge pages.
  const Split s = choose(n, root_huge, peer_huge, 4.0, true);
  CHECK(s == Split{kMiB, 3 * kMiB / 2, kMiB});
  CHECK(s.peer_at() == kMiB + 3 * kMiB / 2);
  CHECK(finish(n, s, root_huge, peer_huge, 4.0) == 2.5 * kMiB);
  // Without the staging buffer, or where small pages cost less than staging, no stage.
  CHECK(choose(n, root_huge, peer_huge, 4.0, false).stage_bytes == 0);
  CHECK(choose(n, root_huge, peer_huge, 1.8, true).stage_bytes == 0);
  // A head shorter than kMinStageBytes is not staged either.
  CHECK(choose(n, {4096, n}, peer_huge, 4.0, true).stage_bytes == 0);
  // Nor a head of 2 MiB or more beyond the staging buffer's size.
  CHECK(choose(16 * kMiB, {3 * kMiB, 16 * kMiB}, {3 * kMiB, 16 * kMiB}, 4.0, true).stage_bytes ==
        2 * kMiB);
}

TEST_CASE("broadcast split: any pages give two parts that cover the message, never worse") {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::uint64_t n = 128 + random() % (16 * kMiB);
    auto offsets = [&] {
      const std::uint64_t a = random() % (n + 1), b = random() % (n + 1);
      return random() % 4 == 0 ? HugeOffsets{} : HugeOffsets{std::min(a, b), std::max(a, b)};
    };
    const HugeOffsets root_huge = offsets(), peer_huge = offsets();
    const double small = 1.0 + static_cast<double>(random() % 80) / 10.0;
    const bool stages = random() % 2 == 0;
    const Split s = choose(n, root_huge, peer_huge, small, stages);
    INFO("bytes " << n << " root huge [" << root_huge.begin << ", " << root_huge.end
                  << ") peer huge [" << peer_huge.begin << ", " << peer_huge.end << ")");
    REQUIRE(s.root_bytes > 0);
    REQUIRE(s.stage_bytes + s.root_bytes < n);  // the peer's part is not empty
    CHECK(s.root_bytes % 64 == 0);
    // Staged head, then the root's part at either end of the rest.
    CHECK((s.root_at == s.stage_bytes || s.root_at + s.root_bytes == n));
    if (s.stage_bytes > 0) {
      CHECK(stages);
      CHECK(small > broadcast_split::kStagingCost);
      CHECK(s.stage_bytes >= broadcast_split::kMinStageBytes);
      CHECK(s.stage_bytes <= std::min(root_huge.begin, peer_huge.begin));
    }
    // Weights are rounded to sixteenths and shares to 64 bytes: within that of the even split.
    CHECK(finish(n, s, root_huge, peer_huge, small) <=
          finish(n, broadcast_split::even(n), root_huge, peer_huge, small) * 1.01 + 64 * small);
    // Both ranks call it with the same arguments: the same answer.
    CHECK(choose(n, root_huge, peer_huge, small, stages) == s);
  }
}

TEST_CASE("broadcast split: a gain below kMinGainPercent keeps the even split") {
  // One small page at the head of each buffer: the costs would move 7 KiB of 4 MiB.
  const std::uint64_t n = 4 * kMiB;
  CHECK(choose(n, {4096, n}, {4096, n}, 4.56, true) == broadcast_split::even(n));
  // A head of 256 KiB in the peer's buffer moves more than that.
  CHECK(choose(n, {4096, n}, {256 * 1024, n}, 4.56, true) != broadcast_split::even(n));
}

TEST_CASE("broadcast split: offsets beyond the message (a garbled status line) stay inside it") {
  const std::uint64_t n = 1 << 20;
  for (const HugeOffsets bad : {HugeOffsets{3 * kMiB, 4 * kMiB}, HugeOffsets{n - 64, 8 * kMiB},
                                HugeOffsets{0, ~std::uint64_t{0}}}) {
    const Split s = choose(n, bad, bad, 4.0, true);
    CHECK(s.root_bytes > 0);
    CHECK(s.stage_bytes + s.root_bytes < n);
    CHECK(s.root_at + s.root_bytes <= n);
  }
}

TEST_CASE("broadcast split: a measure that is not a number counts small pages as huge") {
  const std::uint64_t n = 4 * kMiB;
  CHECK(choose(n, {0, n}, {kMiB, n}, 0.0 / 0.0 + 0, false) == Split{0, n / 2});
}

}  // namespace
}  // namespace shmcoll::test
