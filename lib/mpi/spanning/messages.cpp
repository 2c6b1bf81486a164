// The messages between a scatter's or gather's root and the other nodes' leaders, and what a
// node's team learns to take its part.
#include <sched.h>

#include <cstring>
#include <exception>
#include <string>

#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"
#include "shmcoll/error.hpp"

namespace shmcoll::mpi {
namespace {

// "node 2 (ranks 1, 4, 7)"
std::string describe_node(const NodeLayout& layout, int node) {
  std::string text = "node " + std::to_string(node) + " (rank";
  const std::span<const int> ranks = layout.ranks_of(node);
  text += ranks.size() == 1 ? " " : "s ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(ranks[i]);
  }
  return text + ")";
}

[[noreturn]] void sizes_differ(const std::string& what, MPI_Count got, std::uint64_t expected) {
  throw InvalidArgument(what + " holds " + std::to_string(got) + " bytes where " +
                            std::to_string(expected) + " were expected: the type signatures differ",
                        Cause::kSizeMismatch);
}

// The bytes of a probed message (all messages here are of bytes).
MPI_Count probed_bytes(MPI_Status& status) {
  MPI_Count bytes = 0;
  check_mpi(PMPI_Get_elements_x(&status, MPI_BYTE, &bytes), "PMPI_Get_elements_x");
  return bytes;
}

// A probed message of `bytes` received whole: into `buffer`, or dropped where it is null. No
// message of a call may stay to meet a later call's receive.
void receive_whole(MPI_Message& message, MPI_Count bytes, void* buffer, const char* what) {
  std::vector<std::byte> dropped;
  if (buffer == nullptr) {
    dropped.resize(static_cast<std::size_t>(bytes));
    buffer = dropped.data();
  }
  const ByteMessage whole(static_cast<std::uint64_t>(bytes));
  check_mpi(PMPI_Mrecv(buffer, whole.count, whole.type, &message, MPI_STATUS_IGNORE), what);
}

// Whether a probed message is a failure notice (kNodeFailedTag), received if so.
bool failure_notice(MPI_Message& message, const MPI_Status& status) {
  if (status.MPI_TAG != kNodeFailedTag) return false;
  receive_whole(message, 0, nullptr, "PMPI_Mrecv of a failure notice");
  return true;
}

}  // namespace

std::vector<Count> packed_displs(std::span<const Count> counts) {
  std::vector<Count> displs(counts.size());
  Count next = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = next;
    next += counts[i];
  }
  return displs;
}

void Spanning::own_node_blocks(const RootBlocks& blocks, std::vector<Count>& counts,
                               std::vector<Count>& displs) const {
  const std::span<const int> ranks = layout_.ranks_of(node_);
  counts.resize(ranks.size());
  displs.resize(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    counts[i] = blocks.count_of(ranks[i]);
    displs[i] = blocks.displ_of(ranks[i]);
  }
}

Spanning::NodeMessages Spanning::start_node_messages(Direction direction, void* buffer,
                                                     const RootBlocks& blocks) const {
  NodeMessages messages{direction, {}, {}, {}, {}, {}, 0, nullptr};
  const auto others = static_cast<std::size_t>(layout_.nodes() - 1);
  messages.requests.reserve(others);
  messages.nodes.reserve(others);
  messages.bytes.reserve(others);
  messages.blocks.reserve(others);
  std::vector<std::uint64_t> lengths;
  std::vector<MPI_Aint> offsets;
  for (int k = 0; k < layout_.nodes(); ++k) {
    if (k == node_) continue;
    const std::span<const int> ranks = layout_.ranks_of(k);
    lengths.resize(ranks.size());
    offsets.resize(ranks.size());
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      lengths[i] = static_cast<std::uint64_t>(blocks.count_of(ranks[i])) * blocks.element;
      offsets[i] =
          static_cast<MPI_Aint>(blocks.displ_of(ranks[i])) * static_cast<MPI_Aint>(blocks.element);
      bytes += lengths[i];
    }
    bool contiguous = true;
    for (std::size_t i = 1; i < ranks.size() && contiguous; ++i)
      contiguous = offsets[i] == offsets[i - 1] + static_cast<MPI_Aint>(lengths[i - 1]);
    // Sent even where empty: the leader, whose ranks' counts may say otherwise, waits for it.
    const NodeBlocks& node_blocks =
        contiguous ? messages.blocks.emplace_back(NodeBlocks{
                         static_cast<std::byte*>(buffer) + offsets[0], ByteMessage(bytes)})
                   : messages.blocks.emplace_back(
                         NodeBlocks{buffer, ByteMessage(scattered_blocks(lengths, offsets))});
    MPI_Request& request = messages.requests.emplace_back(MPI_REQUEST_NULL);
    messages.nodes.push_back(k);
    messages.bytes.push_back(bytes);
    messages.probed.push_back(direction == Direction::kSend);
    if (direction == Direction::kReceive) ++messages.unprobed;
    // A receive is posted once the leader's message is there and its size known (complete).
    if (direction == Direction::kSend) {
      check_mpi(PMPI_Isend(node_blocks.start, node_blocks.message.count, node_blocks.message.type,
                           layout_.leader_of(k), kNodeMessageTag, messages_, &request),
                "PMPI_Isend of a node's blocks to its leader");
    }
  }
  return messages;
}

