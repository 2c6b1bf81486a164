// Which node each rank of MPI_COMM_WORLD runs on, recorded once after MPI_Init (init.cpp), so
// that a communicator's first collective can tell whether its ranks share one node from its
// group alone, without a collective call (MPI_Comm_split_type, a communicator's creation) of
// its own. Absent where the program did not initialize through the plugin's MPI_Init (Open
// MPI's Fortran bindings call PMPI_Init); then the split decides, as for ranks outside
// MPI_COMM_WORLD (spawned processes).
#pragma once

#include <mpi.h>

#include <optional>

namespace shmcoll::mpi {

// Collective over MPI_COMM_WORLD; called once, right after the MPI's own initialization.
void record_node_map();
// Frees what record_node_map kept; the map no longer answers (MPI_Finalize).
void forget_node_map();
// Whether every rank of `comm` runs on one node, from the map; nullopt where the map does not
// answer. Local: the same answer on every rank of `comm`.
std::optional<bool> on_one_node(MPI_Comm comm);

}  // namespace shmcoll::mpi
