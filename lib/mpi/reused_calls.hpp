// Non-blocking calls on a node's team served by calls the plugin keeps for each communicator,
// collective and role, instead of a new pending call, operation and MPI generalized request per
// call (requests.hpp's general path).
//
// A kept call is a PersistentCall (persistent.hpp) that serves_nonblocking: its handle is an MPI
// request that is never started, which the program holds while the call is active and which the
// completion calls serve as they serve a persistent request's start (completion.cpp); the
// completion that ends it makes the program's handle MPI_REQUEST_NULL, as it would a generalized
// request's. Each call converts its buffers again, in the kept call's memory. Where they pass
// through (contiguous datatypes) the operation is built inside a team's persistent request
// (team_persistent.hpp), made again only where the team call's arguments differ from the last
// ones: a repeated call allocates nothing. Otherwise the team's non-blocking call is started.
// A call whose arguments equal a kept call's last ones, with predefined datatypes, skips the
// call's frame (start_repeated), as a persistent start does.
//
// Up to kCallsPerRole calls per collective and role may be active at once on a communicator;
// beyond them, and under MPI_THREAD_MULTIPLE (where one thread's completion of a kept call may
// race another's start of it), calls take the general path. The kept calls end with their
// communicator's team (its communicator freed, or an error): inactive ones at once, active ones
// (detached) once the program has completed them.
#pragma once

#include <array>
#include <boost/container/static_vector.hpp>
#include <concepts>
#include <memory>
#include <optional>

#include "mpi/persistent.hpp"
#include "mpi/team_persistent.hpp"

namespace shmcoll::mpi {

// A kept call of the collective C (forms.hpp) in one role, whose buffers are `Buffers`.
template <class C, class Buffers>
class ReusedCall final : public PersistentCall, public Buffers {
 public:
  // MPI_Start of such a handle is refused before it gets here (persistent.cpp).
  int start(Team&) override { return MPI_ERR_REQUEST; }
  int start(Spanning&) override { return MPI_ERR_REQUEST; }
  int finish(MPI_Comm comm) override { return Buffers::finish(comm); }
  bool unpacks() const override { return !Buffers::passes_through(); }

  TeamPersistent on_team;
  bool request_on_team = false;  // `request` completes on_team's starts
  // The arguments of the last call, where its buffers were repeatable (call_buffers.hpp) and
  // C's arguments compare (not the v-forms'): an equal call makes the same team call, and
  // starts on_team's request again without the call's frame (start_repeated).
  std::optional<C> repeats;
};

// The kept calls of one communicator (CommState::reused).
class ReusedCalls {
 public:
  static constexpr int kCallsPerRole = 4;

  ReusedCalls() = default;
  ReusedCalls(const ReusedCalls&) = delete;
  ReusedCalls& operator=(const ReusedCalls&) = delete;
  // Deletes the inactive calls and detaches the active ones.
  ~ReusedCalls();

  // An inactive call of C in this rank's role (`root`), made where fewer than kCallsPerRole
  // exist; nullptr where all are active or none can be made. (A collective's calls in a role
  // are all of one type: its buffers in that role are.)
  template <class C, class Buffers>
  ReusedCall<C, Buffers>* inactive_call(bool root, MPI_Comm comm) {
    Slot& slot = slots_[index(C::kColl, root)];
    for (PersistentCall* call : slot) {
      if (!call->active) return static_cast<ReusedCall<C, Buffers>*>(call);
    }
    if (slot.size() == kCallsPerRole) return nullptr;
    auto made = std::make_unique<ReusedCall<C, Buffers>>();
    if (!adopt(*made, C::kColl, comm)) return nullptr;
    slot.push_back(made.get());
    return made.release();
  }
  // An inactive call of C in this role whose last call had the arguments `c`, or nullptr.
  template <class C, class Buffers>
  ReusedCall<C, Buffers>* repeating_call(bool root, const C& c) const {
    for (PersistentCall* kept : slots_[index(C::kColl, root)]) {
      auto* call = static_cast<ReusedCall<C, Buffers>*>(kept);
      if (!call->active && call->repeats && *call->repeats == c) return call;
    }
    return nullptr;
  }
  // The program freed an active call (MPI_Request_free): it leaves the communicator's calls.
  void forget(const PersistentCall& call);

