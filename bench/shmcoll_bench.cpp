// shmcoll-bench: latency and bandwidth of the five collectives on this node.
//
// Method (OSU-like, safe for collectives): iteration counts are fixed per size and identical on
// every rank (time-based counts would diverge between ranks and hang); each sample starts after
// a barrier; the root rotates every iteration; the root's buffer changes every iteration. Each
// rank times its own calls; the table reports the OSU average (mean over ranks of each rank's
// mean), the min and max of those per-rank means, and the median over iterations of the
// slowest rank's time (the time the collective took). Two references are measured in the same
// run: a memcpy of the same size on one rank, and the copy floor -- every rank at once copies its
// share of the bytes that must land in other ranks' buffers ((ranks - 1) x size, split evenly),
// the slowest rank's time: no collective moving those bytes through memory can beat all cores
// copying them together. After timing, one call per size is checked byte by byte.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "cli.hpp"
#include "gnuplot.hpp"
#include "hwloc_topology.hpp"
#include "machine.hpp"
#include "numa/matrix_command.hpp"
#include "progress.hpp"
#include "record.hpp"
#include "shmcoll/shmcoll.hpp"
#include "sweep_output.hpp"
#include "warmup.hpp"

namespace {

using namespace shmcoll;
using Clock = std::chrono::steady_clock;

enum class Coll { kBcast, kScatter, kScatterv, kGather, kGatherv };
const char* name_of(Coll c) {
  switch (c) {
    case Coll::kBcast:
      return "bcast";
    case Coll::kScatter:
      return "scatter";
    case Coll::kScatterv:
      return "scatterv";
    case Coll::kGather:
      return "gather";
    case Coll::kGatherv:
      return "gatherv";
  }
  return "?";
}

struct Config {
  std::vector<Coll> colls = {Coll::kBcast, Coll::kScatter, Coll::kScatterv, Coll::kGather,
                             Coll::kGatherv};
  std::uint64_t min_bytes = 1;
  std::uint64_t max_bytes = 64ull << 20;
  int iterations = 0;  // 0: by size
  bool validate = true;
  bool shared = false;  // buffers from Team::allocate_shared
  std::string csv;
  bool numa_matrix = false;
  bool quick = false;
  std::string json, png;
};

// The command line into `cfg`; a bad argument ends the program with status 2 (cli.hpp).
void parse_arguments(int argc, char** argv, Config& cfg) {
  CLI::App app(
      "Times the five collectives of a team at each power-of-two size, against memcpy.\n"
      "Configuration (SHMCOLL_CHECKS, SHMCOLL_SLOT_BYTES, ...) comes from the "
      "environment.",
      "shmcoll-bench");
  shmcoll::tools::set_usage(app, "shmcoll-run -n N shmcoll-bench [OPTIONS]");
  std::vector<std::string> colls;
  app.add_option("--coll", colls,
                 "comma-separated subset of bcast,scatter,scatterv,gather,gatherv (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"bcast", "scatter", "scatterv", "gather", "gatherv"}));
  shmcoll::tools::add_bytes_option(app, "--min-bytes", cfg.min_bytes,
                                   "smallest message per rank (default 1; K/M/G suffixes)", 1);
  shmcoll::tools::add_bytes_option(app, "--max-bytes", cfg.max_bytes,
                                   "largest message per rank (default 64M)", 1);
  app.add_option("--iterations", cfg.iterations,
                 "timed iterations per size (default: 2000 for <=4K down to 10 for >8M)")
      ->check(CLI::Range(1, 100'000'000));
  app.add_flag("!--no-validate", cfg.validate, "skip the byte-by-byte check after timing");
  app.add_flag("--shared", cfg.shared,
               "buffers from Team::allocate_shared (copies between them are memcpy)");
  app.add_option("--csv", cfg.csv, "also write the results as CSV to FILE (rank 0)");
  app.add_flag("--numa-matrix", cfg.numa_matrix,
               "instead: copy bandwidth and load latency between every pair of NUMA nodes "
               "(memory, CPU), in one process (no shmcoll-run)");
  app.add_flag("--quick", cfg.quick,
               "a short run: fewer repetitions (and, for the collectives, every other size)");
  app.add_option("--json", cfg.json, "also write the run as a JSON record to FILE");
  app.add_option("--png", cfg.png, "also draw the results into FILE (with gnuplot)");
  shmcoll::tools::parse_or_exit(app, argc, argv);
  if (cfg.numa_matrix) {
    const char* size = std::getenv(SocketBootstrap::kSizeVariable);
    if (size != nullptr && std::string(size) != "1")
      shmcoll::tools::usage_error(app,
                                  "--numa-matrix runs in one process, which starts its "
                                  "own threads; this job has " +
                                      std::string(size) + " ranks (run it without shmcoll-run)");
  }
  if (cfg.min_bytes > cfg.max_bytes) {
    shmcoll::tools::usage_error(app, "--min-bytes " + std::to_string(cfg.min_bytes) +
                                         " is larger than --max-bytes " +
                                         std::to_string(cfg.max_bytes));
  }
  if (!colls.empty()) {
    cfg.colls.clear();
    for (const std::string& name : colls) {
      for (Coll c : {Coll::kBcast, Coll::kScatter, Coll::kScatterv, Coll::kGather, Coll::kGatherv})
        if (name == name_of(c)) cfg.colls.push_back(c);
    }
  }
}

int iterations_for(const Config& cfg, std::uint64_t bytes) {
  if (cfg.iterations > 0) return cfg.iterations;
  int n = 10;
  if (bytes <= 4096)
    n = 2000;
  else if (bytes <= 65536)
    n = 500;
  else if (bytes <= (1u << 20))
    n = 100;
  else if (bytes <= (8u << 20))
    n = 30;
  return cfg.quick ? std::max(3, n / 10) : n;
}

// Powers of two from --min-bytes to --max-bytes; every other one with --quick.
std::vector<std::uint64_t> sizes_of(const Config& cfg) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = cfg.min_bytes; bytes <= cfg.max_bytes; bytes *= cfg.quick ? 4 : 2)
    sizes.push_back(bytes);
  return sizes;
}

