// The common frame of an intercepted collective: check what this rank can judge alone, decide
// the path, run the body on the team, and turn every failure into an MPI error code through
// the communicator's error handler. Nothing may throw across the extern "C" boundary.
#pragma once

#include "mpi/local_checks.hpp"
#include "mpi/plugin.hpp"

namespace shmcoll::mpi {

// `check(rank, size)` returns the rank's own argument error, if any (local_checks.hpp); it runs
// before anything collective. `body(team)` returns MPI_SUCCESS or the code of a local MPI
// failure (which then ends the team for the other ranks too); `fallback()` calls PMPI.
template <class Check, class Body, class Fallback>
int serve(const char* function, Coll coll, MPI_Comm comm, Check&& check, Body&& body,
          Fallback&& fallback) {
  try {
    Call call(function, coll, comm);
    if (call.to_pmpi()) return fallback();
    if (LocalCheck problem = check(call.rank(), call.size())) [[unlikely]]
      return call.reject(*problem);
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

}  // namespace shmcoll::mpi
