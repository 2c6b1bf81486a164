// mpi-bench: OSU-style latency of MPI_Bcast, MPI_Scatter(v), MPI_Gather(v), for comparing an MPI's
// own collectives with the shmcoll plugin on the same binary (run it with and without
// LD_PRELOAD=libshmcoll_mpi_<mpi>.so).
// Method as OSU: root 0, a barrier between iterations, each rank's mean latency; reported are
// the mean over ranks (avg) and the min and max of the per-rank means. Two references are taken
// in the same run, per size: memcpy (rank 0 copies `bytes`, median) and the copy floor (every
// rank at once copies its share of the bytes that must land in other ranks' buffers,
// (ranks - 1) x bytes split evenly, with memcpy; median of the slowest rank): no collective that
// moves those bytes through memory can be faster than all cores copying them together.
// With MPI_BENCH_PER_RANK set, every rank also prints its own mean to stderr (who waits where);
// with MPI_BENCH_TIMELINE set, rank 0 prints each rank's start, end and duration relative to the
// root's call, medians over the iterations (mpi_timeline.hpp; its clock reads are timed too, so
// take ratios from runs without it). --root-delay-us and --others-delay-us make the root and
// the other ranks busy-wait that long, outside MPI and outside the timed region, between the
// barrier and the call: a rank that waits outside MPI cannot take in a peer's message
// meanwhile, as an MPI's progress engine does while it waits in the barrier.
// With --window, every rank's buffers (and the references' copies) lie in its part of an
// MPI_Win_allocate_shared window on MPI_COMM_WORLD instead of private memory. With
// --buffers-per-size, each size's collective runs on vectors of exactly its own buffers' sizes
// (broadcast: the message; scatter(v): the root's blocks and one block; gather(v) alike),
// allocated for that size, as a program that sizes its buffers to its messages has them: their
// ends rarely fall on 2 MiB boundaries. The references keep the one large allocation.
// With --uneven, scatterv and gatherv give every odd rank one byte more than `bytes`, so that
// the root's counts differ from rank to rank, as an application's often do (the size in the
// output stays `bytes`).
// With --nonblocking, each call is the non-blocking form followed by MPI_Wait, timed together;
// --compute-us puts that much busy computation (no MPI calls) between them: with the time of
// the call alone (pure) and of the computation, OSU's overlap is 1 - (timed - compute) / pure;
// with --idle the computation sleeps, leaving the core to a progress thread. With --persistent,
// each size's calls are one persistent request (MPI_Bcast_init, ...; Open MPI 4: MPIX_), made
// before the timed loop: each call is MPI_Start followed by MPI_Wait.
// --coll comm_cycle (not among the defaults) times what a library that makes its own
// communicators pays: MPI_Comm_dup of MPI_COMM_WORLD, one MPI_Bcast of `bytes` on it, and
// MPI_Comm_free, per iteration.
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "mpi_timeline.hpp"
#include "warmup.hpp"

