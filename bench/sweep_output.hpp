// The collectives sweep of shmcoll-bench (sizes by powers of two, per collective) as the
// "collectives" of a JSON record and as gnuplot plots of latency and bandwidth against size.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi_comparison.hpp"
#include "spread.hpp"

namespace shmcoll::bench {

// One collective at one size.
struct SweepPoint {
  std::string collective;   // "bcast", ...
  std::uint64_t bytes = 0;  // per rank
  int iterations = 0;
  Spread slowest_us;          // over iterations: the slowest rank's time of each
  double osu_average_us = 0;  // the mean over ranks of each rank's mean
  double rank_mean_min_us = 0, rank_mean_max_us = 0;
  double bandwidth_mbps = 0;   // (ranks - 1) x bytes / slowest_us.median
  Spread memcpy_us, floor_us;  // over their repetitions
  std::string valid;           // "ok", "FAIL", or "-" when not checked
};

// [{"collective": "bcast", "sizes": [{"bytes", "iterations", "latency_us": spread,
// "osu_average_us", "rank_mean_us": {min, max}, "bandwidth_mbps", "memcpy_us": spread,
// "floor_us": spread, "valid"}, ...]}, ...], collectives in the order they ran.
nlohmann::ordered_json sweep_json(const std::vector<SweepPoint>& points);

// For each collective, the OSU average latency (top) and the bandwidth it gives, (ranks - 1) x
// bytes / latency (bottom), against size (log-log), with memcpy's latency and each compared
// series' (the MPIs' own, --compare) beside the sweep's.
std::string sweep_plot_script(const std::vector<SweepPoint>& points,
                              const std::vector<ComparedSeries>& compared, int ranks,
                              const std::string& title, const std::string& png_path);

}  // namespace shmcoll::bench
