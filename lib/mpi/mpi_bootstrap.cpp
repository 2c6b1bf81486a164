#include "mpi/mpi_bootstrap.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "shmcoll/error.hpp"

namespace shmcoll::mpi {

MpiBootstrap::MpiBootstrap(MPI_Comm comm) : comm_(comm) {
  PMPI_Comm_rank(comm, &rank_);
  PMPI_Comm_size(comm, &size_);
  char id[48] = {};
  if (rank_ == 0) {
    std::uint32_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) nonce = 0;
    std::snprintf(id, sizeof id, "mpi%d-%08x", static_cast<int>(getpid()), nonce);
  }
  if (PMPI_Bcast(id, sizeof id, MPI_CHAR, 0, comm) != MPI_SUCCESS) {
    throw BootstrapError("MPI bootstrap: PMPI_Bcast of the job id failed");
  }
  id[sizeof id - 1] = '\0';
  job_id_ = id;
}

void MpiBootstrap::allgather(const void* mine, void* all, std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw BootstrapError("MPI bootstrap: contribution too large");
  }
  const int n = static_cast<int>(bytes);
  if (PMPI_Allgather(mine, n, MPI_BYTE, all, n, MPI_BYTE, comm_) != MPI_SUCCESS) {
    throw BootstrapError("MPI bootstrap: PMPI_Allgather failed");
  }
}

}  // namespace shmcoll::mpi
