// shmcoll-bench --numa-matrix: measures the node matrix in this one process and prints it,
// optionally also as a JSON record and a heatmap.
#pragma once

#include <string>

namespace shmcoll::bench {

struct MatrixCommand {
  bool quick = false;
  std::string json_path, png_path;  // empty: not written
};

// Returns the program's exit status: 0, or 1 after printing what failed.
int run_numa_matrix(const MatrixCommand& command);

}  // namespace shmcoll::bench
