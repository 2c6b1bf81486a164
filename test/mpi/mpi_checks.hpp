// The checks of the MPI test programs (plugin_behaviour, plugin_persistent, ...): each failed
// check prints one line naming the rank; finish() prints rank 0's totals, "N passed, M failed",
// finalizes MPI and gives the exit status (0 when nothing failed on this rank).
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>

namespace mpi_checks {

inline int g_rank = 0, g_size = 0;  // in MPI_COMM_WORLD, set by start()
inline int g_passed = 0, g_failed = 0;

inline void start() {
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

inline void check(bool ok, const std::string& what) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    std::fprintf(stderr, "[rank %d] FAILED: %s\n", g_rank, what.c_str());
  }
}

inline int finish() {
  int counts[2] = {g_passed, g_failed}, sums[2] = {0, 0};
  MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) std::printf("%d passed, %d failed\n", sums[0], sums[1]);
  MPI_Finalize();
  return g_failed > 0 ? 1 : 0;
}

}  // namespace mpi_checks
