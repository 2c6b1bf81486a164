// How a root splits the blocks of a cooperative single copy with its peers, learned from its
// own calls. The root copies its own block with memcpy and the leading share of each peer's
// block with cross-memory attach while each peer copies the rest of its block
// (SingleCopyExchange::balanced_root_share). The split weighs a byte of the root's memcpy
// against a byte of cross-memory copy. Rank 0 measures that ratio alone on one core when the
// team forms, but a collective runs both copies at once, and they slow each other by amounts
// no single-core measurement sees: the measured weight was not the fastest one
// (docs/tuning.md).
//
// So each root corrects the weight from what it sees at the end of its part: peers that had
// already finished mean the root had too much to do (its memcpy weighs more: a smaller share
// next time), a peer still copying means too little. The weight walks by kStep toward the point
// where both sides finish together and stays within a step of it; it is kept per collective and
// block size (powers of two; the v-forms by their largest shared block), since the copies'
// directions and the caches make the balance differ between them. The root publishes the
// weight it uses with its arrival (StatusLine::copy_weight), and its peers split with that
// value, so the two sides always agree on the share.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "protocol/signature.hpp"

namespace shmcoll {

class CopyBalance {
 public:
  // Weights in units of 1/kUnit, so that root and peers compute the share from the same integer.
  static constexpr std::uint64_t kUnit = 1024;
  // Bounds: a root that takes most of a block, or none of it (1.0: its own memcpy weighs a
  // full cross-memory byte).
  static constexpr std::uint64_t kMin = kUnit / 4, kMax = kUnit;
  // About 2%: from the measured start to the balance within a few dozen calls, and a step
  // around the balance costs at most 2% of a block's copy.
  static constexpr std::uint64_t kStep = 20;

  // Every block size starts at `weight` (a fraction, clamped to the bounds).
  void reset(double weight) {
    const auto units = static_cast<std::uint64_t>(std::clamp(weight, 0.0, 1.0) * kUnit);
    for (auto& by_size : weights_) by_size.fill(clamp_units(units));
  }

  // The weight for `kind`'s blocks of `block_bytes`, to publish and to split with.
  std::uint64_t weight(Kind kind, std::uint64_t block_bytes) const {
    return weights_[static_cast<std::size_t>(kind)][bucket(block_bytes)];
  }

  // The root's finding after its own part of such a call: whether every peer had already
  // finished its part.
  void observe(Kind kind, std::uint64_t block_bytes, bool peers_finished_first) {
    std::uint64_t& w = weights_[static_cast<std::size_t>(kind)][bucket(block_bytes)];
    w = peers_finished_first ? std::min(w + kStep, kMax) : std::max(w - kStep, kMin);
  }

  // A published weight as a fraction. Read from another rank's line, so held to the bounds:
  // a share computed from anything else could exceed its block.
  static double fraction(std::uint64_t units) {
    return static_cast<double>(clamp_units(units)) / static_cast<double>(kUnit);
  }

 private:
  static std::uint64_t clamp_units(std::uint64_t units) { return std::clamp(units, kMin, kMax); }
  static std::size_t bucket(std::uint64_t bytes) { return std::bit_width(bytes); }

  // By Kind (scatter, gather and their v-forms use theirs) and bit_width of the block size.
  std::array<std::array<std::uint64_t, 65>, static_cast<std::size_t>(Kind::kGatherv) + 1>
      weights_{};
};

}  // namespace shmcoll
