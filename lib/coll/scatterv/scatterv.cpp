#include "coll/scatterv/scatterv.hpp"

#include <algorithm>

#include "coll/published_sizes.hpp"
#include "coll/scatterv/scatterv_args.hpp"
#include "coll/scatterv/scatterv_inbox.hpp"
#include "coll/single_copy.hpp"
#include "copy/copy.hpp"
#include "protocol/handshake.hpp"
#include "protocol/validation.hpp"

namespace shmcoll {

ScattervOp::ScattervOp(TeamAlgorithms& algorithms, const void* sendbuf,
                       std::span<const Count> sendcounts, std::span<const Count> displs,
                       Datatype sendtype, void* recvbuf, Count recvcount, Datatype recvtype,
                       bool in_place, int root)
    : AlgorithmOp(algorithms, {Kind::kScatterv, root, 0, recvcount, recvtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)) {
  const validate::Context ctx{Kind::kScatterv, team_.rank(), team_.size(), root,
                              team_.slot_bytes()};
  validate::common(ctx, in_place);
  tree_ = team_.size() > 1 && algorithms.v_form_uses_tree(Kind::kScatterv, root);
  // The root's leaf children take their blocks as flat receivers do, from the root's records.
  if (tree_ && !ctx.is_root() && TreeScatter::takes_record(team_.tree(root), team_.rank()))
    tree_ = false;
  if (tree_) tree_scatter_.emplace();
  if (!ctx.is_root()) {
    sig_.bytes = scatterv_args::check_receiver(ctx, recvbuf, recvcount, recvtype);
    // The root may write a share of a single-copy block into it (root_shares.hpp), and looks
    // where it lies to choose a straight copy between shared buffers (shared_copy.hpp); a
    // smaller block's receiver publishes no address (which costs a lookup among shared buffers).
    if (path_of(sig_.bytes) == BlockPath::kDirect || may_copy_shared(sig_.bytes))
      expose_buffer(recvbuf, sig_.bytes);
    return;
  }
  expect_root_stores(scatterv_args::check_root(ctx, sendbuf, sendcounts, displs, sendtype, recvbuf,
                                               recvcount, recvtype, in_place, blocks_));
  const PlanVector<validate::Block>& blocks = blocks_;
  const auto me = static_cast<std::size_t>(root);
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    lend(sendbuf_ + blocks[r].offset, blocks[r].bytes);
    if (r != me && path_of(blocks[r].bytes) == BlockPath::kDirect)
      expose_direct_block(sendbuf_ + blocks[r].offset, blocks[r].bytes);
  }
  // The root checks each peer against sendcounts, not against one size of its own; it
  // publishes the receivers' one size where they have one, else their sizes' fingerprint
  // (published_sizes.hpp).
  sig_.bytes = published_sizes::published(!tree_, team_.options().checks == CheckLevel::kFull,
                                          as_span(blocks), root);
  if (!in_place && blocks[me].bytes > 0)
    copy_own_ = {sendbuf_ + blocks[me].offset, blocks[me].bytes};
  if (tree_) {
    tree_blocks_.resize(blocks.size());
    for (std::size_t r = 0; r < blocks.size(); ++r)
      tree_blocks_[r] = {
          sendbuf_ + blocks[r].offset, blocks[r].bytes,
          static_cast<int>(r) != root && path_of(blocks[r].bytes) == BlockPath::kDirect};
    expose_buffer(sendbuf, 0);  // blocks anywhere in it (displs)
    return;
  }
  expose_buffer(sendbuf, 0);
  // Blocks that may copy straight between shared buffers wait for their receivers' arrival
  // (choose_shared_copies), and the plan with them. The lookups only where a block could.
  std::uint64_t mine = 0;
  for (int r = 0; r < team_.size(); ++r) {
    const validate::Block& blk = blocks_[static_cast<std::size_t>(r)];
    if (r == root || !may_copy_shared(blk.bytes)) continue;
    if (mine == 0 && (mine = team_.shared_buffers().id_of(sendbuf, 0)) == 0) break;
    if (team_.shared_buffers().id_of(sendbuf_ + blk.offset, blk.bytes) == mine)
      shared_candidates_.push_back(r);
  }
  if (shared_candidates_.empty()) plan_flat_root();
}

