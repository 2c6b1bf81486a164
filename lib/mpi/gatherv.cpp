// MPI_Gatherv through shmcoll. Root only: recvbuf, recvcounts, displs, recvtype.
#include "mpi/serve.hpp"
#include "mpi/typed_buffer.hpp"

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  return serve(
      "MPI_Gatherv", Coll::kGatherv, comm,
      [&](shmcoll::Team& team) {
        if (team.rank() != root) {
          SendView send;
          if (int rc = send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
          team.gatherv(send.data(), send.count(), send.element(), nullptr, {}, {}, shmcoll::kByte,
                       root);
          return MPI_SUCCESS;
        }
        VBlocks blocks;
        if (int rc = blocks.init_recv(recvbuf, recvcounts, displs, recvtype, team.size());
            rc != MPI_SUCCESS) {
          return rc;
        }
        const bool in_place = sendbuf == MPI_IN_PLACE;
        if (in_place) {
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
      },
      [&] {
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
      });
}
