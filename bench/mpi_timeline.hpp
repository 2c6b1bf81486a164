// mpi-bench's per-iteration timeline (MPI_BENCH_TIMELINE): when each rank's call starts
// relative to the root's call of the same iteration, and how long it lasts. Means over ranks
// hide who waits for whom; this shows it, e.g. that oversubscribed receivers start their call
// a microsecond after the root has finished, so the time they take is their own path, not a
// wait. Times come from CLOCK_MONOTONIC, which all processes of a node share (MPI_Wtime need
// not be comparable between processes).
#pragma once

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

namespace mpi_bench {

class Timeline {
 public:
  static double now_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
  }

  void clear() { times_.clear(); }
  void record(double start_us, double end_us) {
    times_.push_back(start_us);
    times_.push_back(end_us);
  }

  // Collective over MPI_COMM_WORLD (every rank recorded the same iterations): rank 0 prints one
  // line per rank to stderr, medians over the iterations.
  void report(const char* coll, long bytes, int rank, int size, int root) const {
    const int per_rank = static_cast<int>(times_.size());
    std::vector<double> all(rank == 0 ? times_.size() * static_cast<std::size_t>(size) : 0);
    MPI_Gather(times_.data(), per_rank, MPI_DOUBLE, all.data(), per_rank, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    if (rank != 0) return;
    const std::size_t iters = times_.size() / 2;
    const double* root_times = all.data() + static_cast<std::size_t>(root) * times_.size();
    for (int r = 0; r < size; ++r) {
      const double* mine = all.data() + static_cast<std::size_t>(r) * times_.size();
      std::vector<double> start, end, took;
      for (std::size_t i = 0; i < iters; ++i) {
        start.push_back(mine[2 * i] - root_times[2 * i]);
        end.push_back(mine[2 * i + 1] - root_times[2 * i]);
        took.push_back(mine[2 * i + 1] - mine[2 * i]);
      }
      std::fprintf(stderr,
                   "timeline %s %ld rank %d: starts %+.3f us after the root, ends %+.3f, "
                   "takes %.3f us (90th percentile %.3f)\n",
                   coll, bytes, r, quantile(start, 0.5), quantile(end, 0.5), quantile(took, 0.5),
                   quantile(took, 0.9));
    }
  }

 private:
  static double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  }

  std::vector<double> times_;  // start and end of each timed iteration, in microseconds
};

// Spins for `us` microseconds without calling MPI (nothing for 0 or less).
inline void busy_wait_us(double us) {
  if (us <= 0) return;
  const double until = Timeline::now_us() + us;
  while (Timeline::now_us() < until) {
  }
}

}  // namespace mpi_bench
