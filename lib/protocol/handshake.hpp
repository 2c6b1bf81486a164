// What ranks tell each other beyond arrivals and steps, for the single copy and for straight
// copies between shared buffers, with the memory orders that pair each publication with its
// reads. Algorithms use these instead of touching the status and progress lines.
#pragma once

#include <cstdint>

#include "protocol/team_impl.hpp"
#include "sync/waiter.hpp"

namespace shmcoll::handshake {

// What this rank published with its arrival in the current operation (relaxed: its own stores).
inline std::uint64_t own_shared_id(const TeamImpl& team) {
  return team.self().status().shared_id.load(std::memory_order_relaxed);
}
inline std::uint64_t own_huge_pages(const TeamImpl& team) {
  return team.self().status().huge_pages.load(std::memory_order_relaxed);
}

// A rank that copied its part of a single copy without waiting for the root tells so: the root
// may then find it past the operation. Relaxed: the release of the rank's next report or
// arrival publishes it.
inline void note_copied(TeamImpl& team, std::uint64_t op) {
  team.self().progress().copied_op.store(op, std::memory_order_relaxed);
}
// Whether `peer` told note_copied for `op` or a later operation. Acquire: whatever it did
// before is visible once this is true.
inline bool peer_copied(const TeamImpl& team, int peer, std::uint64_t op) {
  return team.area(peer).progress().copied_op.load(std::memory_order_acquire) >= op;
}

// A root that stages the head of its buffer for its peer (copy::StagingBuffer): the staging
// copy's address, relaxed, published by the release of the report step that follows.
inline void publish_staged_address(TeamImpl& team, const void* staging) {
  team.self().progress().staged_address.store(reinterpret_cast<std::uintptr_t>(staging),
                                              std::memory_order_relaxed);
}
// The root's staging address, read after progress_reached's acquire load of that report.
inline std::uint64_t staged_address(const TeamImpl& team, int root) {
  return team.area(root).progress().staged_address.load(std::memory_order_relaxed);
}

// A write into a peer's buffer, announced for its whole length: a peer that leaves the
// operation because of an abort first waits until no announced write of the operation is left
// (wait_for_writers). announce() and wait_for_writers() form a store-buffering pair with
// seq_cst fences: the writer sees the abort, or the leaving rank sees the announcement, so no
// write lands in a buffer whose owner has already returned.
class AnnouncedWrite {
 public:
  // Announces the write; throws the team's error (without announcing) if an abort is recorded.
  AnnouncedWrite(TeamImpl& team, std::uint64_t op) : writing_(team.self().status().writing_op) {
    writing_.store(op, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (team.abort_recorded()) {
      writing_.store(0, std::memory_order_relaxed);
      team.check_aborted();
    }
  }
  // release: the owner, once it sees 0, may free the buffer; the write is over by then.
  ~AnnouncedWrite() { writing_.store(0, std::memory_order_release); }
  AnnouncedWrite(const AnnouncedWrite&) = delete;
  AnnouncedWrite& operator=(const AnnouncedWrite&) = delete;

 private:
  std::atomic<std::uint64_t>& writing_;
};
// The other half of the pair, for a rank leaving `op` after an abort recorded before this call:
// waits until no peer announces a write in `op`. Bounded by the write itself, a single system
// call; a dead writer writes no more, and a live peer whose announcement never clears is not
// writing but broken (its status line holds garbage): after the team's timeout this returns.
void wait_for_writers(TeamImpl& team, std::uint64_t op);

// The root's choice of a straight copy between shared buffers for `op` (shared_copy.hpp):
// published with release, for the ranks that then read the root's buffer.
inline void publish_shared_copy_choice(TeamImpl& team, std::uint64_t op, bool shared_copy) {
  team.publish(team.self().progress().shared_copy_choice, 2 * op + (shared_copy ? 1 : 0));
}
// The wait for the root's choice for `op`, and, once it is reached (its acquire load makes
// the choice visible), the choice.
inline sync::WaitTarget awaited_shared_copy_choice(const TeamImpl& team, int root,
                                                   std::uint64_t op) {
  return {&team.area(root).progress().shared_copy_choice, 2 * op, root};
}
inline bool shared_copy_chosen(const TeamImpl& team, int root, std::uint64_t op) {
  return team.area(root).progress().shared_copy_choice.load(std::memory_order_relaxed) ==
         2 * op + 1;
}

}  // namespace shmcoll::handshake
