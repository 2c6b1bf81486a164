// Scatter: every block has the same size. Flat, the root streams all other ranks' blocks
// through its slots (ScatterRootStream) and each rank copies out its own, at a place that
// follows from the block size; along the tree, the root streams each child its subtree's blocks
// (TreeScatter). Large blocks move with a single copy, or straight between shared buffers
// (shared_copy.hpp).
#pragma once

#include <optional>

#include "coll/algorithm_op.hpp"
#include "coll/scatter/scatter_stream.hpp"
#include "coll/scatter/tree_scatter.hpp"
#include "coll/shared_copy.hpp"
#include "coll/single_copy.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

class ScatterOp final : public AlgorithmOp {
 public:
  // recvbuf == nullptr with in_place == true: MPI_IN_PLACE at the root.
  ScatterOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount, Datatype sendtype,
            void* recvbuf, Count recvcount, Datatype recvtype, bool in_place, int root);

  void abandon() override {
    if (single_copy_) SingleCopyExchange::drain(*this, team_);
  }

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  bool checked_in_data_path(int peer) const override {
    if (tree_) return tree_scatter_->checked(peer);
    if (single_copy_) return exchange_.compared_with(team_, sig_.root, peer);
    // Its block came from one stream: the root's, or a tree leaf's parent's.
    return team_.rank() != sig_.root && sig_.bytes > 0 && peer == reader_.writer();
  }

  const std::byte* sendbuf_ = nullptr;
  std::byte* recvbuf_ = nullptr;
  bool in_place_ = false;
  bool started_ = false;
  bool tree_ = false;
  // Constructed only along the tree: it is most of the operation's size, and a flat call
  // would pay for initialising it (8 B calls cost a few hundred nanoseconds).
  std::optional<TreeScatter> tree_scatter_;
  bool single_copy_ = false;
  SingleCopyExchange exchange_;
  SharedCopyChoice shared_choice_;
  ScatterRootStream plan_;
  StreamWriter writer_;
  RangeReader reader_;
  std::uint64_t acked_ = 0;
};

}  // namespace shmcoll
