// Scatterv: the root's blocks differ in size, and only it knows them all. Flat, it streams them
// through its slots (ScatterRootStream) and tells each receiver where its block is with a record
// in the receiver's inbox (scatterv_inbox.hpp), which holds the smallest blocks themselves; along
// the tree, the root streams each child its subtree's blocks (TreeScatter). Large blocks move
// with a single copy. With CheckLevel::kFull the other ranks wait for the root's verdict before
// returning: an error on any rank then reaches every rank.
#pragma once

#include <optional>
#include <span>
#include <utility>

#include "coll/algorithm_op.hpp"
#include "coll/published_sizes.hpp"
#include "coll/root_shares.hpp"
#include "coll/scatter/scatter_stream.hpp"
#include "coll/scatter/tree_scatter.hpp"
#include "coll/scatterv/scatterv_inbox.hpp"
#include "coll/shared_copy.hpp"
#include "coll/single_copy.hpp"
#include "protocol/stream.hpp"
#include "protocol/validation.hpp"

namespace shmcoll {

class ScattervOp final : public AlgorithmOp {
 public:
  ScattervOp(TeamAlgorithms& algorithms, const void* sendbuf, std::span<const Count> sendcounts,
             std::span<const Count> displs, Datatype sendtype, void* recvbuf, Count recvcount,
             Datatype recvtype, bool in_place, int root);

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  std::int64_t expected_peer_bytes(int peer) const override;
  std::string expected_bytes_text(int peer) const override;
  // Only the root sees every rank's size, so under kFull the others wait for its verdict,
  // unless what it published of their sizes let them check them (published_sizes.hpp).
  bool needs_root_verdict() const override {
    return team_.rank() != sig_.root && sizes_.needs_verdict();
  }
  bool checked_in_data_path(int peer) const override {
    if (tree_) return tree_scatter_->checked(peer);
    return peer == sig_.root && team_.rank() != sig_.root;
  }
  // Receiver, flat: its block, as the root's record says.
  bool receive(sync::WaitTarget& blocked_on);

  // How a block of `bytes` reaches a receiver (the same answer on every rank).
  enum class BlockPath { kInline, kStream, kDirect };
  BlockPath path_of(std::uint64_t bytes) const;
  bool advance_root(sync::WaitTarget& blocked_on);
  // Root: writes every receiver's record (scatterv_inbox::post), waiting where a receiver's
  // line is still in use.
  bool post_records(sync::WaitTarget& blocked_on);
  bool advance_tree(sync::WaitTarget& blocked_on);
  void plan_before_arrival() override;
  // Receiver: checks the record against this rank's arguments and takes an inline block;
  // false when that was all, otherwise sets the stage for the rest.
  bool take_record_and_go_on();
  // Whether a block of `bytes` that would go through the stream may copy straight between
  // shared buffers instead (shared_copy.hpp), the same on every rank.
  bool may_copy_shared(std::uint64_t bytes);
  // Root: learns, from each candidate's arrival, whether its buffer lies in the allocation its
  // block does (then it copies straight, as a single-copy receiver), then plans.
  bool choose_shared_copies(sync::WaitTarget& blocked_on);
  // Root, flat: the stream and the shares, once every receiver's path is known.
  void plan_flat_root();
  // Root, flat: whether receiver r reads its block from sendbuf itself.
  bool reads_from_sendbuf(int r) const;
  // Receiver of a single-copy block: the part after the root's share, then the root's report.
  bool copy_direct_block(sync::WaitTarget& blocked_on);
  // Root: the share of receiver r's block that the root writes (0 for none).
  std::uint64_t share_of(int r) const;
  // A receiver leaving on an error: the root may be writing its share into recvbuf.
  void abandon() override {
    if (team_.rank() != sig_.root) SingleCopyExchange::drain(*this, team_);
  }

  enum class Stage { kStart, kBlock, kDirect, kRootShare };
  const std::byte* sendbuf_ = nullptr;
  std::byte* recvbuf_ = nullptr;
  bool tree_ = false;  // along the topology tree (registry), decided at construction
  PlanVector<TreeScatter::Block> tree_blocks_;  // root, tree: every rank's block of sendbuf
  // Only along the tree, as in ScatterOp.
  std::optional<TreeScatter> tree_scatter_;
  PlanVector<validate::Block> blocks_;  // root: every rank's block of sendbuf
  std::pair<const std::byte*, std::uint64_t> copy_own_{nullptr, 0};  // root's own block
  RootShares shares_;            // root: the ranks that copy their blocks themselves, its share
  SteppedTransfer direct_copy_;  // a rank that copies its block itself
  Stage stage_ = Stage::kStart;
  int next_record_ = 0;  // root: the next receiver to post a record for
  // Root, flat: receivers whose blocks may copy straight between shared buffers, the next one
  // to look at, and (by rank) the ones that do; planned_ once the plan knows.
  PlanVector<int> shared_candidates_;
  std::size_t next_candidate_ = 0;
  PlanVector<std::uint8_t> shared_direct_;
  bool planned_ = false;
  ScatterRootStream plan_;
  StreamWriter writer_;
  scatterv_inbox::Record record_;     // receiver: what the root posted for this rank
  bool received_ = false;             // receiver: its block is in
  published_sizes::RootSizes sizes_;  // receiver: what the root published of the sizes
  RangeReader reader_;
  std::uint64_t acked_ = 0;
};

}  // namespace shmcoll
