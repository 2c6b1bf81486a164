// A gatherv sender of the flat layout whose block travels through its own stream (not the
// single copy): everything such a rank does is publish its block to the root and take part in
// the checks. GathervOp serves it the same way, but carries the root's plans, the tree, the
// single copy and their state, and builds all of it on every call: at 8 bytes and 4 ranks this
// class took a sender from 1107 to 983 instructions per call (callgrind, through the MPI plugin).
// The root reads the stream whichever class wrote it, so each sender picks its path alone.
#pragma once

#include <span>

#include "coll/algorithm_op.hpp"
#include "coll/published_sizes.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

class GathervSenderOp final : public AlgorithmOp {
 public:
  // Whether this rank's call can take this path: a sender (not the root) along the flat layout
  // whose block moves through its stream, neither with the single copy nor possibly straight
  // between shared buffers (GathervOp learns which from the root). Arguments that fail
  // validation do not: GathervOp reports them.
  static bool fits(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                   Datatype sendtype, int root);

  GathervSenderOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                  Datatype sendtype, int root);
  // GathervOp's arguments: the root-only ones mean nothing to a sender (MPI ignores them).
  GathervSenderOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                  Datatype sendtype, void*, std::span<const Count>, std::span<const Count>,
                  Datatype, bool, int root)
      : GathervSenderOp(algorithms, sendbuf, sendcount, sendtype, root) {}

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  // Under CheckLevel::kFull: where the root published one size for every sender
  // (published_sizes.hpp), this rank checks every other sender's size against it, or every
  // sender's against its fingerprint; otherwise, as GathervOp's senders, it learns the root's
  // verdict instead, since only the root knows the sizes. At every level its own size against
  // the root's word, where that is uniform: under CheckLevel::kDeferred that spares the root
  // its wait for empty senders (GathervOp::must_compare).
  std::int64_t expected_peer_bytes(int peer) const override {
    return peer == sig_.root ? static_cast<std::int64_t>(sig_.bytes) : sizes_.uniform;
  }
  std::string expected_bytes_text(int peer) const override;
  bool needs_root_verdict() const override { return sizes_.needs_verdict(); }
  // The root's arrival, and what it published of the senders' sizes; false while it, or a
  // peer whose size the fingerprint needs, has not arrived.
  bool learn_root_size(sync::WaitTarget& blocked_on);

  const std::byte* sendbuf_ = nullptr;
  bool started_ = false;
  bool root_seen_ = false;
  published_sizes::RootSizes sizes_;
  StreamWriter writer_;
};

}  // namespace shmcoll
