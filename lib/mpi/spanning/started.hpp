// The non-blocking collectives across nodes (MPI_Ibcast and the others on a communicator that
// spans nodes): this rank's part of each call as steps that run one after the other, and their
// progress.
//
// A step starts what it waits for: an operation of the node's team, MPI requests, or a
// condition it polls (a message from a peer, probed before it is received). The next step
// starts once all of that is over. The steps of a call are those of the blocking call
// (spanning.hpp) with each wait made a step boundary, so the two pair up alike.
//
// Order: the calls started on one communicator run one at a time, in the order they were
// started on this rank, which is the order on every rank (MPI's rule for collectives). A call's
// team operations and messages then meet their peers' of the same call, as in the blocking
// calls: a later call cannot start a team operation, post a receive or probe a message that
// belongs to an earlier one. A call's steps depend only on the same call's steps on other
// ranks, so every call ends once each rank keeps making progress. A blocking call across nodes,
// a rejected call and the communicator's end first complete the calls started before them
// (drain_started).
//
// Progress: in the plugin's completion calls (requests.hpp), each pass advancing every started
// call as far as it goes without waiting. One thread at a time advances them; a thread that
// finds another at it, or that is inside such a pass already (an MPI calling back into the
// plugin), leaves them. No lock of the plugin's is held while a step calls the MPI.
//
// Failure: a step that throws ends its call with that error, after the steps that settle the
// messages between nodes (those added with `settles`: a root completes its messages, a leader
// sends a failure notice or drops the root's message), so that no peer waits for a message that
// will not come, and no message stays to meet a later call. An error raised outside the node's
// team aborts the team (Spanning::abort), so that the node's other ranks get it too.
#pragma once

#include <mpi.h>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "shmcoll/shmcoll.hpp"

namespace shmcoll::mpi {

class Spanning;

class StartedCall {
 public:
  // What a running step waits for before the next one starts; every part of it must be over.
  struct Waiting {
    Request team;                  // an operation of the node's team
    std::vector<MPI_Request> mpi;  // MPI requests, completed by PMPI_Testall
    std::function<bool()> until;   // polled until true (may add MPI requests)
  };
  using Step = std::function<void(Waiting&)>;

  explicit StartedCall(Spanning& spanning) : spanning_(&spanning) {}
  StartedCall(const StartedCall&) = delete;
  StartedCall& operator=(const StartedCall&) = delete;

  // Appends a step. One that `settles` runs also after an earlier step failed.
  void then(Step step, bool settles = false) { steps_.push_back({std::move(step), settles}); }
  // Whether the call has failed so far (for a settling step: what it must send).
  bool failed() const { return error_ != nullptr; }

  // Whether the call is over on this rank (then throws its error, if it failed). Reads what the
  // last pass left: calls no MPI function.
  bool test() const;
  // Until the call is over, advancing the started calls meanwhile; throws its error.
  void wait() const;
  // Whether the call is over (successfully or not).
  bool over() const { return over_.load(std::memory_order_acquire); }

  Spanning& spanning() const { return *spanning_; }

 private:
  friend void progress_started_calls();
  // Runs the steps as far as they go without waiting; true once the call is over.
  bool advance();
  bool waiting_over();
  void fail(std::exception_ptr error);

  struct Entry {
    Step step;
    bool settles;
  };
  Spanning* spanning_;
  std::vector<Entry> steps_;
  std::size_t next_ = 0;
  Waiting waiting_;
  std::exception_ptr error_;
  std::atomic<bool> over_{false};
};

// Puts `call` behind the calls started before it on its communicator, and runs its first steps
// now if there are none.
void start_across_nodes(const std::shared_ptr<StartedCall>& call);
// One pass over the started calls (see above). One relaxed load where none is outstanding.
void progress_started_calls();
// Until every call started on `spanning` is over (their errors stay with their requests).
void drain_started(const Spanning& spanning);

}  // namespace shmcoll::mpi