// The expected seconds of one size of a collective, from a memcpy rate (bytes per second):
// each timed or warm-up call moves about (ranks - 1) x bytes and costs a barrier (taken as
// 5 us), and 50 copy-floor rounds follow. A guess for the progress line and the estimate.
double expected_seconds(const Config& cfg, std::uint64_t bytes, int ranks, double rate) {
  const int iters = iterations_for(cfg, bytes);
  const int calls = iters + shmcoll::bench::warmup_iterations(iters, bytes);
  const double moved = static_cast<double>(bytes) * std::max(1, ranks - 1);
  return calls * (5e-6 + moved / rate) + std::min(iters, 50) * (5e-6 + moved / ranks / rate);
}

std::byte pattern(std::uint64_t seq, int rank, std::uint64_t i) {
  return std::byte(static_cast<unsigned char>(
      (seq * 131 + static_cast<std::uint64_t>(rank) * 31 + i * 7) % 251));
}

struct Buffers {
  std::span<std::byte> send, recv;
  std::vector<std::byte> private_memory;
  SharedBuffer shared_memory;
  std::vector<Count> counts, displs;
};

void call(Team& team, Coll coll, Buffers& b, std::uint64_t bytes, int root) {
  const auto n = static_cast<Count>(bytes);
  switch (coll) {
    case Coll::kBcast:
      team.bcast(b.send.data(), n, kByte, root);
      break;
    case Coll::kScatter:
      team.scatter(b.send.data(), n, kByte, b.recv.data(), n, kByte, root);
      break;
    case Coll::kScatterv:
      team.scatterv(b.send.data(), b.counts, b.displs, kByte, b.recv.data(), n, kByte, root);
      break;
    case Coll::kGather:
      team.gather(b.send.data(), n, kByte, b.recv.data(), n, kByte, root);
      break;
    case Coll::kGatherv:
      team.gatherv(b.send.data(), n, kByte, b.recv.data(), b.counts, b.displs, kByte, root);
      break;
  }
}