 private:
  using Slot = boost::container::static_vector<PersistentCall*, kCallsPerRole>;
  static std::size_t index(Coll coll, bool root) {
    return static_cast<std::size_t>(coll) * 2 + (root ? 1 : 0);
  }
  // Gives a new call its handle; false where the MPI refused one.
  static bool adopt(PersistentCall& call, Coll coll, MPI_Comm comm);

  std::array<Slot, static_cast<std::size_t>(Coll::kCount) * 2> slots_;
};

// The kept calls of `comm`, made on first use; nullptr where the program's threads may call the
// MPI at once (MPI_THREAD_MULTIPLE).
ReusedCalls* reused_calls_of(MPI_Comm comm);
// The kept calls of `comm` where it is served by a node's team (`*rank` its rank there) and
// calls may skip the frame (not logged, not MPI_THREAD_MULTIPLE); else nullptr.
ReusedCalls* repeatable_calls_of(MPI_Comm comm, int* rank);

// The non-blocking call `c` (forms.hpp), which the frame has checked, on `team` in a kept call,
// as start_collective (requests.hpp) would in a new one: the role's part converts the buffers
// and starts the operation, Team's non-blocking call (C::start), or where the buffers pass
// through the team's persistent request, which C::init makes. Returns the MPI code, or nothing
// where no kept call is free (nothing done then).
template <class C>
std::optional<int> start_reused(const char* function, const C& c, Team& team,
                                MPI_Request* request) {
  ReusedCalls* calls = reused_calls_of(c.comm);
  if (calls == nullptr) return std::nullopt;
  auto in = [&]<class Buffers>(ReusedCall<C, Buffers>* call, auto&& convert) -> std::optional<int> {
    if (call == nullptr) return std::nullopt;
    Buffers& buffers = *call;
    const int rc = convert(buffers, [&](auto... args) {
      if (buffers.passes_through()) {
        call->on_team.start(
            team, [](Team& t, auto... a) { return C::init(t, a...); }, call->request, args...);
        if (!call->request_on_team) call->request = call->on_team.started().request();
        call->request_on_team = true;
      } else {
        call->request = C::start(team, args...);
        call->request_on_team = false;
      }
    });
    call->repeats.reset();
    if (rc != MPI_SUCCESS) return rc;
    if constexpr (std::equality_comparable<C>) {
      if (buffers.repeatable()) call->repeats = c;
    }
    activate_nonblocking(*call, function, request);
    return MPI_SUCCESS;
  };
  if (team.rank() == c.root) {
    using Buffers = typename C::RootBuffers;
    return in(calls->inactive_call<C, Buffers>(true, c.comm),
              [&](Buffers& b, auto run) { return c.root_part(b, team.size(), run); });
  }
  using Buffers = typename C::OtherBuffers;
  return in(calls->inactive_call<C, Buffers>(false, c.comm),
            [&](Buffers& b, auto run) { return c.other_part(b, run); });
}

// The non-blocking call `c` without the call's frame, where a kept call's last call had the
// same arguments (ReusedCall::repeats): the checks passed for them, and the conversion gave the
// team call that the kept call's team persistent request makes. Returns MPI_SUCCESS, or nothing
// where no kept call repeats `c` or its request refused to start (its team ended): the frame
// then serves the call.
template <class C>
std::optional<int> start_repeated(const char* function, const C& c, MPI_Request* request) {
  if constexpr (!std::equality_comparable<C>) {
    return std::nullopt;
  } else {
    int rank = -1;
    const ReusedCalls* calls = repeatable_calls_of(c.comm, &rank);
    if (calls == nullptr) return std::nullopt;
    PersistentCall* started = nullptr;
    auto start = [&](auto* call) {
      if (call == nullptr) return;
      try {
        call->on_team.started().start();
        started = call;
      } catch (...) {
        call->repeats.reset();
      }
    };
    if (rank == c.root)
      start(calls->repeating_call<C, typename C::RootBuffers>(true, c));
    else
      start(calls->repeating_call<C, typename C::OtherBuffers>(false, c));
    if (started == nullptr) return std::nullopt;
    stats().served++;  // as Call::engage counts a call through the frame
    activate_nonblocking(*started, function, request);
    return MPI_SUCCESS;
  }
}

// MPI_Request_free of an active kept call (persistent.cpp): its communicator forgets it.
void forget_reused_call(const PersistentCall& call);

}  // namespace shmcoll::mpi
