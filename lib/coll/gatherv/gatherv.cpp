#include "coll/gatherv/gatherv.hpp"

#include <algorithm>
#include <cstring>

#include "coll/published_sizes.hpp"
#include "coll/single_copy.hpp"
#include "copy/copy.hpp"
#include "protocol/handshake.hpp"
#include "protocol/validation.hpp"

namespace shmcoll {

GathervOp::GathervOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                     Datatype sendtype, void* recvbuf, std::span<const Count> recvcounts,
                     std::span<const Count> displs, Datatype recvtype, bool in_place, int root)
    : AlgorithmOp(algorithms, {Kind::kGatherv, root, 0, sendcount, sendtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)),
      in_place_(in_place) {
  const validate::Context ctx{Kind::kGatherv, team_.rank(), team_.size(), root, team_.slot_bytes()};
  validate::common(ctx, in_place);
  tree_ = team_.size() > 1 && algorithms.v_form_uses_tree(Kind::kGatherv, root);
  if (tree_) tree_gather_.emplace();
  if (!ctx.is_root()) {
    sig_.bytes = validate::bytes(ctx, "sendcount", sendcount, sendtype);
    validate::buffer(ctx, "sendbuf", sendbuf, sig_.bytes);
    validate::stream_length(ctx, sig_.bytes);
    direct_ = algorithms.single_copy_for(Kind::kGatherv, sig_.bytes);
    expose_buffer(sendbuf, sig_.bytes);
    lend(sendbuf, sig_.bytes);
    shared_candidate_ =
        !tree_ && !direct_ && may_copy_shared(algorithms, sendbuf, sig_.bytes, root);
    return;
  }
  expose_buffer(recvbuf, 0);  // blocks anywhere in it (displs)
  PlanVector<validate::Block> blocks;
  validate::blocks(ctx, "recvcounts", recvcounts, "displs", displs, recvtype, blocks);
  validate::no_overlap(ctx, as_span(blocks), "recvcounts", "displs", "written");
  std::uint64_t largest = 0;  // of the senders' blocks
  for (int r = 0; r < team_.size(); ++r) {
    const validate::Block& b = blocks[static_cast<std::size_t>(r)];
    validate::buffer(ctx, "recvbuf", recvbuf, b.bytes);
    validate::stream_length(ctx, b.bytes);
    blocks_.emplace_back(b.offset, b.bytes);
    if (r != root) largest = std::max(largest, b.bytes);
  }
  // Both rules are thresholds in a block's size, so the largest block says whether any block
  // takes the single copy or may copy straight between shared buffers. Small calls take
  // neither, and skip asking for every block, here and in plan_root: at 8 B and 4 ranks the
  // questions were about 400 of the root's instructions per call.
  single_copy_blocks_ = algorithms.single_copy_for(Kind::kGatherv, largest);
  const bool shared_copy_blocks = algorithms.shared_copy_possible(largest);
  for (int r = 0; single_copy_blocks_ && r < team_.size(); ++r) {
    const auto& [offset, bytes] = blocks_[static_cast<std::size_t>(r)];
    if (r != root && algorithms.single_copy_for(Kind::kGatherv, bytes))
      expose_direct_block(static_cast<std::byte*>(recvbuf) + offset, bytes);
  }
  // The root checks each peer against recvcounts, not against one size of its own; it
  // publishes the senders' one size where they have one, else their sizes' fingerprint
  // (published_sizes.hpp).
  sig_.bytes = published_sizes::published(!tree_, team_.options().checks == CheckLevel::kFull,
                                          as_span(blocks), root);
  sig_.type = recvtype;
  uniform_word_ = root_word::uniform_size(sig_.bytes) >= 0;
  // No sender sends anything: its word (0 for each) is all they need, and it reads nothing.
  quiet_ = !tree_ && largest == 0 && team_.options().checks == CheckLevel::kDeferred;
  for (int r = 0; r < team_.size() && !uniform_word_; ++r)
    if (r != root && blocks[static_cast<std::size_t>(r)].bytes == 0) has_must_compare_ = true;
  if (!in_place) {
    const std::uint64_t mine = validate::bytes(ctx, "sendcount", sendcount, sendtype);
    const std::uint64_t want = blocks[static_cast<std::size_t>(root)].bytes;
    if (mine != want) {
      validate::invalid(ctx,
                        "sendcount x sendtype = " + std::to_string(mine) +
                            " bytes but recvcounts[" + std::to_string(root) +
                            "] x recvtype = " + std::to_string(want) + " bytes",
                        Cause::kSizeMismatch);
    }
    validate::buffer(ctx, "sendbuf", sendbuf, mine);
    lend(sendbuf, mine);
  }
  // Senders whose blocks may copy straight between shared buffers (shared_copy.hpp) are known
  // once they have arrived (choose_shared_copies), and the plan with them. The lookup only
  // where a block could.
  bool looked = false;
  for (int r = 0; !tree_ && shared_copy_blocks && r < team_.size(); ++r) {
    const std::uint64_t bytes = blocks_[static_cast<std::size_t>(r)].second;
    if (r == root || algorithms.single_copy_for(Kind::kGatherv, bytes) ||
        !algorithms.shared_copy_for(Kind::kGatherv, bytes, root))
      continue;
    if (!looked && team_.shared_buffers().id_of(recvbuf, 0) == 0) break;  // recvbuf is private
    looked = true;
    shared_candidates_.push_back(r);
  }
  if (shared_candidates_.empty()) plan_root();
}

