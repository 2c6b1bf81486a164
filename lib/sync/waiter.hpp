// Waiting for a peer's flag, escalating from spinning to yielding to sleeping on a futex.
//
// Oversubscribed teams (more ranks than CPUs) must not burn the CPU that the awaited peer needs,
// so the spin phase shrinks to nothing there; the yield phase lets a peer on the same CPU run;
// the futex phase sleeps until the peer publishes. Between phases, and once per sleep slice, the
// observer runs its slow checks (team aborted, peer dead, deadline, mismatched arguments) and
// abandons the wait by throwing.
#pragma once

#include <atomic>
#include <cstdint>

#include "sync/wake_line.hpp"

namespace shmcoll::sync {

struct WaitTarget {
  const std::atomic<std::uint64_t>* word = nullptr;  // a flag written by `peer`
  std::uint64_t at_least = 0;                        // wait until *word >= at_least
  int peer = -1;
};

// A wait target that is met as soon as it is made: a resumable step that wants its driver back
// between two parts of its work, so that other work progresses meanwhile, reports one. Each
// names a new value, so a poller's stall clock (which restarts when the target changes) never
// mistakes a long series of parts for a stalled peer. Only its owner reads it.
class YieldPoint {
 public:
  WaitTarget next(int owner) {
    const std::uint64_t n = count_.fetch_add(1, std::memory_order_relaxed) + 1;
    return {&count_, n, owner};
  }

 private:
  std::atomic<std::uint64_t> count_{0};
};

struct WaitPolicy {
  int spin_iterations = 2000;
  int yield_iterations = 32;
  std::int64_t sleep_slice_ns = 20'000'000;  // how often a sleeper wakes to run slow checks
};

class WaitObserver {
 public:
  virtual ~WaitObserver() = default;
  // `waited_ns`: time since the wait entered its slow phases. May throw.
  virtual void on_slow_wait(const WaitTarget& target, std::int64_t waited_ns) = 0;
  // Called once, right before the wait's first futex sleep: from there on the waiter stops
  // running, so a waiter that published flags without waking their sleepers (wake_line.hpp)
  // wakes them here.
  virtual void before_sleep() {}
};

inline bool reached(const WaitTarget& t) {
  // acquire: pairs with the writer's publishing store, so the data the flag announces is
  // visible once the flag is.
  return t.word->load(std::memory_order_acquire) >= t.at_least;
}

constexpr std::int64_t kNoDeadline = -1;

// Returns true once *target.word >= target.at_least, or false when `deadline_ns` (steady clock,
// see now_ns) passed first. `peer_wake` is the wake line of target.peer.
bool wait_for(const WaitTarget& target, WakeLine& peer_wake, const WaitPolicy& policy,
              WaitObserver& observer, std::int64_t deadline_ns = kNoDeadline);

// One futex sleep of at most `slice_ns` on the peer's wake line, following the protocol in
// wake_line.hpp. Returns true if the flag is set.
bool sleep_once(const WaitTarget& target, WakeLine& wake, std::int64_t slice_ns);

// The steady clock in nanoseconds.
std::int64_t now_ns();

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace shmcoll::sync
