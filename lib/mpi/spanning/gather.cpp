// Gather and gatherv across nodes: each node other than the root's gathers its blocks at its
// leader, which sends them to the root in one message; the root receives them straight into
// its buffer, and gathers its own node's blocks with the team. A rank alone on its node needs
// no team: the root copies its own block, a leader sends its block from where it is.
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

void Spanning::gather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                      Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) return gather_elsewhere(sendbuf, sendcount, sendtype, root, false);
  gather_as_root(sendbuf, sendcount, sendtype, recvbuf,
                 RootBlocks{recvtype.size, recvcount, {}, {}}, recvtype, false);
}

void Spanning::gather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().gather(in_place, recvbuf, recvcount, recvtype, root);
  }
  gather_as_root(nullptr, 0, recvtype, recvbuf, RootBlocks{recvtype.size, recvcount, {}, {}},
                 recvtype, true);
}

void Spanning::gatherv(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                       std::span<const Count> recvcounts, std::span<const Count> displs,
                       Datatype recvtype, int root) {
  if (rank_ != root) return gather_elsewhere(sendbuf, sendcount, sendtype, root, true);
  gather_as_root(sendbuf, sendcount, sendtype, recvbuf,
                 RootBlocks{recvtype.size, 0, recvcounts, displs}, recvtype, false);
}

void Spanning::gatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                       std::span<const Count> displs, Datatype recvtype, int root) {
  if (rank_ != root) {
    // Misused off the root: the team reports it, as on one node.
    return team().gatherv(in_place, recvbuf, recvcounts, displs, recvtype, root);
  }
  gather_as_root(nullptr, 0, recvtype, recvbuf, RootBlocks{recvtype.size, 0, recvcounts, displs},
                 recvtype, true);
}

void Spanning::gather_as_root(const void* sendbuf, Count sendcount, Datatype sendtype,
                              void* recvbuf, const RootBlocks& blocks, Datatype recvtype,
                              bool own_in_place) {
  as_root(Direction::kReceive, recvbuf, blocks, [&](auto counts, auto displs) {
    if (alone()) {
      if (own_in_place) return;
      return copy_own_block(sendbuf, sendcount * sendtype.size,
                            static_cast<std::byte*>(recvbuf) + displs[0] * recvtype.size,
                            counts[0] * recvtype.size);
    }
    if (own_in_place) return team().gatherv(in_place, recvbuf, counts, displs, recvtype, local_);
    team().gatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, local_);
  });
}

void Spanning::gather_elsewhere(const void* sendbuf, Count sendcount, Datatype sendtype, int root,
                                bool v_form) {
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  if (node_ == root_node) {
    const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
    return team().gatherv(sendbuf, sendcount, sendtype, nullptr, {}, {}, sendtype, root_local);
  }
  const std::uint64_t own = static_cast<std::uint64_t>(sendcount) * sendtype.size;
  // Alone on its node: this rank's block is the node's message.
  if (alone()) return send_node_blocks(sendbuf, own, root);
  if (!v_form) {
    // Every block of the node is the size of this rank's (MPI's rule; the team checks it).
    if (local_ != 0) return team().gather(sendbuf, sendcount, sendtype, nullptr, 0, sendtype, 0);
  } else if (local_ != 0) {
    node_block_bytes(own);
    return team().gatherv(sendbuf, sendcount, sendtype, nullptr, {}, {}, sendtype, 0);
  }
  // The leader: its node's blocks, in team order, gathered in bytes for the root, or a
  // failure notice in their place.
  std::span<std::byte> blocks;
  try {
    if (!v_form) {
      blocks = staging(own * layout_.ranks_of(node_).size());
      team().gather(sendbuf, sendcount, sendtype, blocks.data(), sendcount, sendtype, 0);
    } else {
      const std::vector<Count> bytes = node_block_bytes(own);
      const std::vector<Count> displs = packed_displs(bytes);
      blocks = staging(static_cast<std::uint64_t>(displs.back() + bytes.back()));
      team().gatherv(sendbuf, sendcount, sendtype, blocks.data(), bytes, displs, kByte, 0);
    }
  } catch (...) {
    send_failure_notice(root);
    throw;
  }
  try {
    send_node_blocks(blocks.data(), blocks.size(), root);
  } catch (const Error& e) {
    throw NodeTeamIntact(e);
  }
}

// The started forms (started.hpp), with the blocking forms' steps.

