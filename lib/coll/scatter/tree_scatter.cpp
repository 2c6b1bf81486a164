#include "coll/scatter/tree_scatter.hpp"

#include <cstring>

#include "base/text.hpp"
#include "protocol/operation.hpp"
#include "segment/layout.hpp"

namespace shmcoll {
using tree_layout::at;

void TreeScatter::start_root(TeamAlgorithms& algorithms, const CollectiveOp& op,
                             const std::byte* sendbuf, std::uint64_t block) {
  TeamImpl& team = algorithms.team();
  const int root = op.signature().root;
  TeamAlgorithms::ScatterRootPlan& kept = algorithms.scatter_root_plan(root);
  if (kept.block != block) {
    plan_root(
        team, op, false,
        [&](int r) {
          return Block{sendbuf + static_cast<std::uint64_t>(r) * block, block};
        },
        sendbuf);
    kept.block = block;
    kept.stream_bytes = stream_.bytes;
    kept.block_at.resize(sizes_.size());
    for (std::size_t i = 1; i < sizes_.size(); ++i) kept.block_at[i] = stream_.at(image_.offset[i]);
    kept.reads.assign(reads_.begin(), reads_.end());
    return;
  }
  // The plan of the last call with this root and block size: only the sources depend on
  // sendbuf. (On the critical path of every small call: each cycle here delays every rank.)
  tree_ = &team.tree(root);
  me_ = root;
  with_table_ = false;
  writing_ = true;
  reads_.assign(kept.reads.begin(), kept.reads.end());
  sources_.clear();
  for (std::size_t i = 1; i < kept.block_at.size(); ++i) {
    sources_.add(kept.block_at[i], sendbuf + static_cast<std::uint64_t>(tree_->preorder[i]) * block,
                 block);
  }
  writer_.start(op.op(), op.signature().kind, root, kept.stream_bytes, team.slot_bytes());
}

void TreeScatter::start_root(TeamAlgorithms& algorithms, const CollectiveOp& op,
                             std::span<const Block> blocks, const std::byte* base) {
  plan_root(
      algorithms.team(), op, true, [&](int r) { return blocks[static_cast<std::size_t>(r)]; },
      base);
}

template <class BlockOf>
void TreeScatter::plan_root(TeamImpl& team, const CollectiveOp& op, bool with_table,
                            BlockOf&& block_of, const std::byte* base) {
  const int root = op.signature().root;
  tree_ = &team.tree(root);
  me_ = root;
  with_table_ = with_table;
  sizes_.resize(tree_->preorder.size());
  if (with_table) direct_offsets_.resize(sizes_.size());  // uniform blocks are never direct
  for (std::size_t i = 0; i < sizes_.size(); ++i) {
    const Block b = block_of(tree_->preorder[i]);
    sizes_[i] = b.direct ? b.bytes | tree_layout::kDirect : b.bytes;
    if (b.direct) direct_offsets_[i] = static_cast<std::uint64_t>(b.data - base);
  }
  tree_layout::lay_out(*tree_, root, as_span(sizes_), image_);
  writing_ = true;
  plan_writer(team, op);
  for (std::size_t i = 1; i < sizes_.size(); ++i) {
    const Block b = block_of(tree_->preorder[i]);
    const std::byte* data =
        b.direct ? reinterpret_cast<const std::byte*>(&direct_offsets_[i]) : b.data;
    sources_.add(stream_.at(image_.offset[i]), data, tree_layout::image_bytes(sizes_[i]));
  }
}

void TreeScatter::start_member(TeamImpl& team, const CollectiveOp& op, bool with_table,
                               std::uint64_t own_bytes, std::byte* recvbuf) {
  const OpSignature& sig = op.signature();
  tree_ = &team.tree(sig.root);
  me_ = team.rank();
  with_table_ = with_table;
  own_bytes_ = own_bytes;
  recvbuf_ = recvbuf;
  parent_ = tree_->parent[static_cast<std::size_t>(me_)];
  const std::size_t count = at(tree_->subtree_size, parent_);
  reader_.reset(op.op(), sig.kind, sig.root, team.slot_bytes());
  reader_.add_writer(parent_, with_table ? "sendcounts" : "recvcount", false);
  if (with_table) {
    // First pass: the sizes of the parent's subtree, without acknowledging (the table's
    // chunks hold data this rank reads in the second pass).
    parent_sizes_.resize(count);
    reader_.add_piece(0, 0, 8 * count, reinterpret_cast<std::byte*>(parent_sizes_.data()));
    table_read_ = false;
  } else {
    parent_sizes_.assign(count, own_bytes);
    plan_member(team, op);
  }
}

bool TreeScatter::uniform_leaf_range(TeamAlgorithms& algorithms, int root, std::uint64_t block,
                                     LeafRange& out) {
  TeamImpl& team = algorithms.team();
  const topology::Tree& tree = team.tree(root);
  const int me = team.rank();
  if (me == root || at(tree.subtree_size, me) != 1) return false;
  out.parent = tree.parent[static_cast<std::size_t>(me)];
  TeamAlgorithms::LeafPlace& place = algorithms.scatter_leaf_place(root);
  if (place.block != block) {
    // Every block is `block` (a mismatch shows in the stream's length, as in flat scatter).
    PlanVector<std::uint64_t> parent_sizes(at(tree.subtree_size, out.parent), block);
    tree_layout::Image parent_image;
    tree_layout::lay_out(tree, out.parent, as_span(parent_sizes), parent_image);
    const tree_layout::ScatterStream stream = tree_layout::scatter_stream(parent_image, 0);
    const auto mine = at(tree.position, me) - at(tree.position, out.parent);
    place = {block, stream.at(parent_image.offset[mine]), stream.bytes};
  }
  out.begin = place.at;
  out.stream_bytes = place.stream_bytes;
  return true;
}

void TreeScatter::plan_member(TeamImpl& team, const CollectiveOp& op) {
  const std::size_t count = parent_sizes_.size();
  const auto mine = at(tree_->position, me_) - at(tree_->position, parent_);
  if (!tree_layout::lay_out(*tree_, parent_, as_span(parent_sizes_), parent_image_)) {
    team.fail(Status::kInternal, concat("corrupt size table in ", op.where(), " from rank ",
                                        parent_, " (seen by rank ", me_, ")"));
  }
  if (tree_layout::block_bytes(parent_sizes_[mine]) != own_bytes_) {
    team.fail(Status::kInvalidArgument,
              concat("type signature mismatch in ", op.where(), " (operation #", op.op(),
                     ") on rank ", me_, ": the root sends ",
                     tree_layout::block_bytes(parent_sizes_[mine]), " bytes (its sendcounts[", me_,
                     "]), this rank receives ", op.signature().describe_bytes()),
              Cause::kSizeMismatch);
  }
  own_direct_ = tree_layout::is_direct(parent_sizes_[mine]);
  parent_stream_ = tree_layout::scatter_stream(parent_image_, with_table_ ? count : 0);
  origin_ = parent_image_.offset[mine];

  // Second pass: the table again (its chunks are acknowledged like the rest), this rank's
  // block, and its descendants' blocks into the staging copy.
  reader_.restart();
  StreamSource& src = reader_.source(0);
  src.bytes = parent_stream_.bytes;
  src.bytes_known = true;
  if (with_table_) {
    reader_.add_piece(0, 0, 8 * count, reinterpret_cast<std::byte*>(parent_sizes_.data()));
  }
  const std::uint64_t own_at = parent_stream_.at(origin_);
  if (own_direct_) {
    reader_.add_piece(0, own_at, own_at + tree_layout::kDirectImageBytes,
                      reinterpret_cast<std::byte*>(&direct_at_));
  } else {
    reader_.add_piece(0, own_at, own_at + own_bytes_, recvbuf_);
  }
  writing_ = at(tree_->subtree_size, me_) > 1;
  if (!writing_) return;
  // This rank's image is the shift of its part of the parent's image by origin_.
  const auto first = parent_sizes_.begin() + static_cast<std::ptrdiff_t>(mine);
  sizes_.assign(first, first + static_cast<std::ptrdiff_t>(at(tree_->subtree_size, me_)));
  tree_layout::lay_out(*tree_, me_, as_span(sizes_), image_);
  plan_writer(team, op);
  if (image_.bytes > image_.children_start) {
    const std::uint64_t staged = image_.bytes - stream_.skip;
    staging_ = std::make_unique_for_overwrite<std::byte[]>(staged);
    // The bytes before the first child's block travel but are never read: zero, not stale heap.
    std::memset(staging_.get(), 0, image_.children_start - stream_.skip);
    std::byte* first_child = staging_.get() + (image_.children_start - stream_.skip);
    reader_.add_piece(0, parent_stream_.at(origin_ + image_.children_start),
                      parent_stream_.at(origin_ + image_.bytes), first_child);
    sources_.add(stream_.table, staging_.get(), staged);
  }
}

void TreeScatter::plan_writer(TeamImpl& team, const CollectiveOp& op) {
  const OpSignature& sig = op.signature();
  const std::size_t count = at(tree_->subtree_size, me_);
  stream_ = tree_layout::scatter_stream(image_, with_table_ ? count : 0);
  sources_.clear();
  if (with_table_) {
    sources_.add(0, reinterpret_cast<const std::byte*>(sizes_.data()), 8 * count);
  }
  // Which chunks each child reads: exactly the pieces it adds (see plan_member), so that no
  // chunk waits for a child that never reads it.
  const std::uint64_t slot = team.slot_bytes();
  reads_.clear();
  // Small streams lie in chunk 0: no division there (two per range made up a good part of an
  // 8-byte call's plan).
  auto chunk_of = [slot](std::uint64_t offset) { return offset < slot ? 0 : offset / slot; };
  auto add = [&](int child, std::uint64_t begin, std::uint64_t end) {
    if (begin < end) reads_.emplace_back(child, chunk_of(begin), chunk_of(end - 1));
  };
  const std::size_t base = at(tree_->position, me_);
  for (int child : tree_->children[static_cast<std::size_t>(me_)]) {
    const std::size_t i = at(tree_->position, child) - base;
    const std::size_t n = at(tree_->subtree_size, child);
    if (with_table_ && parent_ < 0 && takes_record(*tree_, child)) {
      // Its record holds a small block or a direct one's place; it reads a larger one only.
      const std::uint64_t b = sizes_[i];
      if (!tree_layout::is_direct(b) && b > segment::InboxRecord::kInlineBytes)
        add(child, stream_.at(image_.offset[i]), stream_.at(image_.offset[i]) + b);
      continue;
    }
    add(child, 0, 8 * (with_table_ ? count : 0));
    add(child, stream_.at(image_.offset[i]),
        stream_.at(image_.offset[i]) + tree_layout::image_bytes(sizes_[i]));
    if (n > 1)
      add(child, stream_.at(image_.offset[i + 1]),
          stream_.at(image_.end_of(i, n, as_span(sizes_))));
  }
  writer_.start(op.op(), sig.kind, sig.root, stream_.bytes, slot);
}

std::uint64_t TreeScatter::ready_chunks() const {
  if (parent_ < 0) return UINT64_MAX;  // the root holds everything
  const std::uint64_t copied = reader_.copied_below(0);
  const std::uint64_t begin = parent_stream_.at(origin_);
  const std::uint64_t filled = copied > begin ? copied - begin : 0;  // in this rank's image
  if (copied == UINT64_MAX || filled >= image_.bytes) return UINT64_MAX;
  if (filled <= stream_.skip) return stream_.table / writer_.shape().chunk_bytes();
  return stream_.at(filled) / writer_.shape().chunk_bytes();
}

bool TreeScatter::advance(TeamImpl& team, const CollectiveOp& op, sync::WaitTarget& blocked_on) {
  if (!table_read_) {
    if (!reader_.pull(team, acked_, blocked_on, /*acks=*/false, false)) return false;
    table_read_ = true;
    plan_member(team, op);
  }
  sync::WaitTarget pull_wait;
  // A rank with children acknowledges its last chunk at once (its parent may need the slot
  // while this rank still serves them); a leaf's can ride on its departure.
  const bool received =
      parent_ < 0 || reader_.pull(team, acked_, pull_wait, /*acks=*/true, /*ack_last=*/writing_);
  if (writing_) {
    auto readers = [&](std::uint64_t c, std::vector<int>& out) {
      for (const ReaderChunks& r : reads_) {
        if (r.first <= c && c <= r.last && (out.empty() || out.back() != r.reader))
          out.push_back(r.reader);
      }
    };
    sync::WaitTarget pump_wait;
    if (!pump_sources(team, writer_, sources_, readers, pump_wait, ready_chunks())) {
      // Blocked on a child; if the parent is still sending, its next chunk wakes us as well.
      blocked_on = received ? pump_wait : pull_wait;
      return false;
    }
  }
  if (!received) {
    blocked_on = pull_wait;
    return false;
  }
  // (Once everything has arrived, the pump above caught up with the whole stream.)
  if (writing_ && !writer_.done()) return false;
  return finish_direct(team, op, blocked_on);
}

bool TreeScatter::any_direct(std::size_t first, std::size_t count) const {
  for (std::size_t i = first; i < first + count; ++i) {
    if (tree_layout::is_direct(sizes_[i])) return true;
  }
  return false;
}

bool TreeScatter::finish_direct(TeamImpl& team, const CollectiveOp& op,
                                sync::WaitTarget& blocked_on) {
  if (direct_done_ || !with_table_) return true;
  const int root = op.signature().root;
  if (own_direct_ && !own_copied_) {
    // The root arrived before it published its first chunk, so its address is there to read.
    PeerArrival arrival;
    if (read_peer_arrival(team.area(root).status(), op.op(), arrival) != PeerState::kRead) {
      team.fail(Status::kInternal,
                concat("the root of ", op.where(), " left before rank ", me_, " copied its block"));
    }
    if (!direct_copy_.step(op, team, root, arrival.address + direct_at_, arrival.shared_id,
                           recvbuf_, own_bytes_, /*local_is_source=*/false, blocked_on))
      return false;
    own_copied_ = true;
  }
  const std::vector<int>& children = tree_->children[static_cast<std::size_t>(me_)];
  const std::size_t base = at(tree_->position, me_);
  for (; next_child_ < children.size(); ++next_child_) {
    const int child = children[next_child_];
    if (!any_direct(at(tree_->position, child) - base, at(tree_->subtree_size, child))) continue;
    // acquire (inside reached): the child's subtree's copies are over, so the root may release
    // sendbuf once all its children's reports are in.
    const sync::WaitTarget t{&team.area(child).progress().copied_op, op.op(), child};
    if (!sync::reached(t)) {
      blocked_on = t;
      return false;
    }
  }
  const bool reports = me_ != root && (writing_ ? any_direct(0, sizes_.size()) : own_direct_);
  // release (inside publish): this rank's copy and, acquired above, its subtree's.
  if (reports) team.publish(team.self().progress().copied_op, op.op());
  direct_done_ = true;
  return true;
}

}  // namespace shmcoll
