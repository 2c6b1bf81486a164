#include "coll/shared_copy.hpp"

#include "protocol/handshake.hpp"
#include "protocol/team_impl.hpp"

namespace shmcoll {

bool SharedCopyChoice::eligible(TeamAlgorithms& algorithms, Kind kind, bool single_copy,
                                std::uint64_t block_bytes, int root) {
  return !single_copy && algorithms.shared_copy_for(kind, block_bytes, root);
}

bool SharedCopyChoice::decide(const CollectiveOp& op, TeamImpl& team,
                              sync::WaitTarget& blocked_on) {
  const std::uint64_t mine = handshake::own_shared_id(team);
  const int root = op.signature().root;
  if (team.rank() == root) return decide_as_root(op, team, mine, blocked_on);
  if (mine == 0) {  // the root needs every buffer shared: it chooses the slots
    shared_copy_ = false;
    return true;
  }
  const sync::WaitTarget t = handshake::awaited_shared_copy_choice(team, root, op.op());
  if (!sync::reached(t)) {
    blocked_on = t;
    return false;
  }
  // The root reads this rank's buffer only if it chose the straight copy.
  shared_copy_ = handshake::shared_copy_chosen(team, root, op.op());
  return true;
}

bool SharedCopyChoice::decide_as_root(const CollectiveOp& op, TeamImpl& team, std::uint64_t mine,
                                      sync::WaitTarget& blocked_on) {
  bool all_in_mine = mine != 0;
  for (; all_in_mine && next_peer_ < team.size(); ++next_peer_) {
    if (next_peer_ == team.rank()) continue;
    segment::StatusLine& status = team.area(next_peer_).status();
    PeerArrival arrival;
    switch (read_peer_arrival(status, op.op(), arrival)) {
      case PeerState::kNotArrived:
        blocked_on = awaited_arrival(status, op.op(), next_peer_);
        return false;
      case PeerState::kPassed:  // a rank that waits for the choice cannot have left
        all_in_mine = false;
        break;
      case PeerState::kRead:
        all_in_mine = arrival.shared_id == mine;
        break;
    }
  }
  publish(op, team, all_in_mine);
  return true;
}

void SharedCopyChoice::publish(const CollectiveOp& op, TeamImpl& team, bool shared_copy) {
  shared_copy_ = shared_copy;
  handshake::publish_shared_copy_choice(team, op.op(), shared_copy);
}

}  // namespace shmcoll
