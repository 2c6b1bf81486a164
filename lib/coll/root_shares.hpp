// The root's part of the v-forms' single copies. A scatterv or gatherv block at or above the
// single-copy threshold is moved by its non-root rank with one cross-memory copy; left at
// that, the root only waits while each peer moves its whole block. So the root takes the
// leading bytes of each such block (its share: written into a scatterv receiver's buffer,
// read from a gatherv sender's) and the peer the rest, both cores copying at once, as the
// uniform forms do (SingleCopyExchange). Unlike there, only the root knows every block's size,
// so it chooses the shares (SingleCopyExchange::balanced_root_shares) and tells each peer its
// own in the record or table entry that already says where the block is.
//
// Order: the root moves a share only after it has read that peer's arrival and checked its
// signature (so it never touches a buffer shorter than the block), then publishes
// ProgressLine::shared_op. A peer with a share reports its own copy (copied_op) and then
// leaves only once the root's shared_op reaches the operation: its buffer is in use until then.
// Writes into a receiver's buffer are announced and fenced against its drain
// (SingleCopyExchange::transfer), so a receiver leaving on an error drains first.
//
// No shares along a topology tree (the blocks of deeper ranks pass their parents) nor in an
// oversubscribed team, where a root waiting for its peers only takes CPU from ranks that copy:
// there every share is 0, and the blocks only say which peers copy theirs (all_copied).
#pragma once

#include <cstdint>

#include "base/plan_vector.hpp"
#include "coll/single_copy.hpp"

namespace shmcoll {

class RootShares {
 public:
  struct Block {
    int peer = 0;
    std::byte* local = nullptr;  // the root's side: where the block starts in its buffer
    std::uint64_t bytes = 0;
    std::uint64_t share = 0;
  };

  // Root of a `kind` call: `blocks` (peer, local, bytes) of the single-copy peers, in rank order
  // (lookups by rank search them); sets their shares. `root_extra`: bytes the root memcpys
  // itself in this call (its own block, the streamed blocks), which lower its shares, weighed
  // by the root's CopyBalance for its largest block (1 where `root_buffer` is shared memory).
  void plan(PlanVector<Block>&& blocks, std::uint64_t root_extra, TeamAlgorithms& algorithms,
            Kind kind, const void* root_buffer, bool cooperative);
  // Root: the single-copy peers' blocks with their shares.
  const PlanVector<Block>& blocks() const { return blocks_; }
  bool empty() const { return blocks_.empty(); }
  // Root: moves each share (into the peers' buffers when `into_peers`, else out of them), then
  // publishes shared_op (when some share is not 0: otherwise no peer waits for it). True once
  // done; otherwise `blocked_on` names the wait.
  bool move(CollectiveOp& op, TeamImpl& team, bool into_peers, sync::WaitTarget& blocked_on);

  // Root: true once every single-copy peer has published ProgressLine::copied_op for `op` (its
  // own copy is over); otherwise `blocked_on` names the first that has not. Called once the
  // root's own part is over: its first answer tells the root's CopyBalance who finished first.
  bool all_copied(TeamAlgorithms& algorithms, std::uint64_t op, sync::WaitTarget& blocked_on);

  // A peer whose record gave it a share, after its own copy: true once the root has moved it.
  static bool root_done(const CollectiveOp& op, TeamImpl& team, int root,
                        sync::WaitTarget& blocked_on);

 private:
  bool peers_copied(TeamImpl& team, std::uint64_t op, sync::WaitTarget& blocked_on);

  PlanVector<Block> blocks_;
  bool sharing_ = false;  // some share is not 0
  // Until the first all_copied: the weight decided the shares, for blocks up to learned_bytes_.
  bool learning_ = false;
  Kind kind_ = Kind::kScatterv;
  std::uint64_t learned_bytes_ = 0;
  std::size_t next_ = 0;         // move(): the next block whose share to move
  std::size_t next_copied_ = 0;  // all_copied(): the next peer to wait for
  SteppedTransfer piece_;
};

}  // namespace shmcoll