bool ScattervOp::may_copy_shared(std::uint64_t bytes) {
  return path_of(bytes) == BlockPath::kStream &&
         algorithms_.shared_copy_for(Kind::kScatterv, bytes, sig_.root);
}

bool ScattervOp::choose_shared_copies(sync::WaitTarget& blocked_on) {
  const std::uint64_t mine = handshake::own_shared_id(team_);
  if (shared_direct_.empty()) shared_direct_.assign(static_cast<std::size_t>(team_.size()), 0);
  for (; next_candidate_ < shared_candidates_.size(); ++next_candidate_) {
    const int r = shared_candidates_[next_candidate_];
    segment::StatusLine& status = team_.area(r).status();
    PeerArrival arrival;
    switch (read_peer_arrival(status, op_, arrival)) {
      case PeerState::kNotArrived:
        blocked_on = awaited_arrival(status, op_, r);
        return false;
      case PeerState::kPassed:  // cannot be: it waits for its record
        break;
      case PeerState::kRead:
        // Its buffer lies in the allocation of this block (so it maps it, and this rank maps
        // its buffer): the receiver copies straight, as from the single-copy threshold on.
        shared_direct_[static_cast<std::size_t>(r)] = arrival.shared_id == mine ? 1 : 0;
        break;
    }
  }
  plan_flat_root();
  return true;
}

bool ScattervOp::reads_from_sendbuf(int r) const {
  const validate::Block& blk = blocks_[static_cast<std::size_t>(r)];
  return path_of(blk.bytes) == BlockPath::kDirect ||
         (!shared_direct_.empty() && shared_direct_[static_cast<std::size_t>(r)] != 0);
}

void ScattervOp::plan_flat_root() {
  const int root = sig_.root;
  // Small blocks travel in their receivers' records, blocks that receivers read from sendbuf
  // (single copy, or straight between shared buffers) do not either; the others go through
  // the stream.
  plan_.plan(root, team_.size(), [&](int r) {
    const validate::Block& blk = blocks_[static_cast<std::size_t>(r)];
    if (path_of(blk.bytes) == BlockPath::kInline || reads_from_sendbuf(r))
      return std::pair<const std::byte*, std::uint64_t>(nullptr, 0);
    return std::pair(sendbuf_ + blk.offset, blk.bytes);
  });
  PlanVector<RootShares::Block> direct;
  for (int r = 0; r < team_.size(); ++r) {
    const validate::Block& blk = blocks_[static_cast<std::size_t>(r)];
    if (r != root && reads_from_sendbuf(r))
      direct.push_back({r, const_cast<std::byte*>(sendbuf_ + blk.offset), blk.bytes, 0});
  }
  // The root's own memcpys (its block, the streamed blocks) lower its shares.
  if (!direct.empty()) {
    shares_.plan(std::move(direct), copy_own_.second + plan_.bytes(), algorithms_, Kind::kScatterv,
                 sendbuf_, !team_.oversubscribed());
  }
}

ScattervOp::BlockPath ScattervOp::path_of(std::uint64_t bytes) const {
  if (bytes <= segment::InboxRecord::kInlineBytes) return BlockPath::kInline;
  return algorithms_.single_copy_for(Kind::kScatterv, bytes) ? BlockPath::kDirect
                                                             : BlockPath::kStream;
}

std::int64_t ScattervOp::expected_peer_bytes(int peer) const {
  // A receiver checks the root through its record, and its size against the root's word where
  // that gives one (as InlineScattervOp's); the others against the root's one size.
  if (team_.rank() != sig_.root)
    return peer == sig_.root ? static_cast<std::int64_t>(sig_.bytes) : sizes_.uniform;
  return static_cast<std::int64_t>(blocks_[static_cast<std::size_t>(peer)].bytes);
}

