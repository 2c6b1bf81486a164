// shmcoll-run: starts a standalone shmcoll job on this node.
//
// It forks the ranks, binds them if asked, hands each its rank, the team size, the job identity
// and its bootstrap socket through the environment, and serves the bootstrap exchange. Output
// of the ranks goes straight to this process's stdout/stderr. When one rank fails (non-zero
// exit or a signal) the others are stopped; Ctrl-C stops the whole job; --timeout bounds it.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "launch/job.hpp"
#include "launch/placement.hpp"
#include "mpi/plugin_parameters.hpp"
#include "shmcoll/introspection.hpp"
#include "shmcoll/options.hpp"

namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};  // the signal that interrupted the job
void on_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  g_interrupted.store(true);
}

constexpr const char* kDescription =
    "Starts N ranks of PROGRAM on this node as one shmcoll job.\n\n"
    "Each rank gets SHMCOLL_RANK, SHMCOLL_SIZE, SHMCOLL_JOB and SHMCOLL_BOOTSTRAP_FD in its\n"
    "environment; shmcoll::SocketBootstrap::from_environment() reads them. Other SHMCOLL_*\n"
    "variables (see shmcoll-info) pass through unchanged; one that shmcoll does not read is\n"
    "named in a warning.";
constexpr const char* kExitStatus =
    "Exit status: 0 when every rank exits with 0; otherwise the exit status of the first rank\n"
    "that failed (128+signal if a signal killed it), 124 on --timeout, 130 on Ctrl-C (SIGINT),\n"
    "143 on SIGTERM, 2 for a bad argument. If one rank fails, the others get SIGTERM, then\n"
    "SIGKILL one second later. The ranks die with the launcher: if it is killed (kill -9), so\n"
    "are they.";

// The arguments with mpirun's single-dash rank count (-np N, -np=N) spelt --np, up to the
// program's name: its own arguments stay as they are.
std::vector<std::string> with_mpirun_spelling(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--" || a.empty() || a[0] != '-') break;
    if (a == "-np" || a.rfind("-np=", 0) == 0) args[i] = "-" + a;
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  int nranks = 0;
  std::string bind = "none";
  std::string map_by = "core";
  double timeout_s = 0;
  std::vector<std::string> command;
  CLI::App app(kDescription, "shmcoll-run");
  shmcoll::tools::set_usage(app, "shmcoll-run -n N [OPTIONS] [--] PROGRAM [ARGS...]");
  app.footer(kExitStatus);
  app.add_option("-n,--np", nranks, "number of ranks (also -np N, as mpirun takes it)")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--bind", bind,
                 "core: bind each rank to its core (see --map-by) with hwloc; numa: to the "
                 "NUMA node of that core; none (default): leave placement to the scheduler")
      ->check(CLI::IsMember({"core", "numa", "none"}));
  app.add_option("--map-by", map_by,
                 "which core a rank gets: core (default): rank r on core r mod cores; numa: "
                 "ranks dealt round-robin over the NUMA nodes, then over each node's cores")
      ->check(CLI::IsMember({"core", "numa"}));
  app.add_option("--timeout", timeout_s,
                 "kill the job and exit with status 124 if it runs longer than SECONDS")
      ->check(shmcoll::tools::positive_seconds());
  // PROGRAM [ARGS...] (after "--" if PROGRAM starts with a dash): the first argument that is
  // not an option ends the options; the program's own arguments are its own.
  app.prefix_command();
  std::vector<std::string> args = with_mpirun_spelling(argc, argv);
  std::vector<char*> arg_pointers;
  for (std::string& a : args) arg_pointers.push_back(a.data());
  shmcoll::tools::parse_or_exit(app, static_cast<int>(arg_pointers.size()), arg_pointers.data());
  command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::fprintf(stderr, "shmcoll-run: no PROGRAM to run (see --help)\n");
    return 2;
  }
  // A misspelled or removed SHMCOLL_* variable would pass to the ranks and be ignored there.
  for (const std::string& unknown : shmcoll::unknown_variables(shmcoll::mpi::parameter_names()))
    std::fprintf(stderr, "shmcoll-run: warning: %s\n", unknown.c_str());
  std::vector<char*> program;
  for (std::string& c : command) program.push_back(c.data());
  program.push_back(nullptr);

  using shmcoll::launch::BindTo;
  using shmcoll::launch::MapBy;
  std::unique_ptr<shmcoll::launch::Placement> placement;
  if (bind != "none") {
    try {
      placement = std::make_unique<shmcoll::launch::Placement>(
          nranks, bind == "core" ? BindTo::kCore : BindTo::kNuma,
          map_by == "numa" ? MapBy::kNuma : MapBy::kCore);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "shmcoll-run: --bind %s: %s\n", bind.c_str(), e.what());
      return 2;
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
        using shmcoll::SocketBootstrap;
        setenv(SocketBootstrap::kRankVariable, std::to_string(rank).c_str(), 1);
        setenv(SocketBootstrap::kSizeVariable, std::to_string(nranks).c_str(), 1);
        setenv(SocketBootstrap::kJobVariable, job_id.c_str(), 1);
        setenv(SocketBootstrap::kFdVariable, std::to_string(fd).c_str(), 1);
        execvp(program[0], program.data());
        std::fprintf(stderr, "shmcoll-run: rank %d: cannot run %s: %s\n", rank, program[0],
                     std::strerror(errno));
        return 127;
      },
      &g_interrupted);

  const std::vector<std::string> left = shmcoll::introspection::job_segments(job_id);
  for (const std::string& name : left) shmcoll::introspection::remove_team_segment(name);
  if (!left.empty()) {
    std::fprintf(stderr, "shmcoll-run: removed %zu shared segment name(s) left by killed ranks\n",
                 left.size());
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
