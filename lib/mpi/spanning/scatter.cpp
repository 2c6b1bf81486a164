// Scatter and scatterv across nodes: the root sends each other node's blocks to its leader in
// one message, straight from its buffer, and scatters its own node's blocks with the team;
// each other node's leader scatters what it received. A rank alone on its node needs no team:
// the root copies its own block, a leader receives its block where it belongs.
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

void Spanning::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                       Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) return scatter_elsewhere(recvbuf, recvcount, recvtype, root, false);
  scatter_as_root(sendbuf, RootBlocks{sendtype.size, sendcount, {}, {}}, sendtype, recvbuf,
                  recvcount, recvtype, false);
}

void Spanning::scatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().scatter(sendbuf, sendcount, sendtype, in_place, root);
  }
  scatter_as_root(sendbuf, RootBlocks{sendtype.size, sendcount, {}, {}}, sendtype, nullptr, 0,
                  sendtype, true);
}

void Spanning::scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                        std::span<const Count> displs, Datatype sendtype, void* recvbuf,
                        Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) return scatter_elsewhere(recvbuf, recvcount, recvtype, root, true);
  scatter_as_root(sendbuf, RootBlocks{sendtype.size, 0, sendcounts, displs}, sendtype, recvbuf,
                  recvcount, recvtype, false);
}

void Spanning::scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                        std::span<const Count> displs, Datatype sendtype, InPlace, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().scatterv(sendbuf, sendcounts, displs, sendtype, in_place, root);
  }
  scatter_as_root(sendbuf, RootBlocks{sendtype.size, 0, sendcounts, displs}, sendtype, nullptr, 0,
                  sendtype, true);
}