bool Spanning::test_messages(NodeMessages& messages) const {
  if (messages.direction == Direction::kReceive && messages.unprobed > 0) {
    // Each leader's message received where it belongs once its size is known to be the one
    // the root's counts give; a message of another size is received whole elsewhere and
    // reported. (A receive posted before would end in MPI_ERR_TRUNCATE, which an MPI may raise
    // through the program's error handler rather than the messages' communicator's.)
    for (std::size_t i = 0; i < messages.probed.size(); ++i) {
      if (messages.probed[i]) continue;
      try {
        if (!receive_from_leader(messages, i)) continue;
      } catch (const std::exception&) {
        if (!messages.failure) messages.failure = std::current_exception();
      }
      messages.probed[i] = true;
      --messages.unprobed;
    }
    if (messages.unprobed > 0) return false;
  }
  // Every message is waited for, so none stays behind; the first failure is raised after.
  int done = 0;
  const int rc = PMPI_Testall(static_cast<int>(messages.requests.size()), messages.requests.data(),
                              &done, MPI_STATUSES_IGNORE);
  if (rc == MPI_SUCCESS && done == 0) return false;
  if (messages.failure) std::rethrow_exception(messages.failure);
  check_mpi(rc, "PMPI_Testall for the messages between the root and the leaders");
  return true;
}

void Spanning::complete(NodeMessages& messages) const {
  constexpr int kSpinsBeforeYield = 64;  // for ranks that share a CPU
  for (int spins = 0; !test_messages(messages); ++spins)
    if (spins >= kSpinsBeforeYield) sched_yield();
}

bool Spanning::probe(int peer, bool wait, MPI_Message& message, MPI_Status& status,
                     const char* what) const {
  message = MPI_MESSAGE_NULL;
  if (wait) {
    check_mpi(PMPI_Mprobe(peer, MPI_ANY_TAG, messages_, &message, &status), what);
    return true;
  }
  int arrived = 0;
  check_mpi(PMPI_Improbe(peer, MPI_ANY_TAG, messages_, &arrived, &message, &status), what);
  return arrived != 0;
}

bool Spanning::receive_from_leader(NodeMessages& messages, std::size_t i) const {
  MPI_Message message;
  MPI_Status status;
  const int node = messages.nodes[i];
  if (!probe(layout_.leader_of(node), false, message, status,
             "PMPI_Improbe for a node's blocks from its leader"))
    return false;
  if (failure_notice(message, status))
    throw PeerFailed(describe_node(layout_, node) + " failed in this call (its ranks report why)");
  const MPI_Count sent = probed_bytes(status);
  if (static_cast<std::uint64_t>(sent) == messages.bytes[i]) {
    const NodeBlocks& node_blocks = messages.blocks[i];
    check_mpi(PMPI_Imrecv(node_blocks.start, node_blocks.message.count, node_blocks.message.type,
                          &message, &messages.requests[i]),
              "PMPI_Imrecv of a node's blocks from its leader");
    return true;
  }
  receive_whole(message, sent, nullptr, "PMPI_Mrecv of a node's blocks from its leader");
  sizes_differ("the message from " + describe_node(layout_, node), sent, messages.bytes[i]);
}

