// shmcoll-bench: what a node does for the collectives and for memory.
//   shmcoll-run -n N shmcoll-bench            the five collectives at every power-of-two size,
//                                             against memcpy (collective_sweep.hpp)
//   shmcoll-run -n N shmcoll-bench --placements   the same under each placement of ranks,
//                                             roots and buffers, and what placement costs
//   shmcoll-bench --numa-matrix               copy bandwidth and load latency between every
//                                             pair of NUMA nodes, in one process
// Each can keep its run as a JSON record (--json) and draw it (--png).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cli.hpp"
#include "collective_sweep.hpp"
#include "gnuplot.hpp"
#include "hwloc_topology.hpp"
#include "machine.hpp"
#include "mpi_comparison.hpp"
#include "numa/matrix_command.hpp"
#include "numa/placement_sweep.hpp"
#include "progress.hpp"
#include "record.hpp"
#include "shmcoll/shmcoll.hpp"
#include "sweep_output.hpp"

namespace {

using namespace shmcoll;
using bench::Coll;

struct Config {
  bench::SweepSettings sweep;
  bool shared = false;  // buffers from Team::allocate_shared
  std::string csv;
  bool numa_matrix = false, placements = false;
  std::string json, png;
  std::vector<std::string> compare;  // mpi-bench CSV files
};

// The command line into `cfg`; a bad argument ends the program with status 2 (cli.hpp).
void parse_arguments(int argc, char** argv, Config& cfg) {
  CLI::App app(
      "Times the five collectives of a team at each power-of-two size, against memcpy; or "
      "under each placement (--placements); or measures memory between NUMA nodes "
      "(--numa-matrix).\nConfiguration (SHMCOLL_CHECKS, SHMCOLL_SLOT_BYTES, ...) comes from "
      "the environment.",
      "shmcoll-bench");
  shmcoll::tools::set_usage(app,
                            "shmcoll-run -n N shmcoll-bench [OPTIONS]   or   shmcoll-bench "
                            "--numa-matrix [OPTIONS]");
  bench::SweepSettings& s = cfg.sweep;
  std::vector<std::string> colls;
  // What only the collectives take (the sweep and --placements), and what only the sweep does.
  const std::vector<CLI::Option*> collectives_only = {
      app.add_option("--coll", colls,
                     "comma-separated subset of bcast,scatter,scatterv,gather,gatherv (default: "
                     "all)")
          ->delimiter(',')
          ->check(CLI::IsMember({"bcast", "scatter", "scatterv", "gather", "gatherv"})),
      shmcoll::tools::add_bytes_option(app, "--min-bytes", s.min_bytes,
                                       "smallest message per rank (default 1; K/M/G suffixes)", 1),
      shmcoll::tools::add_bytes_option(app, "--max-bytes", s.max_bytes,
                                       "largest message per rank (default 64M)", 1),
      app.add_option("--iterations", s.iterations,
                     "timed iterations per size (default: 2000 for <=4K down to 10 for >8M)")
          ->check(CLI::Range(1, 100'000'000)),
      app.add_flag("!--no-validate", s.validate, "skip the byte-by-byte check after timing")};
  const std::vector<CLI::Option*> sweep_only = {
      app.add_flag("--shared", cfg.shared,
                   "buffers from Team::allocate_shared (copies between them are memcpy)"),
      app.add_option("--csv", cfg.csv, "also write the results as CSV to FILE (rank 0)"),
      app.add_option("--compare", cfg.compare,
                     "also draw, and record, the series of FILE, mpi-bench's CSV output (the "
                     "MPIs' own collectives at the same rank count; repeatable)")
          ->check(CLI::ExistingFile)};
  auto* placements = app.add_flag(
      "--placements", cfg.placements,
      "instead: the collectives with the ranks mapped by core and round-robin by NUMA node, "
      "the buffers on each rank's node and on the next, the root on each node; then what "
      "placement costs");
  auto* matrix = app.add_flag("--numa-matrix", cfg.numa_matrix,
                              "instead: copy bandwidth and load latency between every pair of "
                              "NUMA nodes (memory, CPU), in one process (no shmcoll-run)");
  matrix->excludes(placements);
  for (CLI::Option* o : collectives_only) o->excludes(matrix);
  for (CLI::Option* o : sweep_only) {
    o->excludes(placements);
    o->excludes(matrix);
  }
  app.add_flag("--quick", s.quick,
               "a short run: fewer repetitions (and, for the collectives, every other size)");
  app.add_option("--json", cfg.json, "also write the run as a JSON record to FILE");
  app.add_option("--png", cfg.png, "also draw the results into FILE (with gnuplot)");
  shmcoll::tools::parse_or_exit(app, argc, argv);
  if (cfg.numa_matrix) {
    const char* size = std::getenv(SocketBootstrap::kSizeVariable);
    if (size != nullptr && std::string(size) != "1")
      shmcoll::tools::usage_error(app,
                                  "--numa-matrix runs in one process, which starts its own "
                                  "threads; this job has " +
                                      std::string(size) + " ranks (run it without shmcoll-run)");
  }
  if (s.min_bytes > s.max_bytes) {
    shmcoll::tools::usage_error(app, "--min-bytes " + std::to_string(s.min_bytes) +
                                         " is larger than --max-bytes " +
                                         std::to_string(s.max_bytes));
  }
  if (!colls.empty()) {
    s.colls.clear();
    for (const std::string& name : colls) {
      for (Coll c : bench::all_collectives())
        if (name == bench::name_of(c)) s.colls.push_back(c);
    }
  }
}

// The collectives sweep: every rank runs it; rank 0 prints, records and draws.
int run_sweep(Bootstrap& bootstrap, const Config& cfg) {
  const bench::SweepSettings& s = cfg.sweep;
  // The compared series, read by every rank before the team forms: a bad file ends every rank
  // alike, before any measurement. Each says so: the launcher stops the job at the first rank
  // that ends, which need not be rank 0.
  std::vector<bench::ComparedSeries> compared;
  try {
    for (const std::string& file : cfg.compare) {
      for (bench::ComparedSeries& series : bench::read_mpi_bench_csv(file, bootstrap.size()))
        compared.push_back(std::move(series));
    }
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "shmcoll-bench: rank %d: %s\n", bootstrap.rank(), e.what());
    return 2;
  }
  Team team(bootstrap);
  const int me = team.rank(), size = team.size();
  const auto usize = static_cast<std::uint64_t>(size);
  const std::uint64_t area = s.max_bytes * usize;
  std::vector<std::byte> private_memory;
  SharedBuffer shared_memory;
  std::span<std::byte> memory;
  if (cfg.shared) {
    shared_memory = team.allocate_shared(2 * area);
    memory = shared_memory.local();
  } else {
    private_memory.resize(2 * area);
    memory = private_memory;
  }
  bench::SweepBuffers b;
  b.send = memory.first(area);
  b.recv = memory.subspan(area);
  // Touched now, not inside a sample.
  std::fill(b.send.begin(), b.send.end(), std::byte{1});
  std::fill(b.recv.begin(), b.recv.end(), std::byte{0});
  std::vector<std::byte> copy_destination(me == 0 ? s.max_bytes : 0, std::byte{0});
  b.copy_destination = copy_destination;
  FILE* csv = nullptr;
  const std::vector<std::uint64_t> sizes = bench::sizes_of(s);
  nlohmann::ordered_json parameters;  // rank 0's, for --json
  double expected_total = 0, expected_done = 0, rate = 0;
  std::unique_ptr<bench::ProgressLine> progress;
  if (me == 0) {
    const Options& o = team.options();
    parameters = {{"ranks", size},
                  {"checks", check_level_name(o.checks)},
                  {"slots", o.slots},
                  {"slot_bytes", o.slot_bytes},
                  {"segment_bytes", team.segment_bytes()},
                  {"min_bytes", s.min_bytes},
                  {"max_bytes", s.max_bytes},
                  {"iterations", s.iterations},
                  {"quick", s.quick},
                  {"buffers", cfg.shared ? "shared" : "private"},
                  {"validate", s.validate},
                  {"placement", nlohmann::ordered_json::array()},
                  {"algorithms", nlohmann::ordered_json::object()}};
    std::printf("# shmcoll-bench: %d ranks; checks=%s; slots %d x %zu bytes; segment %zu bytes\n",
                size, check_level_name(o.checks), o.slots, o.slot_bytes, team.segment_bytes());
    std::printf("# machine: %s\n", bench::describe_machine().c_str());
    for (const ParameterInfo& p : shmcoll::parameters(o)) {
      if (p.name.find("_ALGORITHM") != std::string::npos) {
        std::printf("# %s=%s\n", p.name.c_str(), p.value.c_str());
        parameters["algorithms"][p.name] = p.value;
      }
    }
    const std::string placement = team.placement();
    for (std::size_t at = 0; at < placement.size();) {
      const std::size_t end = placement.find('\n', at);
      parameters["placement"].push_back(placement.substr(at, end - at));
      std::printf("# placement: %s\n", placement.substr(at, end - at).c_str());
      at = end + 1;
    }
    std::fputs(bench::table_legend(), stdout);
    std::printf("# buffers: %s\n", cfg.shared ? "Team::allocate_shared" : "private (std::vector)");
    if (!cfg.csv.empty()) {
      csv = std::fopen(cfg.csv.c_str(), "w");
      if (csv)
        std::fprintf(csv,
                     "collective,ranks,bytes,iterations,avg_us,min_us,max_us,p50_us,mbps,memcpy_"
                     "us,floor_us,valid\n");
    }
    // The estimate and the progress line scale expected_seconds by a memcpy rate.
    const std::size_t probe = std::min<std::size_t>(s.max_bytes, 8u << 20);
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(copy_destination.data(), b.send.data(), probe);
    rate = static_cast<double>(probe) /
           std::max(1e-7,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    for (std::uint64_t bytes : sizes)
      expected_total += bench::expected_seconds(s, bytes, size, rate);
    expected_total *= static_cast<double>(s.colls.size());
    std::printf("# estimated time: about %.0f s\n", expected_total + 0.5);
    std::fflush(stdout);
    progress = std::make_unique<bench::ProgressLine>();
  }
  std::vector<bench::SweepPoint> points;
  std::uint64_t seq = 0;
  bool failed = false;
  for (Coll coll : s.colls) {
    if (me == 0) std::fputs(bench::table_header(bench::name_of(coll)).c_str(), stdout);
    for (std::uint64_t bytes : sizes) {
      bench::SweepPoint p = bench::measure_point(team, coll, b, s, bytes, -1, seq);
      if (me != 0) continue;
      std::fputs(bench::table_row(p).c_str(), stdout);
      std::fflush(stdout);
      if (csv) {
        std::fprintf(csv, "%s,%d,%llu,%d,%.3f,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f,%s\n",
                     p.collective.c_str(), size, static_cast<unsigned long long>(bytes),
                     p.iterations, p.osu_average_us, p.rank_mean_min_us, p.rank_mean_max_us,
                     p.slowest_us.median, p.bandwidth_mbps, p.memcpy_us.median, p.floor_us.median,
                     p.valid.c_str());
      }
      failed = failed || p.valid == "FAIL";
      expected_done += bench::expected_seconds(s, bytes, size, rate);
      progress->update(p.collective + " " + std::to_string(bytes) + " B",
                       expected_done / expected_total);
      points.push_back(std::move(p));
    }
  }
  if (csv) std::fclose(csv);
  progress.reset();
  if (me != 0) return 0;
  if (!cfg.json.empty()) {
    const bench::HwlocTopology topology;
    nlohmann::ordered_json record = bench::new_record("collectives", topology.get());
    record["parameters"] = parameters;
    record["collectives"] = bench::sweep_json(points);
    if (!compared.empty()) record["compared_with"] = bench::compared_json(compared);
    bench::write_record(record, cfg.json);
    std::printf("# record written to %s\n", cfg.json.c_str());
  }
  if (!cfg.png.empty()) {
    const std::string problem = shmcoll::tools::run_gnuplot(bench::sweep_plot_script(
        points, compared, size,
        "shmcoll-bench, " + std::to_string(size) + " ranks: " + bench::describe_machine(),
        cfg.png));
    if (!problem.empty()) {
      std::fprintf(stderr, "shmcoll-bench: --png %s: %s\n", cfg.png.c_str(), problem.c_str());
      return 1;
    }
    std::printf("# plots drawn into %s\n", cfg.png.c_str());
  }
  if (failed) std::fprintf(stderr, "shmcoll-bench: validation found wrong bytes (see FAIL)\n");
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  parse_arguments(argc, argv, cfg);
  if (cfg.numa_matrix)
    return bench::run_numa_matrix(
        {.quick = cfg.sweep.quick, .json_path = cfg.json, .png_path = cfg.png});
  try {
    auto bootstrap = SocketBootstrap::from_environment();
    if (cfg.placements)
      return bench::run_placements(
          *bootstrap, {.sweep = cfg.sweep, .json_path = cfg.json, .png_path = cfg.png});
    return run_sweep(*bootstrap, cfg);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shmcoll-bench: %s\n", e.what());
    return 1;
  }
}
