// The MPIs' own figures for the same collectives, from mpi-bench's CSV output (what
// bench/compare_mpi.sh keeps: label, collective, ranks, bytes, iterations, avg_us, ...), for
// shmcoll-bench --compare: drawn beside the sweep's and kept in its record.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shmcoll::bench {

struct ComparedPoint {
  std::string collective;
  std::uint64_t bytes = 0;
  double osu_average_us = 0;
};

// One labelled series of a file ("openmpi", "openmpi+shmcoll", ...).
struct ComparedSeries {
  std::string label, file;
  std::vector<ComparedPoint> points;
};

// The rows of `ranks` ranks of an mpi-bench CSV file, one series per label in the order they
// first appear. Throws std::runtime_error naming the file (and the line) when it cannot be
// read, is not mpi-bench's, or holds no row for `ranks` ranks.
std::vector<ComparedSeries> read_mpi_bench_csv(const std::string& path, int ranks);

// [{"label", "file", "points": [{"collective", "bytes", "osu_average_us"}]}]
nlohmann::ordered_json compared_json(const std::vector<ComparedSeries>& series);

}  // namespace shmcoll::bench
