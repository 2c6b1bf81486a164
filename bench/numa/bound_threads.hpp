// Timed rounds of work on threads bound to given PUs (hwloc), all threads starting each round
// together: the node matrix's copies and loads.
#pragma once

#include <hwloc.h>

#include <functional>
#include <vector>

namespace shmcoll::bench {

// Starts one thread per entry of `pus` (OS indexes), binds it there, and runs `warmup + rounds`
// rounds; in each, every thread passes a barrier and runs work(thread_index). A round's time is
// from its first thread's start to its last thread's end, in seconds; the warm-up rounds' are
// dropped. Throws std::runtime_error naming the PU when a thread cannot be bound.
std::vector<double> timed_rounds(hwloc_topology_t topology, const std::vector<int>& pus, int warmup,
                                 int rounds, const std::function<void(int)>& work);

}  // namespace shmcoll::bench
