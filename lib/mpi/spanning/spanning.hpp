// A communicator whose ranks run on more than one node, served in two levels: a shmcoll team
// inside each node, and the MPI between the nodes (docs/design.md, "Communicators across
// nodes").
//
// Nodes are numbered in the order of their lowest rank, which leads the node; a node's team
// holds the node's ranks in communicator order. A rooted collective runs:
//   - inside the root's node, from the root, with the node's team: the root's blocks for its
//     node's ranks where they lie in its buffer (a scatterv or gatherv of the team);
//   - between the root and each other node's leader, through the MPI: that node's blocks in
//     one message, taken from or put into the root's buffer in place by a datatype
//     (byte_types.hpp); a broadcast goes over the leaders' communicator instead;
//   - inside every other node, from or to its leader, with the node's team.
// Every rank of a node thus runs one operation of its team per call, whatever the root, so the
// team's operations pair up as they do on one node.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mpi/node_budget.hpp"
#include "shmcoll/shmcoll.hpp"

namespace shmcoll::mpi {

// The tag of the messages between a root and the leaders, on a communicator of their own.
inline constexpr int kNodeMessageTag = 1;

// Where each rank of a communicator runs.
struct NodeLayout {
  // By communicator rank: its node, and its rank in the node's team.
  std::vector<int> node_of, local_of;
  // The ranks of node k, in team order: members[first[k]] to members[first[k + 1] - 1].
  std::vector<int> members, first;

  // From each rank's node color (node_map.hpp: equal on the ranks of one node).
  explicit NodeLayout(std::span<const int> colors);
  int nodes() const { return static_cast<int>(first.size()) - 1; }
  std::span<const int> ranks_of(int node) const {
    return {members.data() + first[static_cast<std::size_t>(node)],
            static_cast<std::size_t>(first[static_cast<std::size_t>(node) + 1] -
                                     first[static_cast<std::size_t>(node)])};
  }
  int leader_of(int node) const {
    return members[static_cast<std::size_t>(first[static_cast<std::size_t>(node)])];
  }
};

// A team over the ranks of a communicator that runs on one node, its segment charged to the
// node's budget (node_budget.hpp). Collective over the communicator: every rank gets a team,
// or every rank the same refusal (comm_state.cpp).
struct NodeTeam {
  std::optional<NodeBudget::Reservation> reservation;  // released after the team unmaps
  std::unique_ptr<Team> team;
};
std::optional<NodeTeam> form_node_team(MPI_Comm comm, std::string& refusal);

class Spanning {
 public:
  // Collective over `comm`, whose ranks' nodes `colors` gives. nullptr on every rank, with the
  // reason in `refusal`, where some node could not form its team.
  static std::unique_ptr<Spanning> form(MPI_Comm comm, std::span<const int> colors,
                                        std::string& refusal);
  ~Spanning();
  Spanning(const Spanning&) = delete;
  Spanning& operator=(const Spanning&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(layout_.node_of.size()); }
  int nodes() const { return layout_.nodes(); }

  // Team's collectives (shmcoll/team.hpp) over the whole communicator, with its arguments:
  // elements as the plugin's buffer views give them. Throw shmcoll::Error, as Team's do.
  void bcast(void* buffer, Count count, Datatype type, int root);
  void scatter(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
               Count recvcount, Datatype recvtype, int root);
  void scatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root);
  void gather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
              Count recvcount, Datatype recvtype, int root);
  void gather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root);

  // Ends the node's team, which reports a rank that ran another number of collectives than its
  // peers (Team::leave).
  void leave();
  // After an error on this rank: aborts the node's team (its other ranks get the error), as
  // Team::abort, and drops it (drop_team).
  void abort(Status status, const std::string& message, Cause cause = Cause::kUnspecified);
  // After an error that reached the node's team: the next call forms a new one, with the
  // node's other ranks, which got the error too.
  void drop_team() {
    node_team_.team.reset();
    node_team_.reservation.reset();
  }

 private:
  Spanning(MPI_Comm comm, std::span<const int> colors);
  Team& team();
  // The root's part of a scatter or gather: its blocks for its own node's ranks, as a v-form
  // of its team (elements of `count` each at the ranks' places in its buffer).
  void own_node_blocks(Count count, std::vector<Count>& counts, std::vector<Count>& displs) const;
  // The root of a scatter (kSend) or gather (kReceive): each other node's blocks of `block`
  // bytes, where they lie in its buffer, start on their way to or from that node's leader.
  enum class Direction { kSend, kReceive };
  std::vector<MPI_Request> start_node_messages(Direction direction, void* buffer,
                                               std::uint64_t block);
  static void complete(std::vector<MPI_Request>& requests, const char* what);
  // A leader's message of its node's blocks of `block` bytes each, from or to the root.
  std::uint64_t node_bytes(std::uint64_t block) const {
    return block * layout_.ranks_of(node_).size();
  }
  // The root's whole part of a scatter (kSend) or gather (kReceive) of `count` elements of
  // `type` per rank at `buffer`: the other nodes' messages started, then
  // `own_node(counts, displs)` runs its team's v-form over its own node's blocks, then the
  // messages complete.
  template <class OwnNode>
  void as_root(Direction direction, const void* buffer, Count count, Datatype type,
               OwnNode&& own_node) {
    std::vector<MPI_Request> messages = start_node_messages(
        direction, const_cast<void*>(buffer), static_cast<std::uint64_t>(count) * type.size);
    std::vector<Count> counts, displs;
    own_node_blocks(count, counts, displs);
    own_node(std::span<const Count>(counts), std::span<const Count>(displs));
    complete(messages, "PMPI_Waitall for the messages between the root and the leaders");
  }
  // The ranks other than the root, by where they are: the root's node, or another.
  void scatter_elsewhere(void* recvbuf, Count recvcount, Datatype recvtype, int root);
  void gather_elsewhere(const void* sendbuf, Count sendcount, Datatype sendtype, int root);

  NodeLayout layout_;
  int rank_ = 0;
  int node_ = 0;   // this rank's node
  int local_ = 0;  // this rank's rank in its node's team
  // Owned communicators: the node's ranks, the leaders (MPI_COMM_NULL elsewhere), and a copy of
  // the whole communicator for the messages between root and leaders, apart from the
  // program's own.
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  MPI_Comm leaders_ = MPI_COMM_NULL;
  MPI_Comm messages_ = MPI_COMM_NULL;
  NodeTeam node_team_;
};

}  // namespace shmcoll::mpi
