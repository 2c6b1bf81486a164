// Broadcast. Flat: the root streams the message through its slots and every other rank copies
// it out. Tree: along the topology tree (TeamImpl::tree), each rank reads the stream of its
// parent and, chunk by chunk as they arrive, publishes its own to its children, so a message
// crosses each package or NUMA boundary once and deep trees pipeline. Readers acknowledge chunk
// by chunk either way, so messages larger than the slots pipeline too.
#pragma once

#include "core/operation.hpp"
#include "core/stream.hpp"

namespace shmcoll {

class BcastOp final : public CollectiveOp {
 public:
  BcastOp(TeamImpl& team, void* buffer, Count count, Datatype type, int root);

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  bool advance_tree(sync::WaitTarget& blocked_on);
  bool checked_in_data_path(int peer) const override {
    return peer == source_ && team_.rank() != sig_.root && sig_.bytes > 0;
  }

  std::byte* buffer_;
  bool started_ = false;
  bool tree_ = false;
  int source_ = 0;  // whose stream this rank reads: root or tree parent
  const std::vector<int>* children_ = nullptr;
  std::uint64_t received_ = 0;  // tree: chunks read from the parent
  StreamWriter writer_;
  RangeReader reader_;
  std::uint64_t acked_ = 0;
};

}  // namespace shmcoll
