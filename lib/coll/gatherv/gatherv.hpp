// Gatherv: the senders' blocks differ in size, and only the root knows them all. Flat, every
// rank streams its block through its own slots to the root (GatherRoot); along the tree, each
// rank streams its subtree's blocks to its parent (TreeGather). Large blocks move with a single
// copy, whose places the root streams to their senders as a table. With CheckLevel::kFull the
// senders wait for the root's verdict before returning, which is what lets a count mismatch be
// reported on the sender as well.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "coll/algorithm_op.hpp"
#include "coll/gather/gather_root.hpp"
#include "coll/gather/tree_gather.hpp"
#include "coll/root_shares.hpp"
#include "coll/shared_copy.hpp"
#include "coll/single_copy.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

// One rank's entry in the table gatherv's root streams for its single-copy senders. 32 bytes,
// so that no entry straddles two chunks of the stream (slots hold whole cache lines).
struct GathervTableEntry {
  // Set in `offset` when the block does not travel in the stream: the rank moves it itself
  // with a single copy, and the rest of `offset` is the block's place in the root's buffer.
  static constexpr std::uint64_t kDirect = std::uint64_t{1} << 63;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  // A direct block's leading bytes that the root reads itself (root_shares.hpp).
  std::uint64_t root_share = 0;
  std::uint64_t unused = 0;
};
static_assert(sizeof(GathervTableEntry) == 32);

class GathervOp final : public AlgorithmOp {
 public:
  GathervOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount, Datatype sendtype,
            void* recvbuf, std::span<const Count> recvcounts, std::span<const Count> displs,
            Datatype recvtype, bool in_place, int root);

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  std::int64_t expected_peer_bytes(int peer) const override;
  std::string expected_bytes_text(int peer) const override;
  bool needs_root_verdict() const override { return team_.rank() != sig_.root; }
  bool checked_in_data_path(int peer) const override {
    // Single-copy senders are not read through a stream: the agree stage checks them.
    const auto p = static_cast<std::size_t>(peer);
    if (tree_) return tree_gather_->checked(peer);
    return team_.rank() == sig_.root && peer != sig_.root && blocks_[p].second > 0 &&
           (table_.empty() || (table_[p].offset & GathervTableEntry::kDirect) == 0);
  }
  // The root reads nothing from a rank it expects no bytes from, and that rank cannot see
  // recvcounts: only the root can find that it sends some anyway, unless the root's word gives
  // every sender one size (uniform_word_), which each sender compares its own with. (Along the
  // tree this covers deeper ranks too, whose sizes their parents' tables carry: a wait only
  // where counts are 0.) So a gatherv in which no rank sends anything waits for no one.
  bool must_compare(int peer) const override {
    return team_.rank() == sig_.root && peer != sig_.root && !uniform_word_ &&
           blocks_[static_cast<std::size_t>(peer)].second == 0 && !checked_in_data_path(peer);
  }
  void abandon() override {
    if (!shares_.empty()) SingleCopyExchange::drain(*this, team_);
  }
  bool advance_root(sync::WaitTarget& blocked_on);
  bool pump_table(sync::WaitTarget& blocked_on);
  // A direct sender: its table entry from the root's stream, then its block into recvbuf.
  bool read_direct_entry(sync::WaitTarget& blocked_on);
  bool write_direct_block(sync::WaitTarget& blocked_on);
  bool advance_tree(sync::WaitTarget& blocked_on);
  void plan_before_arrival() override;

 public:
  // Whether a sender's block of `bytes` from `sendbuf` may copy straight into the root's
  // buffer, both lying in one shared allocation (shared_copy.hpp): the root's table then says.
  // Inline: every small gatherv sender asks (GathervSenderOp::fits), and shared_copy_for's first
  // test answers it.
  static bool may_copy_shared(TeamAlgorithms& algorithms, const void* sendbuf, std::uint64_t bytes,
                              int root) {
    TeamImpl& team = algorithms.team();
    return algorithms.shared_copy_for(Kind::kGatherv, bytes, root) &&
           team.shared_buffers().id_of(sendbuf, bytes) != 0;
  }

 private:
  // Root, flat: from each candidate's arrival, which senders read the table (their buffer lies
  // in recvbuf's allocation), and which of them write straight into recvbuf; then plan_root.
  bool choose_shared_copies(sync::WaitTarget& blocked_on);
  // Root: the single-copy and straight senders' shares, and the table if anyone reads it.
  void plan_root();
  bool writes_into_recvbuf(int r) const;
  bool reads_table(int r) const;
  // Sender that may copy straight: from the root's arrival, whether it reads its table entry,
  // and from that entry, whether it writes into recvbuf itself (direct_); true once known.
  bool learn_shared_copy(sync::WaitTarget& blocked_on);

  const std::byte* sendbuf_ = nullptr;
  std::byte* recvbuf_ = nullptr;
  bool in_place_ = false;
  bool started_ = false;
  bool tree_ = false;          // along the topology tree (registry), decided at construction
  bool uniform_word_ = false;  // root: it published one size for every sender (root_word)
  // Straight copies between shared buffers. Sender: it may take one, whether it reads the
  // root's table (after the root's arrival). Root: the candidates, the next to look at, and
  // what each does (by rank); planned_ once plan_root has run.
  bool shared_candidate_ = false;
  bool root_seen_ = false;
  bool reads_table_ = false;
  bool path_known_ = false;
  enum SharedUse : std::uint8_t { kNoTable, kTableOnly, kStraight };
  PlanVector<int> shared_candidates_;
  std::size_t next_candidate_ = 0;
  PlanVector<SharedUse> shared_use_;
  bool planned_ = false;
  // Root: some sender's block takes the single copy (the constructor).
  bool single_copy_blocks_ = false;
  // Only along the tree, as in GatherOp.
  std::optional<TreeGather> tree_gather_;
  PlanVector<std::pair<std::uint64_t, std::uint64_t>> blocks_;  // root: (offset, bytes) per rank
  StreamWriter writer_;
  GatherRoot root_side_;
  // Single copy: the root streams a table of every rank's block (GathervTableEntry, kDirect
  // where that rank writes its block into recvbuf itself) and waits for those ranks' copies.
  PlanVector<GathervTableEntry> table_;
  bool direct_ = false;  // a sender that writes its own block
  bool direct_started_ = false;
  bool direct_written_ = false;
  bool direct_copied_ = false;  // a direct sender's part is written (the root's share may not be)
  RootShares shares_;           // root: the direct senders, and its share of each (flat only)
  SteppedTransfer direct_copy_;
  GathervTableEntry entry_;
  RangeReader reader_;
  std::uint64_t acked_ = 0;
};

}  // namespace shmcoll
