// Flat broadcast: the root streams the message through its slots; every other rank copies it
// out. Readers acknowledge chunk by chunk, so a message larger than the slots pipelines.
#pragma once

#include "core/operation.hpp"
#include "core/stream.hpp"

namespace shmcoll {

class BcastOp final : public CollectiveOp {
 public:
  BcastOp(TeamImpl& team, void* buffer, Count count, Datatype type, int root);

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  bool checked_in_data_path(int peer) const override {
    return peer == sig_.root && team_.rank() != sig_.root && sig_.bytes > 0;
  }

  std::byte* buffer_;
  bool started_ = false;
  StreamWriter writer_;
  RangeReader reader_;
  std::uint64_t acked_ = 0;
};

}  // namespace shmcoll
