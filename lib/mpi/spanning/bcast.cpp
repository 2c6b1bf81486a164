// Broadcast across nodes: the root's node first where the root does not lead it (its leader
// needs the data), then the leaders through the MPI, then every other node from its leader;
// blocking, or started (started.hpp) with the same steps.
#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

void Spanning::bcast(void* buffer, Count count, Datatype type, int root) {
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
  const bool in_root_node = node_ == root_node;
  if (in_root_node && root_local != 0) team().bcast(buffer, count, type, root_local);
  if (local_ == 0) {
    const ByteMessage message(static_cast<std::uint64_t>(count) * type.size);
    check_mpi(PMPI_Bcast(buffer, message.count, message.type, root_node, leaders_),
              "PMPI_Bcast between the nodes' leaders");
  }
  if ((!in_root_node || root_local == 0) && !alone()) team().bcast(buffer, count, type, 0);
}

Spanning::Started Spanning::ibcast(void* buffer, Count count, Datatype type, int root) {
  auto call = std::make_shared<StartedCall>(*this);
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
  const bool in_root_node = node_ == root_node;
  if (in_root_node && root_local != 0) {
    call->then([this, buffer, count, type, root_local](StartedCall::Waiting& waiting) {
      waiting.team = team().ibcast(buffer, count, type, root_local);
    });
  }
  if (local_ == 0) {
    call->then([this, buffer, count, type, root_node](StartedCall::Waiting& waiting) {
      // The datatype may be freed before the broadcast ends (MPI: it completes normally).
      const ByteMessage message(static_cast<std::uint64_t>(count) * type.size);
      check_mpi(PMPI_Ibcast(buffer, message.count, message.type, root_node, leaders_,
                            &waiting.mpi.emplace_back(MPI_REQUEST_NULL)),
                "PMPI_Ibcast between the nodes' leaders");
    });
  }
  if ((!in_root_node || root_local == 0) && !alone()) {
    call->then([this, buffer, count, type](StartedCall::Waiting& waiting) {
      waiting.team = team().ibcast(buffer, count, type, 0);
    });
  }
  start_across_nodes(call);
  return call;
}

}  // namespace shmcoll::mpi
