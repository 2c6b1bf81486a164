#include "sync/waiter.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace shmcoll::sync {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool sleep_once(const WaitTarget& target, WakeLine& wake, std::int64_t slice_ns) {
  wake.sleepers.fetch_add(1, std::memory_order_relaxed);
  // Pairs with the writer's fence in wake_sleepers (see wake_line.hpp).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::uint32_t epoch = wake.epoch.load(std::memory_order_relaxed);
  bool ready = target.word->load(std::memory_order_acquire) >= target.at_least;
  if (!ready) {
    // A short first sleep, then a re-check: the writer may have left its operation without
    // seeing this registration (wake_sleepers_unfenced), but its flag is visible by now.
    const std::int64_t first = std::min(slice_ns, kFirstSleepNs);
    futex_wait(&wake.epoch, epoch, first);
    ready = target.word->load(std::memory_order_acquire) >= target.at_least;
    // Unchanged epoch: no wake came, so sleep out the slice (a wake since returns at once).
    if (!ready && slice_ns > first) futex_wait(&wake.epoch, epoch, slice_ns - first);
  }
  // A late decrement only costs the writer one unneeded wake call, so release suffices.
  wake.sleepers.fetch_sub(1, std::memory_order_release);
  return ready || reached(target);
}

bool wait_for(const WaitTarget& target, WakeLine& peer_wake, const WaitPolicy& policy,
              WaitObserver& observer, std::int64_t deadline_ns) {
  if (reached(target)) return true;
  for (int i = 0; i < policy.spin_iterations; ++i) {
    cpu_relax();
    if (reached(target)) return true;
  }
  const std::int64_t start = now_ns();
  observer.on_slow_wait(target, 0);
  for (int i = 0; i < policy.yield_iterations; ++i) {
    sched_yield();
    if (reached(target)) return true;
    if ((i & 7) == 7) observer.on_slow_wait(target, now_ns() - start);
  }
  for (bool slept = false;; slept = true) {
    const std::int64_t now = now_ns();
    observer.on_slow_wait(target, now - start);
    std::int64_t slice = policy.sleep_slice_ns;
    if (deadline_ns != kNoDeadline) {
      if (now >= deadline_ns) return reached(target);
      slice = std::min(slice, deadline_ns - now);
    }
    if (!slept) observer.before_sleep();
    if (sleep_once(target, peer_wake, slice)) return true;
  }
}

}  // namespace shmcoll::sync
