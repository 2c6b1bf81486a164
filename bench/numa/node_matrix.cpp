#include "numa/node_matrix.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>

#include "numa/bound_threads.hpp"
#include "numa/node_memory.hpp"

namespace shmcoll::bench {

namespace {

constexpr std::size_t kLine = 64;

// Links the buffer's cache lines into one cycle in random order (Sattolo's algorithm), each
// line holding the address of the next: every load depends on the previous one and hardware
// prefetchers cannot guess the next line.
void link_chase(std::byte* buffer, std::size_t bytes) {
  const std::size_t lines = std::max<std::size_t>(1, bytes / kLine);
  std::vector<std::uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 random(12345);
  for (std::size_t i = lines - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(random)]);
  }
  for (std::size_t i = 0; i < lines; ++i) {
    std::byte* next = buffer + static_cast<std::size_t>(order[i]) * kLine;
    std::memcpy(buffer + i * kLine, &next, sizeof next);
  }
}

// Follows `loads` links from `from`; returns where it stopped.
std::byte* chase(std::byte* from, std::uint64_t loads) {
  std::byte* p = from;
  for (std::uint64_t i = 0; i < loads; ++i) p = *reinterpret_cast<std::byte* volatile*>(p);
  return p;
}

// The source, the destination and the chase of one memory node.
struct NodeBuffers {
  NodeMemory source, destination, chain;
  NodeBuffers(int node, const MatrixOptions& o)
      : source(node, o.copy_bytes), destination(node, o.copy_bytes), chain(node, o.chase_bytes) {
    link_chase(chain.data(), chain.size());
  }
  double memory_on_node() const {
    return std::min(
        {source.fraction_on_node(), destination.fraction_on_node(), chain.fraction_on_node()});
  }
};

// GB/s of each round copying `bytes`, split evenly over the threads on `pus`.
std::vector<double> copy_rates(hwloc_topology_t topology, const std::vector<int>& pus,
                               NodeBuffers& b, std::size_t bytes, int rounds) {
  const std::size_t n = pus.size();
  const std::size_t slice = bytes / n / kLine * kLine;
  const auto seconds = timed_rounds(topology, pus, 1, rounds, [&](int thread) {
    const std::size_t t = static_cast<std::size_t>(thread);
    const std::size_t begin = t * slice, end = t + 1 == n ? bytes : begin + slice;
    std::memcpy(b.destination.data() + begin, b.source.data() + begin, end - begin);
  });
  std::vector<double> rates;
  for (double s : seconds) rates.push_back(static_cast<double>(bytes) / s / 1e9);
  return rates;
}

// ns per load of each round of `loads` dependent loads from the CPU `pu`.
std::vector<double> load_latencies(hwloc_topology_t topology, int pu, NodeBuffers& b,
                                   std::uint64_t loads, int rounds) {
  std::byte* at = b.chain.data();
  const auto seconds = timed_rounds(topology, {pu}, 1, rounds, [&](int) { at = chase(at, loads); });
  std::vector<double> ns;
  for (double s : seconds) ns.push_back(s * 1e9 / static_cast<double>(loads));
  return ns;
}

std::size_t last_level_cache_bytes(hwloc_topology_t topology, hwloc_const_cpuset_t cpus) {
  for (hwloc_obj_type_t type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    std::size_t bytes = 0;
    hwloc_obj_t cache = nullptr;
    while ((cache = hwloc_get_next_obj_by_type(topology, type, cache))) {
      if (hwloc_bitmap_intersects(cache->cpuset, cpus)) bytes += cache->attr->cache.size;
    }
    if (bytes > 0) return bytes;
  }
  return 0;
}

}  // namespace

MatrixOptions MatrixOptions::for_topology(hwloc_topology_t topology, bool quick) {
  std::size_t largest = 0;
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node))) {
    if (node->cpuset != nullptr)
      largest = std::max(largest, last_level_cache_bytes(topology, node->cpuset));
  }
  MatrixOptions o;
  const std::size_t bytes = std::clamp<std::size_t>(4 * largest, 64u << 20, 2ull << 30);
  o.copy_bytes = o.chase_bytes = (bytes + 4095) / 4096 * 4096;
  if (quick) {
    o.copy_rounds = 3;
    o.chase_loads = 200'000;
    o.chase_rounds = 3;
  }
  return o;
}

NodeMatrix measure_node_matrix(hwloc_topology_t topology, const MatrixPlan& plan,
                               const MatrixOptions& options, const MatrixObserver& observer) {
  using Clock = std::chrono::steady_clock;
  if (plan.memory_nodes.empty() || plan.cpu_nodes.empty())
    throw std::runtime_error("hwloc found no NUMA node with memory, or none with cores");
  NodeMatrix m{plan, options, {}};
  const int total = static_cast<int>(plan.memory_nodes.size() * plan.cpu_nodes.size());
  int done = 0;
  for (int memory_node : plan.memory_nodes) {
    const auto setup_start = Clock::now();
    NodeBuffers buffers(memory_node, options);
    const double on_node = buffers.memory_on_node();
    if (done == 0 && observer.estimated && !plan.cpu_nodes.empty()) {
      // One copy and 1/20 of a chase round on the first CPU node give the rates to scale.
      const double setup = std::chrono::duration<double>(Clock::now() - setup_start).count();
      const int pu = plan.cpu_nodes.front().core_pus.front();
      const double copy_s = static_cast<double>(options.copy_bytes) / 1e9 /
                            copy_rates(topology, {pu}, buffers, options.copy_bytes, 1).front();
      const std::uint64_t sample_loads = std::max<std::uint64_t>(1, options.chase_loads / 20);
      const double load_s = load_latencies(topology, pu, buffers, sample_loads, 1).front() * 1e-9;
      // Per cell: the one-core copies, the all-core copies (taken as no faster: an upper
      // bound), and the chase rounds, each with its warm-up.
      const double cell =
          2 * (options.copy_rounds + 1) * copy_s +
          (options.chase_rounds + 1) * static_cast<double>(options.chase_loads) * load_s;
      observer.estimated(setup * static_cast<double>(plan.memory_nodes.size()) + cell * total);
    }
    std::vector<MatrixCell> row;
    for (const CpuNode& cpus : plan.cpu_nodes) {
      MatrixCell c;
      c.memory_node = memory_node;
      c.cpu_node = cpus.numa_os_index;
      c.cores = static_cast<int>(cpus.core_pus.size());
      c.memory_on_node = on_node;
      c.copy_one_core_gbps = spread_of(copy_rates(topology, {cpus.core_pus.front()}, buffers,
                                                  options.copy_bytes, options.copy_rounds));
      c.copy_all_cores_gbps = spread_of(
          copy_rates(topology, cpus.core_pus, buffers, options.copy_bytes, options.copy_rounds));
      c.latency_ns = spread_of(load_latencies(topology, cpus.core_pus.front(), buffers,
                                              options.chase_loads, options.chase_rounds));
      row.push_back(c);
      if (observer.progressed) observer.progressed(++done, total);
    }
    m.rows.push_back(std::move(row));
  }
  return m;
}

}  // namespace shmcoll::bench
