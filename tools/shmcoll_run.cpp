// shmcoll-run: starts a standalone shmcoll job on this node.
//
// It forks the ranks, binds them if asked, hands each its rank, the team size, the job identity
// and its bootstrap socket through the environment, and serves the bootstrap exchange. Output
// of the ranks goes straight to this process's stdout/stderr. When one rank fails (non-zero
// exit or a signal) the others are stopped; Ctrl-C stops the whole job; --timeout bounds it.
#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "launch/job.hpp"
#include "launch/placement.hpp"
#include "segment/segment.hpp"

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};  // the signal that interrupted the job
void on_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  g_interrupted.store(true);
}

void usage(FILE* out) {
  std::fputs(
      "usage: shmcoll-run -n N [--bind core|numa|none] [--map-by core|numa] [--timeout SECONDS]\n"
      "                   [--] PROGRAM [ARGS...]\n"
      "\n"
      "Starts N ranks of PROGRAM on this node as one shmcoll job.\n"
      "\n"
      "  -n, --np N          number of ranks (1 or more)\n"
      "  --bind core|numa|none\n"
      "                      core: bind each rank to its core (see --map-by) with hwloc;\n"
      "                      numa: bind it to the NUMA node of that core;\n"
      "                      none (default): leave placement to the OS scheduler\n"
      "  --map-by core|numa  which core a rank gets: core (default): rank r on core r mod\n"
      "                      (number of cores); numa: ranks dealt round-robin over the NUMA\n"
      "                      nodes, then over each node's cores\n"
      "  --timeout SECONDS   kill the job and exit with status 124 if it runs longer\n"
      "  -h, --help          show this text\n"
      "\n"
      "Each rank gets SHMCOLL_RANK, SHMCOLL_SIZE, SHMCOLL_JOB and SHMCOLL_BOOTSTRAP_FD in its\n"
      "environment; shmcoll::SocketBootstrap::from_environment() reads them. Other SHMCOLL_*\n"
      "variables (see shmcoll-info) pass through unchanged.\n"
      "\n"
      "Exit status: 0 when every rank exits with 0; otherwise the exit status of the first rank\n"
      "that failed (128+signal if a signal killed it), 124 on --timeout, 130 on Ctrl-C (SIGINT),\n"
      "143 on SIGTERM. If one rank fails, the others get SIGTERM, then SIGKILL one second\n"
      "later. The ranks die with the launcher: if it is killed (kill -9), so are they.\n",
      out);
}

[[noreturn]] void bad_usage(const std::string& why) {
  std::fprintf(stderr, "shmcoll-run: %s\n\n", why.c_str());
  usage(stderr);
  std::exit(2);
}

// Removes /dev/shm entries of this job. A team removes its segment name as soon as every rank
// has attached, so this only finds something when a rank was killed during team formation.
int sweep_segments(const std::string& job_id) {
  const std::string prefix = shmcoll::segment::segment_name_prefix(job_id);
  int removed = 0;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name).rfind(prefix, 0) == 0) {
        shmcoll::segment::Segment::remove(e->d_name);
        ++removed;
      }
    }
    closedir(d);
  }
  return removed;
}

}  // namespace

int main(int argc, char** argv) {
  int nranks = 0;
  std::string bind = "none";
  std::string map_by = "core";
  double timeout_s = 0;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) bad_usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "-n" || a == "--np") {
      const std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 4096)
        bad_usage("-n needs a rank count between 1 and 4096, got '" + v + "'");
      nranks = static_cast<int>(n);
    } else if (a == "--bind") {
      bind = value();
      if (bind != "core" && bind != "numa" && bind != "none")
        bad_usage("--bind takes 'core', 'numa' or 'none', got '" + bind + "'");
    } else if (a == "--map-by") {
      map_by = value();
      if (map_by != "core" && map_by != "numa")
        bad_usage("--map-by takes 'core' or 'numa', got '" + map_by + "'");
    } else if (a == "--timeout") {
      const std::string v = value();
      char* end = nullptr;
      timeout_s = std::strtod(v.c_str(), &end);
      if (*end != '\0' || !(timeout_s > 0))
        bad_usage("--timeout needs a positive number of seconds, got '" + v + "'");
    } else if (a == "--") {
      ++i;
      break;
    } else if (!a.empty() && a[0] == '-') {
      bad_usage("unknown option " + a);
    } else {
      break;
    }
  }
  if (nranks == 0) bad_usage("the rank count -n is required");
  if (i >= argc) bad_usage("no program to run");
  char** program = argv + i;

  using shmcoll::launch::BindTo;
  using shmcoll::launch::MapBy;
  std::unique_ptr<shmcoll::launch::Placement> placement;
  if (bind != "none") {
    try {
      placement = std::make_unique<shmcoll::launch::Placement>(
          nranks, bind == "core" ? BindTo::kCore : BindTo::kNuma,
          map_by == "numa" ? MapBy::kNuma : MapBy::kCore);
    } catch (const std::exception& e) {
      bad_usage(std::string("--bind ") + bind + ": " + e.what());
    }
    if (!placement->note().empty())
      std::fprintf(stderr, "shmcoll-run: note: %s\n", placement->note().c_str());
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const std::string job_id = shmcoll::launch::make_job_id();
  shmcoll::launch::JobOptions options;
  options.nranks = nranks;
  options.deadline_s = timeout_s;
  options.stop_on_failure = true;
  const shmcoll::launch::JobOutcome outcome = shmcoll::launch::run_job(
      options,
      [&](int rank, int fd) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (placement) {
          if (const std::string err = placement->bind(rank); !err.empty()) {
            std::fprintf(stderr, "shmcoll-run: rank %d: %s\n", rank, err.c_str());
          }
        }
        setenv("SHMCOLL_RANK", std::to_string(rank).c_str(), 1);
        setenv("SHMCOLL_SIZE", std::to_string(nranks).c_str(), 1);
        setenv("SHMCOLL_JOB", job_id.c_str(), 1);
        setenv("SHMCOLL_BOOTSTRAP_FD", std::to_string(fd).c_str(), 1);
        execvp(program[0], program);
        std::fprintf(stderr, "shmcoll-run: rank %d: cannot run %s: %s\n", rank, program[0],
                     std::strerror(errno));
        return 127;
      },
      &g_interrupted);

  if (int removed = sweep_segments(job_id); removed > 0) {
    std::fprintf(stderr, "shmcoll-run: removed %d shared segment name(s) left by killed ranks\n",
                 removed);
  }
  if (outcome.succeeded()) return 0;
  if (outcome.timed_out) {
    std::fprintf(stderr, "shmcoll-run: the job exceeded --timeout %g s and was killed\n",
                 timeout_s);
    return 124;
  }
  if (outcome.interrupted) {
    const int sig = g_signal.load();
    std::fprintf(stderr, "shmcoll-run: interrupted by %s; the job was stopped\n",
                 sig == SIGTERM ? "SIGTERM" : "SIGINT");
    return 128 + (sig == SIGTERM ? SIGTERM : SIGINT);
  }
  const int r = outcome.first_failed_rank >= 0 ? outcome.first_failed_rank : 0;
  const shmcoll::launch::RankOutcome& failed = outcome.ranks[static_cast<std::size_t>(r)];
  std::fprintf(stderr, "shmcoll-run: rank %d (pid %d) %s; the job was stopped\n", r,
               static_cast<int>(failed.pid), failed.describe().c_str());
  return failed.signal != 0 ? 128 + failed.signal : (failed.exit_code != 0 ? failed.exit_code : 1);
}
