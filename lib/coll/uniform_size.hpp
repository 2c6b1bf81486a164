// A v-form root's one size for every other rank. Only the root of a scatterv or gatherv knows
// every rank's size (sendcounts, recvcounts), so under CheckLevel::kFull its other ranks wait
// for its verdict, its departure, before they return. Where the counts give every other rank
// the same size, the root publishes that size with its arrival instead of 0
// (its status line's `bytes`, flagged with kFlag; sizes are at most validate::kMaxBytes, 2^62,
// so the bit is free). A rank of the flat layout that reads it checks its own size and every
// other rank's against it in its agree stage, which under full checks reads every peer's
// arrival anyway, and needs no verdict: every pair (root, r) is then compared by every rank.
// Along the tree, and where the sizes differ, the root publishes 0 and the verdict stays.
// No other reader compares a v-form root's published size (they expect none from it).
#pragma once

#include <cstdint>
#include <span>

#include "core/operation.hpp"
#include "core/validation.hpp"

namespace shmcoll::uniform_size {

inline constexpr std::uint64_t kFlag = std::uint64_t{1} << 63;

// Root: what it publishes as its size, from every rank's block (its own, at `root`, does not
// count): 0 where the others differ, or along the tree.
inline std::uint64_t published(bool flat, std::span<const validate::Block> blocks, int root) {
  if (!flat) return 0;
  std::int64_t size = -1;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    if (static_cast<int>(r) == root) continue;
    const auto bytes = static_cast<std::int64_t>(blocks[r].bytes);
    if (size >= 0 && bytes != size) return 0;
    size = bytes;
  }
  return size < 0 ? 0 : kFlag | static_cast<std::uint64_t>(size);
}

// Another rank of `op`, after its data: under full checks (the only level that waits for the
// verdict) reads the root's arrival and compares its collective and root with `op`'s. Sets
// `size` to the root's one size where it published one; leaves it at -1 where it did not,
// where the root has already left (its verdict is then in), or under other checks. False,
// with `blocked_on` set, while the root has not arrived.
inline bool learn(const CollectiveOp& op, TeamImpl& team, std::int64_t& size,
                  sync::WaitTarget& blocked_on) {
  if (team.options().checks != CheckLevel::kFull) return true;
  const int root = op.signature().root;
  segment::StatusLine& status = team.area(root).status();
  std::uint64_t packed = 0, bytes = 0;
  switch (read_peer_signature(status, op.op(), packed, bytes)) {
    case PeerState::kNotArrived:
      blocked_on = {&status.tag, sync::make_tag(op.op(), sync::kStepArrived), root};
      return false;
    case PeerState::kPassed:
      return true;
    case PeerState::kRead:
      op.check_peer_signature(root, packed, bytes);  // collective and root (no size expected)
      if ((bytes & kFlag) != 0) size = static_cast<std::int64_t>(bytes & ~kFlag);
      return true;
  }
  return true;
}

}  // namespace shmcoll::uniform_size
