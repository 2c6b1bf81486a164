#include "launch/job.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>

#include "bootstrap/wire.hpp"
#include "launch/hub.hpp"

namespace shmcoll::launch {

std::string RankOutcome::describe() const {
  if (!finished) return "still running";
  if (signal != 0)
    return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) +
           ")";
  return "exited with status " + std::to_string(exit_code);
}

bool JobOutcome::succeeded() const {
  if (timed_out || interrupted) return false;
  for (const RankOutcome& r : ranks) {
    if (!r.succeeded()) return false;
  }
  return true;
}

std::string JobOutcome::summary() const {
  std::string s;
  if (timed_out) s += "job deadline expired; ";
  if (interrupted) s += "job interrupted; ";
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].succeeded()) s += "rank " + std::to_string(r) + " " + ranks[r].describe() + "; ";
  }
  return s.empty() ? "all ranks succeeded" : s;
}

std::string make_job_id() {
  std::uint32_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) nonce = 0;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%d-%08x", static_cast<int>(getpid()), nonce);
  return buf;
}

namespace {

void signal_all(const JobOutcome& job, int sig) {
  for (const RankOutcome& r : job.ranks) {
    if (!r.finished && r.pid > 0) kill(r.pid, sig);
  }
}

[[noreturn]] void run_child(const RankBody& body, int rank, int fd) {
  // The supervisor's signal handlers (a test framework's, say) must not run in the ranks.
  for (int sig : {SIGTERM, SIGINT, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGPIPE})
    signal(sig, SIG_DFL);
  int code = 0;
  try {
    code = body(rank, fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: uncaught exception: %s\n", rank, e.what());
    code = 98;
  } catch (...) {
    std::fprintf(stderr, "rank %d: uncaught exception\n", rank);
    code = 98;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

}  // namespace

JobOutcome run_job(const JobOptions& options, const RankBody& body,
                   const std::atomic<bool>* interrupt) {
  const int n = options.nranks;
  JobOutcome job;
  job.ranks.resize(static_cast<std::size_t>(n));
  std::vector<int> hub_ends(static_cast<std::size_t>(n), -1),
      rank_ends(static_cast<std::size_t>(n), -1);
  for (int r = 0; r < n; ++r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
    }
    hub_ends[static_cast<std::size_t>(r)] = sv[0];
    rank_ends[static_cast<std::size_t>(r)] = sv[1];
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t supervisor = getpid();
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      signal_all(job, SIGKILL);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      // A rank must not outlive its supervisor (kill -9 of the launcher, a test runner's
      // timeout): the kernel kills it when the supervisor dies, and the signal survives exec.
      // A supervisor that died before prctl took effect has re-parented the rank already,
      // which getppid() shows.
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != supervisor) _exit(128 + SIGKILL);
      // Only this rank's own end stays open, so the hub sees EOF when the rank dies.
      for (int q = 0; q < n; ++q) {
        close(hub_ends[static_cast<std::size_t>(q)]);
        if (q != r) close(rank_ends[static_cast<std::size_t>(q)]);
      }
      const int fd = rank_ends[static_cast<std::size_t>(r)];
      fcntl(fd, F_SETFD, 0);  // keep it across exec
      run_child(body, r, fd);
    }
    job.ranks[static_cast<std::size_t>(r)].pid = pid;
  }
  for (int fd : rank_ends) close(fd);

