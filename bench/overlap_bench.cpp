// shmcoll-overlap: how much of a non-blocking collective hides behind computation, by the method
// of OSU's non-blocking collective tests:
//   pure     start + wait, nothing in between (the collective's time)
//   compute  a busy loop as long as this rank's pure time
//   overall  start, the same busy loop (no calls into the team), wait
//   overlap  100 x (1 - (overall - compute) / pure), clamped to [0, 100]
// Each iteration starts after a barrier; the root is rank 0; figures are means over iterations,
// averaged over ranks. Run it with and without SHMCOLL_PROGRESS_THREAD=1 (the table says which).
// --idle: the "computation" sleeps instead of spinning (I/O, waiting for a device), leaving the
// core free -- where a progress thread can run even without spare cores.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "shmcoll/byte_size.hpp"
#include "machine.hpp"
#include "shmcoll/shmcoll.hpp"

namespace {

using namespace shmcoll;
using Clock = std::chrono::steady_clock;

const char* const kNames[] = {"bcast", "scatter", "scatterv", "gather", "gatherv"};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Computation that touches no shared state: spins on the clock for `s` seconds, or sleeps.
void compute_for(double s, bool idle) {
  const auto until = Clock::now() + std::chrono::duration<double>(s);
  if (idle) {
    std::this_thread::sleep_until(until);
    return;
  }
  while (Clock::now() < until) {
  }
}

struct Buffers {
  std::vector<std::byte> send, recv;
  std::vector<Count> counts, displs;
};

// Starts collective `c` moving `bytes` per rank, root 0.
Request start(Team& team, int c, std::uint64_t bytes, Buffers& b) {
  const auto n = static_cast<Count>(bytes);
  switch (c) {
    case 0:
      return team.ibcast(b.send.data(), n, kByte, 0);
    case 1:
      return team.iscatter(b.send.data(), n, kByte, b.recv.data(), n, kByte, 0);
    case 2:
      return team.iscatterv(b.send.data(), b.counts, b.displs, kByte, b.recv.data(), n, kByte, 0);
    case 3:
      return team.igather(b.send.data(), n, kByte, b.recv.data(), n, kByte, 0);
    default:
      return team.igatherv(b.send.data(), n, kByte, b.recv.data(), b.counts, b.displs, kByte, 0);
  }
}

int iterations_for(std::uint64_t bytes) {
  return bytes <= 8192 ? 2000 : bytes <= (1u << 20) ? 200 : 30;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint64_t> sizes = {8, 64 * 1024, 4 * 1024 * 1024};
  bool idle = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--idle")) {
      idle = true;
    } else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes.clear();
      std::string list = argv[++i];
      for (std::size_t pos = 0; pos < list.size();) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::optional<long long> v = parse_byte_size(list.substr(pos, comma - pos));
        if (!v || *v <= 0) {
          std::fprintf(stderr, "shmcoll-overlap: bad size in '%s'\n", list.c_str());
          return 2;
        }
        sizes.push_back(static_cast<std::uint64_t>(*v));
        pos = comma + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: shmcoll-run -n N shmcoll-overlap [--sizes 8,64K,4M] [--idle]\n"
                   "(SHMCOLL_PROGRESS_THREAD=1 for the progress thread)\n");
      return 2;
    }
  }
  try {
    auto bootstrap = SocketBootstrap::from_environment();
    Team team(*bootstrap);
    const int me = team.rank(), size = team.size();
    const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    Buffers b;
    b.send.assign(largest * static_cast<std::uint64_t>(size), std::byte{1});
    b.recv.assign(largest * static_cast<std::uint64_t>(size), std::byte{0});
    if (me == 0) {
      std::printf(
          "# shmcoll-overlap: %d ranks, progress thread %s, computation %s, checks=%s\n"
          "# machine: %s\n",
          size, team.options().progress_thread ? "on" : "off", idle ? "sleeps" : "spins",
          check_level_name(team.options().checks), bench::describe_machine().c_str());
      std::printf("collective,bytes,progress_thread,pure_us,compute_us,overall_us,overlap_pct\n");
    }
    for (int c = 0; c < 5; ++c) {
      for (std::uint64_t bytes : sizes) {
        b.counts.assign(static_cast<std::size_t>(size), static_cast<Count>(bytes));
        b.displs.resize(static_cast<std::size_t>(size));
        for (int r = 0; r < size; ++r)
          b.displs[static_cast<std::size_t>(r)] = static_cast<Count>(bytes) * r;
        const int iters = iterations_for(bytes);
        for (int i = 0; i < iters / 10; ++i) start(team, c, bytes, b).wait();  // warm-up
        double pure = 0;
        for (int i = 0; i < iters; ++i) {
          team.barrier();
          const auto t0 = Clock::now();
          start(team, c, bytes, b).wait();
          pure += seconds_since(t0);
        }
        pure /= iters;
        double compute = 0, overall = 0;
        for (int i = 0; i < iters; ++i) {
          team.barrier();
          const auto t0 = Clock::now();
          Request r = start(team, c, bytes, b);
          const auto t1 = Clock::now();
          compute_for(pure, idle);
          compute += seconds_since(t1);
          r.wait();
          overall += seconds_since(t0);
        }
        compute /= iters;
        overall /= iters;
        const double overlap = std::clamp(100.0 * (1.0 - (overall - compute) / pure), 0.0, 100.0);
        double mine[4] = {pure, compute, overall, overlap};
        std::vector<double> all(static_cast<std::size_t>(4 * size));
        team.gather(std::span<const double>(mine, 4), std::span<double>(all), 0);
        if (me == 0) {
          double avg[4] = {0, 0, 0, 0};
          for (int r = 0; r < size; ++r)
            for (int k = 0; k < 4; ++k) avg[k] += all[static_cast<std::size_t>(4 * r + k)] / size;
          std::printf("%s,%llu,%s,%.3f,%.3f,%.3f,%.1f\n", kNames[c],
                      static_cast<unsigned long long>(bytes),
                      team.options().progress_thread ? "on" : "off", avg[0] * 1e6, avg[1] * 1e6,
                      avg[2] * 1e6, avg[3]);
          std::fflush(stdout);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shmcoll-overlap: %s\n", e.what());
    return 1;
  }
  return 0;
}
