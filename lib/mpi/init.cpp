// MPI_Init and MPI_Init_thread: the MPI's own, then the map of which node each rank of
// MPI_COMM_WORLD runs on (node_map.hpp).
#include "mpi/node_map.hpp"
#include "mpi/plugin.hpp"

namespace {

// The configuration is read later, at the first collective, as before: a program may set the
// plugin's variables after MPI_Init.
int after_init(int rc) {
  if (rc != MPI_SUCCESS) return rc;
  shmcoll::mpi::check_mpi_library();
  int level = MPI_THREAD_MULTIPLE;
  PMPI_Query_thread(&level);
  shmcoll::mpi::concurrent_mpi_calls.store(level == MPI_THREAD_MULTIPLE, std::memory_order_relaxed);
  shmcoll::mpi::record_node_map();
  return rc;
}

}  // namespace

extern "C" int MPI_Init(int* argc, char*** argv) { return after_init(PMPI_Init(argc, argv)); }

extern "C" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return after_init(PMPI_Init_thread(argc, argv, required, provided));
}
