#include "coll/broadcast_split.hpp"

#include <algorithm>
#include <cmath>

#include "copy/staging_buffer.hpp"

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

// The split of the message's bytes from `from` on, the rest as a message of its own, after a
// staged head of `from` bytes: its cost is the larger side's, the head's included.
Candidate split_rest(std::uint64_t bytes, std::uint64_t from, copy::HugeOffsets root_huge,
                     copy::HugeOffsets peer_huge, double small_page_cost) {
  const std::uint64_t rest = bytes - from;
  const auto shift = [&](copy::HugeOffsets h) {
    return copy::HugeOffsets{std::max(h.begin, from) - from, std::max(h.end, from) - from};
  };
  // Weights in sixteenths: a byte from huge pages costs 16, one from small pages 16 x the
  // measured ratio (at least 16). The root's part is a whole number of grains, so the bytes of
  // an odd size beyond the last grain go with the peer's.
  constexpr std::uint64_t kHugeWeight = 16;
  const double ratio =
      std::isfinite(small_page_cost) ? std::clamp(small_page_cost, 1.0, 64.0) : 1.0;
  const auto small_weight = static_cast<std::uint64_t>(std::lround(ratio * kHugeWeight));
  const Candidate head =
      best(rest, true, shift(root_huge), shift(peer_huge), small_weight, kHugeWeight);
  const Candidate tail =
      best(rest, false, shift(root_huge), shift(peer_huge), small_weight, kHugeWeight);
  const Candidate& c = tail.finish < head.finish ? tail : head;
  return {{c.split.root_at + from, c.split.root_bytes, from}, c.finish + from * kHugeWeight};
}

}  // namespace

Split even(std::uint64_t bytes) { return {0, bytes / 2 / kGrain * kGrain}; }

Split choose(std::uint64_t bytes, copy::HugeOffsets root_huge, copy::HugeOffsets peer_huge,
             double small_page_cost, bool root_stages) {
  if ((root_huge.empty() && peer_huge.empty()) || bytes < 2 * kGrain) return even(bytes);
  // The head on small pages in both buffers, where both have huge pages beyond it. Staged, a
  // byte costs a memcpy and a read from a huge page, about 2 where one from a huge page
  // costs 1: only worth it where small pages cost more.
  std::uint64_t stage = 0;
  if (root_stages && small_page_cost > kStagingCost && !root_huge.empty() && !peer_huge.empty()) {
    stage =
        std::min({root_huge.begin, peer_huge.begin, copy::StagingBuffer::kBytes}) / kGrain * kGrain;
    if (stage < kMinStageBytes || bytes - stage < 2 * kGrain) stage = 0;
  }
  // The staged head puts the same work on both sides and leaves less freedom to balance the
  // rest: where that costs more than the head saves, no stage.
  const Candidate direct = split_rest(bytes, 0, root_huge, peer_huge, small_page_cost);
  if (stage == 0) return direct.split;
  const Candidate staged = split_rest(bytes, stage, root_huge, peer_huge, small_page_cost);
  return staged.finish < direct.finish ? staged.split : direct.split;
}

}  // namespace shmcoll::broadcast_split
