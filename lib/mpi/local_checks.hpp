// What one rank can tell wrong in its own arguments, before anything collective happens.
//
// The plugin runs these before it decides a communicator's path (a collective step the MPI
// performs, which shmcoll cannot bound) and before a team moves any data, so a rank whose
// arguments are wrong on their own returns at once, with the MPI error class the MPI itself
// gives for the same mistake: MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_BUFFER.
// Only arguments MPI says the rank uses are looked at (root-only arguments at the root, the
// receive side of the root not under MPI_IN_PLACE).
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

namespace shmcoll::mpi {

struct ArgumentError {
  int mpi_class;        // MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_TYPE or MPI_ERR_BUFFER
  std::string message;  // names the rank, the argument and its value, without the function
};
using LocalCheck = std::optional<ArgumentError>;

LocalCheck check_bcast(int rank, int size, const void* buffer, int count, MPI_Datatype type,
                       int root);
// scatter and gather share their checks but for which side is the root's whole buffer.
LocalCheck check_scatter(int rank, int size, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root);
LocalCheck check_gather(int rank, int size, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root);
LocalCheck check_scatterv(int rank, int size, const void* sendbuf, const int sendcounts[],
                          MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root);
LocalCheck check_gatherv(int rank, int size, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, const void* recvbuf, const int recvcounts[],
                         MPI_Datatype recvtype, int root);

}  // namespace shmcoll::mpi