void Spanning::scatter_as_root(const void* sendbuf, const RootBlocks& blocks, Datatype sendtype,
                               void* recvbuf, Count recvcount, Datatype recvtype,
                               bool own_in_place) {
  as_root(Direction::kSend, sendbuf, blocks, [&](auto counts, auto displs) {
    if (alone()) {
      if (own_in_place) return;
      return copy_own_block(static_cast<const std::byte*>(sendbuf) + displs[0] * sendtype.size,
                            counts[0] * sendtype.size, recvbuf, recvcount * recvtype.size);
    }
    if (own_in_place) return team().scatterv(sendbuf, counts, displs, sendtype, in_place, local_);
    team().scatterv(sendbuf, counts, displs, sendtype, recvbuf, recvcount, recvtype, local_);
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
  // Alone on its node: the root's message is this rank's block.
  if (alone()) return receive_node_blocks(recvbuf, own, root);
  if (!v_form) {
    // Every block of the node is the size of this rank's (MPI's rule; the team checks it).
    if (local_ != 0) return team().scatter(nullptr, 0, recvtype, recvbuf, recvcount, recvtype, 0);
    const std::span<std::byte> blocks = staging(own * layout_.ranks_of(node_).size());
    receive_node_blocks(blocks.data(), blocks.size(), root);
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
  const std::span<std::byte> blocks =
      staging(static_cast<std::uint64_t>(displs.back() + bytes.back()));
  receive_node_blocks(blocks.data(), blocks.size(), root);
  team().scatterv(blocks.data(), bytes, displs, kByte, recvbuf, recvcount, recvtype, 0);
}

// The started forms (started.hpp), with the blocking forms' steps.

Spanning::Started Spanning::iscatter(const void* sendbuf, Count sendcount, Datatype sendtype,
                                     void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  if (rank_ == root) {
    return iscatter_as_root(sendbuf, RootBlocks{sendtype.size, sendcount, {}, {}}, sendtype,
                            recvbuf, recvcount, recvtype, false);
  }
  auto call = std::make_shared<StartedCall>(*this);
  scatter_elsewhere_steps(*call, recvbuf, recvcount, recvtype, root, false);
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::iscatter(const void* sendbuf, Count sendcount, Datatype sendtype,
                                     InPlace, int root) {
  if (rank_ == root) {
    return iscatter_as_root(sendbuf, RootBlocks{sendtype.size, sendcount, {}, {}}, sendtype,
                            nullptr, 0, sendtype, true);
  }
  // Misused off the root: the team reports it, as on one node.
  auto call = std::make_shared<StartedCall>(*this);
  call->then([this, sendbuf, sendcount, sendtype, root](StartedCall::Waiting& waiting) {
    waiting.team = team().iscatter(sendbuf, sendcount, sendtype, in_place, root);
  });
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::iscatterv(const void* sendbuf, std::span<const Count> sendcounts,
                                      std::span<const Count> displs, Datatype sendtype,
                                      void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  if (rank_ == root) {
    return iscatter_as_root(sendbuf, RootBlocks{sendtype.size, 0, sendcounts, displs}, sendtype,
                            recvbuf, recvcount, recvtype, false);
  }
  auto call = std::make_shared<StartedCall>(*this);
  scatter_elsewhere_steps(*call, recvbuf, recvcount, recvtype, root, true);
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::iscatterv(const void* sendbuf, std::span<const Count> sendcounts,
                                      std::span<const Count> displs, Datatype sendtype, InPlace,
                                      int root) {
  if (rank_ == root) {
    return iscatter_as_root(sendbuf, RootBlocks{sendtype.size, 0, sendcounts, displs}, sendtype,
                            nullptr, 0, sendtype, true);
  }
  // Misused off the root: the team reports it, as on one node.
  auto call = std::make_shared<StartedCall>(*this);
  call->then([this, sendbuf, sendtype, root](StartedCall::Waiting& waiting) {
    waiting.team = team().iscatterv(sendbuf, {}, {}, sendtype, in_place, root);
  });
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::iscatter_as_root(const void* sendbuf, const RootBlocks& blocks,
                                             Datatype sendtype, void* recvbuf, Count recvcount,
                                             Datatype recvtype, bool own_in_place) {
  auto call = std::make_shared<StartedCall>(*this);
  start_as_root(*call, Direction::kSend, sendbuf, blocks,
                [=, this](std::span<const Count> counts, std::span<const Count> displs) {
                  if (alone()) {
                    if (!own_in_place) {
                      copy_own_block(
                          static_cast<const std::byte*>(sendbuf) + displs[0] * sendtype.size,
                          counts[0] * sendtype.size, recvbuf, recvcount * recvtype.size);
                    }
                    return Request();
                  }
                  if (own_in_place)
                    return team().iscatterv(sendbuf, counts, displs, sendtype, in_place, local_);
                  return team().iscatterv(sendbuf, counts, displs, sendtype, recvbuf, recvcount,
                                          recvtype, local_);
                });
  start_across_nodes(call);
  return call;
}

void Spanning::scatter_elsewhere_steps(StartedCall& call, void* recvbuf, Count recvcount,
                                       Datatype recvtype, int root, bool v_form) {
  using Waiting = StartedCall::Waiting;
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  if (node_ == root_node) {
    const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
    return call.then([=, this](Waiting& waiting) {
      waiting.team =
          team().iscatterv(nullptr, {}, {}, recvtype, recvbuf, recvcount, recvtype, root_local);
    });
  }
  const std::uint64_t own = static_cast<std::uint64_t>(recvcount) * recvtype.size;
  // Alone on its node: the root's message is this rank's block.
  if (alone()) {
    return receive_step(
        call,
        [recvbuf, own] {
          return std::span<std::byte>(static_cast<std::byte*>(recvbuf),
                                      static_cast<std::size_t>(own));
        },
        root);
  }
  auto blocks = std::make_shared<std::span<std::byte>>();
  if (!v_form) {
    // Every block of the node is the size of this rank's (MPI's rule; the team checks it).
    if (local_ != 0) {
      return call.then([=, this](Waiting& waiting) {
        waiting.team = team().iscatter(nullptr, 0, recvtype, recvbuf, recvcount, recvtype, 0);
      });
    }
    receive_step(
        call,
        [this, blocks, own] { return *blocks = staging(own * layout_.ranks_of(node_).size()); },
        root);
    return call.then([=, this](Waiting& waiting) {
      waiting.team =
          team().iscatter(blocks->data(), recvcount, recvtype, recvbuf, recvcount, recvtype, 0);
    });
  }
  auto bytes = std::make_shared<BlockBytes>();
  bytes->own = static_cast<Count>(own);
  block_bytes_step(call, bytes);
  if (local_ != 0) {
    return call.then([=, this](Waiting& waiting) {
      waiting.team = team().iscatterv(nullptr, {}, {}, recvtype, recvbuf, recvcount, recvtype, 0);
    });
  }
  // The leader: its node's blocks, in team order, as the root sent them, scattered in bytes.
  receive_step(
      call,
      [this, bytes, blocks] {
        bytes->displs = packed_displs(bytes->all);
        return *blocks =
                   staging(static_cast<std::uint64_t>(bytes->displs.back() + bytes->all.back()));
      },
      root);
  call.then([=, this](Waiting& waiting) {
    waiting.team = team().iscatterv(blocks->data(), bytes->all, bytes->displs, kByte, recvbuf,
                                    recvcount, recvtype, 0);
  });
}

}  // namespace shmcoll::mpi
