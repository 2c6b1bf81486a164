#include "protocol/handshake.hpp"

#include <sched.h>

namespace shmcoll::handshake {

void wait_for_writers(TeamImpl& team, std::uint64_t op) {
  // The other half of AnnouncedWrite's pair: the abort is recorded (or was seen) before this
  // fence, so a peer that did not see it has its announcement visible below.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::int64_t deadline =
      sync::now_ns() + static_cast<std::int64_t>(team.options().timeout_s * 1e9);
  for (int peer = 0; peer < team.size(); ++peer) {
    if (peer == team.rank()) continue;
    const std::atomic<std::uint64_t>& writing = team.area(peer).status().writing_op;
    for (int spins = 0; writing.load(std::memory_order_acquire) == op; ++spins) {
      if (spins % 1024 == 1023 && (!team.peer_alive(peer) || sync::now_ns() > deadline)) break;
      sched_yield();
    }
  }
}

}  // namespace shmcoll::handshake
