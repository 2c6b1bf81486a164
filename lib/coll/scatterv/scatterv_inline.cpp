#include "coll/scatterv/scatterv_inline.hpp"

#include <cstring>
#include <string>

#include "coll/scatter/tree_scatter.hpp"
#include "coll/scatterv/scatterv_args.hpp"
#include "coll/scatterv/scatterv_inbox.hpp"

namespace shmcoll {

bool InlineScattervOp::fits(TeamAlgorithms& algorithms, std::span<const Count> sendcounts,
                            Datatype sendtype, Count recvcount, Datatype recvtype, int root) {
  TeamImpl& team = algorithms.team();
  if (team.size() < 2) return false;
  if (root < 0 || root >= team.size()) return false;
  constexpr auto kMax = static_cast<std::uint64_t>(scatterv_inbox::InboxRecord::kInlineBytes);
  // Counts are compared as unsigned: a negative one is out of range too.
  if (team.rank() != root) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(recvcount), recvtype.size, &bytes) ||
        bytes > kMax || recvtype.size == 0)
      return false;
    // The root's leaf children take records from it along the tree as well.
    return !algorithms.v_form_uses_tree(Kind::kScatterv, root) ||
           TreeScatter::takes_record(team.tree(root), team.rank());
  }
  if (sendtype.size == 0 || sendcounts.size() != static_cast<std::size_t>(team.size()))
    return false;
  for (const Count c : sendcounts) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(c), sendtype.size, &bytes) ||
        bytes > kMax)
      return false;
  }
  return !algorithms.v_form_uses_tree(Kind::kScatterv, root);
}

InlineScattervOp::InlineScattervOp(TeamAlgorithms& algorithms, const void* sendbuf,
                                   std::span<const Count> sendcounts, std::span<const Count> displs,
                                   Datatype sendtype, void* recvbuf, Count recvcount,
                                   Datatype recvtype, bool in_place, int root)
    : AlgorithmOp(algorithms, {Kind::kScatterv, root, 0, recvcount, recvtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)),
      in_place_(in_place) {
  const validate::Context ctx{Kind::kScatterv, team_.rank(), team_.size(), root,
                              team_.slot_bytes()};
  validate::common(ctx, in_place);
  const bool deferred = team_.options().checks == CheckLevel::kDeferred;
  if (!ctx.is_root()) {
    sig_.bytes = scatterv_args::check_receiver(ctx, recvbuf, recvcount, recvtype);
    return;
  }
  const std::uint64_t total = scatterv_args::check_root(
      ctx, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, in_place, blocks_);
  expect_root_stores(total);
  for (const validate::Block& blk : blocks_) lend(sendbuf_ + blk.offset, blk.bytes);
  // As ScattervOp's root: it checks each peer against sendcounts, and publishes the receivers'
  // one size where they have one (this path is flat at the root).
  sig_.bytes = published_sizes::published(true, !deferred, as_span(blocks_), root);
  // No block for another rank: its word (0 for each) is all a receiver needs, so it posts no
  // records, and its own block, if any, is a copy of its own.
  quiet_ = deferred && total == 0;
}

std::int64_t InlineScattervOp::expected_peer_bytes(int peer) const {
  // A receiver checks the root through its record, and its size against the root's word where
  // that gives one (where its record does not come); the others against the root's one size.
  if (team_.rank() != sig_.root) {
    if (peer == sig_.root) return static_cast<std::int64_t>(sig_.bytes);
    return sizes_.uniform;
  }
  return static_cast<std::int64_t>(blocks_[static_cast<std::size_t>(peer)].bytes);
}

std::string InlineScattervOp::expected_bytes_text(int peer) const {
  if (team_.rank() != sig_.root && peer == sig_.root)
    return CollectiveOp::expected_bytes_text(peer);
  if (team_.rank() != sig_.root)
    return scatterv_args::root_sends_text(static_cast<std::uint64_t>(sizes_.uniform), peer,
                                          "sendtype");
  return scatterv_args::root_sends_text(blocks_[static_cast<std::size_t>(peer)].bytes, peer,
                                        sig_.type.name);
}

bool InlineScattervOp::post_records(sync::WaitTarget& blocked_on) {
  for (; next_record_ < team_.size(); ++next_record_) {
    const int r = next_record_;
    if (r == sig_.root) continue;
    if (!scatterv_inbox::record_free(team_, r, op_, blocked_on)) return false;
    const validate::Block& blk = blocks_[static_cast<std::size_t>(r)];
    scatterv_inbox::post(team_, r, op_, sig_.packed(), blk.bytes, sendbuf_ + blk.offset, 0, 0);
  }
  return true;
}

bool InlineScattervOp::advance_data(sync::WaitTarget& blocked_on) {
  if (team_.rank() == sig_.root) {
    if (!quiet_ && !post_records(blocked_on)) return false;
    const validate::Block& own = blocks_[static_cast<std::size_t>(sig_.root)];
    if (!in_place_ && own.bytes > 0) std::memcpy(recvbuf_, sendbuf_ + own.offset, own.bytes);
    return true;
  }
  if (!received_) {
    const sync::WaitTarget record_posted = scatterv_inbox::awaited(team_, op_, sig_.root);
    if (!sync::reached(record_posted)) {
      blocked_on = record_posted;
      return false;
    }
    const scatterv_inbox::Record record = scatterv_inbox::read(team_, op_);
    const scatterv_inbox::RecordUse use =
        scatterv_inbox::classify(record, sig_.packed(), sig_.bytes);
    // The root of a matching call posts this rank's block inline: it fits, as this rank's does.
    if (use != scatterv_inbox::RecordUse::kInline)
      scatterv_inbox::fail_unusable(*this, team_, use, record);
    scatterv_inbox::copy_inline(team_, op_, record.bytes, recvbuf_);
    received_ = true;
  }
  // What the root published of the sizes, which spares the wait for its verdict. The root
  // arrived before it posted the record; a fingerprint waits for every peer's arrival, which
  // the agree stage under full checks waits for anyway.
  return published_sizes::learn(*this, team_, sizes_, blocked_on);
}

}  // namespace shmcoll
