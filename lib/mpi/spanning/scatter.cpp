// Scatter across nodes: the root sends each other node's blocks to its leader in one message,
// straight from its buffer, and scatters its own node's blocks with the team; each other
// node's leader scatters what it received.
#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

void Spanning::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                       Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) return scatter_elsewhere(recvbuf, recvcount, recvtype, root);
  as_root(Direction::kSend, sendbuf, sendcount, sendtype, [&](auto counts, auto displs) {
    team().scatterv(sendbuf, counts, displs, sendtype, recvbuf, recvcount, recvtype, local_);
  });
}

void Spanning::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().scatter(sendbuf, sendcount, sendtype, in_place, root);
  }
  as_root(Direction::kSend, sendbuf, sendcount, sendtype, [&](auto counts, auto displs) {
    team().scatterv(sendbuf, counts, displs, sendtype, in_place, local_);
  });
}

void Spanning::scatter_elsewhere(void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  if (node_ == root_node) {
    const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
    return team().scatterv(nullptr, {}, {}, recvtype, recvbuf, recvcount, recvtype, root_local);
  }
  if (local_ != 0) return team().scatter(nullptr, 0, recvtype, recvbuf, recvcount, recvtype, 0);
  // The leader: its node's blocks, in team order, as the root sent them.
  const std::uint64_t bytes = node_bytes(static_cast<std::uint64_t>(recvcount) * recvtype.size);
  std::vector<std::byte> blocks(bytes);
  const ByteMessage message(bytes);
  check_mpi(PMPI_Recv(blocks.data(), message.count, message.type, root, kNodeMessageTag, messages_,
                      MPI_STATUS_IGNORE),
            "PMPI_Recv of the node's blocks from the root");
  team().scatter(blocks.data(), recvcount, recvtype, recvbuf, recvcount, recvtype, 0);
}

}  // namespace shmcoll::mpi