Spanning::Started Spanning::igather(const void* sendbuf, Count sendcount, Datatype sendtype,
                                    void* recvbuf, Count recvcount, Datatype recvtype, int root) {
  if (rank_ == root) {
    return igather_as_root(sendbuf, sendcount, sendtype, recvbuf,
                           RootBlocks{recvtype.size, recvcount, {}, {}}, recvtype, false);
  }
  auto call = std::make_shared<StartedCall>(*this);
  gather_elsewhere_steps(*call, sendbuf, sendcount, sendtype, root, false);
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::igather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype,
                                    int root) {
  if (rank_ == root) {
    return igather_as_root(nullptr, 0, recvtype, recvbuf,
                           RootBlocks{recvtype.size, recvcount, {}, {}}, recvtype, true);
  }
  // Misused off the root: the team reports it, as on one node.
  auto call = std::make_shared<StartedCall>(*this);
  call->then([this, recvbuf, recvcount, recvtype, root](StartedCall::Waiting& waiting) {
    waiting.team = team().igather(in_place, recvbuf, recvcount, recvtype, root);
  });
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::igatherv(const void* sendbuf, Count sendcount, Datatype sendtype,
                                     void* recvbuf, std::span<const Count> recvcounts,
                                     std::span<const Count> displs, Datatype recvtype, int root) {
  if (rank_ == root) {
    return igather_as_root(sendbuf, sendcount, sendtype, recvbuf,
                           RootBlocks{recvtype.size, 0, recvcounts, displs}, recvtype, false);
  }
  auto call = std::make_shared<StartedCall>(*this);
  gather_elsewhere_steps(*call, sendbuf, sendcount, sendtype, root, true);
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::igatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                                     std::span<const Count> displs, Datatype recvtype, int root) {
  if (rank_ == root) {
    return igather_as_root(nullptr, 0, recvtype, recvbuf,
                           RootBlocks{recvtype.size, 0, recvcounts, displs}, recvtype, true);
  }
  // Misused off the root: the team reports it, as on one node.
  auto call = std::make_shared<StartedCall>(*this);
  call->then([this, recvbuf, recvtype, root](StartedCall::Waiting& waiting) {
    waiting.team = team().igatherv(in_place, recvbuf, {}, {}, recvtype, root);
  });
  start_across_nodes(call);
  return call;
}

Spanning::Started Spanning::igather_as_root(const void* sendbuf, Count sendcount, Datatype sendtype,
                                            void* recvbuf, const RootBlocks& blocks,
                                            Datatype recvtype, bool own_in_place) {
  auto call = std::make_shared<StartedCall>(*this);
  start_as_root(*call, Direction::kReceive, recvbuf, blocks,
                [=, this](std::span<const Count> counts, std::span<const Count> displs) {
                  if (alone()) {
                    if (!own_in_place) {
                      copy_own_block(sendbuf, sendcount * sendtype.size,
                                     static_cast<std::byte*>(recvbuf) + displs[0] * recvtype.size,
                                     counts[0] * recvtype.size);
                    }
                    return Request();
                  }
                  if (own_in_place)
                    return team().igatherv(in_place, recvbuf, counts, displs, recvtype, local_);
                  return team().igatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs,
                                         recvtype, local_);
                });
  start_across_nodes(call);
  return call;
}

void Spanning::gather_elsewhere_steps(StartedCall& call, const void* sendbuf, Count sendcount,
                                      Datatype sendtype, int root, bool v_form) {
  using Waiting = StartedCall::Waiting;
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  if (node_ == root_node) {
    const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
    return call.then([=, this](Waiting& waiting) {
      waiting.team =
          team().igatherv(sendbuf, sendcount, sendtype, nullptr, {}, {}, sendtype, root_local);
    });
  }
  const std::uint64_t own = static_cast<std::uint64_t>(sendcount) * sendtype.size;
  // Alone on its node: this rank's block is the node's message.
  if (alone()) {
    return send_step(
        call,
        [sendbuf, own] {
          return std::span<std::byte>(static_cast<std::byte*>(const_cast<void*>(sendbuf)),
                                      static_cast<std::size_t>(own));
        },
        root);
  }
  auto blocks = std::make_shared<std::span<std::byte>>();
  if (!v_form) {
    // Every block of the node is the size of this rank's (MPI's rule; the team checks it).
    if (local_ != 0) {
      return call.then([=, this](Waiting& waiting) {
        waiting.team = team().igather(sendbuf, sendcount, sendtype, nullptr, 0, sendtype, 0);
      });
    }
    // The leader: its node's blocks, in team order, gathered in bytes for the root.
    call.then([=, this](Waiting& waiting) {
      *blocks = staging(own * layout_.ranks_of(node_).size());
      waiting.team =
          team().igather(sendbuf, sendcount, sendtype, blocks->data(), sendcount, sendtype, 0);
    });
    return send_step(
        call, [blocks] { return *blocks; }, root);
  }
  auto bytes = std::make_shared<BlockBytes>();
  bytes->own = static_cast<Count>(own);
  block_bytes_step(call, bytes);
  if (local_ != 0) {
    return call.then([=, this](Waiting& waiting) {
      waiting.team = team().igatherv(sendbuf, sendcount, sendtype, nullptr, {}, {}, sendtype, 0);
    });
  }
  call.then([=, this](Waiting& waiting) {
    bytes->displs = packed_displs(bytes->all);
    *blocks = staging(static_cast<std::uint64_t>(bytes->displs.back() + bytes->all.back()));
    waiting.team = team().igatherv(sendbuf, sendcount, sendtype, blocks->data(), bytes->all,
                                   bytes->displs, kByte, 0);
  });
  send_step(
      call, [blocks] { return *blocks; }, root);
}

}  // namespace shmcoll::mpi
