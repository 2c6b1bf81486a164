#include "coll/scatter/scatter.hpp"

#include "copy/copy.hpp"
#include "protocol/validation.hpp"

namespace shmcoll {

ScatterOp::ScatterOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                     Datatype sendtype, void* recvbuf, Count recvcount, Datatype recvtype,
                     bool in_place, int root)
    : AlgorithmOp(algorithms, {Kind::kScatter, root, 0, recvcount, recvtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)),
      in_place_(in_place) {
  const validate::Context ctx{Kind::kScatter, team_.rank(), team_.size(), root, team_.slot_bytes()};
  validate::common(ctx, in_place);
  const validate::Side whole{"sendcount", sendcount, sendtype, "sendbuf", sendbuf};
  const validate::Side own{"recvcount", recvcount, recvtype, "recvbuf", recvbuf};
  sig_.bytes = validate::uniform_blocks(ctx, whole, own, in_place);
  if (ctx.is_root()) {
    // The root's send arguments define the block size; with in_place its receive ones are ignored.
    sig_.count = sendcount;
    sig_.type = sendtype;
    validate::stream_length(ctx, sig_.bytes * static_cast<std::uint64_t>(team_.size()));
    lend(sendbuf, sig_.bytes * static_cast<std::uint64_t>(team_.size()));
  }
  expose_buffer(ctx.is_root() ? sendbuf : recvbuf,
                ctx.is_root() ? all_blocks_bytes(sig_.bytes, team_.size()) : sig_.bytes);
  if (ctx.is_root()) {
    offer_copy_weight(algorithms.copy_balance().weight(Kind::kScatter, sig_.bytes));
    expect_root_stores(sig_.bytes * static_cast<std::uint64_t>(team_.size() - 1));
  }
}

bool ScatterOp::advance_data(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  const int n = team_.size();
  const std::uint64_t b = sig_.bytes;
  if (!started_ && n > 1) {
    const registry::Choice choice = algorithms_.choose(Kind::kScatter, b, sig_.root);
    const bool shared_copy_eligible =
        SharedCopyChoice::eligible(algorithms_, Kind::kScatter, choice.single_copy, b, sig_.root);
    if (shared_copy_eligible && !shared_choice_.decide(*this, team_, blocked_on)) return false;
    // Between shared buffers (shared_copy.hpp) the single copy's exchange runs flat.
    const bool shared_copy = shared_copy_eligible && shared_choice_.shared_copy();
    const bool along_tree = choice.tree && !shared_copy;
    const bool single_copy = choice.single_copy || shared_copy;
    const bool root = me == sig_.root;
    if (along_tree && !single_copy) {
      TreeScatter::LeafRange leaf;
      if (root) {
        if (!in_place_) copy::copy_bytes(recvbuf_, sendbuf_ + me * b, b);
        tree_scatter_.emplace();
        tree_scatter_->start_root(algorithms_, *this, sendbuf_, b);
        tree_ = true;
      } else if (TreeScatter::uniform_leaf_range(algorithms_, sig_.root, b, leaf)) {
        // Most ranks of a tree: read as a flat receiver does, from the parent (below).
        reader_.start(
            {leaf.parent, op_, Kind::kScatter, sig_.root, leaf.stream_bytes, true, "recvcount"},
            team_.slot_bytes(), leaf.begin, leaf.begin + b, recvbuf_);
      } else {
        tree_scatter_.emplace();
        tree_scatter_->start_member(team_, *this, false, b, recvbuf_);
        tree_ = true;
      }
      started_ = true;
    } else if (single_copy) {
      // Root and peer share each block; the root's local copy of its own block shrinks its
      // share (in place too: see start_blocks). Along the tree only the root's children share
      // with it (single_copy.hpp).
      if (root && !in_place_) copy::copy_bytes(recvbuf_, sendbuf_ + me * b, b);
      exchange_.start_blocks(SingleCopyExchange::Flow::kFromRoot, b, n,
                             root ? const_cast<std::byte*>(sendbuf_) : recvbuf_,
                             along_tree ? &team_.tree(sig_.root) : nullptr,
                             !team_.oversubscribed());
      single_copy_ = started_ = true;
    }
  }
  if (tree_) {
    if (!tree_scatter_->advance(team_, *this, blocked_on)) return false;
    if (const std::uint64_t step = tree_scatter_->deferred_ack()) defer_final_ack(step);
    return true;
  }
  if (single_copy_) return exchange_.advance(*this, algorithms_, blocked_on);
  if (me == sig_.root) {
    if (!started_) {
      if (!in_place_) copy::copy_bytes(recvbuf_, sendbuf_ + me * b, b);
      plan_.plan_uniform(sig_.root, n, sendbuf_, b);
      writer_.start(op_, Kind::kScatter, sig_.root, plan_.bytes(), team_.slot_bytes());
      started_ = true;
    }
    auto fill = [&](std::byte* dst, std::uint64_t off, std::uint64_t len) {
      plan_.fill(dst, off, len);
    };
    auto readers = [&](std::uint64_t c, std::vector<int>& out) {
      plan_.readers(writer_.shape(), c, out);
    };
    return writer_.pump(team_, fill, readers, blocked_on);
  }
  if (!started_) {
    // The root's uniform plan, computed from the common block size.
    const auto index = static_cast<std::uint64_t>(me < sig_.root ? me : me - 1);
    const std::uint64_t offset = index * uniform_stride(b);
    const std::uint64_t end = uniform_stream_bytes(static_cast<std::uint64_t>(n - 1), b);
    reader_.start(
        {sig_.root, op_, Kind::kScatter, sig_.root, end, true, "(team size - 1) x recvcount"},
        team_.slot_bytes(), offset, offset + b, recvbuf_);
    started_ = true;
  }
  if (!reader_.pull(team_, acked_, blocked_on, /*ack_last=*/false)) return false;
  if (!reader_.empty()) defer_final_ack(sync::step_consumed(reader_.last_chunk()));
  return true;
}

}  // namespace shmcoll