std::string ScattervOp::expected_bytes_text(int peer) const {
  if (team_.rank() != sig_.root)
    return scatterv_args::root_sends_text(static_cast<std::uint64_t>(sizes_.uniform), peer,
                                          "sendtype");
  return scatterv_args::root_sends_text(blocks_[static_cast<std::size_t>(peer)].bytes, peer,
                                        sig_.type.name);
}

bool ScattervOp::advance_root(sync::WaitTarget& blocked_on) {
  auto fill = [&](std::byte* dst, std::uint64_t off, std::uint64_t len) {
    plan_.fill(dst, off, len);
  };
  auto readers = [&](std::uint64_t c, std::vector<int>& out) {
    plan_.readers(writer_.shape(), c, out);
  };
  if (stage_ == Stage::kStart) {
    if (!shared_candidates_.empty() && !planned_) {
      if (!choose_shared_copies(blocked_on)) return false;
      planned_ = true;
    }
    if (!post_records(blocked_on)) return false;
    writer_.start(op_, Kind::kScatterv, sig_.root, plan_.bytes(), team_.slot_bytes());
    stage_ = Stage::kBlock;
    // Publish what can go out at once before copying the root's own block, so that the
    // stream's readers start in parallel with that copy.
    sync::WaitTarget later;
    writer_.pump(team_, fill, readers, later);
    if (copy_own_.second > 0) copy::copy_bytes(recvbuf_, copy_own_.first, copy_own_.second);
  }
  // The shares first: each lets a receiver's copy of the rest run on its own CPU meanwhile.
  if (!shares_.move(*this, team_, /*into_peers=*/true, blocked_on)) return false;
  if (!writer_.pump(team_, fill, readers, blocked_on)) return false;
  // sendbuf must stay valid until every single-copy reader has its block.
  return shares_.all_copied(algorithms_, op_, blocked_on);
}

bool ScattervOp::post_records(sync::WaitTarget& blocked_on) {
  // Flat: every other rank; along the tree: the root's leaf children.
  const topology::Tree* tree = tree_ ? &team_.tree(sig_.root) : nullptr;
  for (; next_record_ < team_.size(); ++next_record_) {
    const int r = next_record_;
    if (r == sig_.root || (tree != nullptr && !TreeScatter::takes_record(*tree, r))) continue;
    if (!scatterv_inbox::record_free(team_, r, op_, blocked_on)) return false;
    const validate::Block& blk = blocks_[static_cast<std::size_t>(r)];
    const bool direct =
        tree == nullptr ? reads_from_sendbuf(r) : path_of(blk.bytes) == BlockPath::kDirect;
    const std::uint64_t where = direct            ? scatterv_inbox::kDirect | blk.offset
                                : tree != nullptr ? tree_scatter_->stream_offset_of(r)
                                                  : plan_.offset_of(r);
    scatterv_inbox::post(team_, r, op_, sig_.packed(), blk.bytes,
                         blk.bytes > 0 ? sendbuf_ + blk.offset : nullptr, where,
                         direct ? share_of(r) : 0);
  }
  return true;
}

std::uint64_t ScattervOp::share_of(int r) const {
  const std::span<const RootShares::Block> blocks = as_span(shares_.blocks());
  const auto at =
      std::lower_bound(blocks.begin(), blocks.end(), r,
                       [](const RootShares::Block& b, int rank) { return b.peer < rank; });
  return at != blocks.end() && at->peer == r ? at->share : 0;
}

bool ScattervOp::copy_direct_block(sync::WaitTarget& blocked_on) {
  if (stage_ == Stage::kDirect) {
    // The root arrived before it posted the records, so its address is there to read.
    PeerArrival root;
    segment::StatusLine& status = team_.area(sig_.root).status();
    if (read_peer_arrival(status, op_, root) != PeerState::kRead) {
      blocked_on = awaited_arrival(status, op_, sig_.root);
      return false;
    }
    // The leading root_share bytes are the root's to write (classify checked it is smaller).
    const std::uint64_t skip = record_.root_share;
    if (!direct_copy_.step(*this, team_, sig_.root,
                           root.address + (record_.where & ~scatterv_inbox::kDirect) + skip,
                           root.shared_id, recvbuf_ + skip, record_.bytes - skip,
                           /*local_is_source=*/false, blocked_on))
      return false;
    team_.publish(team_.self().progress().copied_op, op_);
    stage_ = Stage::kRootShare;
  }
  // recvbuf is complete once the root's share has landed too.
  return record_.root_share == 0 || RootShares::root_done(*this, team_, sig_.root, blocked_on);
}

