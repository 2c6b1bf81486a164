// A rank's wake line: where peers sleep while waiting for something that rank writes.
//
// Protocol (a store-buffering pair, ordered by seq_cst fences):
//   writer: flag.store(v, release) ... later: fence(seq_cst); if (sleepers > 0) { ++epoch; wake }
//   waiter: ++sleepers; fence(seq_cst); e = epoch; if (flag < v) futex_wait(epoch, e); --sleepers
// Between the two fences, either the writer sees the waiter's increment (and wakes it) or the
// waiter's re-check sees the flag (and does not sleep). A waiter that read `e` before the
// writer's increment finds the futex word changed and returns at once. The writer may publish
// several flags and check for sleepers once, as long as it checks before it sleeps itself or
// leaves the operation (TeamImpl keeps that promise: WaitObserver::before_sleep): a
// publication is a plain release store, and the fence, which waits for the store buffer to
// drain, is paid at most once per wait that sleeps. Writers skip the system call entirely
// while nobody sleeps, which is the common case.
//
// While the writer spins or yields, and on leaving an operation, it does not fence (leaving,
// it checks without the fence: wake_sleepers_unfenced). Before a yield, the fence delayed the
// peer the yield hands the CPU to (bench/yield_split.cpp shows it). Leaving, the fence would
// wait for the stores of the call to leave the store buffer, which takes the lines back from
// the peers polling them, a large part of a small call. Without it the
// writer's load of `sleepers` may pass its own flag stores, and a waiter that registers in that
// moment may miss both the flag and the wake (a writer that spins or yields meanwhile does not
// look at all until it sleeps or leaves). So every sleep re-checks the flag after at most
// kFirstSleepNs (sleep_once): by then the flag has left the writer's store buffer (which
// drains in well under a microsecond; interrupts and context switches drain it too). A missed
// wake costs at most that one short sleep, which the kernel stretches by the thread's timer
// slack (50 us by default); a sleep that runs its whole slice pays one extra wake-up.
#pragma once

#include <atomic>
#include <cstdint>

#include "sync/futex.hpp"

namespace shmcoll::sync {

inline constexpr std::size_t kCacheLine = 64;
// How long a sleeper sleeps before its first re-check of the flag (see wake_sleepers_unfenced).
inline constexpr std::int64_t kFirstSleepNs = 50'000;

struct alignas(kCacheLine) WakeLine {
  std::atomic<std::uint32_t> epoch{0};     // the futex word; bumped only when sleepers > 0
  std::atomic<std::uint32_t> sleepers{0};  // waiters currently inside the sleep path
};
static_assert(sizeof(WakeLine) == kCacheLine);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// Publishes `value` into a flag owned by the calling rank. release: every plain write made
// before it (slot data, signature) is visible to a reader that acquires the flag. The caller
// must call wake_sleepers() before it blocks or leaves the operation.
inline void publish(std::atomic<std::uint64_t>& flag, std::uint64_t value) {
  flag.store(value, std::memory_order_release);
}

// The writer's half of the protocol above, after one or more publish() calls.
inline void wake_sleepers(WakeLine& wake) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (wake.sleepers.load(std::memory_order_relaxed) != 0) {
    // relaxed is enough for the bump: the futex syscall itself orders it with the sleeper.
    wake.epoch.fetch_add(1, std::memory_order_relaxed);
    futex_wake_all(&wake.epoch);
  }
}

// The writer's half on leaving an operation: wakes the sleepers it sees, without ordering its
// earlier publications before the look (see above: a waiter it misses finds the flag after its
// first, short sleep). The caller keeps its publications pending, so that its next sleep or
// departure checks again.
inline void wake_sleepers_unfenced(WakeLine& wake) {
  if (wake.sleepers.load(std::memory_order_relaxed) != 0) wake_sleepers(wake);
}

// Wakes everybody sleeping on `wake` regardless of flags (used when a team is aborted).
inline void wake_everyone(WakeLine& wake) {
  wake.epoch.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&wake.epoch);
}

}  // namespace shmcoll::sync
