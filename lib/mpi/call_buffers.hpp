// What one call of a collective converts its buffers into, by role (typed_buffer.hpp): held on
// the stack by a blocking call, inside the pending call (requests.hpp) by a non-blocking one,
// until the operation is done and finish() has unpacked what it received.
#pragma once

#include "mpi/typed_buffer.hpp"

namespace shmcoll::mpi {

struct SendBuffer {
  SendView send;
  int finish(MPI_Comm) { return MPI_SUCCESS; }
};
struct RecvBuffer {
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
};
// A scatter's or gather's root (its own block may go either way).
struct SendRecvBuffers {
  SendView send;
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
};
// A scatterv's root: every block it sends, and its own.
struct ScattervRootBuffers {
  VBlocks blocks;
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
};
// A gatherv's root: every block it receives, and its own.
struct GathervRootBuffers {
  VBlocks blocks;
  SendView send;
  int finish(MPI_Comm comm) { return blocks.finish_recv(comm); }
};

}  // namespace shmcoll::mpi
