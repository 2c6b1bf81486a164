// MPI_Gatherv through shmcoll. Root only: recvbuf, recvcounts, displs, recvtype.
#include "mpi/serve.hpp"
#include "mpi/typed_buffer.hpp"

namespace {
using namespace shmcoll::mpi;

// The root's part, out of line: its views of the blocks (VBlocks) made the frame that every
// sender's call entered too, and a sender's call through the plugin spent 37 instructions
// entering it.
[[gnu::noinline]] int gatherv_at_root(shmcoll::Team& team, const void* sendbuf, int sendcount,
                                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                      const int displs[], MPI_Datatype recvtype, int root,
                                      MPI_Comm comm) {
  VBlocks blocks;
  if (int rc = blocks.init_recv(recvbuf, recvcounts, displs, recvtype, team.size());
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (sendbuf == MPI_IN_PLACE) {
    if (int rc = blocks.preload(root, comm); rc != MPI_SUCCESS) return rc;
    team.gatherv(shmcoll::in_place, blocks.data(), blocks.counts(), blocks.displs(),
                 blocks.element(), root);
  } else {
    SendView send;
    if (int rc = send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
    team.gatherv(send.data(), send.count(), send.element(), blocks.data(), blocks.counts(),
                 blocks.displs(), blocks.element(), root);
  }
  return blocks.finish_recv(comm);
}

}  // namespace

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm) {
  return serve(
      "MPI_Gatherv", Coll::kGatherv, comm,
      [&](int rank, int size, LocalError& error) {
        return check_gatherv(rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                             recvtype, root, error);
      },
      never_empty,
      [&](shmcoll::Team& team) {
        if (team.rank() == root) {
          return gatherv_at_root(team, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, root, comm);
        }
        SendView send;
        if (int rc = send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
        team.gatherv(send.data(), send.count(), send.element(), nullptr, {}, {}, shmcoll::kByte,
                     root);
        return MPI_SUCCESS;
      },
      [&] {
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
      });
}
