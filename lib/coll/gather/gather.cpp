#include "coll/gather/gather.hpp"

#include "copy/copy.hpp"
#include "protocol/validation.hpp"

namespace shmcoll {

GatherOp::GatherOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                   Datatype sendtype, void* recvbuf, Count recvcount, Datatype recvtype,
                   bool in_place, int root)
    : AlgorithmOp(algorithms, {Kind::kGather, root, 0, sendcount, sendtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)),
      in_place_(in_place) {
  const validate::Context ctx{Kind::kGather, team_.rank(), team_.size(), root, team_.slot_bytes()};
  validate::common(ctx, in_place);
  const validate::Side whole{"recvcount", recvcount, recvtype, "recvbuf", recvbuf};
  const validate::Side own{"sendcount", sendcount, sendtype, "sendbuf", sendbuf};
  sig_.bytes = validate::uniform_blocks(ctx, whole, own, in_place);
  if (ctx.is_root()) {
    // The root's receive arguments define the block size; with in_place its send ones are ignored.
    sig_.count = recvcount;
    sig_.type = recvtype;
  }
  validate::stream_length(ctx, sig_.bytes);
  expose_buffer(ctx.is_root() ? recvbuf : sendbuf,
                ctx.is_root() ? all_blocks_bytes(sig_.bytes, team_.size()) : sig_.bytes);
  if (ctx.is_root()) offer_copy_weight(algorithms.copy_balance().weight(Kind::kGather, sig_.bytes));
  if (!in_place) lend(sendbuf, sig_.bytes);
}

bool GatherOp::advance_data(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  const std::uint64_t b = sig_.bytes;
  const int n = team_.size();
  if (!started_ && n > 1) {
    const registry::Choice choice = algorithms_.choose(Kind::kGather, b, sig_.root);
    const bool shared_copy_eligible =
        SharedCopyChoice::eligible(algorithms_, Kind::kGather, choice.single_copy, b, sig_.root);
    if (shared_copy_eligible && !shared_choice_.decide(*this, team_, blocked_on)) return false;
    // Between shared buffers (shared_copy.hpp) the single copy's exchange runs flat.
    const bool shared_copy = shared_copy_eligible && shared_choice_.shared_copy();
    const bool along_tree = choice.tree && !shared_copy;
    const bool single_copy = choice.single_copy || shared_copy;
    const bool root = me == sig_.root;
    if (along_tree && !single_copy) {
      tree_gather_.emplace();
      if (root) {
        if (!in_place_) copy::copy_bytes(recvbuf_ + me * b, sendbuf_, b);
        tree_gather_->start_root(algorithms_, *this, recvbuf_, b);
      } else {
        tree_gather_->start_member(team_, *this, false, sendbuf_, b);
      }
      tree_ = started_ = true;
    } else if (single_copy) {
      // Root and peer share each block; the root's local copy of its own block shrinks its
      // share (in place too: see start_blocks). Along the tree only the root's children share
      // with it (single_copy.hpp).
      if (root && !in_place_) copy::copy_bytes(recvbuf_ + me * b, sendbuf_, b);
      exchange_.start_blocks(SingleCopyExchange::Flow::kToRoot, b, n,
                             root ? recvbuf_ : const_cast<std::byte*>(sendbuf_),
                             along_tree ? &team_.tree(sig_.root) : nullptr,
                             !team_.oversubscribed());
      single_copy_ = started_ = true;
    }
  }
  if (tree_) {
    if (!tree_gather_->advance(team_, *this, blocked_on)) return false;
    if (const std::uint64_t step = tree_gather_->deferred_ack()) defer_final_ack(step);
    return true;
  }
  if (single_copy_) return exchange_.advance(*this, algorithms_, blocked_on);
  if (!started_) {
    if (me == sig_.root) {
      if (!in_place_) copy::copy_bytes(recvbuf_ + me * b, sendbuf_, b);
      root_side_.start(op_, Kind::kGather, sig_.root, team_.size(), team_.slot_bytes(),
                       [&](int r) { return std::pair(recvbuf_ + r * b, b); });
    } else {
      writer_.start(op_, Kind::kGather, sig_.root, b, team_.slot_bytes());
    }
    started_ = true;
  }
  if (me == sig_.root) return root_side_.pull(team_, blocked_on);
  return pump_buffer(team_, writer_, sendbuf_, sig_.root, blocked_on);
}

}  // namespace shmcoll
