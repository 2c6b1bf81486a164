// Broadcast. Flat: the root streams the message through its slots and every other rank copies
// it out. Tree: along the topology tree (TeamImpl::tree), each rank reads the stream of its
// parent and, chunk by chunk as they arrive, publishes its own to its children, so a message
// crosses each package or NUMA boundary once and deep trees pipeline. Readers acknowledge chunk
// by chunk either way, so messages larger than the slots pipeline too. Single copy (large
// messages, where the registry says so, see single_copy.hpp): each rank reads the message
// from the root's buffer while the root writes a share of it into theirs; along the tree a
// rank below the root's children reads it from its parent's buffer instead. Smaller messages
// and teams without cross-memory attach take the same exchange, flat, where every rank's buffer
// lies in the root's shared allocation (shared_copy.hpp).
#pragma once

#include "coll/algorithm_op.hpp"
#include "coll/shared_copy.hpp"
#include "coll/single_copy.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

class BcastOp final : public AlgorithmOp {
 public:
  BcastOp(TeamAlgorithms& algorithms, void* buffer, Count count, Datatype type, int root);

  ~BcastOp() override { team_.staging_buffer().release(op_); }

  void abandon() override {
    if (single_copy_) SingleCopyExchange::drain(*this, team_);
  }

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  bool advance_tree(sync::WaitTarget& blocked_on);
  bool may_stage() const override {
    return team_.rank() == sig_.root && team_.size() == 2 && !team_.oversubscribed();
  }
  bool checked_in_data_path(int peer) const override {
    if (single_copy_) return exchange_.compared_with(team_, sig_.root, peer);
    return peer == source_ && team_.rank() != sig_.root && sig_.bytes > 0;
  }

  std::byte* buffer_;
  bool started_ = false;
  bool tree_ = false;
  bool single_copy_ = false;
  SingleCopyExchange exchange_;
  SharedCopyChoice shared_choice_;
  int source_ = 0;  // whose stream this rank reads: root or tree parent
  const std::vector<int>* children_ = nullptr;
  std::uint64_t received_ = 0;  // tree: chunks read from the parent
  StreamWriter writer_;
  RangeReader reader_;
  std::uint64_t acked_ = 0;
};

}  // namespace shmcoll
