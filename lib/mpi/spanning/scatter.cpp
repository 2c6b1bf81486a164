// Scatter and scatterv across nodes: the root sends each other node's blocks to its leader in
// one message, straight from its buffer, and scatters its own node's blocks with the team;
// each other node's leader scatters what it received.
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

void Spanning::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                       Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) return scatter_elsewhere(recvbuf, recvcount, recvtype, root, false);
  as_root(Direction::kSend, sendbuf, RootBlocks{sendtype.size, sendcount, {}, {}},
          [&](auto counts, auto displs) {
            team().scatterv(sendbuf, counts, displs, sendtype, recvbuf, recvcount, recvtype,
                            local_);
          });
}

void Spanning::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().scatter(sendbuf, sendcount, sendtype, in_place, root);
  }
  as_root(Direction::kSend, sendbuf, RootBlocks{sendtype.size, sendcount, {}, {}},
          [&](auto counts, auto displs) {
            team().scatterv(sendbuf, counts, displs, sendtype, in_place, local_);
          });
}

void Spanning::scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                        std::span<const Count> displs, Datatype sendtype, void* recvbuf,
                        Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) return scatter_elsewhere(recvbuf, recvcount, recvtype, root, true);
  as_root(Direction::kSend, sendbuf, RootBlocks{sendtype.size, 0, sendcounts, displs},
          [&](auto own_counts, auto own_displs) {
            team().scatterv(sendbuf, own_counts, own_displs, sendtype, recvbuf, recvcount, recvtype,
                            local_);
          });
}

void Spanning::scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                        std::span<const Count> displs, Datatype sendtype, InPlace, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().scatterv(sendbuf, sendcounts, displs, sendtype, in_place, root);
  }
  as_root(Direction::kSend, sendbuf, RootBlocks{sendtype.size, 0, sendcounts, displs},
          [&](auto own_counts, auto own_displs) {
            team().scatterv(sendbuf, own_counts, own_displs, sendtype, in_place, local_);
          });
}

void Spanning::scatter_elsewhere(void* recvbuf, Count recvcount, Datatype recvtype, int root,
                                 bool v_form) {
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  if (node_ == root_node) {
    const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
    return team().scatterv(nullptr, {}, {}, recvtype, recvbuf, recvcount, recvtype, root_local);
  }
  const std::uint64_t own = static_cast<std::uint64_t>(recvcount) * recvtype.size;
  if (!v_form) {
    // Every block of the node is the size of this rank's (MPI's rule; the team checks it).
    if (local_ != 0) return team().scatter(nullptr, 0, recvtype, recvbuf, recvcount, recvtype, 0);
    const std::vector<std::byte> blocks =
        receive_node_blocks(own * layout_.ranks_of(node_).size(), root);
    return team().scatter(blocks.data(), recvcount, recvtype, recvbuf, recvcount, recvtype, 0);
  }
  if (local_ != 0) {
    node_block_bytes(own);
    return team().scatterv(nullptr, {}, {}, recvtype, recvbuf, recvcount, recvtype, 0);
  }
  std::vector<Count> bytes;
  try {
    bytes = node_block_bytes(own);
  } catch (...) {
    drop_message(root);  // the root's, which this call does not take
    throw;
  }
  // The leader: its node's blocks, in team order, as the root sent them, scattered in bytes.
  const std::vector<Count> displs = packed_displs(bytes);
  const std::vector<std::byte> blocks =
      receive_node_blocks(static_cast<std::uint64_t>(displs.back() + bytes.back()), root);
  team().scatterv(blocks.data(), bytes, displs, kByte, recvbuf, recvcount, recvtype, 0);
}

}  // namespace shmcoll::mpi
