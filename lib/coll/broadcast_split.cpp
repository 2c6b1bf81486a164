#include "coll/broadcast_split.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "copy/staging_buffer.hpp"

namespace shmcoll::broadcast_split {

namespace {

constexpr std::uint64_t kGrain = 64;  // parts start on cache lines where the buffers do

// Costs per byte in whole numbers, so that both ranks compute the same: a byte pinned from
// huge pages (or copied by memcpy) costs kHugeWeight, one pinned from small pages `small`.
constexpr std::uint64_t kHugeWeight = 16;

// Cost of moving [begin, end) pinned from a buffer whose part `huge` is on huge pages.
std::uint64_t cost(std::uint64_t begin, std::uint64_t end, copy::HugeOffsets huge,
                   std::uint64_t small) {
  const std::uint64_t lo = std::max(begin, huge.begin);
  const std::uint64_t hi = std::min(end, huge.end);
  const std::uint64_t on_huge = hi > lo ? hi - lo : 0;
  return on_huge * kHugeWeight + (end - begin - on_huge) * small;
}

struct Candidate {
  Split split;
  std::uint64_t finish = 0;  // the larger of the two sides' costs
};

// The pair's costs for the message's bytes from `from` on, after a head of `from` bytes staged.
class Rest {
 public:
  Rest(std::uint64_t bytes, std::uint64_t from, copy::HugeOffsets root_huge,
       copy::HugeOffsets peer_huge, std::uint64_t small)
      : bytes_(bytes), from_(from), root_huge_(root_huge), peer_huge_(peer_huge), small_(small) {}

  // The root's part of `share` bytes at the head of the rest (`root_first`) or at its tail.
  Split split(bool root_first, std::uint64_t share) const {
    return {root_first ? from_ : bytes_ - share, share, from_};
  }
  // The root's and the peer's costs for their parts of `s`: the root's part is pinned from
  // the peer's buffer, the peer's from the root's.
  std::pair<std::uint64_t, std::uint64_t> costs(const Split& s) const {
    return {cost(s.root_at, s.root_at + s.root_bytes, peer_huge_, small_),
            cost(s.peer_at(), s.peer_at() + s.peer_bytes(bytes_), root_huge_, small_)};
  }
  // Each side also spends a byte's cost on each staged byte (the root's memcpy, the peer's
  // read from the huge page).
  Candidate with(bool root_first, std::uint64_t share) const {
    const Split s = split(root_first, share);
    const auto [root, peer] = costs(s);
    return {s, std::max(root, peer) + from_ * kHugeWeight};
  }

  // The best split with the root's part at the head of the rest or at its tail: the root's
  // cost grows with its part and the peer's shrinks, so the balance point is found by
  // bisection over the grain.
  Candidate best(bool root_first) const {
    const auto root_reaches_peer = [&](std::uint64_t share) {
      const auto [root, peer] = costs(split(root_first, share));
      return root >= peer;
    };
    // The smallest share (in grains, within [1, grains - 1]) at which the root's cost reaches
    // the peer's; the best is there or one grain below.
    const std::uint64_t grains = (bytes_ - from_) / kGrain;
    std::uint64_t lo = 1, hi = grains - 1;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (root_reaches_peer(mid * kGrain)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    Candidate at = with(root_first, lo * kGrain);
    if (lo > 1) {
      const Candidate below = with(root_first, (lo - 1) * kGrain);
      if (below.finish < at.finish) at = below;
    }
    return at;
  }

  Candidate best() const {
    const Candidate head = best(true), tail = best(false);
    return tail.finish < head.finish ? tail : head;
  }

 private:
  std::uint64_t bytes_, from_;
  copy::HugeOffsets root_huge_, peer_huge_;
  std::uint64_t small_;
};

}  // namespace

Split even(std::uint64_t bytes) { return {0, bytes / 2 / kGrain * kGrain}; }

Split choose(std::uint64_t bytes, copy::HugeOffsets root_huge, copy::HugeOffsets peer_huge,
             double small_page_cost, bool root_stages) {
  if ((root_huge.empty() && peer_huge.empty()) || bytes < 2 * kGrain) return even(bytes);
  // A byte from small pages costs kHugeWeight x the measured ratio (at least kHugeWeight). The
  // root's part is a whole number of grains, so the bytes of an odd size beyond the last grain
  // go with the peer's.
  const double ratio =
      std::isfinite(small_page_cost) ? std::clamp(small_page_cost, 1.0, 64.0) : 1.0;
  const auto small = static_cast<std::uint64_t>(std::lround(ratio * kHugeWeight));
  const Rest whole(bytes, 0, root_huge, peer_huge, small);
  Candidate chosen = whole.best();
  // The head on small pages in both buffers, where both have huge pages beyond it. Staged, a
  // byte costs a memcpy and a read from a huge page, about 2 where one from a huge page
  // costs 1: only worth it where small pages cost more. The staged head puts the same work on
  // both sides and leaves less freedom to balance the rest: where that costs more than the
  // head saves, no stage.
  if (root_stages && small_page_cost > kStagingCost && !root_huge.empty() && !peer_huge.empty()) {
    const std::uint64_t stage =
        std::min({root_huge.begin, peer_huge.begin, copy::StagingBuffer::kBytes}) / kGrain * kGrain;
    // Offsets come from peers' status lines: a garbled one must not stage past the message.
    if (stage >= kMinStageBytes && stage + 2 * kGrain <= bytes) {
      const Candidate staged = Rest(bytes, stage, root_huge, peer_huge, small).best();
      if (staged.finish < chosen.finish) chosen = staged;
    }
  }
  // What the costs leave out, such as the root starting first, moves the best split by a few
  // percent. So the even split stays unless the costs say the chosen one ends sooner by more
  // than that.
  const Candidate halves = whole.with(true, even(bytes).root_bytes);
  if (chosen.finish * 100 >= halves.finish * (100 - kMinGainPercent)) return even(bytes);
  return chosen.split;
}

}  // namespace shmcoll::broadcast_split
