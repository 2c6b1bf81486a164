#include "mpi/node_map.hpp"

#include <map>
#include <utility>
#include <vector>

#include "mpi/plugin.hpp"

namespace shmcoll::mpi {
namespace {

// Written once by record_node_map, before MPI_Init returns, so before any thread can call a
// collective that reads it.
struct NodeMap {
  bool recorded = false;
  std::vector<int> node_of;  // by MPI_COMM_WORLD rank: the lowest world rank on its node
  MPI_Group world = MPI_GROUP_NULL;
};

// Divides each machine's ranks in `parts` by world rank modulo `parts`: rank w then runs on
// the node of the lowest world rank of its machine with the same remainder.
void divide_nodes(std::vector<int>& node_of, int parts) {
  if (parts <= 1) return;
  std::map<std::pair<int, int>, int> lowest;  // (machine, remainder) -> lowest world rank
  for (int w = 0; w < static_cast<int>(node_of.size()); ++w) {
    const auto key = std::make_pair(node_of[static_cast<std::size_t>(w)], w % parts);
    node_of[static_cast<std::size_t>(w)] = lowest.emplace(key, w).first->second;
  }
}

NodeMap& node_map() {
  static NodeMap map;
  return map;
}

}  // namespace

std::vector<int> node_colors_by_split(MPI_Comm comm) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  MPI_Comm node = MPI_COMM_NULL;
  PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int lowest = rank;
  PMPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node);
  PMPI_Comm_free(&node);
  std::vector<int> colors(static_cast<std::size_t>(size));
  PMPI_Allgather(&lowest, 1, MPI_INT, colors.data(), 1, MPI_INT, comm);
  return colors;
}

void record_node_map() {
  NodeMap& map = node_map();
  map.node_of = node_colors_by_split(MPI_COMM_WORLD);
  divide_nodes(map.node_of, fake_nodes_at_init());
  PMPI_Comm_group(MPI_COMM_WORLD, &map.world);
  map.recorded = true;
}

void forget_node_map() {
  NodeMap& map = node_map();
  if (!map.recorded) return;
  map.recorded = false;
  PMPI_Group_free(&map.world);
}

std::optional<std::vector<int>> node_colors(MPI_Comm comm) {
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
  for (int& w : world) {
    if (w == MPI_UNDEFINED || w < 0 || w >= static_cast<int>(map.node_of.size()))
      return std::nullopt;
    w = map.node_of[static_cast<std::size_t>(w)];
  }
  return world;
}

}  // namespace shmcoll::mpi
