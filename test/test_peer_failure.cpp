// A rank that dies or never joins must turn into an error on the others within a bounded time,
// never a hang, and must leave nothing in /dev/shm.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "support/ranks.hpp"

namespace shmcoll::test {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Ranks other than `victim` expect `call` to fail with `status` within `bound_s` seconds and a
// message containing `needle`.
void expect_failure_elsewhere(RankContext& ctx, int victim, Status status, const char* needle,
                              double bound_s, const std::function<void()>& call) {
  if (ctx.rank == victim) return;
  const auto start = Clock::now();
  try {
    call();
    ctx.fail("the call returned although rank %d is gone", victim);
  } catch (const Error& e) {
    const double took = seconds_since(start);
    if (e.status() != status)
      ctx.fail("status '%s', expected '%s': %s", status_name(e.status()), status_name(status),
               e.what());
    if (std::strstr(e.what(), needle) == nullptr)
      ctx.fail("message \"%s\" lacks \"%s\"", e.what(), needle);
    if (took > bound_s) ctx.fail("the error took %.2f s, more than %.2f s", took, bound_s);
  }
}

void check_job(const launch::JobOutcome& outcome, const std::string& job, int victim) {
  INFO(outcome.summary());
  for (std::size_t r = 0; r < outcome.ranks.size(); ++r) {
    if (static_cast<int>(r) != victim) CHECK_MESSAGE(outcome.ranks[r].succeeded(), "rank " << r);
  }
  CHECK_FALSE(outcome.timed_out);
  CHECK(leftover_segments(job).empty());
}

}  // namespace

TEST_CASE("a rank that exits before joining fails team formation on the others quickly") {
  std::string job;
  const int victim = 2;
  auto outcome = run_ranks(
      {.nranks = 4, .deadline_s = 30, .stop_on_failure = false},
      [&](RankContext& ctx) {
        if (ctx.rank == victim) _exit(3);
        expect_failure_elsewhere(ctx, victim, Status::kBootstrapError, "rank 2", 2.0,
                                 [&] { Team team(ctx.bootstrap, test_options()); });
      },
      &job);
  check_job(outcome, job, victim);
}

TEST_CASE("a rank that never joins turns into a timeout on the others") {
  std::string job;
  const int victim = 1;
  auto outcome = run_ranks(
      {.nranks = 3, .deadline_s = 30, .stop_on_failure = false, .bootstrap_timeout_s = 1.0},
      [&](RankContext& ctx) {
        if (ctx.rank == victim) {
          std::this_thread::sleep_for(std::chrono::seconds(3));
          return;
        }
        expect_failure_elsewhere(ctx, victim, Status::kTimeout, "has not joined", 2.5,
                                 [&] { Team team(ctx.bootstrap, test_options()); });
      },
      &job);
  check_job(outcome, job, victim);
}

TEST_CASE("a rank killed between collectives is reported as failed, as reader and as root") {
  for (int victim : {0, 2}) {  // the root of the next bcast, then a reader of it
    CAPTURE(victim);
    std::string job;
    auto outcome = run_ranks(
        {.nranks = 4, .deadline_s = 30, .stop_on_failure = false},
        [&](RankContext& ctx) {
          Team team(ctx.bootstrap, test_options());
          std::vector<char> buf(64 * 1024, 1);  // many chunks: the root blocks on the victim's acks
          team.bcast(buf.data(), static_cast<Count>(buf.size()), kByte, 0);
          if (ctx.rank == victim) raise(SIGKILL);
          expect_failure_elsewhere(
              ctx, victim, Status::kPeerFailed, ("rank " + std::to_string(victim)).c_str(), 2.0,
              [&] {
                team.bcast(buf.data(), static_cast<Count>(buf.size()), kByte, 0);
                team.barrier();  // ranks that finished the bcast still meet the victim here
              });
        },
        &job);
    check_job(outcome, job, victim);
  }
}

}  // namespace shmcoll::test

namespace shmcoll::test {

TEST_CASE("SHMCOLL_PEER_CHECK_MS sets how soon a dead peer becomes an error") {
  // The victim joins, then dies 100 ms into the others' bcast without taking part. The
  // waiters' first liveness check (when their wait turns slow) finds it alive; the next comes
  // one interval later.
  for (const int interval_ms : {20, 1500}) {
    std::string job;
    const int victim = 0;
    auto outcome = run_ranks(
        {.nranks = 3, .deadline_s = 30, .stop_on_failure = false},
        [&](RankContext& ctx) {
          Options o = test_options();
          o.peer_check_ms = interval_ms;
          Team team(ctx.bootstrap, o);
          team.barrier();
          if (ctx.rank == victim) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            _exit(3);
          }
          const auto start = Clock::now();
          int value = 0;
          expect_failure_elsewhere(ctx, victim, Status::kPeerFailed, "died", 3.0,
                                   [&] { team.bcast(&value, 1, kInt32, victim); });
          const double took = seconds_since(start);
          if (interval_ms == 20 && took > 0.6) ctx.fail("took %.2f s with 20 ms checks", took);
          if (interval_ms == 1500 && took < 1.0) ctx.fail("took %.2f s with 1.5 s checks", took);
        },
        &job);
    CAPTURE(interval_ms);
    check_job(outcome, job, victim);
  }
}

}  // namespace shmcoll::test
