#include "coll/scatter.hpp"
#include "coll/single_copy.hpp"
#include "copy/copy.hpp"
#include "core/validation.hpp"

namespace shmcoll {

ScattervOp::ScattervOp(TeamImpl& team, const void* sendbuf, std::span<const Count> sendcounts,
                       std::span<const Count> displs, Datatype sendtype, void* recvbuf,
                       Count recvcount, Datatype recvtype, bool in_place, int root)
    : CollectiveOp(team, {Kind::kScatterv, root, 0, recvcount, recvtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)) {
  const validate::Context ctx{Kind::kScatterv, team.rank(), team.size(), root, team.slot_bytes()};
  validate::common(ctx, in_place);
  tree_ = team.size() > 1 && team.uses_tree(Kind::kScatterv, 0);
  if (tree_) tree_scatter_.emplace();
  if (!ctx.is_root()) {
    sig_.bytes = validate::bytes(ctx, "recvcount", recvcount, recvtype);
    validate::buffer(ctx, "recvbuf", recvbuf, sig_.bytes);
    return;
  }
  const PlanVector<validate::Block> blocks =
      validate::blocks(ctx, "sendcounts", sendcounts, "displs", displs, sendtype);
  if (team.options().checks == CheckLevel::kFull)
    validate::no_overlap(ctx, as_span(blocks), "sendcounts", "displs", "read");
  std::uint64_t total = 0;
  send_bytes_.resize(blocks.size());
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    send_bytes_[r] = blocks[r].bytes;
    validate::buffer(ctx, "sendbuf", sendbuf, blocks[r].bytes);
    lend(sendbuf_ + blocks[r].offset, blocks[r].bytes);
    if (static_cast<int>(r) != root) total += blocks[r].bytes;
  }
  validate::stream_length(ctx, total + 16 * blocks.size() + 64 * blocks.size());
  const auto me = static_cast<std::size_t>(root);
  sig_.bytes = 0;  // the root checks each peer against sendcounts instead
  if (!in_place) {
    const std::uint64_t mine = validate::bytes(ctx, "recvcount", recvcount, recvtype);
    if (mine != blocks[me].bytes) {
      validate::invalid(ctx, "recvcount x recvtype = " + std::to_string(mine) +
                                 " bytes but sendcounts[" + std::to_string(root) +
                                 "] x sendtype = " + std::to_string(blocks[me].bytes) + " bytes");
    }
    validate::buffer(ctx, "recvbuf", recvbuf, mine);
  }
  if (!in_place && blocks[me].bytes > 0)
    copy_own_ = {sendbuf_ + blocks[me].offset, blocks[me].bytes};
  if (tree_) {
    tree_blocks_.resize(blocks.size());
    for (std::size_t r = 0; r < blocks.size(); ++r)
      tree_blocks_[r] = {sendbuf_ + blocks[r].offset, blocks[r].bytes,
                         static_cast<int>(r) != root && team.single_copy_for(blocks[r].bytes)};
    expose(sendbuf);
    return;
  }
  // Keep the block offsets for the plan (the spans may not outlive this call in a request).
  // Blocks from the single-copy threshold on stay out of the stream: their ranks read them
  // from sendbuf themselves.
  auto direct = [&](int r) {
    return r != root && team.single_copy_for(blocks[static_cast<std::size_t>(r)].bytes);
  };
  auto block_of = [&](int r) {
    const validate::Block& blk = blocks[static_cast<std::size_t>(r)];
    if (direct(r)) return std::pair<const std::byte*, std::uint64_t>(nullptr, 0);
    return std::pair(blk.bytes > 0 ? sendbuf_ + blk.offset : nullptr, blk.bytes);
  };
  plan_.plan(root, team.size(), true, block_of);
  for (int r = 0; r < team.size(); ++r) {
    if (!direct(r)) continue;
    plan_.mark_direct(r, blocks[static_cast<std::size_t>(r)].offset,
                      blocks[static_cast<std::size_t>(r)].bytes);
    direct_peers_.push_back(r);
  }
  expose(sendbuf);
}

std::int64_t ScattervOp::expected_peer_bytes(int peer) const {
  if (team_.rank() != sig_.root) return -1;  // receivers check their table entry instead
  return static_cast<std::int64_t>(send_bytes_[static_cast<std::size_t>(peer)]);
}

std::string ScattervOp::expected_bytes_text(int peer) const {
  return "the root sends " + std::to_string(send_bytes_[static_cast<std::size_t>(peer)]) +
         " bytes to rank " + std::to_string(peer) + " (sendcounts[" + std::to_string(peer) +
         "] x " + sig_.type.name + ")";
}

