// How one rank's membership in a team fails, and how its waits stay bounded. The first error
// any rank records becomes the team's: it goes into the segment's abort record, every rank's
// sleepers are woken to see it, and each rank raises it in its current or next call into the
// team. A wait that is slow checks, besides that record, that the awaited process is alive and
// that the wait is within its deadline.
//
// What a slow wait checks about the operations themselves (a stalled peer's arguments) is the
// team's (TeamImpl::on_slow_wait); this class knows the segment, the ranks' pids and time.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "segment/segment.hpp"
#include "shmcoll/error.hpp"
#include "sync/waiter.hpp"

namespace shmcoll {

class FailureDomain {
 public:
  // `segment` and `pids` belong to the team, which outlives this object; both are read at the
  // time of each call (formation fills them after construction).
  FailureDomain(const segment::Segment& segment, const std::vector<pid_t>& pids)
      : segment_(segment), pids_(pids) {}

  void set_rank(int rank) { rank_ = rank; }

  // Records the error team-wide (the first error wins) and wakes every sleeper; a rank that
  // has recorded or raised an error records nothing more.
  void record(Status status, const std::string& message, Cause cause);
  // Records the error and throws it on this rank.
  [[noreturn]] void fail(Status status, const std::string& message, Cause cause) {
    record(status, message, cause);
    throw_error(status, message, cause);
  }
  // Whether an error is recorded; if so, raise() throws it. Inline: every call asks.
  bool pending() const {
    // acquire: pairs with the release of kSet in record.
    return failed_ || segment_.abort_record().state.load(std::memory_order_acquire) !=
                          segment::AbortRecord::kClear;
  }
  // The team's error: this rank's, or the one another rank recorded (waiting while that rank
  // is still writing it).
  [[noreturn]] void raise();
  void check() {
    if (pending()) [[unlikely]]
      raise();
  }
  // Whether an error is recorded, without throwing (callers order the load with a fence).
  bool recorded() const {
    return failed_ || segment_.abort_record().state.load(std::memory_order_relaxed) !=
                          segment::AbortRecord::kClear;
  }
  // Whether this rank has recorded or raised the team's error.
  bool failed() const { return failed_; }
  bool alive(int r) const;

  // The bounds of a slow wait for `target`, waiting `waited_ns` so far: every `check_every_ns`
  // the awaited peer's liveness, and `timeout_s`. `where()` names the operation for messages
  // (" in bcast (operation #3)", or empty). Throws on a dead peer or a passed deadline, unless
  // what the wait needs has arrived meanwhile.
  void bound_wait(const sync::WaitTarget& target, std::int64_t waited_ns,
                  std::int64_t check_every_ns, double timeout_s,
                  const std::function<std::string()>& where);

 private:
  const segment::Segment& segment_;
  const std::vector<pid_t>& pids_;
  int rank_ = 0;
  bool failed_ = false;
  Status status_ = Status::kOk;
  Cause cause_ = Cause::kUnspecified;
  std::string message_;
  std::int64_t last_liveness_check_ns_ = 0;
};

}  // namespace shmcoll
