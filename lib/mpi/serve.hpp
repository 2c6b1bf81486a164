// The common frame of an intercepted collective: decide the path, run the body on the team,
// and turn every failure into an MPI error code through the communicator's error handler.
// Nothing may throw across the extern "C" boundary.
#pragma once

#include "mpi/plugin.hpp"

namespace shmcoll::mpi {

// `body(team)` returns MPI_SUCCESS or the code of a local MPI failure (which then ends the
// team for the other ranks too); `fallback()` calls PMPI.
template <class Body, class Fallback>
int serve(const char* function, Coll coll, MPI_Comm comm, Body&& body, Fallback&& fallback) {
  try {
    Call call(function, coll, comm);
    if (call.team() == nullptr) return fallback();
    try {
      const int rc = body(*call.team());
      if (rc == MPI_SUCCESS) return rc;
      const std::string why = std::string(function) +
                              ": an MPI call on this rank failed with code " + std::to_string(rc);
      call.team()->abort(Status::kInvalidArgument, why);
      return call.fail(InvalidArgument(why));
    } catch (const std::exception& e) {
      return call.fail(e);
    }
  } catch (...) {
    return MPI_ERR_INTERN;
  }
}

}  // namespace shmcoll::mpi
