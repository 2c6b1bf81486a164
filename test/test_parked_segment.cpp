// A team's segment stays mapped after the team ends and serves the next team of the same
// processes (segment/parked_segment.hpp): what each process maps, team after team, and that a
// reused segment carries nothing of its last team into the next one (operation numbers, tags,
// an abort).
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <string>

#include "support/collective_checks.hpp"
#include "support/mapped_segments.hpp"

namespace shmcoll::test {
namespace {

// 60 verified calls of the five collectives with changing roots and sizes.
void run_calls(Team& team, RankContext& ctx, std::uint64_t seed) {
  std::mt19937_64 rng(seed);  // the same sequence on every rank
  const std::uint64_t sizes[] = {0, 8, 100, 1500, 5000};
  for (std::uint64_t seq = 1; seq <= 60; ++seq) {
    const RandomCall c = random_call(rng, team.size(), seq, sizes);
    kCheckCalls[c.which](team, ctx, c.spec);
  }
}

}  // namespace

TEST_CASE("the next team of the same processes reuses the last team's segment") {
  for (CheckLevel checks : {CheckLevel::kFull, CheckLevel::kDeferred}) {
    CAPTURE(check_level_name(checks));
    std::string job;
    auto outcome = run_ranks(
        {.nranks = 3},
        [&](RankContext& ctx) {
          Options o = test_options(1024, 4);
          o.checks = checks;
          std::set<std::string> first;
          {
            Team team(ctx.bootstrap, o);
            first = mapped_segments();
            ctx.check(first.size() == 1, "a team maps one segment");
            run_calls(team, ctx, 1);
          }
          ctx.check(mapped_segments() == first, "the ended team's segment stays mapped");
          {
            Team again(ctx.bootstrap, o);
            ctx.check(mapped_segments() == first, "the next team maps no segment of its own");
            // Its operations count from 1 again, on lines the last team left at higher numbers.
            run_calls(again, ctx, 2);
          }
          // A team that fails: its abort is recorded in the segment, which is then reused.
          {
            Team failing(ctx.bootstrap, o);
            std::vector<char> buffer(64);
            try {
              failing.bcast(buffer.data(), -1, kByte, 0);
              ctx.fail("a negative count went unreported");
            } catch (const Error&) {
            }
            try {
              failing.bcast(buffer.data(), 8, kByte, 0);
              ctx.fail("a call on an aborted team went unreported");
            } catch (const Error&) {
            }
          }
          {
            Team after_error(ctx.bootstrap, o);
            ctx.check(mapped_segments() == first, "a team after a failed one reuses its segment");
            run_calls(after_error, ctx, 3);
          }
          // Another geometry: a segment of its own; the parked one is unmapped.
          Options other = o;
          other.slot_bytes = 2048;
          {
            Team different(ctx.bootstrap, other);
            const std::set<std::string> now = mapped_segments();
            ctx.check(now.size() == 1 && now != first,
                      "a team of another geometry maps a new segment and unmaps the parked one");
            run_calls(different, ctx, 4);
          }
        },
        &job);
    INFO(outcome.summary());
    CHECK(outcome.succeeded());
    CHECK(leftover_segments(job).empty());
  }
}

}  // namespace shmcoll::test
