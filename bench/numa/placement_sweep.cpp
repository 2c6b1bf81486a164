#include "numa/placement_sweep.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "gnuplot.hpp"
#include "hwloc_topology.hpp"
#include "machine.hpp"
#include "numa/node_memory.hpp"
#include "numa/placement_output.hpp"
#include "progress.hpp"
#include "record.hpp"
#include "revision.hpp"

namespace shmcoll::bench {

namespace {

// Rank 0's memcpy rate (bytes per second), for the estimate and the progress line.
double memcpy_rate(std::uint64_t max_bytes) {
  const std::size_t probe = std::min<std::size_t>(max_bytes, 8u << 20);
  std::vector<std::byte> from(probe, std::byte{1}), to(probe);
  const auto t0 = std::chrono::steady_clock::now();
  std::memcpy(to.data(), from.data(), probe);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(probe) / std::max(s, 1e-7);
}

}  // namespace

int run_placements(Bootstrap& bootstrap, const PlacementCommand& command) {
  const int me = bootstrap.rank(), size = bootstrap.size();
  const SweepSettings& s = command.sweep;
  const std::vector<PlacementCase> cases = placement_cases(size);
  const std::vector<std::uint64_t> sizes = sizes_of(s);
  const std::uint64_t area = s.max_bytes * static_cast<std::uint64_t>(size);
  double expected_total = 0, expected_done = 0, rate = 0;
  std::unique_ptr<ProgressLine> progress;
  if (me == 0) {
    rate = memcpy_rate(s.max_bytes);
    for (std::uint64_t bytes : sizes) expected_total += expected_seconds(s, bytes, size, rate);
    expected_total *= static_cast<double>(s.colls.size() * cases.size());
    std::printf("# shmcoll-bench --placements: %d ranks, %zu placements\n", size, cases.size());
    std::printf("# machine: %s\n# revision: %s\n", describe_machine().c_str(), source_revision());
    std::printf("# every rank bound to its core; the root fixed per placement\n%s", table_legend());
    std::printf("# estimated time: about %.0f s\n", expected_total + 0.5);
    std::fflush(stdout);
    progress = std::make_unique<ProgressLine>();
  }
  std::vector<PlacementResult> results;
  std::uint64_t seq = 0;
  bool failed = false;
  std::unique_ptr<Team> team;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const PlacementCase& c = cases[k];
    if (k == 0 || cases[k - 1].map != c.map) {
      team.reset();  // the previous mapping's team ends before the ranks move
      const launch::Placement planned(size, launch::BindTo::kCore, c.map);
      if (const std::string problem = planned.bind(me); !problem.empty())
        throw std::runtime_error("rank " + std::to_string(me) + ": " + problem);
      team = std::make_unique<Team>(bootstrap);
    }
    const RankSite& site = c.ranks[static_cast<std::size_t>(me)];
    NodeMemory memory(site.buffer_node, 2 * area);
    std::vector<std::byte> copy_destination(me == 0 ? s.max_bytes : 0);
    SweepBuffers b;
    b.send = std::span<std::byte>(memory.data(), area);
    b.recv = std::span<std::byte>(memory.data() + area, area);
    b.copy_destination = copy_destination;
    PlacementResult r{c, std::vector<double>(static_cast<std::size_t>(size)), {}};
    const double on_node = memory.fraction_on_node();
    team->gather(&on_node, 1, kDouble, r.buffer_on_node.data(), 1, kDouble, 0);
    if (me == 0) {
      std::printf("\n# P%zu: %s\n", k + 1, c.describe().c_str());
      for (int rank = 0; rank < size; ++rank) {
        const RankSite& rs = c.ranks[static_cast<std::size_t>(rank)];
        std::printf("#   rank %d: core %d, node %d, buffers on node %d (%.0f%% of pages there)\n",
                    rank, rs.core, rs.numa_node, rs.buffer_node,
                    100 * r.buffer_on_node[static_cast<std::size_t>(rank)]);
      }
    }
    for (Coll coll : s.colls) {
      if (me == 0) std::fputs(table_header(name_of(coll)).c_str(), stdout);
      for (std::uint64_t bytes : sizes) {
        SweepPoint p = measure_point(*team, coll, b, s, bytes, c.root, seq);
        if (me == 0) {
          std::fputs(table_row(p).c_str(), stdout);
          std::fflush(stdout);
          failed = failed || p.valid == "FAIL";
          expected_done += expected_seconds(s, bytes, size, rate);
          progress->update(
              "P" + std::to_string(k + 1) + " " + p.collective + " " + std::to_string(bytes) + " B",
              expected_done / expected_total);
          r.points.push_back(std::move(p));
        }
      }
    }
    results.push_back(std::move(r));
  }
  team.reset();
  progress.reset();
  if (me != 0) return 0;
  const std::vector<PlacementCost> costs = placement_costs(results);
  std::fputs(placement_cost_table(results, costs).c_str(), stdout);
  if (!command.json_path.empty()) {
    const HwlocTopology topology;
    nlohmann::ordered_json record = new_record("placements", topology.get());
    record["parameters"] = {{"ranks", size},
                            {"min_bytes", s.min_bytes},
                            {"max_bytes", s.max_bytes},
                            {"iterations", s.iterations},
                            {"quick", s.quick},
                            {"validate", s.validate}};
    add_placements(record, results, costs);
    write_record(record, command.json_path);
    std::printf("# record written to %s\n", command.json_path.c_str());
  }
  if (!command.png_path.empty()) {
    const std::string problem = tools::run_gnuplot(placement_plot_script(
        results, costs, "what placement costs, " + std::to_string(size) + " ranks",
        command.png_path));
    if (!problem.empty()) {
      std::fprintf(stderr, "shmcoll-bench: --png %s: %s\n", command.png_path.c_str(),
                   problem.c_str());
      return 1;
    }
    std::printf("# plots drawn into %s\n", command.png_path.c_str());
  }
  if (failed) std::fprintf(stderr, "shmcoll-bench: validation failed (see the tables)\n");
  return failed ? 1 : 0;
}

}  // namespace shmcoll::bench
