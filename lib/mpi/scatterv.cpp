// MPI_Scatterv through shmcoll. Root only: sendbuf, sendcounts, displs, sendtype.
#include "mpi/serve.hpp"
#include "mpi/typed_buffer.hpp"

namespace {
using namespace shmcoll::mpi;

// The root's part, out of line, as in MPI_Gatherv: its frame is not the receivers'.
[[gnu::noinline]] int scatterv_from_root(shmcoll::Team& team, const void* sendbuf,
                                         const int sendcounts[], const int displs[],
                                         MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                         MPI_Datatype recvtype, int root, MPI_Comm comm) {
  VBlocks blocks;
  if (int rc = blocks.init_send(sendbuf, sendcounts, displs, sendtype, team.size(), comm);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (recvbuf == MPI_IN_PLACE) {
    team.scatterv(blocks.data(), blocks.counts(), blocks.displs(), blocks.element(),
                  shmcoll::in_place, root);
    return MPI_SUCCESS;
  }
  RecvView recv;
  if (int rc = recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
  team.scatterv(blocks.data(), blocks.counts(), blocks.displs(), blocks.element(), recv.data(),
                recv.count(), recv.element(), root);
  return recv.finish(comm);
}

}  // namespace

extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return serve(
      "MPI_Scatterv", Coll::kScatterv, comm,
      [&](int rank, int size, LocalError& error) {
        return check_scatterv(rank, size, sendbuf, sendcounts, sendtype, recvbuf, recvcount,
                              recvtype, root, error);
      },
      never_empty,
      [&](shmcoll::Team& team) {
        if (team.rank() == root) {
          return scatterv_from_root(team, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                    recvtype, root, comm);
        }
        RecvView recv;
        if (int rc = recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
        team.scatterv(nullptr, {}, {}, shmcoll::kByte, recv.data(), recv.count(), recv.element(),
                      root);
        return recv.finish(comm);
      },
      [&] {
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                             root, comm);
      });
}
