// Team options. Every tunable is one row of the parameter registry (see parameters()), settable
// from the environment as SHMCOLL_<NAME>; Options::from_env() reads them once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shmcoll/export.hpp"

namespace shmcoll {

// How a collective travels: flat between the root and everyone, or along the topology tree
// (package, NUMA node, L3; see lib/topology/hierarchy.hpp). kAuto lets the registry choose by
// size and team shape (lib/coll/registry.hpp); the others force one, for benchmarks and tests.
enum class Algorithm { kAuto, kFlat, kTree };
using BcastAlgorithm = Algorithm;

// Whether large messages may move with one copy between the processes' own buffers (Linux
// cross-memory attach, probed at team formation) instead of two through the shared slots.
// kAuto: where the registry finds it faster (lib/coll/registry.hpp: not for a broadcast in an
// oversubscribed team); kAlways: from the minimum size in every team (tests, benchmarks).
enum class SingleCopy { kAuto, kOff, kAlways };

// How ranks verify that they called the same collective with the same root and matching sizes
// (each rank's own arguments are checked at every level, before anything is published). Either
// way every mismatch reaches every rank as an error.
enum class CheckLevel {
  // The default: no rank waits for the others' agreement. A rank compares itself with the
  // peers that arrived before it, and the later ones compare themselves with it; a rank that
  // returned before the mismatching peer arrived gets the error in a later call into the team,
  // at the latest in Team::leave(). Costs no wait (docs/tuning.md, "Check levels").
  kDeferred,
  // Every rank also waits until every peer has arrived and agreed before it returns, so that
  // every rank raises a mismatch in the failing call itself: for debugging a program.
  kFull,
};

// "deferred", "full".
SHMCOLL_API const char* check_level_name(CheckLevel level);

struct SHMCOLL_API Options {
  // Bytes of one data slot. Larger messages move in chunks of this size. Rounded up to a
  // multiple of the cache line.
  std::size_t slot_bytes = 64 * 1024;
  // Slots per rank: how many chunks a writer may have outstanding before it must wait for its
  // readers. Also how many back-to-back small operations can overlap. 0 (auto): slots_for().
  int slots = 0;
  CheckLevel checks = CheckLevel::kDeferred;
  // Bound on any wait for a peer, in seconds. Dead peers are detected sooner by liveness checks.
  double timeout_s = 60.0;
  // How often, in milliseconds, a waiting rank checks that the process it waits for is alive
  // (and a sleeping one wakes to do so): a dead peer is an error within about this long.
  int peer_check_ms = 20;
  // How long a waiter spins before yielding, in pause iterations; -1 picks from the machine
  // (no spinning when the team has more ranks than CPUs).
  int spin_iterations = -1;
  // How many sched_yield rounds follow the spinning before the waiter sleeps on a futex.
  int yield_iterations = 32;
  // The topology the ranks' places come from: empty for this machine, an hwloc synthetic
  // description ("package:2 numa:2 l3:1 core:4 pu:1"), or an XML topology file (*.xml).
  std::string topology;
  Algorithm bcast_algorithm = Algorithm::kAuto;
  Algorithm scatter_algorithm = Algorithm::kAuto;  // scatter and scatterv
  Algorithm gather_algorithm = Algorithm::kAuto;   // gather and gatherv
  SingleCopy single_copy = SingleCopy::kAuto;
  // Per-rank block size (bytes) from which flat broadcast, scatter and gather use the single
  // copy, when the team has it. Below it the slots win: no system call per transfer. Where
  // cross-memory attach measures slow, and in oversubscribed teams, the registry starts later
  // (lib/coll/registry.hpp); larger teams use the *_min_team_bytes below. Every default of this
  // struct and the measurement behind it: docs/tuning.md.
  std::size_t single_copy_min_bytes = 16 * 1024;
  // Cross-memory attach is slow from this cost per byte, in multiples of memcpy's (measured by
  // rank 0 when a team forms): each core of a cooperative copy, moving its part at 1/cost of
  // memcpy's speed, loses to the slots' two pipelined copies at memcpy's speed from a cost of 2;
  // 2.5 lies between the machines measured so far (docs/tuning.md), away from both kinds.
  static constexpr double kSlowCrossCopyCost = 2.5;
  // Per-rank block size from which broadcast, scatter and gather copy straight between the
  // ranks' buffers with memcpy where every rank's buffer lies in one shared allocation
  // (Team::allocate_shared, adopt_shared: an MPI-3 shared window), as far as the single copy
  // does not take the blocks anyway: below single_copy_min_bytes, or in a team without
  // cross-memory attach (a container's default seccomp profile forbids it), whatever
  // `single_copy` says; in teams other than 2 ranks with a CPU each, only the blocks the single
  // copy would take (TeamImpl::shared_copy_for).
  std::size_t shared_copy_min_bytes = 4 * 1024;
  // Teams of more than 2 ranks with a CPU each (not oversubscribed): a scatter(v) or gather(v)
  // block takes the single copy only when the ranks together move this much (ranks x block);
  // a broadcast always takes the slots there (all readers copy the root's same pages), and
  // SHMCOLL_SINGLE_COPY=always overrides both.
  std::size_t scatter_single_copy_min_team_bytes = 4 * 1024 * 1024;
  std::size_t gather_single_copy_min_team_bytes = 8 * 1024 * 1024;
  // The slots per rank a writer needs to run ahead of its reader at memcpy speed: with less,
  // it rewrites lines its reader still holds (slots_for, and the advice of data_paths()).
  static constexpr std::uint64_t kPipelineRingBytes = 1024 * 1024;
  // Teams of up to this many ranks get the deep ring by default (slots_for).
  static constexpr int kDeepRingMaxRanks = 8;

