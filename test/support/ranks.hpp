// Multi-process test support. A test runs its ranks in forked children with a hard deadline;
// children never use doctest assertions (they would report into a copy of the runner's state
// and die with the child). They print what went wrong and report through their exit code.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "launch/job.hpp"
#include "shmcoll/shmcoll.hpp"

namespace shmcoll::test {

struct RankContext {
  int rank;
  int size;
  Bootstrap& bootstrap;
  int failures = 0;

  // Records a failure with a message (printed once per rank up to a limit).
  void fail(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  bool check(bool ok, const char* what) {
    if (!ok) fail("%s", what);
    return ok;
  }
};

struct JobSpec {
  int nranks = 2;
  double deadline_s = 120;
  bool stop_on_failure = true;
  double bootstrap_timeout_s = 30;
};

// Runs `body` on every rank; a rank's exit code is 0 when `body` recorded no failure and threw
// nothing. Returns the outcome; `job_id` receives the job's identity.
launch::JobOutcome run_ranks(const JobSpec& spec, const std::function<void(RankContext&)>& body,
                             std::string* job_id = nullptr);

// /dev/shm entries that belong to `job_id` (there must be none once a job has ended).
std::vector<std::string> leftover_segments(const std::string& job_id);

// Options for tests: small slots so that modest messages already need several chunks, and
// full checks, whose errors every rank raises in the failing call, whether or not the team is
// oversubscribed (as the tests' teams mostly are; the default would defer them there).
Options test_options(std::size_t slot_bytes = 1024, int slots = 4);

}  // namespace shmcoll::test
