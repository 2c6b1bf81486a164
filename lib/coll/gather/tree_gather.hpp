// Gather and gatherv up the topology tree (TeamImpl::tree): each rank streams to its parent the
// blocks of its whole subtree (tree_layout.hpp), its own first, followed by its children's as
// they arrive in its staging copy; the root copies the blocks of its children's streams
// straight into recvbuf. A block crosses each package or NUMA boundary once, and the root
// waits for one leader per group plus its own group's members instead of every rank. The
// staging copy is the relaying rank's private memory, first touched by it, so it lies on its
// NUMA node.
//
// In gatherv each sender knows only its own size: every stream starts with the sizes of the
// sender's subtree (but a leaf's below the root, see sends_table), each relaying rank builds
// its table from its children's, and the root checks every size against recvcounts before it
// copies a byte.
#pragma once

#include <memory>
#include <span>

#include "coll/team_algorithms.hpp"
#include "coll/tree_layout.hpp"
#include "protocol/pieces.hpp"

namespace shmcoll {

class CollectiveOp;

class TreeGather {
 public:
  // User-provided, so that optional::emplace() default-initializes the members (each has its
  // initializer) instead of value-initializing: that would first zero the whole object, the
  // plans' inline room included (3.5 KB with rep stos), on every call along the tree.
  TreeGather() {}  // NOLINT(modernize-use-equals-default)
  struct Block {
    std::byte* data = nullptr;
    std::uint64_t bytes = 0;
    bool direct = false;  // gatherv: its sender writes it into recvbuf itself (single copy)
  };
  // The root of gather: rank r's block goes to the `block` bytes at recvbuf + r x block (its
  // own is laid out, not received).
  void start_root(TeamAlgorithms& algorithms, const CollectiveOp& op, std::byte* recvbuf,
                  std::uint64_t block);
  // The root of gatherv: block_of(r) is where rank r's block goes in recvbuf and its size.
  template <class BlockOf>
  void start_root(TeamAlgorithms& algorithms, const CollectiveOp& op, int nranks,
                  BlockOf&& block_of) {
    with_table_ = true;
    // Kept as plain words, filled in place: copying a freshly written list of blocks costs
    // more than a small call's whole plan (the copy's wide loads wait for the narrow stores).
    root_entries_.resize(static_cast<std::size_t>(nranks));
    root_destinations_.resize(static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) {
      const Block b = block_of(r);
      root_entries_[static_cast<std::size_t>(r)] =
          b.direct ? b.bytes | tree_layout::kDirect : b.bytes;
      root_destinations_[static_cast<std::size_t>(r)] = b.data;
    }
    start_root_from_blocks(algorithms, op);
  }
  // Any other rank: sends `own_bytes` from sendbuf; `own_direct`: only the entry, the block
  // moves with one copy (GathervOp).
  void start_member(TeamImpl& team, const CollectiveOp& op, bool with_table,
                    const std::byte* sendbuf, std::uint64_t own_bytes, bool own_direct = false);
  bool advance(TeamImpl& team, const CollectiveOp& op, sync::WaitTarget& blocked_on);
  // Whether the data stage compared `peer`'s collective, root and sizes with this rank's (it
  // read a stream from it), so the agree stage need not.
  bool checked(int peer) const {
    for (std::size_t w = 0; w < children_.size(); ++w) {
      if (children_[w].rank == peer) return reader_.read_from(w);
    }
    return false;
  }

  // The acknowledgement the root leaves for its departure, 0 for none.
  std::uint64_t deferred_ack() const {
    return is_root_ && reader_.read_anything() ? sync::step_consumed(reader_.last_chunk()) : 0;
  }

 private:
  // gatherv's root: rank r's table entry (its size, with kDirect for a direct block) and where
  // its block goes.
  std::uint64_t root_entry(int r) const { return root_entries_[static_cast<std::size_t>(r)]; }
  std::byte* root_destination(int r) const {
    return root_destinations_[static_cast<std::size_t>(r)];
  }
  // The root's plan when its children send no tables (GatherRootPlan), for kept.entries.
  void lay_out_root(TeamImpl& team, const CollectiveOp& op, TeamAlgorithms::GatherRootPlan& kept);
  // The root's reader from such a plan; destination_of(r): where rank r's block goes.
  template <class DestinationOf>
  void start_root_from_plan(TeamImpl& team, const CollectiveOp& op,
                            const TeamAlgorithms::GatherRootPlan& kept, const char* count_name,
                            bool indexed, DestinationOf&& destination_of);
  void start_root_from_blocks(TeamAlgorithms& algorithms, const CollectiveOp& op);
  // The root reads the block of table entry `entry` from `writer`'s stream at `begin`.
  void add_root_piece(std::size_t writer, std::uint64_t begin, std::uint64_t entry,
                      std::byte* destination);
  void add_children(TeamImpl& team, const CollectiveOp& op);
  // A leaf whose stream is its block alone (uniform gather; gatherv right below the root, not
  // direct): sends it as a flat gather's sender does, reads nothing.
  void start_leaf(TeamImpl& team, const CollectiveOp& op, std::uint64_t own_bytes);
  // gatherv: whether `rank`'s stream starts with its subtree's sizes. Not a leaf's below the
  // root, which knows that size from recvcounts: its stream is its block alone.
  static bool sends_table(const topology::Tree& tree, int rank);
  // After the sizes are known: the layout, the children's stream lengths and the pieces.
  void plan(TeamImpl& team, const CollectiveOp& op);
  std::uint64_t ready_chunks() const;

  const topology::Tree* tree_ = nullptr;
  int me_ = 0;
  bool is_root_ = false;
  bool leaf_ = false;  // started by start_leaf: writes its block, reads nothing
  bool with_table_ = false;
  const std::byte* sendbuf_ = nullptr;
  PlanVector<std::uint64_t> root_entries_;  // gatherv's root, by rank (see root_entry)
  PlanVector<std::byte*> root_destinations_;
  // Block sizes of this rank's subtree in preorder: its own, then its children's tables.
  PlanVector<std::uint64_t> sizes_;
  PlanVector<std::uint64_t> table_again_;  // the second pass's copy of the children's tables
  tree_layout::Image image_;
  std::uint64_t table_ = 0;  // the table at the head of this rank's stream (set by plan)
  // A direct block's place in an image: what a sender writes there, where the root reads it.
  std::uint64_t direct_image_ = 0;
  struct Child {
    // A constructor, so that emplace_back builds it in place with every compiler (C++20's
    // parenthesized aggregate initialization is not in clang 14).
    Child(int rank_, std::size_t index_, std::size_t count_)
        : rank(rank_), index(index_), count(count_) {}
    int rank;
    std::size_t index;        // preorder index in this rank's subtree
    std::size_t count;        // ranks in its subtree
    std::uint64_t table = 0;  // the table at the head of its stream (set by plan)
  };
  PlanVector<Child> children_;
  bool tables_read_ = true;
  PieceReader reader_;
  std::uint64_t acked_ = 0;

  // Writer side (every rank but the root).
  std::unique_ptr<std::byte[]> staging_;  // image bytes [children_start, bytes)
  StreamSources sources_;
  StreamWriter writer_;
};

}  // namespace shmcoll
