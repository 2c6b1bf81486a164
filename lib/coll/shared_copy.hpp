// Broadcast, scatter and gather between buffers that every rank holds in one shared allocation
// (Team::allocate_shared, Team::adopt_shared; the MPI plugin's shared windows). Where the single
// copy does not take a block -- below its threshold, or in a team without cross-memory attach,
// as in a container whose seccomp profile forbids it -- such blocks still move once, with
// memcpy straight between the buffers (SingleCopyExchange, where every transfer is then a
// memcpy), instead of twice through the slots.
//
// Every rank must take the same path, but each knows only where its own buffer lies, so the
// root decides. It chooses the straight copy when its own buffer and the buffer each other
// rank published on arrival (StatusLine::shared_id, which covers the whole range the operation
// touches) lie in the same allocation. Such a rank holds that allocation for its whole call, so
// it maps the root's buffer and the root maps its. The root waits for every arrival to see
// that, and publishes its choice on its progress line (ProgressLine::shared_copy_choice).
// A rank whose buffer lies in no shared allocation knows the root cannot choose the straight
// copy, and takes the slots without waiting; the others wait for the choice. A root whose own
// buffer lies in none chooses the slots at once. So the root waits for the others only when
// its buffer is shared, and they for the root only when theirs is.
//
// Scatterv and gatherv do without this choice: the root decides per rank once that rank has
// arrived, and tells it where its block goes as it does for the single copy: in a scatterv
// receiver's record, in the gatherv table entry of a sender whose buffer lies in the root's
// allocation (ScattervOp and GathervOp::choose_shared_copies).
//
// Reading the choice: 2 x op + 1 is the straight copy, 2 x op the slots. A larger value means
// the root has left the operation, which it does before this rank has copied only on the slots
// (the exchange makes it wait for every rank's copy).
#pragma once

#include <cstdint>

#include "coll/team_algorithms.hpp"
#include "protocol/operation.hpp"

namespace shmcoll {

class SharedCopyChoice {
 public:
  // Whether an operation may take the straight copy at all, the same on every rank: the single
  // copy does not take its blocks of `block_bytes` (`single_copy`, the registry's choice), and
  // TeamImpl::shared_copy_for allows them.
  static bool eligible(TeamAlgorithms& algorithms, Kind kind, bool single_copy,
                       std::uint64_t block_bytes, int root);

  // Makes or learns the choice; false while it waits (`blocked_on` set). Call again until true.
  bool decide(const CollectiveOp& op, TeamImpl& team, sync::WaitTarget& blocked_on);
  // After decide() returned true.
  bool shared_copy() const { return shared_copy_; }

 private:
  bool decide_as_root(const CollectiveOp& op, TeamImpl& team, std::uint64_t mine,
                      sync::WaitTarget& blocked_on);
  void publish(const CollectiveOp& op, TeamImpl& team, bool shared_copy);

  int next_peer_ = 0;
  bool shared_copy_ = false;
};

}  // namespace shmcoll
