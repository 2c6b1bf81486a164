#include "protocol/failure_domain.hpp"

#include <sched.h>

#include <cstdio>
#include <cstring>

#include "sync/liveness.hpp"

namespace shmcoll {

void FailureDomain::record(Status status, const std::string& message, Cause cause) {
  if (failed_) return;
  failed_ = true;
  status_ = status;
  cause_ = cause;
  message_ = message;
  segment::AbortRecord& record = segment_.abort_record();
  std::uint32_t expected = segment::AbortRecord::kClear;
  // acq_rel CAS: exactly one rank wins the right to write the record.
  if (record.state.compare_exchange_strong(expected, segment::AbortRecord::kWriting,
                                           std::memory_order_acq_rel)) {
    record.rank = rank_;
    record.status = static_cast<std::int32_t>(status);
    record.cause = static_cast<std::int32_t>(cause);
    std::snprintf(record.message, sizeof record.message, "%s", message.c_str());
    // release: the fields above are visible to any rank that acquires kSet.
    record.state.store(segment::AbortRecord::kSet, std::memory_order_release);
  }
  // Sleepers re-check the abort record when woken.
  for (std::size_t r = 0; r < pids_.size(); ++r)
    sync::wake_everyone(segment_.rank(static_cast<std::uint32_t>(r)).wake());
}

bool FailureDomain::alive(int r) const {
  return sync::process_alive(pids_[static_cast<std::size_t>(r)]);
}

void FailureDomain::raise() {
  if (failed_) throw_error(status_, message_, cause_);
  segment::AbortRecord& record = segment_.abort_record();
  // acquire: pairs with the release of kSet in record.
  std::uint32_t state = record.state.load(std::memory_order_acquire);
  // Another rank won the record and is writing it (it may be descheduled right now): its error
  // is the team's, so wait for the message rather than report something else. Bounded, in case
  // the writer dies between the two stores.
  for (int i = 0; state == segment::AbortRecord::kWriting && i < 100000; ++i) {
    sched_yield();
    state = record.state.load(std::memory_order_acquire);
  }
  failed_ = true;
  status_ = static_cast<Status>(record.status);
  cause_ = record.cause > 0 && record.cause < kCauseCount ? static_cast<Cause>(record.cause)
                                                          : Cause::kUnspecified;
  char text[sizeof record.message];
  std::memcpy(text, record.message, sizeof text);
  text[sizeof text - 1] = '\0';
  message_ = std::string(text) + " [reported by rank " + std::to_string(record.rank) + "]";
  throw_error(status_, message_, cause_);
}

void FailureDomain::bound_wait(const sync::WaitTarget& target, std::int64_t waited_ns,
                               std::int64_t check_every_ns, double timeout_s,
                               const std::function<std::string()>& where) {
  const std::int64_t now = sync::now_ns();
  if (now - last_liveness_check_ns_ >= check_every_ns) {
    last_liveness_check_ns_ = now;
    const int peer = target.peer;
    if (!alive(peer)) {
      // What the peer published before it died may be all this wait needs (it passed a barrier
      // and died in the next operation): then this wait ends normally and the next one on that
      // peer reports it.
      if (sync::reached(target)) return;
      // A peer that exited after the team was aborted is a consequence, not the cause.
      check();
      fail(Status::kPeerFailed,
           "rank " + std::to_string(peer) + " (pid " +
               std::to_string(pids_[static_cast<std::size_t>(peer)]) + ") died while rank " +
               std::to_string(rank_) + " waited for it" + where(),
           Cause::kUnspecified);
    }
  }
  if (waited_ns > static_cast<std::int64_t>(timeout_s * 1e9)) {
    fail(Status::kTimeout,
         "rank " + std::to_string(rank_) + " waited more than " + std::to_string(timeout_s) +
             " s for rank " + std::to_string(target.peer) + where() +
             "; raise SHMCOLL_TIMEOUT if that rank is merely slow",
         Cause::kUnspecified);
  }
}

}  // namespace shmcoll
