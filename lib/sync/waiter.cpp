#include "sync/waiter.hpp"

#include <sched.h>

#include <chrono>

namespace shmcoll::sync {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One futex sleep following the protocol in wake_line.hpp. Returns true if the flag is set.
bool sleep_once(const WaitTarget& target, WakeLine& wake, std::int64_t slice_ns) {
  wake.sleepers.fetch_add(1, std::memory_order_relaxed);
  // Pairs with the writer's fence in wake_sleepers (see wake_line.hpp).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::uint32_t epoch = wake.epoch.load(std::memory_order_relaxed);
  bool ready = target.word->load(std::memory_order_acquire) >= target.at_least;
  if (!ready) futex_wait(&wake.epoch, epoch, slice_ns);
  // A late decrement only costs the writer one unneeded wake call, so release suffices.
  wake.sleepers.fetch_sub(1, std::memory_order_release);
  return ready || reached(target);
}

}  // namespace

void wait_for(const WaitTarget& target, WakeLine& peer_wake, const WaitPolicy& policy,
              WaitObserver& observer) {
  if (reached(target)) return;
  for (int i = 0; i < policy.spin_iterations; ++i) {
    cpu_relax();
    if (reached(target)) return;
  }
  const std::int64_t start = now_ns();
  observer.on_slow_wait(target, 0);
  for (int i = 0; i < policy.yield_iterations; ++i) {
    sched_yield();
    if (reached(target)) return;
    if ((i & 7) == 7) observer.on_slow_wait(target, now_ns() - start);
  }
  for (;;) {
    observer.on_slow_wait(target, now_ns() - start);
    if (sleep_once(target, peer_wake, policy.sleep_slice_ns)) return;
  }
}

}  // namespace shmcoll::sync
