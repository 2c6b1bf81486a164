// Barrier: no data, only the agree stage every operation has (each rank waits until every
// other rank has arrived; with CheckLevel::kFull it also checks their signatures).
#pragma once

#include "core/operation.hpp"

namespace shmcoll {

class BarrierOp final : public CollectiveOp {
 public:
  explicit BarrierOp(TeamImpl& team) : CollectiveOp(team, {Kind::kBarrier, 0, 0, 0, kByte}) {}

 private:
  bool advance_data(sync::WaitTarget&) override { return true; }
};

}  // namespace shmcoll
