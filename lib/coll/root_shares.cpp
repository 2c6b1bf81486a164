#include "coll/root_shares.hpp"

#include <algorithm>
#include <string>

namespace shmcoll {

void RootShares::plan(PlanVector<Block>&& blocks, std::uint64_t root_extra,
                      TeamAlgorithms& algorithms, Kind kind, const void* root_buffer,
                      bool cooperative) {
  blocks_ = std::move(blocks);
  next_ = 0;
  next_copied_ = 0;
  sharing_ = false;
  learning_ = false;
  if (!cooperative || blocks_.empty()) return;
  PlanVector<std::uint64_t> sizes, shares(blocks_.size());
  std::uint64_t largest = 0;
  for (const Block& b : blocks_) {
    sizes.push_back(b.bytes);
    largest = std::max(largest, b.bytes);
  }
  const TeamAlgorithms::RootWeight w = algorithms.root_copy_weight(kind, root_buffer, largest);
  learning_ = w.learns;
  kind_ = kind;
  learned_bytes_ = largest;
  SingleCopyExchange::balanced_root_shares(as_span(sizes), root_extra, w.weight,
                                           {shares.data(), shares.size()});
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    blocks_[i].share = shares[i];
    sharing_ = sharing_ || shares[i] > 0;
  }
}

bool RootShares::move(CollectiveOp& op, TeamImpl& team, bool into_peers,
                      sync::WaitTarget& blocked_on) {
  // Most calls (small blocks, none direct) have no share: no report either, since no peer
  // waits for one.
  if (!sharing_) return true;
  for (; next_ < blocks_.size(); ++next_) {
    const Block& b = blocks_[next_];
    if (b.share == 0) continue;
    PeerArrival arrival;
    const PeerState state =
        SingleCopyExchange::checked_arrival(op, team, b.peer, arrival, blocked_on);
    if (state == PeerState::kNotArrived) return false;
    if (state == PeerState::kPassed) {
      // A peer given a share waits for this rank's shared_op: one that left took another
      // path (its error, if it found one, comes first).
      team.check_aborted();
      team.fail(Status::kInvalidArgument,
                std::string("argument mismatch in ") + kind_name(op.signature().kind) + " (root " +
                    std::to_string(op.signature().root) + ", operation #" +
                    std::to_string(op.op()) + "): rank " + std::to_string(b.peer) +
                    " left before the root's single copy of its block, so its collective, "
                    "root or size differs from the root's",
                Cause::kSizeMismatch);
    }
    if (!piece_.step(op, team, b.peer, arrival.address, arrival.shared_id, b.local, b.share,
                     into_peers, blocked_on))
      return false;
  }
  // release (publish): the shares, moved by system calls (or memcpy) on this CPU, are over
  // before a peer that acquires this may leave and release its buffer.
  team.publish(team.self().progress().shared_op, op.op());
  return true;
}

bool RootShares::all_copied(TeamAlgorithms& algorithms, std::uint64_t op,
                            sync::WaitTarget& blocked_on) {
  const bool copied = peers_copied(algorithms.team(), op, blocked_on);
  if (learning_) {
    algorithms.copy_balance().observe(kind_, learned_bytes_, copied);
    learning_ = false;
  }
  return copied;
}

bool RootShares::peers_copied(TeamImpl& team, std::uint64_t op, sync::WaitTarget& blocked_on) {
  for (; next_copied_ < blocks_.size(); ++next_copied_) {
    const int r = blocks_[next_copied_].peer;
    // acquire (reached): the peer's copy into or out of the root's buffer happens before.
    const sync::WaitTarget t{&team.area(r).progress().copied_op, op, r};
    if (!sync::reached(t)) {
      blocked_on = t;
      return false;
    }
  }
  return true;
}

bool RootShares::root_done(const CollectiveOp& op, TeamImpl& team, int root,
                           sync::WaitTarget& blocked_on) {
  const sync::WaitTarget t{&team.area(root).progress().shared_op, op.op(), root};
  if (sync::reached(t)) return true;
  blocked_on = t;
  return false;
}

}  // namespace shmcoll