// Fills the inputs of one call from the pattern for `seq`; checks the outputs afterwards.
int validate_once(Team& team, Coll coll, Buffers& b, std::uint64_t bytes, std::uint64_t seq,
                  int root) {
  const int me = team.rank(), size = team.size();
  std::fill(b.recv.begin(), b.recv.end(), std::byte{0});
  const bool root_sends_all = coll == Coll::kScatter || coll == Coll::kScatterv;
  for (int r = 0; r < size; ++r) {
    if (root_sends_all && me == root) {
      for (std::uint64_t i = 0; i < bytes; ++i) b.send[r * bytes + i] = pattern(seq, r, i);
    }
  }
  if (coll == Coll::kBcast && me == root) {
    for (std::uint64_t i = 0; i < bytes; ++i) b.send[i] = pattern(seq, root, i);
  }
  if (coll == Coll::kGather || coll == Coll::kGatherv) {
    for (std::uint64_t i = 0; i < bytes; ++i) b.send[i] = pattern(seq, me, i);
  }
  call(team, coll, b, bytes, root);
  int bad = 0;
  auto expect = [&](const std::byte* p, int owner) {
    for (std::uint64_t i = 0; i < bytes; ++i) bad += p[i] != pattern(seq, owner, i);
  };
  if (coll == Coll::kBcast) expect(b.send.data(), root);
  if (root_sends_all) expect(b.recv.data(), me);
  if ((coll == Coll::kGather || coll == Coll::kGatherv) && me == root) {
    for (int r = 0; r < size; ++r) expect(b.recv.data() + r * bytes, r);
  }
  return bad;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  parse_arguments(argc, argv, cfg);
  if (cfg.numa_matrix)
    return shmcoll::bench::run_numa_matrix(
        {.quick = cfg.quick, .json_path = cfg.json, .png_path = cfg.png});

  try {
    auto bootstrap = SocketBootstrap::from_environment();
    Team team(*bootstrap);
    const int me = team.rank(), size = team.size();
    const auto usize = static_cast<std::uint64_t>(size);
    Buffers b;
    const std::uint64_t area = cfg.max_bytes * usize;
    std::span<std::byte> memory;
    if (cfg.shared) {
      b.shared_memory = team.allocate_shared(2 * area);
      memory = b.shared_memory.local();
    } else {
      b.private_memory.resize(2 * area);
      memory = b.private_memory;
    }
    b.send = memory.first(area);
    b.recv = memory.subspan(area);
    // Touched now, not inside a sample.
    std::fill(b.send.begin(), b.send.end(), std::byte{1});
    std::fill(b.recv.begin(), b.recv.end(), std::byte{0});
    std::vector<std::byte> copy_dst(me == 0 ? cfg.max_bytes : 0, std::byte{0});
    FILE* csv = nullptr;
    const std::vector<std::uint64_t> sizes = sizes_of(cfg);
    nlohmann::ordered_json parameters_record;  // rank 0's, for --json
    if (me == 0) {
      const Options& o = team.options();
      parameters_record = {{"ranks", size},
                           {"checks", check_level_name(o.checks)},
                           {"slots", o.slots},
                           {"slot_bytes", o.slot_bytes},
                           {"segment_bytes", team.segment_bytes()},
                           {"min_bytes", cfg.min_bytes},
                           {"max_bytes", cfg.max_bytes},
                           {"iterations", cfg.iterations},
                           {"quick", cfg.quick},
                           {"buffers", cfg.shared ? "shared" : "private"},
                           {"validate", cfg.validate},
                           {"placement", nlohmann::ordered_json::array()},
                           {"algorithms", nlohmann::ordered_json::object()}};
      std::printf("# shmcoll-bench: %d ranks; checks=%s; slots %d x %zu bytes; segment %zu bytes\n",
                  size, check_level_name(o.checks), o.slots, o.slot_bytes, team.segment_bytes());
      std::printf("# machine: %s\n", bench::describe_machine().c_str());
      for (const ParameterInfo& p : parameters(o)) {
        if (p.name.find("_ALGORITHM") != std::string::npos) {
          std::printf("# %s=%s\n", p.name.c_str(), p.value.c_str());
          parameters_record["algorithms"][p.name] = p.value;
        }
      }
      const std::string placement = team.placement();
      for (std::size_t at = 0; at < placement.size();) {
        const std::size_t end = placement.find('\n', at);
        parameters_record["placement"].push_back(placement.substr(at, end - at));
        std::printf("# placement: %s\n", placement.substr(at, end - at).c_str());
        at = end + 1;
      }
      std::printf(
          "# avg/min/max: mean over ranks of each rank's mean latency, and its extremes (OSU);\n"
          "# p50: median over iterations of the slowest rank's latency; MB/s: bytes that cross\n"
          "# processes ((ranks-1) x size) / p50; memcpy: one rank copying size bytes; floor: "
          "every\n"
          "# rank at once copying its share of (ranks-1) x size bytes (the slowest).\n");
      std::printf("# buffers: %s\n",
                  cfg.shared ? "Team::allocate_shared" : "private (std::vector)");
      if (!cfg.csv.empty()) {
        csv = std::fopen(cfg.csv.c_str(), "w");
        if (csv)
          std::fprintf(csv,
                       "collective,ranks,bytes,iterations,avg_us,min_us,max_us,p50_us,mbps,memcpy_"
                       "us,floor_us,valid\n");
      }
    }
    // The estimate and the progress line scale expected_seconds by a memcpy rate measured here.
    double rate = 0, expected_total = 0, expected_done = 0;
    std::unique_ptr<bench::ProgressLine> progress;
    if (me == 0) {
      const std::size_t probe = std::min<std::size_t>(cfg.max_bytes, 8u << 20);
      const auto t0 = Clock::now();
      std::memcpy(copy_dst.data(), b.send.data(), probe);
      rate = static_cast<double>(probe) /
             std::max(1e-7, std::chrono::duration<double>(Clock::now() - t0).count());
      for (std::uint64_t bytes : sizes) expected_total += expected_seconds(cfg, bytes, size, rate);
      expected_total *= static_cast<double>(cfg.colls.size());
      std::printf("# estimated time: about %.0f s\n", expected_total + 0.5);
      std::fflush(stdout);
      progress = std::make_unique<bench::ProgressLine>();
    }
    std::vector<bench::SweepPoint> points;
    std::uint64_t seq = 0;
    int total_bad = 0;
    for (Coll coll : cfg.colls) {
      if (me == 0) {
        std::printf("\n# %s\n%12s %10s %10s %10s %10s %11s %11s %10s %7s %6s\n", name_of(coll),
                    "bytes", "avg(us)", "min(us)", "max(us)", "p50(us)", "MB/s", "memcpy(us)",
                    "floor(us)", "iters", "valid");
      }
      for (std::uint64_t bytes : sizes) {
        b.counts.assign(usize, static_cast<Count>(bytes));
        b.displs.resize(usize);
        for (int r = 0; r < size; ++r)
          b.displs[static_cast<std::size_t>(r)] =
              static_cast<Count>(bytes * static_cast<std::uint64_t>(r));
        const int iters = iterations_for(cfg, bytes);
        const int warmup = shmcoll::bench::warmup_iterations(iters, bytes);
        std::vector<double> times(static_cast<std::size_t>(iters));
        for (int it = -warmup; it < iters; ++it) {
          const int root = (it + warmup) % size;
          // New content every iteration: a stamp in every page of the root's data.
          const auto stamp = std::byte(static_cast<unsigned char>(it));
          for (std::uint64_t i = 0; i < bytes; i += 4096) b.send[i] = stamp;
          team.barrier();
          const auto t0 = Clock::now();
          call(team, coll, b, bytes, root);
          const auto t1 = Clock::now();
          if (it >= 0)
            times[static_cast<std::size_t>(it)] =
                std::chrono::duration<double, std::micro>(t1 - t0).count();
        }
        // Results travel to rank 0 through the team itself, outside the timed region.
        std::vector<double> all(me == 0 ? times.size() * usize : 0);
        team.gather(times.data(), static_cast<Count>(times.size()), kDouble, all.data(),
                    static_cast<Count>(times.size()), kDouble, 0);
        double copy_us = 0;
        if (me == 0) {
          std::vector<double> c(static_cast<std::size_t>(std::min(iters, 200)));
          for (double& t : c) {
            const auto t0 = Clock::now();
            std::memcpy(copy_dst.data(), b.send.data(), bytes);
            const auto t1 = Clock::now();
            t = std::chrono::duration<double, std::micro>(t1 - t0).count();
          }
          copy_us = median(c);
        }
        std::vector<double> floor_samples;
        const std::uint64_t share = bytes * (usize - 1) / usize;
        for (int k = -2; k < std::min(iters, 50); ++k) {  // two warm-up copies
          team.barrier();
          const auto t0 = Clock::now();
          std::memcpy(b.recv.data(), b.send.data(), share);
          const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
          std::vector<double> each(me == 0 ? usize : 0);
          team.gather(&us, 1, kDouble, each.data(), 1, kDouble, 0);
          if (me == 0 && k >= 0)
            floor_samples.push_back(*std::max_element(each.begin(), each.end()));
        }
        const double floor_us = me == 0 ? median(floor_samples) : 0;
        int bad = 0;
        if (cfg.validate) {
          ++seq;
          int mine = validate_once(team, coll, b, bytes, seq, static_cast<int>(seq % usize));
          std::vector<int> bads(usize);
          team.gather(&mine, 1, kInt32, bads.data(), 1, kInt32, 0);
          bad = std::accumulate(bads.begin(), bads.end(), 0);
          total_bad += bad;
        }
        if (me == 0) {
          std::vector<double> rank_mean(usize, 0), slowest(times.size(), 0);
          for (std::size_t r = 0; r < usize; ++r) {
            for (std::size_t i = 0; i < times.size(); ++i) {
              const double t = all[r * times.size() + i];
              rank_mean[r] += t / static_cast<double>(times.size());
              slowest[i] = std::max(slowest[i], t);
            }
          }
          const double avg =
              std::accumulate(rank_mean.begin(), rank_mean.end(), 0.0) / static_cast<double>(usize);
          const double mn = *std::min_element(rank_mean.begin(), rank_mean.end());
          const double mx = *std::max_element(rank_mean.begin(), rank_mean.end());
          const double p50 = median(slowest);
          const double mbps = p50 > 0 ? static_cast<double>(bytes * (usize - 1)) / p50 : 0;
          const char* valid = cfg.validate ? (bad == 0 ? "ok" : "FAIL") : "-";
          std::printf("%12llu %10.2f %10.2f %10.2f %10.2f %11.1f %11.2f %10.2f %7d %6s\n",
                      static_cast<unsigned long long>(bytes), avg, mn, mx, p50, mbps, copy_us,
                      floor_us, iters, valid);
          std::fflush(stdout);
          bench::SweepPoint point;
          point.collective = name_of(coll);
          point.bytes = bytes;
          point.iterations = iters;
          point.slowest_us = bench::spread_of(slowest);
          point.osu_average_us = avg;
          point.rank_mean_min_us = mn;
          point.rank_mean_max_us = mx;
          point.bandwidth_mbps = mbps;
          point.memcpy_us = copy_us;
          point.floor_us = floor_us;
          point.valid = valid;
          points.push_back(point);
          expected_done += expected_seconds(cfg, bytes, size, rate);
          progress->update(std::string(name_of(coll)) + " " + std::to_string(bytes) + " B",
                           expected_done / expected_total);
          if (csv) {
            std::fprintf(csv, "%s,%d,%llu,%d,%.3f,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f,%s\n",
                         name_of(coll), size, static_cast<unsigned long long>(bytes), iters, avg,
                         mn, mx, p50, mbps, copy_us, floor_us, valid);
          }
        }
      }
    }
    if (csv) std::fclose(csv);
    progress.reset();
    if (me == 0 && !cfg.json.empty()) {
      const bench::HwlocTopology topology;
      nlohmann::ordered_json record = bench::new_record("collectives", topology.get());
      record["parameters"] = parameters_record;
      record["collectives"] = bench::sweep_json(points);
      bench::write_record(record, cfg.json);
      std::printf("# record written to %s\n", cfg.json.c_str());
    }
    if (me == 0 && !cfg.png.empty()) {
      const std::string problem = shmcoll::tools::run_gnuplot(bench::sweep_plot_script(
          points, "shmcoll-bench, " + std::to_string(size) + " ranks: " + bench::describe_machine(),
          cfg.png));
      if (!problem.empty()) {
        std::fprintf(stderr, "shmcoll-bench: --png %s: %s\n", cfg.png.c_str(), problem.c_str());
        return 1;
      }
      std::printf("# plots drawn into %s\n", cfg.png.c_str());
    }
    if (total_bad > 0) {
      if (me == 0)
        std::fprintf(stderr, "shmcoll-bench: validation found %d wrong bytes\n", total_bad);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shmcoll-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
