#include "mpi/node_map.hpp"

#include <vector>

namespace shmcoll::mpi {
namespace {

// Written once by record_node_map, before MPI_Init returns, so before any thread can call a
// collective that reads it.
struct NodeMap {
  bool recorded = false;
  std::vector<int> node_of;  // by MPI_COMM_WORLD rank: the lowest world rank on its node
  MPI_Group world = MPI_GROUP_NULL;
};

NodeMap& node_map() {
  static NodeMap map;
  return map;
}

}  // namespace

void record_node_map() {
  NodeMap& map = node_map();
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm node = MPI_COMM_NULL;
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int leader = rank;
  PMPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  PMPI_Comm_free(&node);
  map.node_of.resize(static_cast<std::size_t>(size));
  PMPI_Allgather(&leader, 1, MPI_INT, map.node_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  PMPI_Comm_group(MPI_COMM_WORLD, &map.world);
  map.recorded = true;
}

void forget_node_map() {
  NodeMap& map = node_map();
  if (!map.recorded) return;
  map.recorded = false;
  PMPI_Group_free(&map.world);
}

std::optional<bool> on_one_node(MPI_Comm comm) {
  const NodeMap& map = node_map();
  if (!map.recorded) return std::nullopt;
  MPI_Group group = MPI_GROUP_NULL;
  PMPI_Comm_group(comm, &group);
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), world(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  PMPI_Group_translate_ranks(group, size, ranks.data(), map.world, world.data());
  PMPI_Group_free(&group);
  for (int w : world) {
    if (w == MPI_UNDEFINED || w < 0 || w >= static_cast<int>(map.node_of.size()))
      return std::nullopt;
  }
  for (int w : world) {
    if (map.node_of[static_cast<std::size_t>(w)] != map.node_of[static_cast<std::size_t>(world[0])])
      return false;
  }
  return true;
}

}  // namespace shmcoll::mpi
