#include "coll/gather.hpp"
#include "copy/copy.hpp"
#include "core/validation.hpp"

namespace shmcoll {

GathervOp::GathervOp(TeamImpl& team, const void* sendbuf, Count sendcount, Datatype sendtype,
                     void* recvbuf, std::span<const Count> recvcounts,
                     std::span<const Count> displs, Datatype recvtype, bool in_place, int root)
    : CollectiveOp(team, {Kind::kGatherv, root, 0, sendcount, sendtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)),
      in_place_(in_place) {
  const validate::Context ctx{Kind::kGatherv, team.rank(), team.size(), root, team.slot_bytes()};
  validate::common(ctx, in_place);
  if (!ctx.is_root()) {
    sig_.bytes = validate::bytes(ctx, "sendcount", sendcount, sendtype);
    validate::buffer(ctx, "sendbuf", sendbuf, sig_.bytes);
    validate::stream_length(ctx, sig_.bytes);
    return;
  }
  const std::vector<validate::Block> blocks =
      validate::blocks(ctx, "recvcounts", recvcounts, "displs", displs, recvtype);
  if (team.options().checks == CheckLevel::kFull)
    validate::no_overlap(ctx, blocks, "recvcounts", "displs", "written");
  for (const validate::Block& b : blocks) {
    validate::buffer(ctx, "recvbuf", recvbuf, b.bytes);
    validate::stream_length(ctx, b.bytes);
    blocks_.emplace_back(b.offset, b.bytes);
  }
  sig_.bytes = 0;  // the root checks each peer against recvcounts instead
  sig_.type = recvtype;
  if (!in_place) {
    const std::uint64_t mine = validate::bytes(ctx, "sendcount", sendcount, sendtype);
    const std::uint64_t want = blocks[static_cast<std::size_t>(root)].bytes;
    if (mine != want) {
      validate::invalid(ctx, "sendcount x sendtype = " + std::to_string(mine) +
                                 " bytes but recvcounts[" + std::to_string(root) +
                                 "] x recvtype = " + std::to_string(want) + " bytes");
    }
    validate::buffer(ctx, "sendbuf", sendbuf, mine);
  }
}

std::int64_t GathervOp::expected_peer_bytes(int peer) const {
  if (team_.rank() != sig_.root) return -1;  // senders learn the root's verdict instead
  return static_cast<std::int64_t>(blocks_[static_cast<std::size_t>(peer)].second);
}

std::string GathervOp::expected_bytes_text(int peer) const {
  return "the root expects " + std::to_string(blocks_[static_cast<std::size_t>(peer)].second) +
         " bytes from rank " + std::to_string(peer) + " (recvcounts[" + std::to_string(peer) +
         "] x " + sig_.type.name + ")";
}

bool GathervOp::advance_data(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  if (!started_) {
    if (me == sig_.root) {
      const auto& own = blocks_[static_cast<std::size_t>(me)];
      if (!in_place_ && own.second > 0)
        copy::copy_bytes(recvbuf_ + own.first, sendbuf_, own.second);
      root_side_.start(
          op_, Kind::kGatherv, sig_.root, team_.size(), team_.slot_bytes(), [&](int r) {
            const auto& blk = blocks_[static_cast<std::size_t>(r)];
            return std::pair(blk.second > 0 ? recvbuf_ + blk.first : nullptr, blk.second);
          });
    } else {
      writer_.start(op_, Kind::kGatherv, sig_.root, sig_.bytes, team_.slot_bytes());
    }
    started_ = true;
  }
  if (me == sig_.root) return root_side_.pull(team_, blocked_on);
  return send_to_root(team_, writer_, sendbuf_, blocked_on);
}

}  // namespace shmcoll
