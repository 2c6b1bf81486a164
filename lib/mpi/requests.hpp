// Non-blocking collectives served by shmcoll, as MPI requests the program completes with any
// MPI completion call, in arrays that mix them with the MPI's own requests.
//
// On a node's team most run in calls the plugin keeps per communicator (reused_calls.hpp); the
// others, here, take the general path. Each is a generalized request (MPI_Grequest_start) that the
// plugin completes (MPI_Grequest_complete) once shmcoll's operation is done on this rank and its
// data are unpacked into the caller's buffers. Open MPI calls no plugin code while it waits on such
// a request, so the completion calls are interposed too (completion.cpp): each first advances every
// outstanding shmcoll operation, and a blocking one alternates that with the MPI's own test of the
// same requests. Both make progress while the program waits on either: a rank waiting on a receive
// still moves its collectives on, which the sender's rank may be waiting for before it sends. Under
// MPICH the requests are extended ones whose poll function its progress engine calls in every wait,
// also the waits that bypass the plugin (requests.cpp).
//
// Thread safety: the table of outstanding requests has a lock of its own, never held while
// the MPI is called (the MPI may call back into the plugin from any thread, holding a lock of
// its own: MPICH's poll function takes the table's lock, free_fn takes none). A pass takes the
// calls it finishes out of the table's reach under the lock and finishes them after. Under
// MPI_THREAD_MULTIPLE each team serializes the calls into it (Options::concurrent_calls): one
// thread's wait may advance a communicator's requests while another calls a collective there.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>

#include "mpi/plugin.hpp"
#include "mpi/spanning/started.hpp"

namespace shmcoll::mpi {

// What a started operation keeps until it completes: its shmcoll request, the temporary
// buffers of its datatype conversions (typed_buffer.hpp), which finish() unpacks into the
// caller's once the operation is done, and its entry in the table of requests (one allocation
// for all: each costs a small call about 150 instructions).
class PendingCall {
 public:
  virtual ~PendingCall() = default;
  // Returns MPI_SUCCESS or the MPI's code of a failed unpacking.
  virtual int finish(MPI_Comm comm) = 0;
  // Whether finish() has anything to unpack (else the buffers are the user's own).
  virtual bool unpacks() const = 0;
  // Whether the operation is over on this rank, advancing an operation of one node's team
  // without waiting (a call across nodes is advanced by the passes over the started calls);
  // throws its error. Called under the table's lock: calls no MPI function.
  bool test() { return across_nodes ? across_nodes->test() : request.test(); }
  // Until the operation is over; throws its error.
  void wait() {
    if (across_nodes) return across_nodes->wait();
    request.wait();
  }
  // The operation: on one node's team, or across nodes (started.hpp).
  Request request;
  std::shared_ptr<StartedCall> across_nodes;

