// Starting and supervising the ranks of a job on this node: fork one process per rank, connect
// each to the bootstrap hub, watch them, and stop the job when a rank fails, on a deadline or
// on an interrupt. Used by shmcoll-run (the body execs the program) and by the multi-process
// tests (the body runs test code and reports by exit code).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace shmcoll::launch {

struct RankOutcome {
  pid_t pid = -1;
  bool finished = false;
  int exit_code = -1;  // valid when the rank exited normally
  int signal = 0;      // non-zero when a signal ended it
  bool succeeded() const { return finished && signal == 0 && exit_code == 0; }
  std::string describe() const;
};

struct JobOutcome {
  std::vector<RankOutcome> ranks;
  bool timed_out = false;
  bool interrupted = false;
  int first_failed_rank = -1;  // the first rank seen to fail, -1 if none did
  bool succeeded() const;
  std::string summary() const;
};

struct JobOptions {
  int nranks = 1;
  double deadline_s = 0;        // kill every rank after this long; 0: no deadline
  bool stop_on_failure = true;  // kill the other ranks when one fails
  double kill_grace_s = 1.0;    // SIGTERM, then SIGKILL after this long
};

// Runs in the child; returns the rank's exit code. `bootstrap_fd` is the rank's end of its
// bootstrap socket (it survives exec).
using RankBody = std::function<int(int rank, int bootstrap_fd)>;

// Forks the ranks and supervises them until all have ended. `interrupt`, when set by a signal
// handler, stops the job.
JobOutcome run_job(const JobOptions& options, const RankBody& body,
                   const std::atomic<bool>* interrupt = nullptr);

// A job identity for segment names: the supervisor's pid and 32 random bits.
std::string make_job_id();

}  // namespace shmcoll::launch
