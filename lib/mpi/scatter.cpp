// MPI_Scatter through shmcoll. Root only: sendbuf, sendcount, sendtype. With MPI_IN_PLACE at
// the root, recvcount and recvtype are not looked at.
#include <climits>

#include "mpi/serve.hpp"
#include "mpi/typed_buffer.hpp"

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  return serve(
      "MPI_Scatter", Coll::kScatter, comm,
      [&](int rank, int size, LocalError& error) {
        return check_rooted(true, rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, root, error);
      },
      [&](int rank) { return uniform_moves_nothing(rank, root, sendcount, recvcount); },
      [&](shmcoll::Team& team) {
        const bool in_place = recvbuf == MPI_IN_PLACE;
        if (team.rank() != root) {
          RecvView recv;
          if (int rc = recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
          team.scatter(nullptr, 0, shmcoll::kByte, recv.data(), recv.count(), recv.element(), root);
          return recv.finish(comm);
        }
        // The root's buffer holds size() blocks; packed, block r is the r-th run of bytes.
        const long long all = static_cast<long long>(sendcount) * team.size();
        SendView send;
        if (int rc = send.init(sendbuf,
                               all > INT_MAX || sendcount < 0 ? sendcount : static_cast<int>(all),
                               sendtype, comm);
            rc != MPI_SUCCESS) {
          return rc;
        }
        const shmcoll::Count per_rank = sendcount < 0 ? sendcount : send.count() / team.size();
        if (in_place) {
          team.scatter(send.data(), per_rank, send.element(), shmcoll::in_place, root);
          return MPI_SUCCESS;
        }
        RecvView recv;
        if (int rc = recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
        team.scatter(send.data(), per_rank, send.element(), recv.data(), recv.count(),
                     recv.element(), root);
        return recv.finish(comm);
      },
      [&] {
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}
