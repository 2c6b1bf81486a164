#include "coll/broadcast_split.hpp"

#include <algorithm>
#include <cmath>

namespace shmcoll::broadcast_split {

namespace {

constexpr std::uint64_t kGrain = 64;  // parts start on cache lines where the buffers do

// Cost of moving [begin, end) when the pages behind `huge` cost `huge_weight` per byte and all
// others `small_weight`: whole numbers, so that both ranks compute the same.
std::uint64_t cost(std::uint64_t begin, std::uint64_t end, copy::HugeOffsets huge,
                   std::uint64_t small_weight, std::uint64_t huge_weight) {
  const std::uint64_t lo = std::max(begin, huge.begin);
  const std::uint64_t hi = std::min(end, huge.end);
  const std::uint64_t on_huge = hi > lo ? hi - lo : 0;
  return on_huge * huge_weight + (end - begin - on_huge) * small_weight;
}

struct Candidate {
  Split split;
  std::uint64_t finish = 0;  // the larger of the two sides' costs
};

// The best split with the root's part at the head (`root_first`) or at the tail: the root's
// cost grows with its part and the peer's shrinks, so the balance point is found by bisection
// over the grain.
Candidate best(std::uint64_t bytes, bool root_first, copy::HugeOffsets root_huge,
               copy::HugeOffsets peer_huge, std::uint64_t small_weight, std::uint64_t huge_weight) {
  // The root's part: pinned from the peer's buffer; the peer's: from the root's.
  const auto costs = [&](std::uint64_t share) {
    const std::uint64_t root_at = root_first ? 0 : bytes - share;
    const std::uint64_t peer_at = root_first ? share : 0;
    return std::pair(cost(root_at, root_at + share, peer_huge, small_weight, huge_weight),
                     cost(peer_at, peer_at + bytes - share, root_huge, small_weight, huge_weight));
  };
  const auto candidate = [&](std::uint64_t share) {
    const auto [root, peer] = costs(share);
    return Candidate{{root_first ? 0 : bytes - share, share}, std::max(root, peer)};
  };
  // The smallest share (in grains, within [1, grains - 1]) at which the root's cost reaches the
  // peer's; the best is there or one grain below.
  const std::uint64_t grains = bytes / kGrain;
  std::uint64_t lo = 1, hi = grains - 1;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    const auto [root, peer] = costs(mid * kGrain);
    if (root >= peer) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  Candidate at = candidate(lo * kGrain);
  if (lo > 1) {
    const Candidate below = candidate((lo - 1) * kGrain);
    if (below.finish < at.finish) at = below;
  }
  return at;
}

}  // namespace

Split even(std::uint64_t bytes) { return {0, bytes / 2 / kGrain * kGrain}; }

Split choose(std::uint64_t bytes, copy::HugeOffsets root_huge, copy::HugeOffsets peer_huge,
             double small_page_cost) {
  if ((root_huge.empty() && peer_huge.empty()) || bytes < 2 * kGrain) return even(bytes);
  // Weights in sixteenths: a byte from huge pages costs 16, one from small pages 16 x the
  // measured ratio (at least 16). The root's part is a whole number of grains, so the bytes of
  // an odd size beyond the last grain go with the peer's.
  constexpr std::uint64_t kHugeWeight = 16;
  const double ratio =
      std::isfinite(small_page_cost) ? std::clamp(small_page_cost, 1.0, 64.0) : 1.0;
  const auto small_weight = static_cast<std::uint64_t>(std::lround(ratio * kHugeWeight));
  const Candidate head = best(bytes, true, root_huge, peer_huge, small_weight, kHugeWeight);
  const Candidate tail = best(bytes, false, root_huge, peer_huge, small_weight, kHugeWeight);
  return tail.finish < head.finish ? tail.split : head.split;
}

}  // namespace shmcoll::broadcast_split
