// Gather: every block has the same size. Flat, every rank streams its block through its own
// slots to the root (GatherRoot); along the tree, each rank streams its subtree's blocks to its
// parent (TreeGather). Large blocks move with a single copy, or straight between shared buffers
// (shared_copy.hpp).
#pragma once

#include <optional>

#include "coll/algorithm_op.hpp"
#include "coll/gather/gather_root.hpp"
#include "coll/gather/tree_gather.hpp"
#include "coll/shared_copy.hpp"
#include "coll/single_copy.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

class GatherOp final : public AlgorithmOp {
 public:
  // sendbuf ignored with in_place == true (MPI_IN_PLACE at the root).
  GatherOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount, Datatype sendtype,
           void* recvbuf, Count recvcount, Datatype recvtype, bool in_place, int root);

  void abandon() override {
    if (single_copy_) SingleCopyExchange::drain(*this, team_);
  }

 private:
  bool advance_data(sync::WaitTarget& blocked_on) override;
  bool checked_in_data_path(int peer) const override {
    if (tree_) return tree_gather_->checked(peer);
    if (single_copy_) return exchange_.compared_with(team_, sig_.root, peer);
    return team_.rank() == sig_.root && peer != sig_.root && sig_.bytes > 0;
  }

  const std::byte* sendbuf_ = nullptr;
  std::byte* recvbuf_ = nullptr;
  bool in_place_ = false;
  bool started_ = false;
  bool tree_ = false;
  // Constructed only along the tree: it is most of the operation's size, and a flat call
  // would pay for initialising it (8 B calls cost a few hundred nanoseconds).
  std::optional<TreeGather> tree_gather_;
  bool single_copy_ = false;
  SingleCopyExchange exchange_;
  SharedCopyChoice shared_choice_;
  StreamWriter writer_;
  GatherRoot root_side_;
};

}  // namespace shmcoll