namespace {

// At least OSU's 100 iterations for large messages: with 20 at 2-16 MiB and a warm-up of 4,
// the run-to-run spread of a 16 MiB broadcast was as large as the differences it compares.
int iterations_for(long bytes, int cap) {
  int n = 100;
  if (bytes <= 4096)
    n = 2000;
  else if (bytes <= 65536)
    n = 500;
  return cap > 0 && n > cap ? cap : n;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Median over `reps` of the time (us) the slowest rank takes to memcpy `share` bytes, all ranks
// starting together after a barrier; with `only_rank0`, rank 0 copies and the others idle.
double copy_time(char* dst, const char* src, long share, int reps, bool only_rank0, int rank) {
  std::vector<double> slowest;
  for (int i = 0; i < reps + 2; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (!only_rank0 || rank == 0) std::memcpy(dst, src, static_cast<std::size_t>(share));
    double us = (MPI_Wtime() - t0) * 1e6, worst = 0;
    MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (i >= 2) slowest.push_back(worst);  // two warm-up copies
  }
  return median(slowest);
}

const std::vector<std::string> kCollectives = {"bcast", "scatter", "scatterv", "gather", "gatherv"};
const std::vector<std::string> kChoices = {"bcast",  "scatter", "scatterv",
                                           "gather", "gatherv", "comm_cycle"};

#if MPI_VERSION >= 4
#define PERSISTENT(name) MPI_##name
#elif defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PERSISTENT(name) MPIX_##name
#endif

// The persistent request of `coll` on the given buffers, rooted at 0 on MPI_COMM_WORLD.
MPI_Request make_persistent(const std::string& coll, char* send, char* recv, int n,
                            const std::vector<int>& counts, const std::vector<int>& displs,
                            int own) {
  MPI_Request request = MPI_REQUEST_NULL;
#if defined(PERSISTENT)
  const MPI_Comm world = MPI_COMM_WORLD;
  const MPI_Info info = MPI_INFO_NULL;
  if (coll == "bcast") {
    PERSISTENT(Bcast_init)(send, n, MPI_CHAR, 0, world, info, &request);
  } else if (coll == "scatter") {
    PERSISTENT(Scatter_init)(send, n, MPI_CHAR, recv, n, MPI_CHAR, 0, world, info, &request);
  } else if (coll == "scatterv") {
    PERSISTENT(Scatterv_init)
    (send, counts.data(), displs.data(), MPI_CHAR, recv, own, MPI_CHAR, 0, world, info, &request);
  } else if (coll == "gather") {
    PERSISTENT(Gather_init)(send, n, MPI_CHAR, recv, n, MPI_CHAR, 0, world, info, &request);
  } else if (coll == "gatherv") {
    PERSISTENT(Gatherv_init)
    (send, own, MPI_CHAR, recv, counts.data(), displs.data(), MPI_CHAR, 0, world, info, &request);
  }
#else
  (void)coll, (void)send, (void)recv, (void)n, (void)counts, (void)displs, (void)own;
#endif
  return request;
}

struct Config {
  std::vector<std::string> colls = kCollectives;
  std::uint64_t min_bytes = 1, max_bytes = 16 << 20;
  std::string label = "run";
  int cap = 0;  // --max-iterations: oversubscribed MPIs that busy-poll need minutes per size
  bool window = false;
  bool per_size = false;
  bool uneven = false;
  bool nonblocking = false;
  bool persistent = false;
  double compute_us = 0;
  bool idle = false;
  double root_delay_us = 0, others_delay_us = 0;
};

// The command line into `cfg`, on every rank alike. --help (rank 0 prints it) ends the program
// with status 0, a bad argument (rank 0 names it) with status 2, both after MPI_Finalize.
void parse_arguments(int argc, char** argv, int rank, Config& cfg) {
  CLI::App app(
      "OSU-style latency of the MPI's five rooted collectives (see the head of "
      "bench/mpi_bench.cpp); CSV on stdout.",
      "mpi-bench");
  shmcoll::tools::set_usage(app, "mpirun -np N mpi-bench-<mpi> [OPTIONS]");
  app.add_option("--coll", cfg.colls,
                 "comma-separated subset of bcast,scatter,scatterv,gather,gatherv (default: all), "
                 "or comm_cycle (MPI_Comm_dup, MPI_Bcast, MPI_Comm_free)")
      ->delimiter(',')
      ->check(CLI::IsMember(kChoices));
  shmcoll::tools::add_bytes_option(app, "--min-bytes", cfg.min_bytes,
                                   "smallest message per rank, 0 for calls that move nothing "
                                   "(default 1; K/M/G suffixes)");
  shmcoll::tools::add_bytes_option(app, "--max-bytes", cfg.max_bytes,
                                   "largest message per rank (default 16M)");
  app.add_option("--label", cfg.label, "the first CSV column (default run)");
  app.add_option("--max-iterations", cfg.cap, "at most this many iterations per size")
      ->check(CLI::Range(1, 100'000'000));
  app.add_flag("--window", cfg.window, "buffers in an MPI_Win_allocate_shared window");
  app.add_flag("--buffers-per-size", cfg.per_size,
               "each size on vectors of exactly its own buffers' sizes");
  app.add_flag("--uneven", cfg.uneven, "scatterv and gatherv: odd ranks one byte more");
  app.add_flag("--nonblocking", cfg.nonblocking,
               "the non-blocking forms (MPI_Ibcast, ...), each followed by MPI_Wait");
  app.add_flag("--persistent", cfg.persistent,
               "persistent requests (MPI_Bcast_init, ...), each call MPI_Start and MPI_Wait");
  app.add_option(
         "--compute-us", cfg.compute_us,
         "with --nonblocking or --persistent: busy-wait this long between the start and MPI_Wait")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--idle", cfg.idle,
               "with --compute-us: the computation sleeps (I/O, a device) instead of spinning");
  app.add_option("--root-delay-us", cfg.root_delay_us,
                 "the root busy-waits this long before each call")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--others-delay-us", cfg.others_delay_us,
                 "the other ranks busy-wait this long before each call")
      ->check(CLI::NonNegativeNumber);
  int status = -1;
  try {
    app.parse(argc, argv);
    if (cfg.min_bytes > cfg.max_bytes)
      throw CLI::ValidationError("--min-bytes", std::to_string(cfg.min_bytes) +
                                                    " is larger than --max-bytes " +
                                                    std::to_string(cfg.max_bytes));
    if (cfg.max_bytes > (std::uint64_t{1} << 30))
      throw CLI::ValidationError("--max-bytes", "at most 1G (an int count per rank)");
    if (cfg.compute_us > 0 && !cfg.nonblocking && !cfg.persistent)
      throw CLI::ValidationError("--compute-us", "needs --nonblocking or --persistent");
    if (cfg.nonblocking && cfg.persistent)
      throw CLI::ValidationError("--persistent", "excludes --nonblocking");
    if (cfg.persistent && std::ranges::find(cfg.colls, "comm_cycle") != cfg.colls.end())
      throw CLI::ValidationError("--persistent", "has no comm_cycle form");
#if !defined(PERSISTENT)
    if (cfg.persistent)
      throw CLI::ValidationError("--persistent", "this MPI has no persistent collectives");
#endif
    if (cfg.idle && cfg.compute_us <= 0) throw CLI::ValidationError("--idle", "needs --compute-us");
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
    status = 0;
  } catch (const CLI::ParseError& e) {
    if (rank == 0) std::fprintf(stderr, "mpi-bench: %s (see --help)\n", e.what());
    status = 2;
  }
  if (status >= 0) {
    MPI_Finalize();
    std::exit(status);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Config cfg;
  parse_arguments(argc, argv, rank, cfg);
  const std::vector<std::string>& colls = cfg.colls;
  const auto min_bytes = static_cast<long>(cfg.min_bytes);
  const auto max_bytes = static_cast<long>(cfg.max_bytes);
  const std::string& label = cfg.label;
  const int cap = cfg.cap;
  const bool window = cfg.window, per_size = cfg.per_size, uneven = cfg.uneven;
  const double root_delay_us = cfg.root_delay_us, others_delay_us = cfg.others_delay_us;
  const double compute_us = cfg.compute_us;
  const bool idle = cfg.idle;
  // --uneven adds at most one byte per rank.
  const auto area =
      static_cast<std::size_t>(max_bytes + (uneven ? 1 : 0)) * static_cast<std::size_t>(size);
  std::vector<char> storage;
  char* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  if (window) {
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(2 * area), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                            &base, &win);
  } else {
    storage.resize(2 * area);
    base = storage.data();
  }
  char* const send = base;
  char* const recv = base + area;
  std::memset(send, 1, area);
  std::memset(recv, 0, area);
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  if (rank == 0)
    std::printf(
        "label,collective,ranks,bytes,iterations,avg_us,min_us,max_us,memcpy_us,floor_us\n");
  const bool with_timeline = std::getenv("MPI_BENCH_TIMELINE") != nullptr;
  mpi_bench::Timeline timeline;
  for (const std::string& coll : colls) {
    // From 0 (calls that move nothing), then 1, 2, 4, ...
    for (long bytes = min_bytes; bytes <= max_bytes; bytes = bytes == 0 ? 1 : 2 * bytes) {
      const int n = static_cast<int>(bytes);
      const bool v_form = coll == "scatterv" || coll == "gatherv";
      const auto count_of = [&](int r) { return uneven && v_form ? n + r % 2 : n; };
      for (int r = 0, at = 0; r < size; ++r) {
        counts[static_cast<std::size_t>(r)] = count_of(r);
        displs[static_cast<std::size_t>(r)] = at;
        at += count_of(r);
      }
      const int own = count_of(rank);  // this rank's block in the v-forms
      const int iters = iterations_for(bytes, cap);
      const int warmup =
          shmcoll::bench::warmup_iterations(iters, static_cast<std::uint64_t>(bytes));
      double total = 0;
      timeline.clear();
      // The collective's buffers: `send` and `recv` of the large allocation, or (per size)
      // vectors of exactly what this collective uses.
      std::vector<char> own_send, own_recv;
      char* cs = send;
      char* cr = recv;
      if (per_size) {
        const auto n = static_cast<std::size_t>(bytes), all = n * static_cast<std::size_t>(size);
        const bool gathers = coll == "gather" || coll == "gatherv";
        const std::size_t v_all = static_cast<std::size_t>(displs.back() + counts.back());
        own_send.assign(coll == "bcast" ? n
                        : gathers       ? static_cast<std::size_t>(own)
                        : v_form        ? v_all
                                        : all,
                        1);
        if (coll != "bcast")
          own_recv.assign(gathers ? (v_form ? v_all : all) : static_cast<std::size_t>(own), 0);
        cs = own_send.data();
        cr = own_recv.data();
      }
      MPI_Request persistent = MPI_REQUEST_NULL;
      if (cfg.persistent) {
        persistent = make_persistent(coll, cs, cr, n, counts, displs, own);
      }
      for (int it = -warmup; it < iters; ++it) {
        if (bytes > 0) cs[0] = static_cast<char>(it);  // new content every iteration
        MPI_Barrier(MPI_COMM_WORLD);
        mpi_bench::busy_wait_us(rank == 0 ? root_delay_us : others_delay_us);
        const double t0 = MPI_Wtime();
        // Inside the timed region, next to the call: take ratios from runs without the timeline.
        const double start_us = with_timeline ? mpi_bench::Timeline::now_us() : 0;
        MPI_Request request = MPI_REQUEST_NULL;
        MPI_Request* const started = cfg.nonblocking  ? &request
                                     : cfg.persistent ? &persistent
                                                      : nullptr;
        if (cfg.persistent) {
          MPI_Start(&persistent);
        } else if (coll == "bcast") {
          started ? MPI_Ibcast(cs, n, MPI_CHAR, 0, MPI_COMM_WORLD, started)
                  : MPI_Bcast(cs, n, MPI_CHAR, 0, MPI_COMM_WORLD);
        } else if (coll == "comm_cycle") {
          MPI_Comm comm = MPI_COMM_NULL;
          MPI_Comm_dup(MPI_COMM_WORLD, &comm);
          MPI_Bcast(cs, n, MPI_CHAR, 0, comm);
          MPI_Comm_free(&comm);
        } else if (coll == "scatter") {
          started ? MPI_Iscatter(cs, n, MPI_CHAR, cr, n, MPI_CHAR, 0, MPI_COMM_WORLD, started)
                  : MPI_Scatter(cs, n, MPI_CHAR, cr, n, MPI_CHAR, 0, MPI_COMM_WORLD);
        } else if (coll == "scatterv") {
          started ? MPI_Iscatterv(cs, counts.data(), displs.data(), MPI_CHAR, cr, own, MPI_CHAR, 0,
                                  MPI_COMM_WORLD, started)
                  : MPI_Scatterv(cs, counts.data(), displs.data(), MPI_CHAR, cr, own, MPI_CHAR, 0,
                                 MPI_COMM_WORLD);
        } else if (coll == "gather") {
          started ? MPI_Igather(cs, n, MPI_CHAR, cr, n, MPI_CHAR, 0, MPI_COMM_WORLD, started)
                  : MPI_Gather(cs, n, MPI_CHAR, cr, n, MPI_CHAR, 0, MPI_COMM_WORLD);
        } else if (coll == "gatherv") {
          started ? MPI_Igatherv(cs, own, MPI_CHAR, cr, counts.data(), displs.data(), MPI_CHAR, 0,
                                 MPI_COMM_WORLD, started)
                  : MPI_Gatherv(cs, own, MPI_CHAR, cr, counts.data(), displs.data(), MPI_CHAR, 0,
                                MPI_COMM_WORLD);
        }
        if (started != nullptr) {
          // Computation the operation may hide behind; --idle: it leaves the core free.
          if (idle)
            std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(compute_us));
          else
            mpi_bench::busy_wait_us(compute_us);
          MPI_Wait(started, MPI_STATUS_IGNORE);
        }
        if (with_timeline && it >= 0) timeline.record(start_us, mpi_bench::Timeline::now_us());
        const double t1 = MPI_Wtime();
        if (it >= 0) total += t1 - t0;
      }
      if (persistent != MPI_REQUEST_NULL) MPI_Request_free(&persistent);
      if (with_timeline) timeline.report(coll.c_str(), bytes, rank, size, 0);
      const double mean_us = total / iters * 1e6;
      if (std::getenv("MPI_BENCH_PER_RANK"))
        std::fprintf(stderr, "rank %d %s %ld %.3f\n", rank, coll.c_str(), bytes, mean_us);
      double sum = 0, mn = 0, mx = 0;
      MPI_Reduce(&mean_us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      MPI_Reduce(&mean_us, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
      MPI_Reduce(&mean_us, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      const int copies = std::min(iters, 50);
      const double memcpy_us = copy_time(recv, send, bytes, copies, true, rank);
      const double floor_us = copy_time(recv, send, bytes * (size - 1) / size, copies, false, rank);
      if (rank == 0) {
        std::printf("%s,%s,%d,%ld,%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", label.c_str(), coll.c_str(), size,
                    bytes, iters, sum / size, mn, mx, memcpy_us, floor_us);
        std::fflush(stdout);
      }
    }
  }
  if (win != MPI_WIN_NULL) MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
