// The MPI plugin's own parameters (the core's are Options'): the one list the plugin reads its
// switches by (config.cpp), shmcoll-info prints, and the README's table is made from
// (shmcoll-info --markdown). Free of MPI headers, so that programs without MPI can list them.
#pragma once

#include <string>
#include <vector>

namespace shmcoll::mpi {

struct PluginParameter {
  const char* name;
  const char* default_value;  // as the variable would be written; "" for none
  const char* doc;
};

inline constexpr PluginParameter kEnable{"SHMCOLL_ENABLE", "1", "0: every call goes to PMPI"};
// Per collective, in Coll's order (plugin.hpp).
inline constexpr PluginParameter kCollectiveSwitches[] = {
    {"SHMCOLL_MPI_BCAST", "1", "0: MPI_Bcast goes to PMPI (the same on every rank)"},
    {"SHMCOLL_MPI_SCATTER", "1", "0: MPI_Scatter goes to PMPI (the same on every rank)"},
    {"SHMCOLL_MPI_SCATTERV", "1", "0: MPI_Scatterv goes to PMPI (the same on every rank)"},
    {"SHMCOLL_MPI_GATHER", "1", "0: MPI_Gather goes to PMPI (the same on every rank)"},
    {"SHMCOLL_MPI_GATHERV", "1", "0: MPI_Gatherv goes to PMPI (the same on every rank)"},
};
inline constexpr PluginParameter kVerbose{
    "SHMCOLL_MPI_VERBOSE", "0",
    "1: log once per communicator and reason which path serves a call, and why a call fell "
    "back; print the counts at MPI_Finalize"};
inline constexpr PluginParameter kBudget{
    "SHMCOLL_MPI_BUDGET", "1G",
    "shared memory all teams of this user on this node may hold together; past it, new "
    "communicators fall back to PMPI (the first process to open the budget sets it)"};
inline constexpr PluginParameter kBudgetScope{
    "SHMCOLL_MPI_BUDGET_SCOPE", "",
    "jobs naming the same scope share one budget; give a job a scope of its own to give it a "
    "budget of its own"};
inline constexpr PluginParameter kFakeNodes{
    "SHMCOLL_MPI_FAKE_NODES", "0",
    "K > 1: a device for tests and benchmarks, read at MPI_Init: each machine counts as K "
    "nodes, rank r of MPI_COMM_WORLD on node r mod K, so that communicators span nodes"};
inline constexpr PluginParameter kBcastSegments{
    "SHMCOLL_MPI_BCAST_SEGMENTS", "0",
    "1: across nodes, broadcasts from 512 KiB are cut into segments that flow through the two "
    "levels as a pipeline (docs/scaling.md); the same on every rank"};

// Every one of them, in the order they are listed.
inline constexpr const PluginParameter* kPluginParameters[] = {
    &kEnable,
    &kCollectiveSwitches[0],
    &kCollectiveSwitches[1],
    &kCollectiveSwitches[2],
    &kCollectiveSwitches[3],
    &kCollectiveSwitches[4],
    &kVerbose,
    &kBudget,
    &kBudgetScope,
    &kFakeNodes,
    &kBcastSegments,
};

// Their names (for unknown_variables, shmcoll/options.hpp).
inline std::vector<std::string> parameter_names() {
  std::vector<std::string> names;
  for (const PluginParameter* parameter : kPluginParameters) names.emplace_back(parameter->name);
  return names;
}

}  // namespace shmcoll::mpi
