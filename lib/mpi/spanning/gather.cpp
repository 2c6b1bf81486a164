// Gather across nodes: each node other than the root's gathers its blocks at its leader, which
// sends them to the root in one message; the root receives them straight into its buffer, and
// gathers its own node's blocks with the team.
#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

void Spanning::gather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                      Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) return gather_elsewhere(sendbuf, sendcount, sendtype, root);
  as_root(Direction::kReceive, recvbuf, recvcount, recvtype, [&](auto counts, auto displs) {
    team().gatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, local_);
  });
}

void Spanning::gather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().gather(in_place, recvbuf, recvcount, recvtype, root);
  }
  as_root(Direction::kReceive, recvbuf, recvcount, recvtype, [&](auto counts, auto displs) {
    team().gatherv(in_place, recvbuf, counts, displs, recvtype, local_);
  });
}

void Spanning::gather_elsewhere(const void* sendbuf, Count sendcount, Datatype sendtype, int root) {
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  if (node_ == root_node) {
    const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
    return team().gatherv(sendbuf, sendcount, sendtype, nullptr, {}, {}, sendtype, root_local);
  }
  if (local_ != 0) return team().gather(sendbuf, sendcount, sendtype, nullptr, 0, sendtype, 0);
  // The leader: its node's blocks, in team order, for the root.
  const std::uint64_t bytes = node_bytes(static_cast<std::uint64_t>(sendcount) * sendtype.size);
  std::vector<std::byte> blocks(bytes);
  team().gather(sendbuf, sendcount, sendtype, blocks.data(), sendcount, sendtype, 0);
  const ByteMessage message(bytes);
  check_mpi(PMPI_Send(blocks.data(), message.count, message.type, root, kNodeMessageTag, messages_),
            "PMPI_Send of the node's blocks to the root");
}

}  // namespace shmcoll::mpi
