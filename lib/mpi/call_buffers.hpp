// What one call of a collective converts its buffers into, by role (typed_buffer.hpp): held on
// the stack by a blocking call, inside the pending call (requests.hpp) by a non-blocking one,
// until the operation is done and finish() has unpacked what it received. A persistent request
// and a call kept for non-blocking calls (reused_calls.hpp) initialize the same views again for
// each call, a view the call does not use with unused(): nothing of the previous call stays in
// effect. passes_through()
// says that every view is the user's buffer itself (contiguous datatypes): the conversion then
// gives the same team call's arguments every time, and finish() has nothing to do.
// repeatable() says that besides every datatype is predefined, so that the same arguments at
// the MPI's level give the same conversion (reused_calls.hpp); the v-forms' buffers, whose
// counts are arrays the program may rewrite, have none.
#pragma once

#include "mpi/typed_buffer.hpp"

namespace shmcoll::mpi {

struct SendBuffer {
  SendView send;
  int finish(MPI_Comm) { return MPI_SUCCESS; }
  bool passes_through() const { return send.passes_through(); }
  bool repeatable() const { return send.repeatable(); }
};
struct RecvBuffer {
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
  bool passes_through() const { return recv.passes_through(); }
  bool repeatable() const { return recv.repeatable(); }
};
// A scatter's or gather's root (its own block may go either way).
struct SendRecvBuffers {
  SendView send;
  RecvView recv;
  int finish(MPI_Comm comm) { return recv.finish(comm); }
  bool passes_through() const { return send.passes_through() && recv.passes_through(); }
  bool repeatable() const { return send.repeatable() && recv.repeatable(); }
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