void Spanning::take_node_blocks(MPI_Message& message, MPI_Status& status, void* buffer,
                                std::uint64_t bytes, int root, MPI_Request* request) {
  if (failure_notice(message, status))
    throw PeerFailed("the root (rank " + std::to_string(root) + ") failed in this call");
  const MPI_Count sent = probed_bytes(status);
  if (static_cast<std::uint64_t>(sent) != bytes) {
    receive_whole(message, sent, nullptr, "PMPI_Mrecv of the node's blocks from the root");
    sizes_differ("the root's message for " + describe_node(layout_, node_), sent, bytes);
  }
  if (request == nullptr)
    return receive_whole(message, sent, buffer, "PMPI_Mrecv of the node's blocks from the root");
  // The datatype may be freed before the receive ends (MPI: it completes normally).
  const ByteMessage whole(bytes);
  check_mpi(PMPI_Imrecv(buffer, whole.count, whole.type, &message, request),
            "PMPI_Imrecv of the node's blocks from the root");
}

void Spanning::receive_node_blocks(void* buffer, std::uint64_t bytes, int root) {
  MPI_Message message;
  MPI_Status status;
  probe(root, true, message, status, "PMPI_Mprobe for the node's blocks from the root");
  take_node_blocks(message, status, buffer, bytes, root, nullptr);
}

bool Spanning::poll_node_blocks(void* buffer, std::uint64_t bytes, int root, MPI_Request* request) {
  MPI_Message message;
  MPI_Status status;
  if (!probe(root, false, message, status, "PMPI_Improbe for the node's blocks from the root"))
    return false;
  take_node_blocks(message, status, buffer, bytes, root, request);
  return true;
}

void Spanning::send_node_blocks(const void* blocks, std::uint64_t bytes, int root) {
  const ByteMessage message(bytes);
  check_mpi(PMPI_Send(blocks, message.count, message.type, root, kNodeMessageTag, messages_),
            "PMPI_Send of the node's blocks to the root");
}

void Spanning::start_sending_node_blocks(const void* blocks, std::uint64_t bytes, int root,
                                         MPI_Request* request) const {
  const ByteMessage message(bytes);  // may be freed before the send ends
  check_mpi(
      PMPI_Isend(blocks, message.count, message.type, root, kNodeMessageTag, messages_, request),
      "PMPI_Isend of the node's blocks to the root");
}

void Spanning::copy_own_block(const void* from, std::uint64_t from_bytes, void* to,
                              std::uint64_t to_bytes) {
  if (from_bytes != to_bytes) {
    throw InvalidArgument("the root's own block holds " + std::to_string(from_bytes) +
                              " bytes where its other buffer takes " + std::to_string(to_bytes) +
                              ": the type signatures differ",
                          Cause::kSizeMismatch);
  }
  if (from_bytes > 0 && from != to) std::memcpy(to, from, static_cast<std::size_t>(from_bytes));
}

void Spanning::send_failure_notice(int peer) const {
  check_mpi(PMPI_Send(nullptr, 0, MPI_BYTE, peer, kNodeFailedTag, messages_),
            "PMPI_Send of a failure notice");
}

void Spanning::drop_message(int peer) const { poll_drop_message(peer, true); }

bool Spanning::poll_drop_message(int peer, bool wait) const {
  MPI_Message message;
  MPI_Status status;
  if (!probe(peer, wait, message, status, "a probe for a message to drop")) return false;
  receive_whole(message, probed_bytes(status), nullptr, "PMPI_Mrecv of a message dropped");
  return true;
}

void Spanning::settle_rejected(Direction direction, int root) {
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  if (rank_ == root) {
    for (int k = 0; k < layout_.nodes(); ++k) {
      if (k == node_) continue;
      if (direction == Direction::kSend) {
        send_failure_notice(layout_.leader_of(k));
      } else {
        drop_message(layout_.leader_of(k));
      }
    }
  } else if (local_ == 0 && node_ != root_node) {
    if (direction == Direction::kSend) {
      drop_message(root);
    } else {
      send_failure_notice(root);
    }
  }
}

std::vector<Count> Spanning::node_block_bytes(std::uint64_t bytes) {
  const auto own = static_cast<Count>(bytes);
  if (local_ != 0) {
    team().gather(&own, 1, kInt64, nullptr, 0, kInt64, 0);
    return {};
  }
  std::vector<Count> all(layout_.ranks_of(node_).size());
  team().gather(&own, 1, kInt64, all.data(), 1, kInt64, 0);
  return all;
}

}  // namespace shmcoll::mpi
