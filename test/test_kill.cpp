// Randomized kills: in each of 200 jobs a victim rank is SIGKILLed at a random moment (during
// team formation, between or inside collectives of random kinds and sizes). Every other rank
// must get an error (peer failed, bootstrap failure or timeout) within 2 s of its last
// completed call instead of hanging, and nothing may be left in /dev/shm. Every other job runs
// with the default checks, deferred where the team is oversubscribed (here, from 3 ranks on 2
// CPUs), the rest with full checks.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <random>
#include <thread>

#include "support/collective_checks.hpp"

namespace shmcoll::test {

TEST_CASE("randomized kills: no rank hangs, every survivor gets an error, nothing is left behind") {
  constexpr int kJobs = 200;
  std::mt19937 rng(2026);
  int survivors_with_error = 0, completed = 0;
  for (int job_index = 0; job_index < kJobs; ++job_index) {
    const int n = 2 + static_cast<int>(rng() % 4);  // 2..5 ranks
    const int victim = static_cast<int>(rng() % static_cast<unsigned>(n));
    const int kill_after_us = static_cast<int>(rng() % 20000);
    const std::uint64_t seed = rng();
    std::string job;
    auto outcome = run_ranks(
        {.nranks = n, .deadline_s = 30, .stop_on_failure = false},
        [&](RankContext& ctx) {
          if (ctx.rank == victim) {
            // Dies wherever it is when the delay runs out: formation, a wait, a copy.
            std::thread([kill_after_us] {
              std::this_thread::sleep_for(std::chrono::microseconds(kill_after_us));
              raise(SIGKILL);
            }).detach();
          }
          using Clock = std::chrono::steady_clock;
          auto last_progress = Clock::now();
          try {
            Options options = test_options(1024, 2);
            if (job_index % 2 == 1) options.checks = CheckLevel::kDeferred;
            Team team(ctx.bootstrap, options);
            std::mt19937_64 ops(seed);  // the same sequence on every rank
            for (std::uint64_t i = 1; i <= 2000; ++i) {
              CallSpec s;
              s.seq = i;
              s.root = static_cast<int>(ops() % static_cast<std::uint64_t>(n));
              s.count = ops() % 3000;
              s.in_place = ops() % 2 == 0;
              kCheckCalls[ops() % 5](team, ctx, s);
              last_progress = Clock::now();
            }
            if (ctx.rank != victim) _exit(3);  // finished although the victim should be dead
            // The victim finished before its timer: it waits to be killed like the others.
            std::this_thread::sleep_for(std::chrono::seconds(5));
          } catch (const Error& e) {
            const double stalled =
                std::chrono::duration<double>(Clock::now() - last_progress).count();
            if (stalled > 2.0)
              ctx.fail("the error came %.2f s after the last progress: %s", stalled, e.what());
            if (e.status() != Status::kPeerFailed && e.status() != Status::kBootstrapError &&
                e.status() != Status::kTimeout) {
              ctx.fail("unexpected error kind '%s': %s", status_name(e.status()), e.what());
            }
          }
        },
        &job);
    CAPTURE(job_index);
    CAPTURE(n);
    CAPTURE(victim);
    CAPTURE(kill_after_us);
    INFO(outcome.summary());
    CHECK_FALSE(outcome.timed_out);
    CHECK(outcome.ranks[static_cast<std::size_t>(victim)].signal == SIGKILL);
    for (int r = 0; r < n; ++r) {
      if (r == victim) continue;
      const auto& out = outcome.ranks[static_cast<std::size_t>(r)];
      // Exit 3: the victim's collectives all completed before it died (possible when it is
      // killed after its last call); everything else must be a clean error exit.
      CHECK((out.succeeded() || (out.finished && out.exit_code == 3)));
      survivors_with_error += out.succeeded() ? 1 : 0;
      completed += (out.finished && out.exit_code == 3) ? 1 : 0;
    }
    // Every rank learns the segment's name before it exists and removes it however
    // formation ends, so even a creator killed right after creating leaves nothing.
    CHECK(leftover_segments(job).empty());
  }
  MESSAGE(kJobs << " kills: " << survivors_with_error << " survivors got an error, " << completed
                << " had finished before the kill");
}

}  // namespace shmcoll::test