  // The slots per rank of a team of `team_size` ranks: `slots` if set, otherwise a ring of
  // kPipelineRingBytes (at least 4 slots) for teams of up to kDeepRingMaxRanks ranks, and 4
  // slots for larger ones, whose segments would otherwise grow by 768 KiB per rank.
  int slots_for(int team_size) const;
  // The CPUs a team counts on when it decides whether it is oversubscribed (more ranks than
  // CPUs: no rank then waits for another's copy, see SingleCopyExchange). 0: those its ranks
  // may run on, together (their affinity masks). Set it where the masks overstate what the
  // ranks get, such as a container with a CPU quota; rank 0's value holds for the team.
  int team_cpus = 0;
  // Each rank moves a buffer of its own (64 KiB or more) that peers copy from or into with
  // cross-memory attach onto 2 MiB pages (madvise MADV_COLLAPSE) once it has been used enough
  // to pay for that: every huge page it overlaps, with the memory around it there
  // (copy/huge_pages.hpp, HugePageCollapser::kAmortization). The peers' system calls pin its
  // pages one by one, so on 4 KiB pages they copy well below memcpy's speed. Local to each
  // rank: ranks may differ, and only the speed does.
  bool huge_pages = true;
  // Rank 0 says on stderr, once per team, which data paths the team uses and why.
  bool verbose = false;
  // A thread per rank that advances the non-blocking operations while the caller computes
  // (without it they advance inside the calls into the team). Costs a thread per team, and a
  // lock around every call of the team.
  bool progress_thread = false;
  // Not a SHMCOLL_* parameter, the caller's to set: calls into the team (collectives, tests
  // and waits of its requests) may come from several threads at once, each call still in an
  // order the other ranks follow. A lock around every call serializes them, as with
  // progress_thread; a test that finds it held returns without progress. The MPI plugin sets
  // it under MPI_THREAD_MULTIPLE, where one thread's MPI_Wait advances the requests of a
  // communicator another thread calls a collective on.
  bool concurrent_calls = false;

  // Every SHMCOLL_* parameter from the environment; throws InvalidArgument naming the first
  // variable whose value is not accepted, its value and what it accepts.
  static Options from_env();
  // The same, but a variable whose value is not accepted keeps its default, and `problems`
  // gets one line for it: the variable, its value, what it accepts and the default used.
  static Options from_env(std::vector<std::string>& problems);
};

// One row of the parameter registry: environment name, default, current value, meaning.
struct ParameterInfo {
  std::string name;
  std::string default_value;
  std::string value;
  std::string doc;
};
SHMCOLL_API std::vector<ParameterInfo> parameters(const Options& current);

// The SHMCOLL_* variables in the environment that shmcoll reads nowhere (a misspelled name, or
// a parameter that no longer exists), which would otherwise be ignored in silence: one line
// each, "SHMCOLL_CHEKS is not a shmcoll variable (did you mean SHMCOLL_CHECKS?); ignored".
// Known are the parameters above, the variables shmcoll-run gives its ranks, and `also_known`
// (a caller's own, such as the MPI plugin's).
SHMCOLL_API std::vector<std::string> unknown_variables(
    const std::vector<std::string>& also_known = {});

}  // namespace shmcoll