bool GathervOp::choose_shared_copies(sync::WaitTarget& blocked_on) {
  const std::uint64_t mine = handshake::own_shared_id(team_);
  if (shared_use_.empty()) shared_use_.assign(static_cast<std::size_t>(team_.size()), kNoTable);
  for (; next_candidate_ < shared_candidates_.size(); ++next_candidate_) {
    const int r = shared_candidates_[next_candidate_];
    segment::StatusLine& status = team_.area(r).status();
    PeerArrival arrival;
    switch (read_peer_arrival(status, op_, arrival)) {
      case PeerState::kNotArrived:
        blocked_on = awaited_arrival(status, op_, r);
        return false;
      case PeerState::kPassed:  // it streamed its block and left: it reads no table
        break;
      case PeerState::kRead:
        if (arrival.shared_id == mine) {
          // It saw this rank's allocation is its own, and waits for its table entry: straight
          // into recvbuf where its block lies in the allocation, else through its stream.
          const auto& blk = blocks_[static_cast<std::size_t>(r)];
          const bool inside =
              team_.shared_buffers().id_of(recvbuf_ + blk.first, blk.second) == mine;
          shared_use_[static_cast<std::size_t>(r)] = inside ? kStraight : kTableOnly;
        }
        break;
    }
  }
  plan_root();
  return true;
}

bool GathervOp::writes_into_recvbuf(int r) const {
  const std::uint64_t bytes = blocks_[static_cast<std::size_t>(r)].second;
  return algorithms_.single_copy_for(Kind::kGatherv, bytes) ||
         (!shared_use_.empty() && shared_use_[static_cast<std::size_t>(r)] == kStraight);
}

bool GathervOp::reads_table(int r) const {
  return writes_into_recvbuf(r) ||
         (!shared_use_.empty() && shared_use_[static_cast<std::size_t>(r)] == kTableOnly);
}

