// What one call of a collective converts its buffers into, by role (typed_buffer.hpp): held on
// the stack by a blocking call, inside the pending call (requests.hpp) by a non-blocking one,
// until the operation is done and finish() has unpacked what it received. passes_through()
// says that every view is the user's buffer itself (contiguous datatypes): the conversion then
// gives the same team call's arguments every time, and finish() has nothing to do.
#pragma once

#include "mpi/typed_buffer.hpp"

namespace shmcoll::mpi {

struct SendBuffer {
  SendView send;
  int finish(MPI_Comm) { return MPI_SUCCESS; }
  bool passes_through() const { return send.passes_through(); }
};
struct RecvBuffer {
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
  bool passes_through() const { return recv.passes_through(); }
};
// A scatter's or gather's root (its own block may go either way).
struct SendRecvBuffers {
  SendView send;
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
  bool passes_through() const { return send.passes_through() && recv.passes_through(); }
};
// A scatterv's root: every block it sends, and its own.
struct ScattervRootBuffers {
  VBlocks blocks;
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
  bool passes_through() const { return blocks.passes_through() && recv.passes_through(); }
};
// A gatherv's root: every block it receives, and its own.
struct GathervRootBuffers {
  VBlocks blocks;
  SendView send;
  int finish(MPI_Comm comm) { return blocks.finish_recv(comm); }
  bool passes_through() const { return blocks.passes_through() && send.passes_through(); }
};

}  // namespace shmcoll::mpi
