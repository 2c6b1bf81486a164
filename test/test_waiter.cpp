// The escalating waiter (lib/sync/waiter.cpp) on its own, with threads of one process: when it
// asks its observer to wake the waiter's own sleepers (before_sleep), and that a writer's wake
// ends a sleep.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "sync/wake_line.hpp"
#include "sync/waiter.hpp"

namespace shmcoll::sync {
namespace {

struct CountingObserver final : WaitObserver {
  std::atomic<int> slow_checks{0};
  std::atomic<int> before_sleeps{0};
  void on_slow_wait(const WaitTarget&, std::int64_t) override { ++slow_checks; }
  void before_sleep() override { ++before_sleeps; }
};

WaitPolicy short_policy() {
  WaitPolicy p;
  p.spin_iterations = 10;
  p.yield_iterations = 4;
  p.sleep_slice_ns = 1'000'000;
  return p;
}

}  // namespace

TEST_CASE("waiter: a wait that ends before sleeping never asks to wake sleepers") {
  std::atomic<std::uint64_t> flag{5};
  WakeLine wake;
  CountingObserver observer;
  const WaitTarget target{&flag, 5, 0};
  CHECK(wait_for(target, wake, short_policy(), observer));
  CHECK(observer.before_sleeps == 0);
  CHECK(observer.slow_checks == 0);  // it was reached at once

  // Reached during the yields (a thread sets it while this one spins and yields): whether the
  // wait got to its sleep depends on the scheduler, but it asks at most once.
  std::atomic<std::uint64_t> late{0};
  std::thread setter([&] { late.store(1, std::memory_order_release); });
  CHECK(wait_for({&late, 1, 0}, wake, short_policy(), observer, now_ns() + 2'000'000'000));
  setter.join();
  CHECK(observer.before_sleeps <= 1);
}

TEST_CASE("waiter: before_sleep runs once, before the first sleep, however many slices follow") {
  std::atomic<std::uint64_t> flag{0};
  WakeLine wake;
  CountingObserver observer;
  // Never set: the wait yields, sleeps slice after slice (1 ms each), and gives up at its
  // deadline. (On a busy machine the thread may lose its CPU past the deadline before its first
  // sleep: then it never sleeps, and must not ask either.)
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(wait_for({&flag, 1, 0}, wake, short_policy(), observer, now_ns() + 50'000'000));
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(50));
  CHECK(observer.before_sleeps <= 1);
  CHECK(observer.slow_checks >= 2);  // one before the yields, one per slice or deadline check
  // A check after a slice means it slept, and asked before it did.
  if (observer.slow_checks >= 3) CHECK(observer.before_sleeps == 1);
}

TEST_CASE("waiter: a writer's publish and wake end a sleeper's wait long before its slice") {
  std::atomic<std::uint64_t> flag{0};
  WakeLine wake;
  CountingObserver observer;
  WaitPolicy policy = short_policy();
  policy.sleep_slice_ns = 10'000'000'000;  // 10 s: only the wake (or the first re-check) ends it
  std::thread writer([&] {
    // Once the waiter sleeps, publish and wake as a departing rank does.
    while (wake.sleepers.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
    publish(flag, 1);
    wake_sleepers(wake);
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(wait_for({&flag, 1, 0}, wake, policy, observer));
  const auto waited = std::chrono::steady_clock::now() - t0;
  writer.join();
  CHECK(waited < std::chrono::seconds(1));
  CHECK(observer.before_sleeps == 1);
}

}  // namespace shmcoll::sync
