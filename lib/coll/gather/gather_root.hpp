// The root's side of gather and gatherv: every other rank streams its block through its own
// slots; the root copies chunk c of every sender before it acknowledges c (one round per chunk
// index), which keeps its single status tag a valid acknowledgement for all senders at once.
#pragma once

#include <cstdint>
#include <vector>

#include "base/plan_vector.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

class GatherRoot {
 public:
  struct Sender {
    int rank;
    std::byte* dst;
    std::uint64_t bytes;
  };
  // `block_of(r)` gives where rank r's block goes and its size, as (pointer, bytes).
  template <class BlockOf>
  void start(std::uint64_t op, Kind kind, int root, int nranks, std::uint64_t slot_bytes,
             BlockOf&& block_of) {
    senders_.clear();
    for (int r = 0; r < nranks; ++r) {
      if (r == root) continue;
      const auto [dst, bytes] = block_of(r);
      if (bytes > 0) senders_.push_back({r, dst, bytes});
    }
    begin(op, kind, root, slot_bytes);
  }
  bool pull(TeamImpl& team, sync::WaitTarget& blocked_on);

 private:
  void begin(std::uint64_t op, Kind kind, int root, std::uint64_t slot_bytes);

  std::uint64_t op_ = 0;
  Kind kind_ = Kind::kGather;
  int root_ = 0;
  std::uint64_t slot_bytes_ = 0;
  PlanVector<Sender> senders_;  // only those with bytes > 0
  std::uint64_t rounds_ = 0;
  std::uint64_t round_ = 0;
  std::size_t next_ = 0;
  std::uint64_t acked_ = 0;
};

}  // namespace shmcoll
