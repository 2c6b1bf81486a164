// MPI_Bcast through shmcoll.
#include "mpi/serve.hpp"
#include "mpi/typed_buffer.hpp"

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  return serve(
      "MPI_Bcast", Coll::kBcast, comm,
      [&](int rank, int size, LocalError& error) {
        return check_bcast(rank, size, buffer, count, datatype, root, error);
      },
      [&](int) { return count == 0; },
      [&](shmcoll::Team& team) {
        if (team.rank() == root) {
          SendView send;
          if (int rc = send.init(buffer, count, datatype, comm); rc != MPI_SUCCESS) return rc;
          team.bcast(const_cast<void*>(send.data()), send.count(), send.element(), root);
          return MPI_SUCCESS;
        }
        RecvView recv;
        if (int rc = recv.init(buffer, count, datatype); rc != MPI_SUCCESS) return rc;
        team.bcast(recv.data(), recv.count(), recv.element(), root);
        return recv.finish(comm);
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}
