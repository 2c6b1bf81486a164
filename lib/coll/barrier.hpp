// Barrier: no data, only the agree stage every operation has (each rank waits until every
// other rank has arrived; with CheckLevel::kFull it also checks their signatures).
#pragma once

#include "coll/algorithm_op.hpp"

namespace shmcoll {

class BarrierOp final : public AlgorithmOp {
 public:
  explicit BarrierOp(TeamAlgorithms& algorithms)
      : AlgorithmOp(algorithms, {Kind::kBarrier, 0, 0, 0, kByte}) {}

 private:
  bool advance_data(sync::WaitTarget&) override { return true; }
};

}  // namespace shmcoll