void GathervOp::plan_root() {
  // No block is written into recvbuf by its sender, nor reads a table (see the constructor).
  if (!single_copy_blocks_ && shared_use_.empty()) return;
  const int root = sig_.root;
  const auto n = static_cast<std::size_t>(team_.size());
  // The root's own memcpys (its block unless in place, the streamed blocks) lower its shares.
  std::uint64_t root_extra = in_place_ ? 0 : blocks_[static_cast<std::size_t>(root)].second;
  PlanVector<RootShares::Block> direct;
  bool any_reader = false;
  for (int r = 0; r < team_.size(); ++r) {
    if (r == root) continue;
    const auto& blk = blocks_[static_cast<std::size_t>(r)];
    if (writes_into_recvbuf(r))
      direct.push_back({r, recvbuf_ + blk.first, blk.second, 0});
    else
      root_extra += blk.second;
    any_reader = any_reader || reads_table(r);
  }
  if (!direct.empty()) {
    shares_.plan(std::move(direct), root_extra, algorithms_, Kind::kGatherv, recvbuf_,
                 !tree_ && !team_.oversubscribed());
  }
  if (!any_reader) return;
  table_.resize(n);
  for (std::size_t r = 0; r < n; ++r) table_[r] = {blocks_[r].first, blocks_[r].second};
  for (const RootShares::Block& b : shares_.blocks()) {
    GathervTableEntry& entry = table_[static_cast<std::size_t>(b.peer)];
    entry.offset |= GathervTableEntry::kDirect;
    entry.root_share = b.share;
  }
}

std::int64_t GathervOp::expected_peer_bytes(int peer) const {
  // Senders check their own size against the root's word where it is uniform (as
  // GathervSenderOp), else learn the root's verdict.
  if (team_.rank() != sig_.root)
    return peer == sig_.root ? static_cast<std::int64_t>(sig_.bytes) : -1;
  return static_cast<std::int64_t>(blocks_[static_cast<std::size_t>(peer)].second);
}

std::string GathervOp::expected_bytes_text(int peer) const {
  if (team_.rank() != sig_.root) return CollectiveOp::expected_bytes_text(peer);
  return "the root expects " + std::to_string(blocks_[static_cast<std::size_t>(peer)].second) +
         " bytes from rank " + std::to_string(peer) + " (recvcounts[" + std::to_string(peer) +
         "] x " + sig_.type.name + ")";
}

bool GathervOp::advance_root(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  if (!started_ && !shared_candidates_.empty() && !planned_) {
    if (!choose_shared_copies(blocked_on)) return false;
    planned_ = true;
  }
  if (!started_) {
    const auto& own = blocks_[static_cast<std::size_t>(me)];
    // The table first, so that single-copy senders start while the root copies its own block.
    if (!table_.empty()) {
      writer_.start(op_, Kind::kGatherv, sig_.root, table_.size() * sizeof(GathervTableEntry),
                    team_.slot_bytes());
    }
    root_side_.start(op_, Kind::kGatherv, sig_.root, team_.size(), team_.slot_bytes(), [&](int r) {
      const auto& blk = blocks_[static_cast<std::size_t>(r)];
      const bool streamed =
          blk.second > 0 && (table_.empty() || (table_[static_cast<std::size_t>(r)].offset &
                                                GathervTableEntry::kDirect) == 0);
      return std::pair(streamed ? recvbuf_ + blk.first : nullptr, streamed ? blk.second : 0);
    });
    started_ = true;
    if (!table_.empty()) {
      sync::WaitTarget unused;
      pump_table(unused);
    }
    if (!in_place_ && own.second > 0) copy::copy_bytes(recvbuf_ + own.first, sendbuf_, own.second);
  }
  if (!table_.empty() && !pump_table(blocked_on)) return false;
  // The shares first: each lets a sender's copy of the rest run on its own CPU meanwhile.
  if (!shares_.move(*this, team_, /*into_peers=*/false, blocked_on)) return false;
  if (!root_side_.pull(team_, blocked_on)) return false;
  // recvbuf is complete once every single-copy sender has written its block.
  return shares_.all_copied(algorithms_, op_, blocked_on);
}

bool GathervOp::pump_table(sync::WaitTarget& blocked_on) {
  auto fill = [&](std::byte* dst, std::uint64_t off, std::uint64_t len) {
    std::memcpy(dst, reinterpret_cast<const std::byte*>(table_.data()) + off, len);
  };
  auto readers = [&](std::uint64_t c, std::vector<int>& out) {
    const StreamShape& shape = writer_.shape();
    for (int r = 0; r < team_.size(); ++r) {
      if (r != sig_.root && reads_table(r) &&
          shape.chunk_of(static_cast<std::uint64_t>(r) * sizeof(GathervTableEntry)) == c)
        out.push_back(r);
    }
  };
  return writer_.pump(team_, fill, readers, blocked_on);
}

