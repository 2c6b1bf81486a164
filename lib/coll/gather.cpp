#include "coll/gather.hpp"

#include "copy/copy.hpp"
#include "core/validation.hpp"

namespace shmcoll {

bool send_to_root(TeamImpl& team, StreamWriter& writer, const std::byte* data,
                  sync::WaitTarget& blocked_on) {
  auto fill = [&](std::byte* dst, std::uint64_t off, std::uint64_t len) {
    copy::copy_bytes(dst, data + off, len);
  };
  return writer.pump(
      team, fill, [&](std::uint64_t, std::vector<int>& out) { out.push_back(writer.root()); },
      blocked_on);
}

GatherOp::GatherOp(TeamImpl& team, const void* sendbuf, Count sendcount, Datatype sendtype,
                   void* recvbuf, Count recvcount, Datatype recvtype, bool in_place, int root)
    : CollectiveOp(team, {Kind::kGather, root, 0, sendcount, sendtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)),
      recvbuf_(static_cast<std::byte*>(recvbuf)),
      in_place_(in_place) {
  const validate::Context ctx{Kind::kGather, team.rank(), team.size(), root, team.slot_bytes()};
  validate::root(ctx);
  if (in_place && !ctx.is_root()) validate::invalid(ctx, "in_place is only allowed at the root");
  if (ctx.is_root()) {
    // The root's receive arguments define the block size; with in_place its send ones are ignored.
    sig_.count = recvcount;
    sig_.type = recvtype;
    sig_.bytes = validate::bytes(ctx, "recvcount", recvcount, recvtype);
    std::uint64_t total = 0;
    if (__builtin_mul_overflow(sig_.bytes, static_cast<std::uint64_t>(team.size()), &total)) {
      validate::invalid(ctx, "recvcount x team size overflows");
    }
    validate::buffer(ctx, "recvbuf", recvbuf, total);
    if (!in_place) {
      const std::uint64_t mine = validate::bytes(ctx, "sendcount", sendcount, sendtype);
      if (mine != sig_.bytes) {
        validate::invalid(
            ctx, "sendcount x sendtype = " + std::to_string(mine) +
                     " bytes but recvcount x recvtype = " + std::to_string(sig_.bytes) + " bytes");
      }
      validate::buffer(ctx, "sendbuf", sendbuf, mine);
    }
  } else {
    sig_.bytes = validate::bytes(ctx, "sendcount", sendcount, sendtype);
    validate::buffer(ctx, "sendbuf", sendbuf, sig_.bytes);
  }
  validate::stream_length(ctx, sig_.bytes);
}

bool GatherOp::advance_data(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  const std::uint64_t b = sig_.bytes;
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
  return send_to_root(team_, writer_, sendbuf_, blocked_on);
}

}  // namespace shmcoll
