// The two levels of a communicator that spans nodes: its layout, its communicators and the
// node's team, formed at its first collective and freed with it.
#include <algorithm>
#include <map>

#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

NodeLayout::NodeLayout(std::span<const int> colors) {
  const auto n = colors.size();
  node_of.resize(n);
  local_of.resize(n);
  // Nodes in the order of their lowest rank; ranks within a node in communicator order.
  std::map<int, int> node_by_color;
  std::vector<int> node_sizes;
  for (std::size_t r = 0; r < n; ++r) {
    const auto [it, added] = node_by_color.emplace(colors[r], static_cast<int>(node_sizes.size()));
    if (added) node_sizes.push_back(0);
    node_of[r] = it->second;
    local_of[r] = node_sizes[static_cast<std::size_t>(it->second)]++;
  }
  first.assign(node_sizes.size() + 1, 0);
  for (std::size_t k = 0; k < node_sizes.size(); ++k) first[k + 1] = first[k] + node_sizes[k];
  members.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    members[static_cast<std::size_t>(first[static_cast<std::size_t>(node_of[r])] + local_of[r])] =
        static_cast<int>(r);
  }
}

Spanning::Spanning(MPI_Comm comm, std::span<const int> colors) : layout_(colors) {
  PMPI_Comm_rank(comm, &rank_);
  node_ = layout_.node_of[static_cast<std::size_t>(rank_)];
  local_ = layout_.local_of[static_cast<std::size_t>(rank_)];
  // Keyed by rank: the node communicator's ranks are the team's, the leaders' are the nodes'.
  check_mpi(PMPI_Comm_split(comm, node_, rank_, &node_comm_), "PMPI_Comm_split by node");
  check_mpi(PMPI_Comm_split(comm, local_ == 0 ? 0 : MPI_UNDEFINED, rank_, &leaders_),
            "PMPI_Comm_split of the leaders");
  check_mpi(PMPI_Comm_dup(comm, &messages_), "PMPI_Comm_dup");
  // Failures come back as codes, which the calls turn into errors of the program's call.
  for (MPI_Comm c : {node_comm_, leaders_, messages_})
    if (c != MPI_COMM_NULL) PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
}

Spanning::~Spanning() {
  node_team_.team.reset();  // before the communicator its bootstrap used
  for (MPI_Comm* c : {&messages_, &leaders_, &node_comm_})
    if (*c != MPI_COMM_NULL) PMPI_Comm_free(c);
}

std::unique_ptr<Spanning> Spanning::form(MPI_Comm comm, std::span<const int> colors,
                                         std::string& refusal) {
  std::unique_ptr<Spanning> spanning(new Spanning(comm, colors));
  std::optional<NodeTeam> team = form_node_team(spanning->node_comm_, refusal);
  // Every node must serve, or none: the others learn whether all did.
  int formed = team ? 1 : 0;
  check_mpi(PMPI_Allreduce(MPI_IN_PLACE, &formed, 1, MPI_INT, MPI_MIN, comm),
            "PMPI_Allreduce of the nodes' teams");
  if (formed == 0) {
    if (team) refusal = "another node could not form its team";
    return nullptr;
  }
  spanning->node_team_ = std::move(*team);
  return spanning;
}

Team& Spanning::team() {
  if (!node_team_.team) [[unlikely]] {
    // The node's ranks dropped the team after an error that reached them all.
    std::string refusal;
    std::optional<NodeTeam> team = form_node_team(node_comm_, refusal);
    if (!team) throw SegmentError("the node's team could not be formed again: " + refusal);
    node_team_ = std::move(*team);
  }
  return *node_team_.team;
}

void Spanning::leave() {
  drain();
  if (node_team_.team) node_team_.team->leave();
}

void Spanning::abort(Status status, const std::string& message, Cause cause) {
  // Where the team was dropped after the last error, the node's other ranks form a new one in
  // this call: this rank takes part, then aborts it, so that they get the error too.
  try {
    team().abort(status, message, cause);
  } catch (const std::exception&) {
    // No team formed: the others' formation fails too.
  }
  drop_team();
}

}  // namespace shmcoll::mpi