  Hub hub(hub_ends);
  const std::int64_t start = bootstrap::steady_now_ns();
  std::int64_t kill_at = -1;  // when SIGTERMed ranks get SIGKILL
  bool sent_kill = false;     // this launcher sent SIGKILL to the ranks still running
  int running = n;
  auto stop = [&](std::int64_t now) {
    if (kill_at < 0) {
      signal_all(job, SIGTERM);
      kill_at = now + static_cast<std::int64_t>(options.kill_grace_s * 1e9);
    }
  };
  while (running > 0) {
    std::vector<pollfd> fds = hub.pollfds();
    poll(fds.data(), fds.size(), 10);
    for (int r = 0; r < n; ++r) {
      if (fds[static_cast<std::size_t>(r)].fd >= 0 && fds[static_cast<std::size_t>(r)].revents != 0)
        hub.service(r);
    }
    std::vector<int> failed_now;
    const int gone_before = hub.first_gone();  // seen by poll, before this round's reaping
    for (int r = 0; r < n; ++r) {
      RankOutcome& out = job.ranks[static_cast<std::size_t>(r)];
      if (out.finished) continue;
      int status = 0;
      if (waitpid(out.pid, &status, WNOHANG) != out.pid) continue;
      out.finished = true;
      --running;
      if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
      hub.rank_ended(r, out.describe());
      if (!out.succeeded()) failed_now.push_back(r);
    }
    if (!failed_now.empty() && job.first_failed_rank < 0 && kill_at < 0) {
      // Several ranks seen failing in one round: the cause is the one whose connection the
      // hub saw close before this round, else one a signal killed (the others usually exit
      // with an error because of it), else the lowest.
      auto by_signal = std::find_if(failed_now.begin(), failed_now.end(), [&](int r) {
        return job.ranks[static_cast<std::size_t>(r)].signal != 0;
      });
      if (std::find(failed_now.begin(), failed_now.end(), gone_before) != failed_now.end()) {
        job.first_failed_rank = gone_before;
      } else {
        job.first_failed_rank = by_signal != failed_now.end() ? *by_signal : failed_now.front();
      }
      if (options.stop_on_failure) stop(bootstrap::steady_now_ns());
    }
    const std::int64_t now = bootstrap::steady_now_ns();
    if (options.deadline_s > 0 && !job.timed_out &&
        now - start > static_cast<std::int64_t>(options.deadline_s * 1e9)) {
      job.timed_out = true;
      sent_kill = true;
      signal_all(job, SIGKILL);
    }
    if (interrupt != nullptr && interrupt->load() && !job.interrupted) {
      job.interrupted = true;
      stop(now);
    }
    if (kill_at >= 0 && now > kill_at) {
      sent_kill = true;
      signal_all(job, SIGKILL);
    }
  }
  // Which rank caused the failure is only certain now: a rank's connection closes slightly
  // before its process can be reaped, so a rank that failed because of it may be reaped first.
  // The cause is the rank whose connection the hub saw close first, if that rank failed.
  // Two exceptions. A rank this launcher signalled while stopping the job is never the cause.
  // A rank killed by a signal of its own is the cause rather than ranks that exited with an
  // error: those usually report its death, and they can be reaped and even seen closing their
  // connection first (a large process, e.g. under a sanitizer, takes a while to finish dying).
  auto stopped_by_us = [&](int r) {
    const int sig = job.ranks[static_cast<std::size_t>(r)].signal;
    return (kill_at >= 0 && sig == SIGTERM) || (sent_kill && sig == SIGKILL);
  };
  std::vector<int> killed;  // by a signal this launcher did not send
  for (int r = 0; r < n; ++r) {
    if (job.ranks[static_cast<std::size_t>(r)].signal != 0 && !stopped_by_us(r)) {
      killed.push_back(r);
    }
  }
  const int gone = hub.first_gone();
  if (!killed.empty()) {
    const bool gone_killed = std::find(killed.begin(), killed.end(), gone) != killed.end();
    const bool chosen_killed =
        std::find(killed.begin(), killed.end(), job.first_failed_rank) != killed.end();
    if (gone_killed) {
      job.first_failed_rank = gone;
    } else if (!chosen_killed) {
      job.first_failed_rank = killed.front();
    }
  } else if (gone >= 0 && !job.ranks[static_cast<std::size_t>(gone)].succeeded() &&
             !stopped_by_us(gone)) {
    job.first_failed_rank = gone;
  }
  return job;
}

}  // namespace shmcoll::launch