bool GathervOp::read_direct_entry(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  const std::uint64_t entry_at = static_cast<std::uint64_t>(me) * sizeof(GathervTableEntry);
  if (!direct_started_) {
    reader_.start({sig_.root, op_, Kind::kGatherv, sig_.root, 0, false}, team_.slot_bytes(),
                  entry_at, entry_at + sizeof entry_, reinterpret_cast<std::byte*>(&entry_));
    direct_started_ = true;
  }
  if (!reader_.pull(team_, acked_, blocked_on, /*ack_last=*/false)) return false;
  // Built only for a message: at small sizes the string would cost more than the call.
  auto where = [&] {
    return "gatherv (root " + std::to_string(sig_.root) + ", operation #" + std::to_string(op_) +
           ") on rank " + std::to_string(me);
  };
  if (entry_.root_share >= entry_.bytes && entry_.bytes == sig_.bytes &&
      (entry_.offset & GathervTableEntry::kDirect) != 0) {
    team_.fail(Status::kInternal, "corrupt gatherv table in " + where() + ": a share of " +
                                      std::to_string(entry_.root_share) + " bytes of " +
                                      std::to_string(entry_.bytes));
  }
  // A rank that may copy straight between shared buffers learns here whether it does.
  const bool direct = (entry_.offset & GathervTableEntry::kDirect) != 0;
  if (entry_.bytes != sig_.bytes || (!direct && !shared_candidate_)) {
    team_.fail(Status::kInvalidArgument,
               "type signature mismatch in " + where() + ": the root expects " +
                   std::to_string(entry_.bytes) + " bytes (its recvcounts[" + std::to_string(me) +
                   "]), this rank sends " + sig_.describe_bytes(),
               Cause::kSizeMismatch);
  }
  return true;
}

bool GathervOp::write_direct_block(sync::WaitTarget& blocked_on) {
  const std::uint64_t entry_at = static_cast<std::uint64_t>(team_.rank()) * sizeof(entry_);
  if (!direct_copied_) {
    // The root arrived before it published the table, so its address is there to read.
    PeerArrival root;
    if (read_peer_arrival(team_.area(sig_.root).status(), op_, root) != PeerState::kRead) {
      team_.fail(Status::kInternal, "the root of " + where() + " left before rank " +
                                        std::to_string(team_.rank()) + "'s copy");
    }
    // The leading root_share bytes are the root's to read (checked smaller than the block).
    const std::uint64_t skip = entry_.root_share;
    if (!direct_copy_.step(*this, team_, sig_.root,
                           root.address + (entry_.offset & ~GathervTableEntry::kDirect) + skip,
                           root.shared_id, const_cast<std::byte*>(sendbuf_) + skip,
                           entry_.bytes - skip, /*local_is_source=*/true, blocked_on))
      return false;
    team_.publish(team_.self().progress().copied_op, op_);
    direct_copied_ = true;
  }
  // sendbuf stays in use until the root has read its share.
  if (entry_.root_share > 0 && !RootShares::root_done(*this, team_, sig_.root, blocked_on))
    return false;
  defer_final_ack(
      sync::step_consumed(StreamShape{entry_at + 1, team_.slot_bytes()}.chunk_of(entry_at)));
  return true;
}

void GathervOp::plan_before_arrival() {
  // The root plans after its arrival (advance_tree): its plan is mostly kept from the last
  // call (TreeGather::start_root_from_blocks), and its arrival is what the senders' checks
  // wait for.
  if (tree_ && team_.rank() != sig_.root) {
    tree_gather_->start_member(team_, *this, true, sendbuf_, sig_.bytes, direct_);
  }
}

