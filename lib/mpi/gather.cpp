// MPI_Gather through shmcoll. Root only: recvbuf, recvcount, recvtype. With MPI_IN_PLACE at the
// root, sendcount and sendtype are not looked at.
#include <climits>

#include "mpi/serve.hpp"
#include "mpi/typed_buffer.hpp"

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  return serve(
      "MPI_Gather", Coll::kGather, comm,
      [&](int rank, int size, LocalError& error) {
        return check_rooted(false, rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, root, error);
      },
      [&](int rank) { return uniform_moves_nothing(rank, root, recvcount, sendcount); },
      [&](shmcoll::Team& team) {
        const bool in_place = sendbuf == MPI_IN_PLACE;
        if (team.rank() != root) {
          SendView send;
          if (int rc = send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
          team.gather(send.data(), send.count(), send.element(), nullptr, 0, shmcoll::kByte, root);
          return MPI_SUCCESS;
        }
        const long long all = static_cast<long long>(recvcount) * team.size();
        RecvView recv;
        if (int rc = recv.init(recvbuf,
                               all > INT_MAX || recvcount < 0 ? recvcount : static_cast<int>(all),
                               recvtype);
            rc != MPI_SUCCESS) {
          return rc;
        }
        const shmcoll::Count per_rank = recvcount < 0 ? recvcount : recv.count() / team.size();
        if (in_place) {
          // A packed receive buffer must carry the root's block too, or unpacking would
          // overwrite it with nothing.
          if (int rc = recv.preload(root * recvcount, recvcount, comm); rc != MPI_SUCCESS)
            return rc;
          team.gather(shmcoll::in_place, recv.data(), per_rank, recv.element(), root);
        } else {
          SendView send;
          if (int rc = send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
          team.gather(send.data(), send.count(), send.element(), recv.data(), per_rank,
                      recv.element(), root);
        }
        return recv.finish(comm);
      },
      [&] {
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}
