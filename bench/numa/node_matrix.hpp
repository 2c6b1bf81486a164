// The NUMA node matrix: for every pair (memory on node i, copying CPU on node j), the copy
// bandwidth of one core and of all cores of node j, and the latency of dependent loads from
// one core of node j. Both copy buffers lie on node i; the bandwidth counts the bytes copied
// (each is read once and written once). Buffers are several times the last-level caches of a
// CPU node, so the figures are memory's, not a cache's.
#pragma once

#include <hwloc.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "numa/matrix_plan.hpp"
#include "spread.hpp"

namespace shmcoll::bench {

struct MatrixOptions {
  std::size_t copy_bytes = 64u << 20;   // each of the source and the destination
  int copy_rounds = 10;                 // timed copies per figure, after one warm-up
  std::size_t chase_bytes = 64u << 20;  // the dependent loads' buffer
  std::uint64_t chase_loads = 1'000'000;
  int chase_rounds = 5;

  // Buffers of four times the largest CPU node's last-level caches (64 MiB to 2 GiB); --quick
  // takes fewer repetitions and loads, never smaller buffers (which would measure caches).
  static MatrixOptions for_topology(hwloc_topology_t topology, bool quick);
};

struct MatrixCell {
  int memory_node = -1, cpu_node = -1;  // OS indexes
  Spread copy_one_core_gbps, copy_all_cores_gbps, latency_ns;
  int cores = 0;              // threads of the all-core copy
  double memory_on_node = 0;  // fraction of sampled buffer pages found on memory_node
};

struct NodeMatrix {
  MatrixPlan plan;
  MatrixOptions options;
  std::vector<std::vector<MatrixCell>> rows;  // [memory node][CPU node], in the plan's order
};

struct MatrixObserver {
  // Once, after the first memory node's buffers are set up and one copy and a short chase
  // were timed there: the whole measurement's expected seconds.
  std::function<void(double seconds)> estimated;
  std::function<void(int done, int total)> progressed;  // after each cell
};

// Measures on this machine (`topology` must be loaded from it). Throws std::runtime_error when
// the plan has no row or no column, memory cannot be placed or a thread cannot be bound.
NodeMatrix measure_node_matrix(hwloc_topology_t topology, const MatrixPlan& plan,
                               const MatrixOptions& options, const MatrixObserver& observer);

}  // namespace shmcoll::bench