  // The table's (requests.cpp). The entry of a non-blocking call lives until both: the plugin
  // completed the request (done), and the MPI released it (free_fn, which the MPI calls once
  // the program has waited for it, tested it complete or freed it, and the plugin has completed
  // it). A persistent request's (persistent.hpp) is in the table from each start until the
  // program has completed that activation; the persistent request owns it.
  struct Entry {
    const char* function = "";
    Coll coll = Coll::kBcast;
    MPI_Comm comm = MPI_COMM_NULL;
    // The MPI's generalized request: made at the start of a non-blocking call; for an
    // activation of a persistent request only when the program passes it to the MPI beside
    // other requests (completion.cpp), MPI_REQUEST_NULL until then.
    MPI_Request handle = MPI_REQUEST_NULL;
    // The handle the program holds (`handle`, or the persistent request's), under which a
    // failure is recorded for claim_failure.
    MPI_Request key = MPI_REQUEST_NULL;
    int error = MPI_SUCCESS;  // returned by the completion call (claim_failure)
    // Under the table's lock: a pass has taken it to finish (claimed), and it is in the table.
    bool claimed = false;
    bool in_table = false;
    // Whether the table deletes it once done and released: a non-blocking call's entry, or a
    // persistent request the program freed while active.
    bool owned_by_table = true;
    // Written under the table's lock once its data are unpacked (before its MPI request is
    // completed); read without it by the completion of a persistent request.
    std::atomic<bool> done{false};
    // Done, and taken by no pass: a call finished before it was handed to the table (or an
    // inactive persistent request). Before anyone else knows of it.
    void finished_already() {
      claimed = true;
      done.store(true, std::memory_order_relaxed);
    }
    // Set by free_fn, without the table's lock: the MPI may call it from inside any completion
    // call, on any thread, while another thread holds the lock and waits for the MPI. For an
    // activation the MPI never saw, set when the program completes it.
    std::atomic<bool> released{false};
  } entry;
};

// Makes `pending`, started on the team of `comm`, the program's request `*request`: one whose
// operation is over already (a root whose data went into the slots) is finished at once and
// its request made complete, so that no pass need take it.
int start_request(const char* function, Coll coll, MPI_Comm comm,
                  std::unique_ptr<PendingCall> pending, MPI_Request* request);

// A pending call whose buffers are a Buffers of call_buffers.hpp.
template <class Buffers>
class PendingWith final : public PendingCall, public Buffers {
 public:
  int finish(MPI_Comm comm) override { return Buffers::finish(comm); }
  bool unpacks() const override { return !Buffers::passes_through(); }
};
// Where a started operation goes: the team's request, or the call across nodes.
inline void started_into(PendingCall& pending, Request started) {
  pending.request = std::move(started);
}
inline void started_into(PendingCall& pending, std::shared_ptr<StartedCall> started) {
  pending.across_nodes = std::move(started);
}
// The non-blocking form of a call: `prepare(buffers, pending)` converts the buffers and starts
// the operation into the pending call (started_into), returning an MPI code; the pending call
// then becomes the program's request.
template <class Buffers, class Prepare>
int start_call(const char* function, Coll coll, MPI_Comm comm, MPI_Request* request,
               Prepare&& prepare) {
  auto pending = std::make_unique<PendingWith<Buffers>>();
  if (const int rc = prepare(static_cast<Buffers&>(*pending), *pending); rc != MPI_SUCCESS)
    return rc;
  return start_request(function, coll, comm, std::move(pending), request);
}
// The body of a non-blocking collective: `root_part(buffers, run)` at the root and
// `other_part(buffers, run)` elsewhere convert the buffers (RootBuffers, OtherBuffers) and call
// `run(args...)`, which starts the operation, `start(target, args...)` (Team::ibcast, or
// Spanning::ibcast across nodes, and the others), into the pending call.
template <class RootBuffers, class OtherBuffers, class Target, class Start, class RootPart,
          class OtherPart>
int start_collective(const char* function, Coll coll, MPI_Comm comm, MPI_Request* request,
                     Target& target, int root, Start&& start, RootPart&& root_part,
                     OtherPart&& other_part) {
  auto prepare = [&](auto& part) {
    return [&](auto& buffers, auto& pending) {
      return part(buffers, [&](auto... args) { started_into(pending, start(target, args...)); });
    };
  };
  if (target.rank() == root)
    return start_call<RootBuffers>(function, coll, comm, request, prepare(root_part));
  return start_call<OtherBuffers>(function, coll, comm, request, prepare(other_part));
}
// The blocking form: `prepare(buffers)` converts the buffers and runs the operation (the
// team's blocking call), then the buffers are unpacked.
template <class Buffers, class Prepare>
int run_call(MPI_Comm comm, Prepare&& prepare) {
  Buffers buffers;
  const int rc = prepare(buffers);
  return rc != MPI_SUCCESS ? rc : buffers.finish(comm);
}

// A request already complete: a call that moves nothing (serve.hpp).
int completed_request(MPI_Request* request);

// The status of a completed collective: empty, as the MPIs' own non-blocking collectives leave
// it. Its error is the completion call's to return (claim_failure).
void set_empty_status(MPI_Status* status);

// Whether some request has not completed yet: one relaxed load, which every interposed
// completion call makes first.
bool requests_outstanding();
// Advances every outstanding operation once and completes the requests of those done.
void progress_requests();
// A failed request's error is returned by the completion call that completes it, not by the
// MPI: the MPIs raise an error of a generalized request (query_fn's result) through another
// communicator's error handler than the request's (MPI_COMM_WORLD's, fatal by default). The
// communicator's own handler has been called when the operation failed (progress_requests).
// Whether a failure waits to be claimed: one relaxed load.
bool failures_recorded();
// The error of `request` (its handle before the MPI's completion call nulled it) if it is one of
// the plugin's that failed, which is then forgotten; MPI_SUCCESS otherwise.
int claim_failure(MPI_Request request);

// Completes every request of `comm` (the communicator is being freed: its team ends with it).
void finish_requests_of(MPI_Comm comm);

// An activation of a persistent request (persistent.hpp), whose operation has been started
// (or that is `empty`: done at once): puts it in the table, where passes advance it, unless
// its operation is over already (then finished at once, as a non-blocking call's is in
// start_request, so that its completion waits for nothing).
void activate(PendingCall* call, bool empty);
// The MPI's generalized request for an activation, made now if it has none (completed at once
// if the activation is done). The program passed the persistent request to a completion call
// beside other requests: the MPI completes them all, with its own semantics.
int mpi_request_for(PendingCall* call, MPI_Request* handle);
// Takes a persistent request out of the table's reach before it is deleted: it must not be
// active, or be done and released.
void withdraw(PendingCall* call);
// Gives an active persistent request the program freed to the table, which deletes it once it
// is done (without recording its failure: its handle is gone).
void abandon(PendingCall* call);
// Completes every request (before MPI_Finalize, which a request left active would block).
void finish_all_requests();

}  // namespace shmcoll::mpi
