// The common frame of an intercepted collective: check what this rank can judge alone, decide
// the path, run the body on the team, and turn every failure into an MPI error code through
// the communicator's error handler. Nothing may throw across the extern "C" boundary.
#pragma once

#include "mpi/local_checks.hpp"
#include "mpi/plugin.hpp"

namespace shmcoll::mpi {

// `check(rank, size, error)` says whether the rank's own arguments pass, and otherwise fills
// `error` (local_checks.hpp); it runs before anything collective. `moves_nothing(rank)` says
// whether the call, as this rank's arguments describe it, moves no byte on any rank (see
// moves_nothing below); such a call returns at once. `body(team)` returns MPI_SUCCESS or the code
// of a local MPI failure (which then ends the team for the other ranks too); `fallback()` calls
// PMPI; `skipped()` is what a call that moves nothing returns (a non-blocking one: a request
// complete at once).
struct Succeed {
  int operator()() const { return MPI_SUCCESS; }
};
template <class Check, class Empty, class Body, class Fallback, class Skipped = Succeed>
int serve(const char* function, Coll coll, MPI_Comm comm, Check&& check, Empty&& moves_nothing,
          Body&& body, Fallback&& fallback, Skipped&& skipped = Succeed{}) {
  try {
    Call call(function, coll, comm);
    if (call.to_pmpi()) return fallback();
    const int rank = call.rank();
    LocalError problem;
    if (!check(rank, call.size(), problem)) [[unlikely]] {
      if (problem) return call.reject(*problem);
    }
    if (moves_nothing(rank)) [[unlikely]] {
      call.skip();
      return skipped();
    }
    Team* team = call.engage();
    if (team == nullptr) return fallback();
    try {
      const int rc = body(*team);
      if (rc == MPI_SUCCESS) return rc;
      const std::string why = std::string(function) +
                              ": an MPI call on this rank failed with code " + std::to_string(rc);
      team->abort(Status::kInvalidArgument, why);
      return call.fail(InvalidArgument(why));
    } catch (const std::exception& e) {
      return call.fail(e);
    }
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
