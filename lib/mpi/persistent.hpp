// Persistent collectives (MPI-4's MPI_Bcast_init and the others, which Open MPI 4 exports as
// MPIX_Bcast_init and so on): the program starts them with MPI_Start or MPI_Startall and
// completes each start with any completion call, which leaves the request inactive until the
// next start; MPI_Request_free frees it.
//
// The program's handle is a persistent request of the MPI's own that is never started (a
// receive from MPI_PROC_NULL): the MPI frees it, converts it to Fortran and finds it inactive,
// as it must be between starts. While a start is active the interposed calls serve it: MPI_Start
// starts shmcoll's operation, a wait or test on it alone (or on an array of such requests) waits
// for that operation directly, and a call that mixes it with other requests hands the MPI a
// generalized request for that start (requests.hpp), made then, and lets the MPI complete them
// all with its own semantics. The init decides the communicator's path and checks the
// arguments once; each start converts the buffers and starts the team's operation, or on a
// communicator across nodes a started call (spanning/started.hpp).
//
// A communicator that persistent requests use stays, with its team, until the last of them is
// freed, as the MPI's own requests would keep it (hold_freed_communicator). The calls the plugin
// keeps for non-blocking calls (reused_calls.hpp) are PersistentCalls too, which end with their
// communicator's team instead.
#pragma once

#include <memory>
#include <string>

#include "mpi/requests.hpp"
#include "mpi/team_persistent.hpp"

// The MPI's names of the persistent collectives, where it has them: MPI-4's, or Open MPI 4's
// extension's (MPIX_Bcast_init, PMPIX_Bcast_init).
#if MPI_VERSION >= 4
#define SHMCOLL_PERSISTENT(name) MPI_##name
#define SHMCOLL_PMPI_PERSISTENT(name) PMPI_##name
#define SHMCOLL_PERSISTENT_NAME(name) "MPI_" #name
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define SHMCOLL_PERSISTENT(name) MPIX_##name
#define SHMCOLL_PMPI_PERSISTENT(name) PMPIX_##name
#define SHMCOLL_PERSISTENT_NAME(name) "MPIX_" #name
#endif
#endif

namespace shmcoll::mpi {

// One persistent request; its activation is the PendingCall (the table's entry, the operation
// and the buffers), reused by every start.
class PersistentCall : public PendingCall {
 public:
  // Converts the buffers and starts the operation, on the team or across nodes (started_into).
  // Returns an MPI code.
  virtual int start(Team& team) = 0;
  virtual int start(Spanning& spanning) = 0;
  int root = -1;  // the call's (-1 where it moves nothing)

  std::string start_function;  // "MPI_Start (MPI_Bcast_init)": the failures' function
  MPI_Request identity = MPI_REQUEST_NULL;
  bool moves_nothing = false;  // every start is complete at once
  // Touched by the program's calls on this request only (MPI: one thread at a time per request).
  bool active = false;
  // A call the plugin keeps for the non-blocking calls on one communicator (reused_calls.hpp),
  // not a persistent request of the program's: the program holds its handle only while it is
  // active, and the completion that ends it makes the program's handle MPI_REQUEST_NULL.
  bool serves_nonblocking = false;
  // Such a call whose communicator's team ended while it was active: deleted once completed.
  bool detached = false;

  // A start on a node's team whose buffers need no conversion (contiguous datatypes: the team
  // call's arguments are the same at every start) starts the team's persistent request
  // directly, without a call's frame (serve.hpp): what the last start through the frame left,
  // valid while the communicator is served by the same team (persistent.cpp).
  struct Direct {
    PersistentRequest* request = nullptr;  // set by the conversion (init_collective)
    const CommState* state = nullptr;      // set once the start went through
    const Team* team = nullptr;
  } direct;
};

template <class Buffers, class Prepare>
class PersistentWith final : public PersistentCall, public Buffers {
 public:
  explicit PersistentWith(Prepare prepare) : prepare_(std::move(prepare)) {}
  int start(Team& team) override { return prepare_(static_cast<Buffers&>(*this), team, *this); }
  int start(Spanning& spanning) override {
    return prepare_(static_cast<Buffers&>(*this), spanning, *this);
  }
  int finish(MPI_Comm comm) override { return Buffers::finish(comm); }
  bool unpacks() const override { return !Buffers::passes_through(); }

