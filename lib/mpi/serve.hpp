// The common frame of an intercepted collective: check what this rank can judge alone, decide
// the path, run the body on the team, and turn every failure into an MPI error code through
// the communicator's error handler. Nothing may throw across the extern "C" boundary.
#pragma once

#include <string>
#include <type_traits>

#include "mpi/local_checks.hpp"
#include "mpi/plugin.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {

// `check(rank, size, error)` says whether the rank's own arguments pass, and otherwise fills
// `error` (local_checks.hpp); it runs before anything collective. `moves_nothing(rank)` says
// whether the call, as this rank's arguments describe it, moves no byte on any rank (see
// moves_nothing below); such a call returns at once. `body(target)` runs the call on the node's
// Team, or on the Spanning of a communicator that spans nodes (spanning/spanning.hpp), and
// returns MPI_SUCCESS or the code of a local MPI failure (which then ends the team for the other
// ranks too); `fallback()` calls PMPI; `skipped()` is what a call that moves nothing returns (a
// non-blocking one: a request complete at once). `root` is the call's (-1 where it has none),
// whose messages between nodes a rejected call settles (Call::reject).

// The body's result on `target` (a Team or a Spanning), its failures turned into MPI codes.
template <class Target, class Body>
int run_body(const char* function, Call& call, Target& target, Body&& body) {
  try {
    const int rc = body(target);
    if (rc == MPI_SUCCESS) return rc;
    const std::string why =
        std::string(function) + ": an MPI call on this rank failed with code " + std::to_string(rc);
    target.abort(Status::kInvalidArgument, why);
    return call.fail(InvalidArgument(why));
  } catch (const NodeTeamIntact& e) {
    return call.fail(e);  // the node's team finished its part: it stays
  } catch (const Error& e) {
    // Raised outside the team's operations (a spanning communicator's messages): the team's
    // other ranks must get it too. A team's own error is recorded already, and the first
    // one recorded stays.
    target.abort(e.status(), e.what(), e.cause());
    return call.fail(e);
  } catch (const std::exception& e) {
    target.abort(Status::kInternal, e.what());
    return call.fail(e);
  }
}

template <class Check, class Empty, class Body, class Fallback, class Skipped>
int serve(const char* function, Coll coll, MPI_Comm comm, Check&& check, Empty&& moves_nothing,
          Body&& body, Fallback&& fallback, Skipped&& skipped, int root) {
  try {
    Call call(function, coll, comm);
    if (call.to_pmpi()) return fallback();
    const int rank = call.rank();
    LocalError problem;
    if (!check(rank, call.size(), problem)) [[unlikely]] {
      if (problem) return call.reject(*problem, root);
    }
    if (moves_nothing(rank)) [[unlikely]] {
      call.skip();
      return skipped();
    }
    if (Team* team = call.engage()) [[likely]]
      return run_body(function, call, *team, body);
    Spanning* spanning = call.spanning();
    if (spanning == nullptr) return fallback();
    call.serve_across_nodes();
    return run_body(function, call, *spanning, body);
  } catch (...) {
    return MPI_ERR_INTERN;
  }
}

// Broadcast, scatter and gather whose count is 0 where this rank looks (the root's whole buffer,
// or a rank's own block): MPI's matching signatures make it 0 on every rank, so no rank moves
// anything and every rank returns at once, as the MPIs' own collectives do, without the team.
// A rank whose count was not 0 runs the operation alone; the ranks' operations then no longer
// pair up, which the next call's checks or Team::leave (when the communicator is freed) report.
// The v-forms have no such rule: a rank's empty block says nothing of the others'.
inline bool uniform_moves_nothing(int rank, int root, MPI_Count root_count, MPI_Count own_count) {
  return (rank == root ? root_count : own_count) == 0;
}

}  // namespace shmcoll::mpi
