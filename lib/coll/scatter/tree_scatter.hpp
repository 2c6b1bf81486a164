// Scatter and scatterv down the topology tree (TeamImpl::tree). The root streams to each child
// the blocks of that child's whole subtree (tree_layout.hpp); a child keeps its own block and
// relays the rest to its children from a staging copy, chunk by chunk as it arrives, so a block
// crosses each package or NUMA boundary once and the root serves one leader per group plus its
// own group's members instead of every rank. The staging copy is the relaying rank's private
// memory, first touched by it, so it lies on its NUMA node.
//
// In scatterv only the root knows the sizes: every stream starts with the sizes of the
// sender's subtree, from which each child computes the layout, checks its own size, and
// writes the table of its own subtree. The root's leaf children (in a one-level tree, every
// rank) are the exception: the root posts them records as flat scatterv does
// (scatterv_inbox.hpp), and they read from its stream at most their own block.
//
// Scatterv blocks from the single-copy size on are direct (tree_layout.hpp): the streams carry
// only each one's offset in the root's buffer, and its owner copies it from there with one
// cross-memory copy. Completion fans in along the tree: a rank whose subtree holds a direct
// block reports (ProgressLine::copied_op) once its own copy is over and its children with such
// blocks have reported, and the root leaves after its children's reports.
#pragma once

#include <memory>
#include <span>

#include "coll/single_copy.hpp"
#include "coll/team_algorithms.hpp"
#include "coll/tree_layout.hpp"
#include "protocol/pieces.hpp"

namespace shmcoll {

class CollectiveOp;

class TreeScatter {
 public:
  // User-provided, so that optional::emplace() default-initializes the members (each has its
  // initializer) instead of value-initializing: that would first zero the whole object, the
  // plans' inline room included (3.5 KB with rep stos), on every call along the tree.
  TreeScatter() {}  // NOLINT(modernize-use-equals-default)
  struct Block {
    const std::byte* data = nullptr;
    std::uint64_t bytes = 0;
    bool direct = false;  // scatterv: its owner copies it from `base` itself
  };
  // The root of scatter: rank r's block is the `block` bytes at sendbuf + r x block (its own
  // is laid out, not sent).
  void start_root(TeamAlgorithms& algorithms, const CollectiveOp& op, const std::byte* sendbuf,
                  std::uint64_t block);
  // The root of scatterv: every rank's block of sendbuf, by rank. `base`: the buffer the root
  // exposed, which direct blocks lie in.
  void start_root(TeamAlgorithms& algorithms, const CollectiveOp& op, std::span<const Block> blocks,
                  const std::byte* base);
  // A leaf of a uniform scatter's tree reads one range of one stream, its parent's, as a flat
  // scatter's receiver reads its block from the root's: it needs no TreeScatter. Where that
  // range lies, kept per root in the team (TeamAlgorithms::LeafPlace); false when this rank is not
  // a leaf of the tree rooted at `root`.
  struct LeafRange {
    int parent;
    std::uint64_t begin;         // in the parent's stream
    std::uint64_t stream_bytes;  // the parent's stream's length
  };
  static bool uniform_leaf_range(TeamAlgorithms& algorithms, int root, std::uint64_t block,
                                 LeafRange& out);
  // Any other rank (but uniform leaves, see above): receives `own_bytes` into recvbuf.
  void start_member(TeamImpl& team, const CollectiveOp& op, bool with_table,
                    std::uint64_t own_bytes, std::byte* recvbuf);
  bool advance(TeamImpl& team, const CollectiveOp& op, sync::WaitTarget& blocked_on);
  // Scatterv: whether rank r of the tree takes its block through a record from the root (a
  // leaf child of the root), and not along the tree.
  static bool takes_record(const topology::Tree& tree, int r) {
    return tree.parent[static_cast<std::size_t>(r)] == tree.root &&
           tree_layout::at(tree.subtree_size, r) == 1;
  }
  // The root: where the block of `child`, one that takes a record, lies in its stream.
  std::uint64_t stream_offset_of(int child) const {
    return stream_.at(image_.offset[tree_layout::at(tree_->position, child)]);
  }
  // Whether the data stage compared `peer`'s collective, root and sizes with this rank's (it
  // read a stream from it), so the agree stage need not.
  bool checked(int peer) const { return peer == parent_ && reader_.read_from(0); }
  // The acknowledgement a leaf leaves for its departure, 0 for none.
  std::uint64_t deferred_ack() const {
    return !writing_ && reader_.read_anything() ? sync::step_consumed(reader_.last_chunk()) : 0;
  }

 private:
  // The root's plan, whose block of rank r is block_of(r) (one pass, no list built first).
  template <class BlockOf>
  void plan_root(TeamImpl& team, const CollectiveOp& op, bool with_table, BlockOf&& block_of,
                 const std::byte* base);
  void plan_member(TeamImpl& team, const CollectiveOp& op);
  // Direct blocks: this rank's own copy, its children's reports, and its own report.
  bool finish_direct(TeamImpl& team, const CollectiveOp& op, sync::WaitTarget& blocked_on);
  // Whether entries [first, first + count) of sizes_ hold a direct block.
  bool any_direct(std::size_t first, std::size_t count) const;
  // The stream this rank writes to its children, from sizes_ and image_ of its subtree.
  void plan_writer(TeamImpl& team, const CollectiveOp& op);
  std::uint64_t ready_chunks() const;

  const topology::Tree* tree_ = nullptr;
  int me_ = 0;
  bool with_table_ = false;
  std::uint64_t own_bytes_ = 0;
  std::byte* recvbuf_ = nullptr;
  // Block sizes in preorder: of the parent's subtree (read from its table in scatterv), and of
  // this rank's own subtree.
  PlanVector<std::uint64_t> parent_sizes_;
  PlanVector<std::uint64_t> sizes_;
  int parent_ = -1;
  tree_layout::Image parent_image_;
  tree_layout::ScatterStream parent_stream_;
  std::uint64_t origin_ = 0;  // this rank's image in its parent's image
  // Its own block is direct: where it lies in the root's buffer (read from the stream).
  bool own_direct_ = false;
  std::uint64_t direct_at_ = 0;
  SteppedTransfer direct_copy_;
  bool own_copied_ = false;
  bool direct_done_ = false;    // own copy over (or none), children's reports seen, reported
  std::size_t next_child_ = 0;  // the next child whose report this rank waits for
  bool table_read_ = true;
  PieceReader reader_;
  std::uint64_t acked_ = 0;

  // Writer side (the root, and ranks with children).
  bool writing_ = false;
  tree_layout::Image image_;
  tree_layout::ScatterStream stream_;
  PlanVector<std::uint64_t> direct_offsets_;  // the root: direct blocks' offsets, in preorder
  std::unique_ptr<std::byte[]> staging_;      // image bytes [stream_.skip, image_.bytes)
  StreamSources sources_;
  StreamWriter writer_;
  // Per child, the chunk ranges of this rank's stream it reads.
  PlanVector<ReaderChunks> reads_;
};

}  // namespace shmcoll
