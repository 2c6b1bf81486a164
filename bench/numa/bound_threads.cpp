#include "numa/bound_threads.hpp"

#include <algorithm>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace shmcoll::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Binds the calling thread to PU `pu`; an error text, empty on success.
std::string bind_here(hwloc_topology_t topology, int pu) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  hwloc_bitmap_only(set, static_cast<unsigned>(pu));
  const int rc = hwloc_set_cpubind(topology, set, HWLOC_CPUBIND_THREAD);
  const int err = errno;
  hwloc_bitmap_free(set);
  if (rc == 0) return {};
  return "cannot bind a thread to PU " + std::to_string(pu) + ": " + std::strerror(err);
}

}  // namespace

std::vector<double> timed_rounds(hwloc_topology_t topology, const std::vector<int>& pus, int warmup,
                                 int rounds, const std::function<void(int)>& work) {
  const std::size_t n = pus.size();
  const int total = warmup + rounds;
  std::vector<std::string> bind_errors(n);
  // starts[t][r], ends[t][r]: thread t's clock readings in round r.
  std::vector<std::vector<Clock::time_point>> starts(
      n, std::vector<Clock::time_point>(static_cast<std::size_t>(total))),
      ends = starts;
  std::barrier sync(static_cast<std::ptrdiff_t>(n));
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < n; ++t) {
      threads.emplace_back([&, t] {
        bind_errors[t] = bind_here(topology, pus[t]);
        sync.arrive_and_wait();  // every thread knows now whether all are bound
        if (std::any_of(bind_errors.begin(), bind_errors.end(),
                        [](const std::string& e) { return !e.empty(); }))
          return;  // no thread runs unbound work: the figures would be misattributed
        for (int r = 0; r < total; ++r) {
          sync.arrive_and_wait();
          const auto ur = static_cast<std::size_t>(r);
          starts[t][ur] = Clock::now();
          work(static_cast<int>(t));
          ends[t][ur] = Clock::now();
        }
      });
    }
  }
  for (const std::string& e : bind_errors) {
    if (!e.empty()) throw std::runtime_error(e);
  }
  std::vector<double> seconds;
  for (int r = warmup; r < total; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    Clock::time_point first = starts[0][ur], last = ends[0][ur];
    for (std::size_t t = 1; t < n; ++t) {
      first = std::min(first, starts[t][ur]);
      last = std::max(last, ends[t][ur]);
    }
    seconds.push_back(std::chrono::duration<double>(last - first).count());
  }
  return seconds;
}

}  // namespace shmcoll::bench
