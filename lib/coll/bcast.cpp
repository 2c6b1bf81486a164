#include "coll/bcast.hpp"

#include "copy/copy.hpp"
#include "core/validation.hpp"

namespace shmcoll {

BcastOp::BcastOp(TeamImpl& team, void* buffer, Count count, Datatype type, int root)
    : CollectiveOp(team, {Kind::kBcast, root, 0, count, type}),
      buffer_(static_cast<std::byte*>(buffer)) {
  const validate::Context ctx{Kind::kBcast, team.rank(), team.size(), root, team.slot_bytes()};
  validate::common(ctx, false);
  sig_.bytes = validate::bytes(ctx, "count", count, type);
  validate::buffer(ctx, "buffer", buffer, sig_.bytes);
  validate::stream_length(ctx, sig_.bytes);
}

bool BcastOp::advance_data(sync::WaitTarget& blocked_on) {
  const int me = team_.rank();
  if (team_.size() == 1) return true;
  if (me == sig_.root) {
    if (!started_) {
      writer_.start(op_, Kind::kBcast, sig_.root, sig_.bytes, team_.slot_bytes());
      started_ = true;
    }
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
  if (!started_) {
    reader_.start({sig_.root, op_, Kind::kBcast, sig_.root, sig_.bytes, true, "count"},
                  team_.slot_bytes(), 0, sig_.bytes, buffer_);
    started_ = true;
  }
  if (!reader_.pull(team_, acked_, blocked_on, /*ack_last=*/false)) return false;
  if (!reader_.empty()) defer_final_ack(sync::step_consumed(reader_.last_chunk()));
  return true;
}

}  // namespace shmcoll
