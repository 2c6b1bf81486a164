#include "coll/gather/tree_gather.hpp"

#include <algorithm>
#include <cstring>

#include "base/text.hpp"
#include "protocol/operation.hpp"

namespace shmcoll {
using tree_layout::at;

void TreeGather::start_root(TeamAlgorithms& algorithms, const CollectiveOp& op, std::byte* recvbuf,
                            std::uint64_t block) {
  TeamImpl& team = algorithms.team();
  const int root = op.signature().root;
  is_root_ = true;
  with_table_ = false;
  tree_ = &team.tree(root);
  me_ = root;
  TeamAlgorithms::GatherRootPlan& kept = algorithms.gather_root_plan(root, false);
  const bool same = !kept.entries.empty() && kept.entries[0] == block;  // all equal, as now
  if (!same) {
    kept.entries.assign(tree_->preorder.size(), block);
    lay_out_root(team, op, kept);
  }
  start_root_from_plan(team, op, kept, "recvcount", false,
                       [&](int r) { return recvbuf + static_cast<std::uint64_t>(r) * block; });
}

void TreeGather::start_root_from_blocks(TeamAlgorithms& algorithms, const CollectiveOp& op) {
  TeamImpl& team = algorithms.team();
  const int root = op.signature().root;
  is_root_ = true;
  tree_ = &team.tree(root);
  me_ = root;
  const auto r = static_cast<std::size_t>(root);
  if (tree_->children[r].size() + 1 == at(tree_->subtree_size, root)) {
    // Every child is a leaf, whose stream is its block alone (no table): the sizes come from
    // recvcounts, so the plan of the last call with the same ones holds.
    TeamAlgorithms::GatherRootPlan& kept = algorithms.gather_root_plan(root, true);
    if (!std::equal(kept.entries.begin(), kept.entries.end(), root_entries_.begin(),
                    root_entries_.end())) {
      kept.entries.assign(root_entries_.begin(), root_entries_.end());
      lay_out_root(team, op, kept);
    }
    start_root_from_plan(team, op, kept, "recvcounts", true,
                         [&](int rank) { return root_destination(rank); });
    return;
  }
  add_children(team, op);
  sizes_[0] = root_entries_[r];  // never direct
  if (tables_read_) plan(team, op);
}

void TreeGather::lay_out_root(TeamImpl& team, const CollectiveOp& op,
                              TeamAlgorithms::GatherRootPlan& kept) {
  // The general plan (see plan) for children that send no tables: each child's stream is its
  // subtree's image, a shift of that part of the root's.
  const topology::Tree& tree = *tree_;
  PlanVector<std::uint64_t> sizes(tree.preorder.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    sizes[i] = kept.entries[static_cast<std::size_t>(tree.preorder[i])];
  }
  tree_layout::Image image;
  if (!tree_layout::lay_out(tree, tree.root, as_span(sizes), image)) {
    kept.entries.clear();
    team.fail(Status::kInternal,
              concat("corrupt size table in ", op.where(), " (seen by rank ", me_, ")"));
  }
  kept.children.clear();
  kept.pieces.clear();
  for (int child : tree.children[static_cast<std::size_t>(tree.root)]) {
    // The root's preorder index is 0, so the tree's positions index its image.
    const std::uint64_t length =
        image.for_each_in_child(at(tree.position, child), at(tree.subtree_size, child),
                                as_span(sizes), [&](std::size_t j, std::uint64_t begin) {
                                  kept.pieces.push_back({begin, sizes[j], tree.preorder[j]});
                                });
    kept.children.push_back({child, length, kept.pieces.size()});
  }
}

void TreeGather::add_root_piece(std::size_t writer, std::uint64_t begin, std::uint64_t entry,
                                std::byte* destination) {
  // A direct block's place holds nothing the root needs: it lands in a sink.
  reader_.add_piece(
      writer, begin, begin + tree_layout::image_bytes(entry),
      tree_layout::is_direct(entry) ? reinterpret_cast<std::byte*>(&direct_image_) : destination);
}

template <class DestinationOf>
void TreeGather::start_root_from_plan(TeamImpl& team, const CollectiveOp& op,
                                      const TeamAlgorithms::GatherRootPlan& kept,
                                      const char* count_name, bool indexed,
                                      DestinationOf&& destination_of) {
  // Per call only the destinations move with recvbuf. (On the critical path of every small
  // call: the root reads nothing before its plan is made.)
  const OpSignature& sig = op.signature();
  reader_.reset(op.op(), sig.kind, sig.root, team.slot_bytes());
  reader_.reserve_writers(kept.children.size());
  children_.clear();
  std::size_t p = 0;
  for (std::size_t w = 0; w < kept.children.size(); ++w) {
    const TeamAlgorithms::GatherRootPlan::Child& child = kept.children[w];
    children_.emplace_back(child.rank, 0, 0);  // the root needs only the rank (checked)
    reader_.add_writer(child.rank, count_name, indexed);
    StreamSource& src = reader_.source(w);
    src.bytes = child.stream_bytes;
    src.bytes_known = true;
    for (; p < child.pieces_end; ++p) {
      const TeamAlgorithms::GatherRootPlan::Piece& piece = kept.pieces[p];
      add_root_piece(w, piece.begin, piece.entry, destination_of(piece.rank));
    }
  }
}

void TreeGather::start_member(TeamImpl& team, const CollectiveOp& op, bool with_table,
                              const std::byte* sendbuf, std::uint64_t own_bytes, bool own_direct) {
  with_table_ = with_table;
  sendbuf_ = sendbuf;
  const topology::Tree& tree = team.tree(op.signature().root);
  const bool leaf = tree.subtree_size[static_cast<std::size_t>(team.rank())] == 1;
  if (leaf && !own_direct && !(with_table && sends_table(tree, team.rank()))) {
    start_leaf(team, op, own_bytes);
    return;
  }
  add_children(team, op);
  sizes_[0] = own_direct ? own_bytes | tree_layout::kDirect : own_bytes;
  if (!with_table) {
    for (std::size_t i = 1; i < sizes_.size(); ++i) sizes_[i] = own_bytes;
  }
  if (tables_read_) plan(team, op);  // else once the children's tables are read
}

void TreeGather::start_leaf(TeamImpl& team, const CollectiveOp& op, std::uint64_t own_bytes) {
  // The general plan with nothing to read and a one-block image comes down to the flat
  // sender's: the stream is the block alone, so there is no layout, no reader and no list of
  // sources (most ranks of a tree are leaves).
  const OpSignature& sig = op.signature();
  tree_ = &team.tree(sig.root);
  me_ = team.rank();
  leaf_ = true;
  writer_.start(op.op(), sig.kind, sig.root, own_bytes, team.slot_bytes());
}

bool TreeGather::sends_table(const topology::Tree& tree, int rank) {
  const auto r = static_cast<std::size_t>(rank);
  return tree.parent[r] != tree.root || tree.subtree_size[r] > 1;
}

void TreeGather::add_children(TeamImpl& team, const CollectiveOp& op) {
  const OpSignature& sig = op.signature();
  tree_ = &team.tree(sig.root);
  me_ = team.rank();
  sizes_.assign(at(tree_->subtree_size, me_), 0);
  reader_.reset(op.op(), sig.kind, sig.root, team.slot_bytes());
  reader_.reserve_writers(tree_->children[static_cast<std::size_t>(me_)].size());
  children_.clear();
  tables_read_ = true;
  const std::size_t base = at(tree_->position, me_);
  for (int child : tree_->children[static_cast<std::size_t>(me_)]) {
    // In place, not copied from a temporary (see PieceReader::add_writer).
    const Child& c = children_.emplace_back(child, at(tree_->position, child) - base,
                                            at(tree_->subtree_size, child));
    if (with_table_ && !sends_table(*tree_, child)) {
      // A leaf below the root: the root's recvcounts give its size, and the length its stream
      // declares is checked against it before a byte is copied, as in the flat gatherv.
      sizes_[c.index] = root_entry(child);
      reader_.add_writer(child, "recvcounts", true);
      continue;
    }
    reader_.add_writer(child, with_table_ ? "sendcount" : "recvcount", false);
    if (with_table_) {
      // First pass: the children's tables, straight into this rank's (they are its subtree's
      // sizes in preorder), without acknowledging: their chunks hold data read afterwards.
      reader_.add_piece(children_.size() - 1, 0, 8 * c.count,
                        reinterpret_cast<std::byte*>(sizes_.data() + c.index));
      tables_read_ = false;
    }
  }
}

void TreeGather::plan(TeamImpl& team, const CollectiveOp& op) {
  const OpSignature& sig = op.signature();
  if (!tree_layout::lay_out(*tree_, me_, as_span(sizes_), image_)) {
    team.fail(Status::kInternal,
              concat("corrupt size table in ", op.where(), " (seen by rank ", me_, ")"));
  }
  if (is_root_ && with_table_) {
    // Every size against recvcounts before a byte moves: a mismatch is reported, never copied.
    for (std::size_t i = 1; i < sizes_.size(); ++i) {
      const int r = tree_->preorder[i];
      const std::uint64_t want = root_entry(r);
      // (Both sides mark a block direct by the same rule on its size, so equal sizes agree.)
      if (sizes_[i] != want) {
        team.fail(Status::kInvalidArgument,
                  concat("type signature mismatch in ", op.where(), " (operation #", op.op(),
                         "): the root receives ", tree_layout::block_bytes(want),
                         " bytes from rank ", r, " (its recvcounts[", r, "]), but rank ", r,
                         " has ", tree_layout::block_bytes(sizes_[i]), " bytes"),
                  Cause::kSizeMismatch);
      }
    }
  }
  reader_.restart();
  table_again_.assign(sizes_.size(), 0);
  if (!is_root_ && image_.bytes > image_.children_start) {
    const std::uint64_t staged = image_.bytes - image_.children_start;
    staging_ = std::make_unique_for_overwrite<std::byte[]>(staged);
  }
  std::uint64_t previous_end = image_.children_start;
  for (std::size_t w = 0; w < children_.size(); ++w) {
    Child& c = children_[w];
    const std::uint64_t origin = image_.offset[c.index];
    const std::uint64_t length = image_.end_of(c.index, c.count, as_span(sizes_)) - origin;
    c.table =
        with_table_ && sends_table(*tree_, c.rank) ? tree_layout::table_bytes(c.count, length) : 0;
    const std::uint64_t table = c.table;
    StreamSource& src = reader_.source(w);
    src.bytes = table + length;
    src.bytes_known = true;
    if (table > 0) {
      reader_.add_piece(w, 0, 8 * c.count,
                        reinterpret_cast<std::byte*>(table_again_.data() + c.index));
    }
    if (is_root_) {
      // Block by block into recvbuf, as lay_out_root plans it, after the child's table.
      image_.for_each_in_child(
          c.index, c.count, as_span(sizes_), [&](std::size_t j, std::uint64_t begin) {
            add_root_piece(w, table + begin, sizes_[j], root_destination(tree_->preorder[j]));
          });
    } else if (length > 0) {
      std::byte* dst = staging_.get() + (origin - image_.children_start);
      // Padding between the children's images travels but is never read: zero, not stale heap.
      std::memset(staging_.get() + (previous_end - image_.children_start), 0,
                  origin - previous_end);
      reader_.add_piece(w, table, table + length, dst);
      previous_end = origin + length;
    }
  }
  if (is_root_) return;
  table_ = with_table_ && sends_table(*tree_, me_)
               ? tree_layout::table_bytes(sizes_.size(), image_.bytes)
               : 0;
  const std::uint64_t table = table_;
  sources_.clear();
  if (table > 0) {
    sources_.add(0, reinterpret_cast<const std::byte*>(sizes_.data()), 8 * sizes_.size());
  }
  if (tree_layout::is_direct(sizes_[0])) {
    sources_.add(table, reinterpret_cast<const std::byte*>(&direct_image_),
                 tree_layout::kDirectImageBytes);
  } else {
    sources_.add(table, sendbuf_, sizes_[0]);
  }
  if (staging_)
    sources_.add(table + image_.children_start, staging_.get(),
                 image_.bytes - image_.children_start);
  writer_.start(op.op(), sig.kind, sig.root, tree_layout::gather_stream_bytes(image_, table),
                team.slot_bytes());
}

std::uint64_t TreeGather::ready_chunks() const {
  // This rank's image is complete up to the first child whose stream is not all copied.
  std::uint64_t filled = image_.bytes;
  for (std::size_t w = 0; w < children_.size(); ++w) {
    const Child& c = children_[w];
    const std::uint64_t origin = image_.offset[c.index];
    const std::uint64_t table = c.table;
    const std::uint64_t copied = reader_.copied_below(w);
    if (copied == UINT64_MAX ||
        copied >= table + image_.end_of(c.index, c.count, as_span(sizes_)) - origin)
      continue;
    filled = origin + (copied > table ? copied - table : 0);
    break;
  }
  if (filled >= image_.bytes) return UINT64_MAX;
  return (table_ + filled) / writer_.shape().chunk_bytes();
}

bool TreeGather::advance(TeamImpl& team, const CollectiveOp& op, sync::WaitTarget& blocked_on) {
  if (leaf_) {
    return pump_buffer(team, writer_, sendbuf_, tree_->parent[static_cast<std::size_t>(me_)],
                       blocked_on);
  }
  if (!tables_read_) {
    if (!reader_.pull(team, acked_, blocked_on, /*acks=*/false, false)) return false;
    tables_read_ = true;
    plan(team, op);
  }
  sync::WaitTarget pull_wait;
  // The root's last acknowledgement can ride on its departure (deferred_ack); a rank below
  // acknowledges at once, since its children may need the slot while it still writes upward.
  const bool received =
      reader_.pull(team, acked_, pull_wait, /*acks=*/true, /*ack_last=*/!is_root_);
  if (!is_root_) {
    const int parent = tree_->parent[static_cast<std::size_t>(me_)];
    auto readers = [&](std::uint64_t, std::vector<int>& out) { out.push_back(parent); };
    sync::WaitTarget pump_wait;
    if (!pump_sources(team, writer_, sources_, readers, pump_wait, ready_chunks())) {
      blocked_on = received ? pump_wait : pull_wait;
      return false;
    }
    if (received) return writer_.done();
  } else if (received) {
    return true;
  }
  blocked_on = pull_wait;
  return false;
}

}  // namespace shmcoll
