// A rank's wake line: where peers sleep while waiting for something that rank writes.
//
// Protocol (a store-buffering pair, so every access below is seq_cst):
//   writer: flag.store(v); if (sleepers.load() > 0) { ++epoch; futex_wake(epoch); }
//   waiter: ++sleepers; e = epoch.load(); if (flag.load() < v) futex_wait(epoch, e); --sleepers;
// With all four accesses in the single seq_cst order, either the writer sees the waiter's
// increment (and wakes it) or the waiter's re-check sees the flag (and does not sleep). A waiter
// that read `e` before the writer's increment finds the futex word changed and returns at once.
// Writers skip the system call entirely while nobody sleeps, which is the common case.
#pragma once

#include <atomic>
#include <cstdint>

#include "sync/futex.hpp"

namespace shmcoll::sync {

inline constexpr std::size_t kCacheLine = 64;

struct alignas(kCacheLine) WakeLine {
  std::atomic<std::uint32_t> epoch{0};     // the futex word; bumped only when sleepers > 0
  std::atomic<std::uint32_t> sleepers{0};  // waiters currently inside the sleep path
};
static_assert(sizeof(WakeLine) == kCacheLine);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// Publishes `value` into a flag owned by the calling rank and wakes the rank's sleepers.
inline void publish(std::atomic<std::uint64_t>& flag, std::uint64_t value, WakeLine& wake) {
  // seq_cst store: ordered before the sleepers load below (see the protocol above); it also
  // releases every plain write made before it (slot data, signature) to acquiring readers.
  flag.store(value, std::memory_order_seq_cst);
  if (wake.sleepers.load(std::memory_order_seq_cst) != 0) {
    // relaxed is enough for the bump: the futex syscall itself orders it with the sleeper.
    wake.epoch.fetch_add(1, std::memory_order_relaxed);
    futex_wake_all(&wake.epoch);
  }
}

// Wakes everybody sleeping on `wake` regardless of flags (used when a team is aborted).
inline void wake_everyone(WakeLine& wake) {
  wake.epoch.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&wake.epoch);
}

}  // namespace shmcoll::sync
