// Kills at controlled points: a rank SIGKILLs itself at a chosen point of a collective's stages
// (lib/base/fault_points.hpp) -- after its arrival, after publishing or reading a chunk, with
// a single-copy transfer announced, after its data moved -- as root and as non-root, in each of
// the five collectives. The others must get PeerFailed or Timeout within 2 s of the kill, and
// nothing may be left in /dev/shm. Each job runs twice: as this machine's oversubscribed team, and
// counted on more CPUs (SHMCOLL_TEAM_CPUS), where the root shares the single copies' blocks. Both
// with the default checks, which are deferred in the first (on a machine with fewer CPUs than
// ranks) and full in the second. (test_kill.cpp kills at random moments; this covers each stage on
// purpose.)
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <map>

#include "base/fault_points.hpp"
#include "support/collective_checks.hpp"

namespace shmcoll::test {
namespace {

FaultPoint g_target = FaultPoint::kArrived;
int g_countdown = 0;

using Clock = std::chrono::steady_clock;

// When the victim killed itself, in steady_clock ticks (0: not yet), in memory the ranks of a
// job share (mapped before they fork): the survivors' time to their error counts from there,
// not from their own last progress, which on a busy machine may lie long before the kill.
std::atomic<Clock::rep>* g_killed_at = nullptr;

void kill_at_target(FaultPoint point) {
  if (point == g_target && --g_countdown == 0) {
    g_killed_at->store(Clock::now().time_since_epoch().count());
    raise(SIGKILL);
  }
}

std::string point_name(FaultPoint p) {
  switch (p) {
    case FaultPoint::kArrived:
      return "arrived";
    case FaultPoint::kChunkPublished:
      return "chunk published";
    case FaultPoint::kChunkRead:
      return "chunk read";
    case FaultPoint::kSingleCopy:
      return "single copy";
    case FaultPoint::kDataMoved:
      return "data moved";
  }
  return "?";
}

}  // namespace

TEST_CASE("a rank killed at each stage of each collective as root or not fails the others fast" *
          doctest::test_suite("processes")) {
  constexpr int kRanks = 3;
  const char* names[] = {"bcast", "scatter", "gather", "scatterv", "gatherv"};
  std::map<FaultPoint, int> kills;
  int jobs = 0;
  void* shared = mmap(nullptr, sizeof(std::atomic<Clock::rep>), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  g_killed_at = new (shared) std::atomic<Clock::rep>(0);
  for (int which = 0; which < 5; ++which) {
    for (int p = 0; p < kFaultPointCount; ++p) {
      const auto point = static_cast<FaultPoint>(p);
      for (const bool victim_is_root : {true, false}) {
        for (const int hit : {1, 3}) {
          for (const int team_cpus : {0, 64}) {
            const int root = 1;
            const int victim = victim_is_root ? root : 2;
            // Chunks need the slots; the single-copy point needs the single copy; the others
            // take both paths.
            const bool single_copy =
                point == FaultPoint::kSingleCopy || (point != FaultPoint::kChunkPublished &&
                                                     point != FaultPoint::kChunkRead && hit == 3);
            g_killed_at->store(0);
            auto outcome = run_ranks(
                {.nranks = kRanks, .deadline_s = 30, .stop_on_failure = false},
                [&](RankContext& ctx) {
                  Options o = test_options(1024, 2);
                  o.single_copy_min_bytes = single_copy ? 1 : SIZE_MAX;
                  o.single_copy = SingleCopy::kAlways;  // broadcast too, oversubscribed
                  o.team_cpus = team_cpus;
                  o.checks = CheckLevel::kDeferred;
                  Team team(ctx.bootstrap, o);
                  team.barrier();
                  if (ctx.rank == victim) {
                    g_target = point;
                    g_countdown = hit;
                    fault_hook.store(kill_at_target, std::memory_order_relaxed);
                  }
                  auto last_progress = Clock::now();
                  try {
                    for (std::uint64_t seq = 1; seq <= 4; ++seq) {
                      kCheckCalls[which](team, ctx, {.seq = seq, .root = root, .count = 5000});
                      last_progress = Clock::now();
                    }
                  } catch (const Error& e) {
                    const Clock::rep killed = g_killed_at->load();
                    const Clock::time_point since =
                        killed != 0 ? Clock::time_point(Clock::duration(killed)) : last_progress;
                    const double stalled =
                        std::chrono::duration<double>(Clock::now() - since).count();
                    if (stalled > 2.0)
                      ctx.fail("error %.2f s after the kill: %s", stalled, e.what());
                    if (e.status() != Status::kPeerFailed && e.status() != Status::kTimeout) {
                      ctx.fail("unexpected error kind '%s': %s", status_name(e.status()), e.what());
                    }
                  }
                });
            ++jobs;
            INFO(names[which] << ", killed at '" << point_name(point) << "' hit " << hit
                              << (victim_is_root ? " as root" : " as non-root")
                              << (single_copy ? ", single copy" : ", slots")
                              << (team_cpus > 0 ? ", shares" : "") << ": " << outcome.summary());
            CHECK_FALSE(outcome.timed_out);
            const auto& v = outcome.ranks[static_cast<std::size_t>(victim)];
            if (v.signal == SIGKILL) {
              ++kills[point];
              for (int r = 0; r < kRanks; ++r) {
                // Survivors end cleanly: with PeerFailed or Timeout within 2 s (checked in the
                // rank), or having finished calls that no longer needed the victim.
                if (r != victim) CHECK(outcome.ranks[static_cast<std::size_t>(r)].succeeded());
              }
            } else {
              // The point is not on this rank's path in this collective: nothing may fail.
              CHECK(outcome.succeeded());
            }
          }
        }
      }
    }
  }
  for (int p = 0; p < kFaultPointCount; ++p) {
    const auto point = static_cast<FaultPoint>(p);
    INFO("kills at '" << point_name(point) << "'");
    CHECK(kills[point] >= 5);
    MESSAGE("killed at '" << point_name(point) << "': " << kills[point] << " times");
  }
  MESSAGE(jobs << " jobs");
  g_killed_at = nullptr;
  munmap(shared, sizeof(std::atomic<Clock::rep>));
}

}  // namespace shmcoll::test