bool GathervOp::advance_tree(sync::WaitTarget& blocked_on) {
  const bool is_root = team_.rank() == sig_.root;
  if (!started_) {
    if (is_root) {
      // The table of direct blocks first, so that their senders start while the root copies
      // its own block.
      if (!table_.empty()) {
        writer_.start(op_, Kind::kGatherv, sig_.root, table_.size() * sizeof(GathervTableEntry),
                      team_.slot_bytes());
        sync::WaitTarget unused;
        pump_table(unused);
      }
      tree_gather_->start_root(algorithms_, *this, team_.size(), [&](int rank) {
        const auto r = static_cast<std::size_t>(rank);
        const bool direct = !table_.empty() && (table_[r].offset & GathervTableEntry::kDirect) != 0;
        return TreeGather::Block{recvbuf_ + blocks_[r].first, blocks_[r].second, direct};
      });
      const auto& own = blocks_[static_cast<std::size_t>(sig_.root)];
      if (!in_place_ && own.second > 0)
        copy::copy_bytes(recvbuf_ + own.first, sendbuf_, own.second);
    }
    started_ = true;
  }
  if (is_root) {
    if (!table_.empty() && !pump_table(blocked_on)) return false;
  } else if (direct_ && !read_direct_entry(blocked_on)) {
    // Before any stream of the tree is acknowledged: the entry's chunk is then still unread
    // when this rank's acknowledgements of its children's chunks pass it.
    return false;
  }
  if (!tree_gather_->advance(team_, *this, blocked_on)) return false;
  if (is_root) {
    if (const std::uint64_t step = tree_gather_->deferred_ack()) defer_final_ack(step);
    // recvbuf is complete once every direct sender has written its block.
    return shares_.all_copied(algorithms_, op_, blocked_on);
  }
  if (direct_ && !direct_written_) {
    if (!write_direct_block(blocked_on)) return false;
    direct_written_ = true;
  }
  return true;
}

bool GathervOp::advance_data(sync::WaitTarget& blocked_on) {
  if (tree_) return advance_tree(blocked_on);
  if (team_.rank() == sig_.root) return advance_root(blocked_on);
  if (shared_candidate_ && !path_known_) {
    if (!learn_shared_copy(blocked_on)) return false;
    path_known_ = true;
  }
  if (direct_) return read_direct_entry(blocked_on) && write_direct_block(blocked_on);
  if (!started_) {
    writer_.start(op_, Kind::kGatherv, sig_.root, sig_.bytes, team_.slot_bytes());
    started_ = true;
  }
  return pump_buffer(team_, writer_, sendbuf_, sig_.root, blocked_on);
}

bool GathervOp::learn_shared_copy(sync::WaitTarget& blocked_on) {
  if (!root_seen_) {
    // The root reads the table entry of a rank whose buffer lies in the allocation of its own
    // (recvbuf's start): the same comparison, made on both sides.
    PeerArrival root;
    segment::StatusLine& status = team_.area(sig_.root).status();
    switch (read_peer_arrival(status, op_, root)) {
      case PeerState::kNotArrived:
        blocked_on = awaited_arrival(status, op_, sig_.root);
        return false;
      case PeerState::kPassed:  // it cannot leave before this rank's block is in
        reads_table_ = false;
        break;
      case PeerState::kRead:
        // relaxed: this rank's own store, made with its arrival.
        reads_table_ = root.shared_id == handshake::own_shared_id(team_);
        break;
    }
    root_seen_ = true;
  }
  if (!reads_table_) return true;
  if (!read_direct_entry(blocked_on)) return false;
  direct_ = (entry_.offset & GathervTableEntry::kDirect) != 0;
  if (!direct_) {
    // Through the stream after all; the entry's chunk is acknowledged on leaving.
    const std::uint64_t entry_at = static_cast<std::uint64_t>(team_.rank()) * sizeof(entry_);
    defer_final_ack(
        sync::step_consumed(StreamShape{entry_at + 1, team_.slot_bytes()}.chunk_of(entry_at)));
  }
  return true;
}

}  // namespace shmcoll
