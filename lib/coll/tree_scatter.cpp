#include "coll/tree_scatter.hpp"

#include <cstring>

#include "core/operation.hpp"
#include "core/text.hpp"

namespace shmcoll {
using tree_layout::at;

void TreeScatter::start_root(TeamImpl& team, const CollectiveOp& op, bool with_table,
                             std::span<const Block> blocks) {
  const int root = op.signature().root;
  tree_ = &team.tree(root);
  me_ = root;
  with_table_ = with_table;
  sizes_.resize(tree_->preorder.size());
  for (std::size_t i = 0; i < sizes_.size(); ++i)
    sizes_[i] = blocks[static_cast<std::size_t>(tree_->preorder[i])].bytes;
  tree_layout::lay_out(*tree_, root, as_span(sizes_), image_);
  writing_ = true;
  plan_writer(team, op);
  for (std::size_t i = 1; i < sizes_.size(); ++i) {
    sources_.add(stream_.at(image_.offset[i]),
                 blocks[static_cast<std::size_t>(tree_->preorder[i])].data, sizes_[i]);
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
  reader_.reset(op.op(), team.slot_bytes());
  reader_.add_writer({parent_, op.op(), sig.kind, sig.root, 0, false,
                      with_table ? "sendcounts" : "recvcount", false});
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

void TreeScatter::plan_member(TeamImpl& team, const CollectiveOp& op) {
  const std::size_t count = parent_sizes_.size();
  const auto mine = at(tree_->position, me_) - at(tree_->position, parent_);
  if (!tree_layout::lay_out(*tree_, parent_, as_span(parent_sizes_), parent_image_)) {
    team.fail(Status::kInternal, concat("corrupt size table in ", op.where(), " from rank ",
                                        parent_, " (seen by rank ", me_, ")"));
  }
  if (parent_sizes_[mine] != own_bytes_) {
    team.fail(
        Status::kInvalidArgument,
        concat("type signature mismatch in ", op.where(), " (operation #", op.op(), ") on rank ",
               me_, ": the root sends ", parent_sizes_[mine], " bytes (its sendcounts[", me_,
               "]), this rank receives ", op.signature().describe_bytes()));
  }
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
  reader_.add_piece(0, own_at, own_at + own_bytes_, recvbuf_);
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
  auto add = [&](int child, std::uint64_t begin, std::uint64_t end) {
    if (begin < end) reads_.push_back({child, begin / slot, (end - 1) / slot});
  };
  const std::size_t base = at(tree_->position, me_);
  for (int child : tree_->children[static_cast<std::size_t>(me_)]) {
    const std::size_t i = at(tree_->position, child) - base;
    const std::size_t n = at(tree_->subtree_size, child);
    add(child, 0, 8 * (with_table_ ? count : 0));
    add(child, stream_.at(image_.offset[i]), stream_.at(image_.offset[i]) + sizes_[i]);
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
      for (const ChunkRange& r : reads_) {
        if (r.first <= c && c <= r.last && (out.empty() || out.back() != r.child))
          out.push_back(r.child);
      }
    };
    sync::WaitTarget pump_wait;
    if (!pump_sources(team, writer_, sources_, readers, pump_wait, ready_chunks())) {
      // Blocked on a child; if the parent is still sending, its next chunk wakes us as well.
      blocked_on = received ? pump_wait : pull_wait;
      return false;
    }
  }
  if (received) return !writing_ || writer_.done();
  blocked_on = pull_wait;
  return false;
}

}  // namespace shmcoll
