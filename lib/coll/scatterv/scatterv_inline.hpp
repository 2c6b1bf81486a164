// Scatterv whose blocks all travel inside the receivers' records (scatterv_inbox.hpp), the
// common case of small calls. ScattervOp handles these blocks the same way, but it carries
// everything larger blocks need (the root's stream, single copies and their shares, the tree)
// and builds and walks its plans for them on every call: at 8 bytes and 4 ranks, this class
// took the root's instructions per call (callgrind, through the MPI plugin) from 2876 to 2484
// and a receiver's from 1158 to 1092. What goes through shared memory is the same in both (the
// arrival, the records, the signature history, the departure), so each rank picks its path on
// its own: a root whose blocks all fit in records and which scatters flat, a receiver whose
// block fits and which takes it from the root's record.
#pragma once

#include <span>

#include "base/plan_vector.hpp"
#include "coll/algorithm_op.hpp"
#include "coll/published_sizes.hpp"
#include "protocol/validation.hpp"

namespace shmcoll {

class InlineScattervOp final : public AlgorithmOp {
 public:
  // Whether this rank's call can take this path. Arguments that fail validation do not: the
  // general path reports them.
  static bool fits(TeamAlgorithms& algorithms, std::span<const Count> sendcounts, Datatype sendtype,
                   Count recvcount, Datatype recvtype, int root);

  // The arguments are ScattervOp's.
  InlineScattervOp(TeamAlgorithms& algorithms, const void* sendbuf,
                   std::span<const Count> sendcounts, std::span<const Count> displs,
                   Datatype sendtype, void* recvbuf, Count recvcount, Datatype recvtype,
                   bool in_place, int root);

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  std::int64_t expected_peer_bytes(int peer) const override;
  std::string expected_bytes_text(int peer) const override;
  // A receiver compared itself with the root when it checked the root's record.
  bool checked_in_data_path(int peer) const override {
    return peer == sig_.root && team_.rank() != sig_.root;
  }
  // As ScattervOp: only the root sees every rank's size, so under CheckLevel::kFull the others
  // wait for its verdict, unless what it published of their sizes let them check them
  // (published_sizes.hpp).
  bool needs_root_verdict() const override {
    return team_.rank() != sig_.root && sizes_.needs_verdict();
  }
  bool post_records(sync::WaitTarget& blocked_on);
  const std::byte* sendbuf_ = nullptr;
  std::byte* recvbuf_ = nullptr;
  bool in_place_ = false;
  PlanVector<validate::Block> blocks_;  // root: every rank's block of sendbuf
  int next_record_ = 0;                 // root: the next receiver to post a record for
  bool received_ = false;               // receiver: its block is in
  published_sizes::RootSizes sizes_;    // receiver: what the root published of the sizes
};

}  // namespace shmcoll
