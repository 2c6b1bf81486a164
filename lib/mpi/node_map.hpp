// Which node each rank of MPI_COMM_WORLD runs on, recorded once after MPI_Init (init.cpp), so
// that a communicator's first collective can tell whether its ranks share one node from its
// group alone, without a collective call (MPI_Comm_split_type, a communicator's creation) of
// its own. Absent where the program did not initialize through the plugin's MPI_Init (Open
// MPI's Fortran bindings call PMPI_Init); then the split decides, as for ranks outside
// MPI_COMM_WORLD (spawned processes).
//
// SHMCOLL_MPI_FAKE_NODES=K divides each node in K, by world rank modulo K (plugin_parameters.hpp):
// the map then answers as if rank r ran on node r mod K of its machine, so that communicators
// spanning nodes can be tested and measured on one machine. It needs the map: without it,
// the nodes are the machines.
#pragma once

#include <mpi.h>

#include <optional>
#include <vector>

namespace shmcoll::mpi {

// Collective over MPI_COMM_WORLD; called once, right after the MPI's own initialization.
void record_node_map();
// Frees what record_node_map kept; the map no longer answers (MPI_Finalize).
void forget_node_map();
// The node of every rank of `comm` from the MPI's split by shared memory, as the lowest rank
// of `comm` on it. Collective over comm.
std::vector<int> node_colors_by_split(MPI_Comm comm);
// The node of every rank of `comm`, by its rank there, as a number shared by the ranks of one
// node (the lowest MPI_COMM_WORLD rank on it); nullopt where the map does not answer. Local.
std::optional<std::vector<int>> node_colors(MPI_Comm comm);

}  // namespace shmcoll::mpi
