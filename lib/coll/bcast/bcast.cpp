#include "coll/bcast/bcast.hpp"

#include "copy/copy.hpp"
#include "protocol/validation.hpp"
#include "topology/hierarchy.hpp"

namespace shmcoll {

BcastOp::BcastOp(TeamAlgorithms& algorithms, void* buffer, Count count, Datatype type, int root)
    : AlgorithmOp(algorithms, {Kind::kBcast, root, 0, count, type}),
      buffer_(static_cast<std::byte*>(buffer)),
      source_(root) {
  const validate::Context ctx{Kind::kBcast, team_.rank(), team_.size(), root, team_.slot_bytes()};
  validate::common(ctx, false);
  sig_.bytes = validate::bytes(ctx, "count", count, type);
  validate::buffer(ctx, "buffer", buffer, sig_.bytes);
  validate::stream_length(ctx, sig_.bytes);
  expose_buffer(buffer, sig_.bytes);
  if (ctx.is_root()) {
    lend(buffer, sig_.bytes);
    expect_root_stores(sig_.bytes);
  }
}

bool BcastOp::advance_data(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  if (team_.size() == 1) return true;
  if (!started_) {
    const registry::Choice choice = algorithms_.choose(Kind::kBcast, sig_.bytes, sig_.root);
    const bool shared_copy_eligible = SharedCopyChoice::eligible(
        algorithms_, Kind::kBcast, choice.single_copy, sig_.bytes, sig_.root);
    if (shared_copy_eligible && !shared_choice_.decide(*this, team_, blocked_on)) return false;
    const topology::Tree* tree = choice.tree ? &team_.tree(sig_.root) : nullptr;
    if (choice.single_copy) {
      single_copy_ = true;
      exchange_.start_broadcast(sig_.bytes, team_.size(), buffer_, tree, !team_.oversubscribed());
    } else if (shared_copy_eligible && shared_choice_.shared_copy()) {
      // Every rank maps the root's buffer: each reads it flat (shared_copy.hpp).
      single_copy_ = true;
      exchange_.start_broadcast(sig_.bytes, team_.size(), buffer_, nullptr,
                                !team_.oversubscribed());
    } else if (tree != nullptr) {
      tree_ = true;
      source_ = me == sig_.root ? me : tree->parent[static_cast<std::size_t>(me)];
      children_ = &tree->children[static_cast<std::size_t>(me)];
      writer_.start(op_, Kind::kBcast, sig_.root, sig_.bytes, team_.slot_bytes());
    } else if (me == sig_.root) {
      writer_.start(op_, Kind::kBcast, sig_.root, sig_.bytes, team_.slot_bytes());
    } else {
      reader_.start({sig_.root, op_, Kind::kBcast, sig_.root, sig_.bytes, true, "count"},
                    team_.slot_bytes(), 0, sig_.bytes, buffer_);
    }
    started_ = true;
  }
  if (single_copy_) return exchange_.advance(*this, algorithms_, blocked_on);
  if (tree_) return advance_tree(blocked_on);
  if (me == sig_.root) {
    auto fill = [&](std::byte* dst, std::uint64_t offset, std::uint64_t length) {
      copy::copy_bytes(dst, buffer_ + offset, length);
    };
    auto readers = [&](std::uint64_t, std::vector<int>& out) {
      for (int r = 0; r < team_.size(); ++r) {
        if (r != me) out.push_back(r);
      }
    };
    return writer_.pump(team_, fill, readers, blocked_on);
  }
  if (!reader_.pull(team_, acked_, blocked_on, /*ack_last=*/false)) return false;
  if (!reader_.empty()) defer_final_ack(sync::step_consumed(reader_.last_chunk()));
  return true;
}

bool BcastOp::advance_tree(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  const std::uint64_t chunks = writer_.shape().chunks();
  if (me == sig_.root) received_ = chunks;  // the root holds the whole message
  auto fill = [&](std::byte* dst, std::uint64_t offset, std::uint64_t length) {
    copy::copy_bytes(dst, buffer_ + offset, length);
  };
  auto readers = [&](std::uint64_t, std::vector<int>& out) { out = *children_; };
  const StreamSource src{source_, op_, Kind::kBcast, sig_.root, sig_.bytes, true, "count"};
  for (;;) {
    // Pass on what has arrived, then take the next chunk from the parent. The parent never
    // waits for anything but this rank's acknowledgements, which follow each read at once,
    // and the children wait only for what this rank publishes: no cycle.
    sync::WaitTarget pump_wait;
    const bool caught_up =
        children_->empty() || writer_.pump(team_, fill, readers, pump_wait, received_);
    if (received_ == chunks) {
      if (caught_up && (children_->empty() || writer_.done())) return true;
      blocked_on = pump_wait;
      return false;
    }
    if (!read_chunk(team_, src, received_, 0, sig_.bytes, buffer_, blocked_on)) return false;
    // A leaf's last acknowledgement can ride on its departure, as in the flat path; a rank
    // with children acknowledges at once (its parent may need the slot while it serves them).
    if (received_ + 1 == chunks && children_->empty()) {
      defer_final_ack(sync::step_consumed(received_));
    } else {
      team_.publish_step(op_, sync::step_consumed(received_));
    }
    ++received_;
  }
}

}  // namespace shmcoll
