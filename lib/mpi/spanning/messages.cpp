// The messages between a scatter's or gather's root and the other nodes' leaders.
#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

std::vector<MPI_Request> Spanning::start_node_messages(Direction direction, void* buffer,
                                                       std::uint64_t block) {
  std::vector<MPI_Request> requests;
  requests.reserve(static_cast<std::size_t>(layout_.nodes()));
  std::vector<std::uint64_t> offsets;
  for (int k = 0; k < layout_.nodes(); ++k) {
    if (k == node_) continue;
    const std::span<const int> ranks = layout_.ranks_of(k);
    offsets.resize(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      offsets[i] = static_cast<std::uint64_t>(ranks[i]) * block;
    // Freed once the message is posted: the MPI keeps what it still uses.
    const OwnedType blocks = scattered_blocks(block, offsets);
    MPI_Request& request = requests.emplace_back(MPI_REQUEST_NULL);
    if (direction == Direction::kSend) {
      check_mpi(PMPI_Isend(buffer, 1, blocks.get(), layout_.leader_of(k), kNodeMessageTag,
                           messages_, &request),
                "PMPI_Isend of a node's blocks to its leader");
    } else {
      check_mpi(PMPI_Irecv(buffer, 1, blocks.get(), layout_.leader_of(k), kNodeMessageTag,
                           messages_, &request),
                "PMPI_Irecv of a node's blocks from its leader");
    }
  }
  return requests;
}

void Spanning::complete(std::vector<MPI_Request>& requests, const char* what) {
  check_mpi(PMPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
            what);
}

}  // namespace shmcoll::mpi
