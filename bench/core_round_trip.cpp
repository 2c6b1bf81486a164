// core-round-trip: how long a cache line takes to go from one CPU to another and back, for
// the record that goes with every benchmark result.
//
// Why: on a virtual machine the host decides where the guest's CPUs run, and moves them, and
// everything that moves cache lines between the ranks follows this round trip (see
// docs/performance.md). A result without this number cannot be compared with another one.
//
// usage: core-round-trip [CPU_A CPU_B] (default: the first two CPUs this process may use)
// Prints the median of 7 measurements of 100,000 round trips each, in nanoseconds.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Two lines apart, so that neither side's prefetcher drags the other's flag along.
struct alignas(128) Flag {
  std::atomic<long> value{0};
};

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Mean nanoseconds per round trip: A stores i, B sees it and stores i, A sees that.
double measure(int cpu_a, int cpu_b, long trips) {
  Flag ping, pong;
  std::thread other([&] {
    pin_to(cpu_b);
    for (long i = 1; i <= trips; ++i) {
      // acquire/release: each side's store is the message; no other data travels with it.
      while (ping.value.load(std::memory_order_acquire) != i) {
      }
      pong.value.store(i, std::memory_order_release);
    }
  });
  pin_to(cpu_a);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 1; i <= trips; ++i) {
    ping.value.store(i, std::memory_order_release);
    while (pong.value.load(std::memory_order_acquire) != i) {
    }
  }
  const auto end = std::chrono::steady_clock::now();
  other.join();
  return std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(trips);
}

}  // namespace

int main(int argc, char** argv) {
  int cpu_a = -1, cpu_b = -1;
  if (argc == 3) {
    cpu_a = std::atoi(argv[1]);
    cpu_b = std::atoi(argv[2]);
  } else {
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    for (int c = 0; c < CPU_SETSIZE && cpu_b < 0; ++c) {
      if (!CPU_ISSET(c, &allowed)) continue;
      (cpu_a < 0 ? cpu_a : cpu_b) = c;
    }
  }
  if (cpu_a < 0 || cpu_b < 0) {
    std::fprintf(stderr, "core-round-trip: needs two CPUs (usage: core-round-trip [A B])\n");
    return 1;
  }
  std::vector<double> runs;
  for (int i = 0; i < 7; ++i) runs.push_back(measure(cpu_a, cpu_b, 100'000));
  std::sort(runs.begin(), runs.end());
  std::printf("core-to-core round trip, CPUs %d and %d: %.0f ns (median of 7; range %.0f-%.0f)\n",
              cpu_a, cpu_b, runs[3], runs.front(), runs.back());
  return 0;
}