 private:
  Prepare prepare_;
};

// Gives `call` its handle (an MPI request that is never started) and registers it, so that
// MPI_Start and the completion calls find it. Returns an MPI code.
int register_call(PersistentCall& call);
// Unregisters and deletes an inactive `call` (or a detached one the program has completed),
// freeing its handle.
void delete_call(PersistentCall* call);

// Makes `call` the program's persistent request `*request`.
int add_persistent(const char* function, Coll coll, MPI_Comm comm,
                   std::unique_ptr<PersistentCall> call, MPI_Request* request);

// The body of a persistent collective's init: as start_collective (requests.hpp), but the parts
// are kept, with copies of the arguments, and run at every start. On a node's team a start
// starts the team's own persistent request (team_persistent.hpp), which `init(team, args...)`
// makes (Team::bcast_init, ...); across nodes it starts the call anew.
template <class RootBuffers, class OtherBuffers, class Target, class Start, class Init,
          class RootPart, class OtherPart>
int init_collective(const char* function, Coll coll, MPI_Comm comm, MPI_Request* request,
                    Target& target, int root, Start start, Init init, RootPart root_part,
                    OtherPart other_part) {
  auto prepare = [start, init](auto part) {
    return [start, init, part, on_team = TeamPersistent()](auto& buffers, auto& on,
                                                           PersistentCall& call) mutable {
      return part(buffers, [&](auto... args) {
        if constexpr (std::is_same_v<std::decay_t<decltype(on)>, Team>) {
          on_team.start(on, init, call.request, args...);
          call.direct.request = buffers.passes_through() ? &on_team.started() : nullptr;
        } else {
          started_into(call, start(on, args...));
        }
      });
    };
  };
  auto make = [&]<class Buffers>(auto part) -> std::unique_ptr<PersistentCall> {
    using Prepared = decltype(prepare(part));
    auto call = std::make_unique<PersistentWith<Buffers, Prepared>>(prepare(part));
    call->root = root;
    return call;
  };
  if (target.rank() == root)
    return add_persistent(function, coll, comm, make.template operator()<RootBuffers>(root_part),
                          request);
  return add_persistent(function, coll, comm, make.template operator()<OtherBuffers>(other_part),
                        request);
}

// A persistent request whose starts move nothing (serve.hpp's moves_nothing).
int empty_persistent(const char* function, Coll coll, MPI_Comm comm, MPI_Request* request);

// For the completion calls (completion.cpp). Whether some persistent request of the plugin's
// is active: one relaxed load.
bool persistent_active();
// The plugin's persistent request `handle` if it is active (else nullptr).
PersistentCall* find_active(MPI_Request handle);
// Waits for (`wait`) or tests an active request's start that has no MPI request; once done, the
// request is inactive. Returns MPI_SUCCESS or the start's error; `done` says whether it is.
int complete_directly(PersistentCall& call, bool wait, bool& done);
// The program's completion call completed the MPI request of an active start (mpi_request_for):
// the persistent request is inactive.
void completed_by_mpi(PersistentCall& call);
// After either: where `call` served a non-blocking call, the program's handle `*handle`
// becomes MPI_REQUEST_NULL, and a detached call is deleted.
void after_completion(PersistentCall& call, MPI_Request* handle);
// Makes the active `call`, started on its team, the program's non-blocking request `*request`
// (reused_calls.hpp); `function` names it in failures.
void activate_nonblocking(PersistentCall& call, const char* function, MPI_Request* request);
// MPI_Request_free of the plugin's persistent request `*request` (returning the MPI's code in
// `rc`); false if it is not one.
bool free_persistent(MPI_Request* request, int& rc);
// MPI_Comm_free of a communicator: true if persistent requests of the plugin's use it, which
// then keep it (and its team) until the last of them is freed, when the plugin frees it.
bool hold_freed_communicator(MPI_Comm comm);
// MPI_Finalize: frees the communicators still kept (their requests were never freed).
void free_held_communicators();

}  // namespace shmcoll::mpi
