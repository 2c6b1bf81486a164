// MPI error codes that carry shmcoll's messages.
//
// An error the plugin returns belongs to the MPI class the MPI itself would use for the same
// mistake (MPI_ERR_COUNT, MPI_ERR_ROOT, ...), and MPI_Error_string of the code gives shmcoll's
// full message (which rank, which argument, which values). The codes are added to the MPI with
// MPI_Add_error_code / MPI_Add_error_string and reused in turn, a few per class, so that a
// program that fails often does not make the MPI's table grow: a code keeps its message until
// that class has raised kCodesPerClass more errors. The plugin also answers MPI_Error_string
// for its codes itself (message_of): MPICH 4.0 gives a code added to a predefined class the
// string of one of its own internal messages.
#pragma once

#include <string>

#include "shmcoll/error.hpp"

namespace shmcoll::mpi {

inline constexpr int kCodesPerClass = 8;

// The MPI error class of a shmcoll error: local argument errors by their cause, cross-rank
// size mismatches MPI_ERR_TRUNCATE (the class the MPIs give a receiver whose buffer is too
// small), other mismatches MPI_ERR_ARG, a failed or silent peer and setup failures
// MPI_ERR_OTHER, broken invariants MPI_ERR_INTERN.
int error_class_of(Status status, Cause cause);

// The reverse for the classes of local argument errors (local_checks.hpp), for the other
// ranks of a team that such an error ends.
Cause cause_of_class(int mpi_class);

// A code of `mpi_class` whose string is `message` (cut to MPI_MAX_ERROR_STRING), or the class
// itself where the MPI refuses to add one. Thread-safe.
int error_code_for(int mpi_class, const std::string& message);

// The message of a code error_code_for returned, or false for any other code. Thread-safe.
bool message_of(int code, std::string& message);

}  // namespace shmcoll::mpi