void ScattervOp::plan_before_arrival() {
  if (!tree_) return;
  if (team_.rank() == sig_.root) {
    tree_scatter_->start_root(algorithms_, *this, as_span(tree_blocks_), sendbuf_);
  } else {
    tree_scatter_->start_member(team_, *this, true, sig_.bytes, recvbuf_);
  }
}

bool ScattervOp::advance_tree(sync::WaitTarget& blocked_on) {
  if (stage_ == Stage::kStart) {
    if (team_.rank() == sig_.root) {
      if (!post_records(blocked_on)) return false;
      if (copy_own_.second > 0) {
        // Publish what can go out at once before copying the root's own block, so that the
        // children (and direct copies below) start in parallel with that copy.
        sync::WaitTarget later;
        tree_scatter_->advance(team_, *this, later);
        copy::copy_bytes(recvbuf_, copy_own_.first, copy_own_.second);
      }
    }
    stage_ = Stage::kBlock;
  }
  if (!tree_scatter_->advance(team_, *this, blocked_on)) return false;
  if (const std::uint64_t step = tree_scatter_->deferred_ack()) defer_final_ack(step);
  return true;
}

bool ScattervOp::advance_data(sync::WaitTarget& blocked_on) {
  if (tree_) return advance_tree(blocked_on);
  if (team_.rank() == sig_.root) return advance_root(blocked_on);
  if (!received_) {
    if (!receive(blocked_on)) return false;
    received_ = true;
  }
  // What the root published of the sizes, which spares the wait for its verdict. The root
  // arrived before it posted the record; a fingerprint waits for every peer's arrival, which
  // the agree stage under full checks waits for anyway.
  return published_sizes::learn(*this, team_, sizes_, blocked_on);
}

bool ScattervOp::receive(sync::WaitTarget& blocked_on) {
  if (stage_ == Stage::kStart) {
    const sync::WaitTarget record_posted = scatterv_inbox::awaited(team_, op_, sig_.root);
    if (!sync::reached(record_posted)) {
      blocked_on = record_posted;
      return false;
    }
    if (!take_record_and_go_on()) return true;  // the block was in the record
  }
  if (stage_ == Stage::kDirect || stage_ == Stage::kRootShare) return copy_direct_block(blocked_on);
  if (!reader_.pull(team_, acked_, blocked_on, /*ack_last=*/false)) return false;
  defer_final_ack(sync::step_consumed(reader_.last_chunk()));
  return true;
}

bool ScattervOp::take_record_and_go_on() {
  record_ = scatterv_inbox::read(team_, op_);
  switch (const scatterv_inbox::RecordUse use =
              scatterv_inbox::classify(record_, sig_.packed(), sig_.bytes)) {
    case scatterv_inbox::RecordUse::kOtherCall:
    case scatterv_inbox::RecordUse::kMismatch:
    case scatterv_inbox::RecordUse::kCorrupt:
      scatterv_inbox::fail_unusable(*this, team_, use, record_);
    case scatterv_inbox::RecordUse::kInline:
      scatterv_inbox::copy_inline(team_, op_, record_.bytes, recvbuf_);
      return false;
    case scatterv_inbox::RecordUse::kDirect:
      stage_ = Stage::kDirect;
      return true;
    case scatterv_inbox::RecordUse::kInStream:
      break;
  }
  reader_.start({sig_.root, op_, Kind::kScatterv, sig_.root, 0, false}, team_.slot_bytes(),
                record_.where, record_.where + record_.bytes, recvbuf_);
  stage_ = Stage::kBlock;
  return true;
}

}  // namespace shmcoll
