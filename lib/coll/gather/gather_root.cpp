#include "coll/gather/gather_root.hpp"

#include <algorithm>

namespace shmcoll {

void GatherRoot::begin(std::uint64_t op, Kind kind, int root, std::uint64_t slot_bytes) {
  op_ = op;
  kind_ = kind;
  root_ = root;
  slot_bytes_ = slot_bytes;
  rounds_ = 0;
  for (const Sender& s : senders_)
    rounds_ = std::max(rounds_, StreamShape{s.bytes, slot_bytes}.chunks());
  round_ = 0;
  next_ = 0;
  acked_ = 0;
}

bool GatherRoot::pull(TeamImpl& team, sync::WaitTarget& blocked_on) {
  for (; round_ < rounds_; ++round_) {
    for (; next_ < senders_.size(); ++next_) {
      const Sender& s = senders_[next_];
      if (StreamShape{s.bytes, slot_bytes_}.chunks() <= round_) continue;
      const StreamSource src{s.rank,
                             op_,
                             kind_,
                             root_,
                             s.bytes,
                             true,
                             kind_ == Kind::kGatherv ? "recvcounts" : "recvcount",
                             kind_ == Kind::kGatherv};
      if (!read_chunk(team, src, round_, 0, s.bytes, s.dst, blocked_on)) return false;
    }
    next_ = 0;
    acknowledge_below(team, op_, round_ + 1, acked_);
  }
  return true;
}

}  // namespace shmcoll