bool ScattervOp::advance_root(sync::WaitTarget& blocked_on) {
  auto fill = [&](std::byte* dst, std::uint64_t off, std::uint64_t len) {
    plan_.fill(dst, off, len);
  };
  auto readers = [&](std::uint64_t c, std::vector<int>& out) {
    plan_.readers(writer_.shape(), c, out);
  };
  if (stage_ == Stage::kStart) {
    writer_.start(op_, Kind::kScatterv, sig_.root, plan_.bytes(), team_.slot_bytes());
    stage_ = Stage::kBlock;
    // Publish what can go out at once (the table first) before copying the root's own block,
    // so that single-copy readers start in parallel with that copy.
    sync::WaitTarget later;
    writer_.pump(team_, fill, readers, later);
    if (copy_own_.second > 0) copy::copy_bytes(recvbuf_, copy_own_.first, copy_own_.second);
  }
  if (!writer_.pump(team_, fill, readers, blocked_on)) return false;
  // sendbuf must stay valid until every single-copy reader has its block.
  return SingleCopyExchange::all_copied(team_, op_, as_span(direct_peers_), next_direct_,
                                        blocked_on);
}

bool ScattervOp::copy_direct_block(sync::WaitTarget& blocked_on) {
  // The root arrived before it published the table, so its address is there to read.
  PeerArrival root;
  segment::StatusLine& status = team_.area(sig_.root).status();
  if (read_peer_arrival(status, op_, root) != PeerState::kRead) {
    blocked_on = {&status.tag, sync::make_tag(op_, sync::kStepArrived), sig_.root};
    return false;
  }
  if (!direct_copy_.step(
          *this, team_, sig_.root, root.address + (entry_.offset & ~ScatterTableEntry::kDirect),
          root.shared_id, recvbuf_, entry_.bytes, /*local_is_source=*/false, blocked_on))
    return false;
  team_.publish(team_.self().progress().copied_op, op_);
  return true;
}

void ScattervOp::plan_before_arrival() {
  if (!tree_) return;
  if (team_.rank() == sig_.root) {
    tree_scatter_->start_root(team_, *this, as_span(tree_blocks_), sendbuf_);
  } else {
    tree_scatter_->start_member(team_, *this, true, sig_.bytes, recvbuf_);
  }
}

bool ScattervOp::advance_tree(sync::WaitTarget& blocked_on) {
  if (stage_ == Stage::kStart) {
    if (team_.rank() == sig_.root) {
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
  const int me = team_.rank();
  const std::uint64_t slot = team_.slot_bytes();
  if (me == sig_.root) return advance_root(blocked_on);
  const std::uint64_t entry_at = static_cast<std::uint64_t>(me) * sizeof(ScatterTableEntry);
  if (stage_ == Stage::kStart) {
    // The stream's length is unknown here; read_chunk only checks that the entry lies inside it.
    reader_.start({sig_.root, op_, Kind::kScatterv, sig_.root, 0, false}, slot, entry_at,
                  entry_at + sizeof entry_, reinterpret_cast<std::byte*>(&entry_));
    stage_ = Stage::kEntry;
  }
  if (stage_ == Stage::kEntry) {
    // Do not acknowledge the entry's chunk yet: this rank's block may start in it.
    if (!reader_.pull(team_, acked_, blocked_on, /*ack_last=*/false)) return false;
    // Built only for a message: at small sizes the string would cost more than the call.
    auto where = [&] {
      return "scatterv (root " + std::to_string(sig_.root) + ", operation #" + std::to_string(op_) +
             ") on rank " + std::to_string(me);
    };
    switch (classify_entry(entry_, sig_.bytes, entry_at)) {
      case EntryUse::kMismatch:
        team_.fail(Status::kInvalidArgument,
                   "type signature mismatch in " + where() + ": the root sends " +
                       std::to_string(entry_.bytes) + " bytes (its sendcounts[" +
                       std::to_string(me) + "]), this rank receives " + sig_.describe_bytes());
      case EntryUse::kCorrupt:
        team_.fail(Status::kInternal, "corrupt scatterv table in " + where() + ": offset " +
                                          std::to_string(entry_.offset));
      case EntryUse::kDirect:
        stage_ = Stage::kDirect;
        break;
      case EntryUse::kInStream:
        break;
    }
    if (stage_ != Stage::kDirect) {
      reader_.start({sig_.root, op_, Kind::kScatterv, sig_.root, 0, false}, slot, entry_.offset,
                    entry_.offset + entry_.bytes, recvbuf_);
      stage_ = Stage::kBlock;
    }
  }
  if (stage_ == Stage::kDirect) {
    if (!copy_direct_block(blocked_on)) return false;
    defer_final_ack(sync::step_consumed(StreamShape{entry_at + 1, slot}.chunk_of(entry_at)));
    return true;
  }
  if (!reader_.pull(team_, acked_, blocked_on, /*ack_last=*/false)) return false;
  // The last chunk read holds the block's end, or the entry itself for a zero-byte block.
  const StreamShape shape{entry_.offset + entry_.bytes, slot};
  defer_final_ack(
      sync::step_consumed(reader_.empty() ? shape.chunk_of(entry_at) : reader_.last_chunk()));
  return true;
}

}  // namespace shmcoll
