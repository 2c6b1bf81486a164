// MPI_Finalize: complete the outstanding requests and release the teams of the predefined
// communicators first, and print the served/fallback counts in verbose mode.
#include <cstdio>

#include "mpi/node_map.hpp"
#include "mpi/persistent.hpp"
#include "mpi/plugin.hpp"
#include "mpi/requests.hpp"

extern "C" int MPI_Finalize() {
  using namespace shmcoll::mpi;
  try {
    const bool verbose = config().verbose;  // first: it checks which MPI runs
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (verbose && rank == 0) {
      std::fprintf(stderr, "shmcoll-mpi: rank 0 served %llu calls, %llu went to PMPI\n",
                   static_cast<unsigned long long>(stats().served.load()),
                   static_cast<unsigned long long>(stats().fallback.load()));
    }
    finish_all_requests();      // those the program freed while active
    free_held_communicators();  // kept for persistent requests never freed
    forget_windows();
    release_predefined_communicators();
    forget_node_map();
  } catch (...) {
  }
  return PMPI_Finalize();
}

// For tests and tools: how many calls this process served through shmcoll and sent to PMPI.
extern "C" void shmcoll_mpi_stats(unsigned long long* served, unsigned long long* fallback) {
  *served = shmcoll::mpi::stats().served.load();
  *fallback = shmcoll::mpi::stats().fallback.load();
}

// The served calls by form: blocking (MPI_Bcast, ...), non-blocking (MPI_Ibcast, ...) and
// persistent (MPI_Bcast_init and each MPI_Start of it), whether the program called them from C
// or Fortran.
extern "C" void shmcoll_mpi_stats_by_form(unsigned long long* blocking,
                                          unsigned long long* nonblocking,
                                          unsigned long long* persistent) {
  const shmcoll::mpi::Stats& counts = shmcoll::mpi::stats();
  *persistent = counts.served_persistent.load();
  *nonblocking = counts.served_nonblocking.load();
  *blocking = counts.served.load() - *nonblocking - *persistent;
}
