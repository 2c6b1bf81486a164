// The steps that the started scatters and gathers across nodes share (started.hpp): the root's
// messages to or from the other nodes' leaders, and a leader's side of them.
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

void Spanning::start_as_root(StartedCall& call, Direction direction, const void* buffer,
                             const RootBlocks& blocks, OwnNodePart own_node) {
  struct State {
    NodeMessages messages;
    std::vector<Count> counts, displs;
  };
  auto state = std::make_shared<State>();
  call.then([this, state, direction, buffer, blocks, own_node](StartedCall::Waiting& waiting) {
    state->messages = start_node_messages(direction, const_cast<void*>(buffer), blocks);
    own_node_blocks(blocks, state->counts, state->displs);
    waiting.team = own_node(state->counts, state->displs);
  });
  // The messages complete also after the own node's part failed, so that the leaders return;
  // the first error stands.
  StartedCall* self = &call;
  call.then(
      [this, state, self](StartedCall::Waiting& waiting) {
        waiting.until = [this, state, self] {
          try {
            return test_messages(state->messages);
          } catch (const Error& e) {
            if (self->failed()) throw;
            throw NodeTeamIntact(e);
          }
        };
      },
      true);
}

void Spanning::receive_step(StartedCall& call, Bytes buffer, int root) {
  auto taken = std::make_shared<bool>(false);
  call.then([this, buffer, root, taken](StartedCall::Waiting& waiting) {
    const std::span<std::byte> into = buffer();
    waiting.until = [this, into, root, taken, &waiting] {
      MPI_Request& request = waiting.mpi.emplace_back(MPI_REQUEST_NULL);
      try {
        *taken = poll_node_blocks(into.data(), into.size(), root, &request);
      } catch (...) {
        *taken = true;  // received whole, and reported
        waiting.mpi.pop_back();
        throw;
      }
      if (!*taken) waiting.mpi.pop_back();
      return *taken;
    };
  });
  StartedCall* self = &call;
  call.then(
      [this, root, taken, self](StartedCall::Waiting& waiting) {
        if (!self->failed() || *taken) return;
        waiting.until = [this, root] { return poll_drop_message(root); };
      },
      true);
}

void Spanning::send_step(StartedCall& call, Bytes blocks, int root) {
  StartedCall* self = &call;
  call.then(
      [this, blocks, root, self](StartedCall::Waiting& waiting) {
        if (self->failed()) return send_failure_notice(root);
        const std::span<std::byte> message = blocks();
        try {
          start_sending_node_blocks(message.data(), message.size(), root,
                                    &waiting.mpi.emplace_back(MPI_REQUEST_NULL));
        } catch (const Error& e) {
          throw NodeTeamIntact(e);  // the node's team finished its part
        }
      },
      true);
}

void Spanning::block_bytes_step(StartedCall& call, const std::shared_ptr<BlockBytes>& bytes) {
  call.then([this, bytes](StartedCall::Waiting& waiting) {
    if (local_ != 0) {
      waiting.team = team().igather(&bytes->own, 1, kInt64, nullptr, 0, kInt64, 0);
      return;
    }
    bytes->all.resize(layout_.ranks_of(node_).size());
    waiting.team = team().igather(&bytes->own, 1, kInt64, bytes->all.data(), 1, kInt64, 0);
  });
}

}  // namespace shmcoll::mpi
