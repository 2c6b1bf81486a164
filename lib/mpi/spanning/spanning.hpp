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
//   - inside every other node, from or to its leader, with the node's team. In the v-forms
//     the leader first gathers its node's block sizes with the team (only the root has the
//     counts, and a message from it would cross the network).
// The ranks of a node thus run the same operations of their team per call, whatever the root,
// so the team's operations pair up as they do on one node.
//
// Errors travel with the data. Every call exchanges exactly one message between the root and
// each other node's leader, whatever fails: a rank that fails before its message is due sends
// a failure notice in its place (kNodeFailedTag), or receives and drops the message it was due
// to receive, so that no one waits and no message meets a later call. A message of another size
// than its receiver's counts give is received whole and reported by the receiver. The receiver
// reports either (a leader to its node through the team, the root to its caller); the sender,
// which cannot know, returns as usual. A broadcast has no such notice: the leaders' broadcast
// carries the data alone.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mpi/node_budget.hpp"
#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/started.hpp"
#include "shmcoll/shmcoll.hpp"

namespace shmcoll::mpi {

// The tags of the messages between a root and the leaders, on a communicator of their own:
// a node's blocks, or, in their place, word that the sender failed in this call (empty).
inline constexpr int kNodeMessageTag = 1;
inline constexpr int kNodeFailedTag = 2;

// An error of this rank's part of a call across nodes that leaves its node's team as it was:
// raised after the team finished its operation of the call, whose other ranks returned as
// usual. The next call keeps the team.
class NodeTeamIntact : public Error {
 public:
  explicit NodeTeamIntact(const Error& e) : Error(e.status(), e.what(), e.cause()) {}
};

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

// The displacements that pack blocks of `counts` one after another.
std::vector<Count> packed_displs(std::span<const Count> counts);

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
  void scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                std::span<const Count> displs, Datatype sendtype, void* recvbuf, Count recvcount,
                Datatype recvtype, int root);
  void scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                std::span<const Count> displs, Datatype sendtype, InPlace, int root);
  void gatherv(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
               std::span<const Count> recvcounts, std::span<const Count> displs, Datatype recvtype,
               int root);
  void gatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
               std::span<const Count> displs, Datatype recvtype, int root);

  // The non-blocking forms (started.hpp): the same arguments and errors. Each returns the call,
  // which runs after the calls started before it on this communicator.
  using Started = std::shared_ptr<StartedCall>;
  Started ibcast(void* buffer, Count count, Datatype type, int root);
  Started iscatter(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                   Count recvcount, Datatype recvtype, int root);
  Started iscatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root);
  Started igather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                  Count recvcount, Datatype recvtype, int root);
  Started igather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root);
  Started iscatterv(const void* sendbuf, std::span<const Count> sendcounts,
                    std::span<const Count> displs, Datatype sendtype, void* recvbuf,
                    Count recvcount, Datatype recvtype, int root);
  Started iscatterv(const void* sendbuf, std::span<const Count> sendcounts,
                    std::span<const Count> displs, Datatype sendtype, InPlace, int root);
  Started igatherv(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                   std::span<const Count> recvcounts, std::span<const Count> displs,
                   Datatype recvtype, int root);
  Started igatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                   std::span<const Count> displs, Datatype recvtype, int root);
  // Until every call started on this communicator is over: before a blocking call, a rejected
  // one (settle_rejected) and the communicator's end (leave), whose messages and team
  // operations must follow theirs.
  void drain() const { drain_started(*this); }

  // The messages between nodes of a scatter (kSend) or gather (kReceive) that this rank
  // rejected before it began: their root sends each other leader a failure notice or drains
  // its message; those leaders drain the root's message or send it a notice.
  enum class Direction { kSend, kReceive };
  void settle_rejected(Direction direction, int root);

  // Ends the node's team, which reports a rank that ran another number of collectives than its
  // peers (Team::leave).
  void leave();
  // After an error on this rank: aborts the node's team (its other ranks get the error), as
  // Team::abort, and drops it (drop_team). Where the team was dropped, this rank first takes
  // part in forming the new one, which its node's other ranks do in this call.
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

  // Where each rank's block lies in the root's buffer of a scatter or gather, in elements of
  // `element` bytes: `count` each in rank order, or, in the v-forms, `counts` at `displs`.
  struct RootBlocks {
    std::uint64_t element = 1;
    Count count = 0;
    std::span<const Count> counts, displs;
    Count count_of(int rank) const {
      return counts.empty() ? count : counts[static_cast<std::size_t>(rank)];
    }
    Count displ_of(int rank) const {
      return counts.empty() ? rank * count : displs[static_cast<std::size_t>(rank)];
    }
  };
  // The root's blocks for its own node's ranks, in team order.
  void own_node_blocks(const RootBlocks& blocks, std::vector<Count>& counts,
                       std::vector<Count>& displs) const;
  // One node's blocks in the root's buffer as a message call takes them: the bytes from
  // `start` where the blocks follow each other in team order, else one element of a datatype
  // over the buffer.
  struct NodeBlocks {
    void* start;
    ByteMessage message;
  };
  // The root's messages to or from the other nodes' leaders: by node, its blocks and the bytes
  // they make.
  struct NodeMessages {
    Direction direction;
    std::vector<MPI_Request> requests;
    std::vector<int> nodes;
    std::vector<std::uint64_t> bytes;
    std::vector<NodeBlocks> blocks;
    // kReceive: whether each leader's message was probed (and its receive posted), how many
    // were not, and the first failure met (raised once every message is over).
    std::vector<bool> probed;
    std::size_t unprobed;
    std::exception_ptr failure;
  };
  NodeMessages start_node_messages(Direction direction, void* buffer,
                                   const RootBlocks& blocks) const;
  // Whether every message is over, receiving the leaders' (kReceive) as they arrive, without
  // waiting; once over, throws the first failure: a message of another size than expected is
  // an error that names the node.
  bool test_messages(NodeMessages& messages) const;
  // Until the messages are over (test_messages).
  void complete(NodeMessages& messages) const;
  // The root's receive of message i, where it has arrived (false where not yet).
  bool receive_from_leader(NodeMessages& messages, std::size_t i) const;
  // The root's whole part of a scatter (kSend) or gather (kReceive) over `buffer`: the other
  // nodes' messages started, then `own_node(counts, displs)` runs its team's v-form over its
  // own node's blocks, then the messages complete.
  template <class OwnNode>
  void as_root(Direction direction, const void* buffer, const RootBlocks& blocks,
               OwnNode&& own_node) {
    NodeMessages messages = start_node_messages(direction, const_cast<void*>(buffer), blocks);
    std::vector<Count> counts, displs;
    own_node_blocks(blocks, counts, displs);
    try {
      own_node(std::span<const Count>(counts), std::span<const Count>(displs));
    } catch (...) {
      // The messages still complete, so that the leaders return; the first error stands.
      try {
        complete(messages);
      } catch (const std::exception&) {
      }
      throw;
    }
    try {
      complete(messages);
    } catch (const Error& e) {
      throw NodeTeamIntact(e);
    }
  }
  // A leader's side of those messages: its node's blocks, `bytes` in all, in team order.
  void receive_node_blocks(void* buffer, std::uint64_t bytes, int root);
  void send_node_blocks(const void* blocks, std::uint64_t bytes, int root);
  // The same without waiting: whether the root's message has arrived, its receive into
  // `buffer` then started into `*request`; the send started into `*request`.
  bool poll_node_blocks(void* buffer, std::uint64_t bytes, int root, MPI_Request* request);
  void start_sending_node_blocks(const void* blocks, std::uint64_t bytes, int root,
                                 MPI_Request* request) const;
  // What a message from the root, probed, holds: the node's blocks, received into `buffer` (or
  // started into `*request` where it is given); a failure notice or a message of another size
  // is received whole and raised.
  void take_node_blocks(MPI_Message& message, MPI_Status& status, void* buffer, std::uint64_t bytes,
                        int root, MPI_Request* request);
  // Whether the message due from `peer` has arrived (once it has, with `wait`), received and
  // dropped then.
  bool poll_drop_message(int peer, bool wait = false) const;
  // Whether the next message from `peer` on the messages' communicator has arrived (once it
  // has, with `wait`), matched into `message` and `status` then; `what` names a failed probe.
  bool probe(int peer, bool wait, MPI_Message& message, MPI_Status& status, const char* what) const;
  // A leader's room for its node's blocks, kept from call to call (as large as the largest
  // message yet): a fresh buffer would be cleared and faulted in on every call.
  std::span<std::byte> staging(std::uint64_t bytes) {
    if (staging_.size() < bytes) staging_.resize(static_cast<std::size_t>(bytes));
    return {staging_.data(), static_cast<std::size_t>(bytes)};
  }
  // Whether this rank is its node's only one: its team's operations would move nothing
  // between ranks, and run as local copies or not at all.
  bool alone() const { return layout_.ranks_of(node_).size() == 1; }
  // Whether every node has one rank: the calls have one level, between the nodes.
  bool one_rank_per_node() const { return layout_.nodes() == size(); }
  // The root's own block of a scatter or gather where it is alone on its node: copied from one
  // of its buffers to the other, after the size check a team would make.
  static void copy_own_block(const void* from, std::uint64_t from_bytes, void* to,
                             std::uint64_t to_bytes);
  // The steps of the started calls, as the blocking calls' parts above.
  // The root's part of a scatter or gather: the messages started and `own_node(counts, displs)`
  // started (the team's v-form over its own node's blocks, or a local copy), then the messages
  // completed, also after a failure of its own node.
  using OwnNodePart = std::function<Request(std::span<const Count>, std::span<const Count>)>;
  void start_as_root(StartedCall& call, Direction direction, const void* buffer,
                     const RootBlocks& blocks, OwnNodePart own_node);
  // A leader's receive of the root's message into what `buffer()` gives (its bytes); where the
  // call fails before the message was taken, it is dropped.
  using Bytes = std::function<std::span<std::byte>()>;
  void receive_step(StartedCall& call, Bytes buffer, int root);
  // A leader's send of what `blocks()` gives (its node's blocks) to the root, or of a failure
  // notice where the call failed.
  void send_step(StartedCall& call, Bytes blocks, int root);
  // The v-forms off the root's node: node_block_bytes started; `bytes` holds this rank's block
  // and `all` the node's at the leader.
  struct BlockBytes {
    Count own = 0;
    std::vector<Count> all, displs;
  };
  void block_bytes_step(StartedCall& call, const std::shared_ptr<BlockBytes>& bytes);
  Started iscatter_as_root(const void* sendbuf, const RootBlocks& blocks, Datatype sendtype,
                           void* recvbuf, Count recvcount, Datatype recvtype, bool own_in_place);
  Started igather_as_root(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                          const RootBlocks& blocks, Datatype recvtype, bool own_in_place);
  void scatter_elsewhere_steps(StartedCall& call, void* recvbuf, Count recvcount, Datatype recvtype,
                               int root, bool v_form);
  void gather_elsewhere_steps(StartedCall& call, const void* sendbuf, Count sendcount,
                              Datatype sendtype, int root, bool v_form);

  // In place of a message due to `peer` or from it, after a failure of this rank.
  void send_failure_notice(int peer) const;
  void drop_message(int peer) const;
  // The v-forms off the root's node: each rank's block, `bytes`, gathered at the leader in
  // team order (elsewhere empty).
  std::vector<Count> node_block_bytes(std::uint64_t bytes);
  // The root's part of a scatter or gather of its `blocks`; its own block is `recvbuf`
  // (`sendbuf`), unused where `own_in_place`.
  void scatter_as_root(const void* sendbuf, const RootBlocks& blocks, Datatype sendtype,
                       void* recvbuf, Count recvcount, Datatype recvtype, bool own_in_place);
  void gather_as_root(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                      const RootBlocks& blocks, Datatype recvtype, bool own_in_place);
  // The ranks other than the root, by where they are: the root's node, or another. The
  // v-forms' blocks (`v_form`) differ by rank; the others' are all the same size.
  void scatter_elsewhere(void* recvbuf, Count recvcount, Datatype recvtype, int root, bool v_form);
  void gather_elsewhere(const void* sendbuf, Count sendcount, Datatype sendtype, int root,
                        bool v_form);

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
  std::vector<std::byte> staging_;
};

}  // namespace shmcoll::mpi
