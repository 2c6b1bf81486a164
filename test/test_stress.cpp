// Randomized stress: long back-to-back runs of random collectives, roots, sizes from 0 to
// 4 MiB, in-place and datatypes, on teams of up to 16 ranks (oversubscribed on small
// machines), every result checked byte for byte with guards and gaps (support/collective_checks).
//
// STRESS_OPS sets the total number of operations over all teams. The CI suite runs a short
// version with a fixed seed; the ctest label `long` runs 30,000 (ctest -L long).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "support/buffers.hpp"
#include "support/collective_checks.hpp"

namespace shmcoll::test {
namespace {

std::uint64_t total_ops() {
  const char* v = std::getenv("STRESS_OPS");
  return v != nullptr ? std::strtoull(v, nullptr, 10) : 1400;
}

// Sizes spread evenly over the powers of two up to 4 MiB, so the inline, slot, chunked and
// single-copy paths all get their share; one call in 16 moves nothing.
std::uint64_t random_bytes(std::mt19937_64& rng) {
  constexpr std::uint64_t kMax = std::uint64_t{4} << 20;
  if (rng() % 16 == 0) return 0;
  const unsigned e = static_cast<unsigned>(rng() % 23);  // 1 B .. 4 MiB
  return std::min(kMax, (std::uint64_t{1} << e) + rng() % (std::uint64_t{1} << e));
}

// One team's share of the run. Every rank draws the same sequence from the same seed.
struct Round {
  int nranks;
  Options options;
  const char* label;
};

}  // namespace

TEST_CASE("randomized stress: random collectives, roots and sizes up to 4 MiB, back to back") {
  const std::uint64_t ops = total_ops();
  Options small_slots = test_options(4096, 2);  // chunked streams and early slot reuse
  small_slots.single_copy = SingleCopy::kOff;
  Options full = Options{};
  full.checks = CheckLevel::kFull;
  const Round rounds[] = {{2, Options{}, "defaults"},
                          {3, small_slots, "4 KiB x 2 slots, slots only"},
                          {4, full, "full checks"},
                          {5, Options{}, "defaults"},
                          {8, small_slots, "4 KiB x 2 slots, slots only"},
                          {11, full, "full checks"},
                          {16, Options{}, "defaults"}};
  std::uint64_t done = 0;
  for (const Round& round : rounds) {
    // An equal share each; the last team also takes the remainder, so exactly `ops` run.
    const std::uint64_t per_round =
        &round == &rounds[std::size(rounds) - 1] ? ops - done : ops / std::size(rounds);
    std::string job;
    const auto t0 = std::chrono::steady_clock::now();
    auto outcome = run_ranks(
        {.nranks = round.nranks, .deadline_s = 60 + static_cast<double>(per_round)},
        [&](RankContext& ctx) {
          Team team(ctx.bootstrap, round.options);
          std::mt19937_64 rng(0x5eed0000u + static_cast<unsigned>(round.nranks));
          for (std::uint64_t seq = 1; seq <= per_round && ctx.failures == 0; ++seq) {
            const int which = static_cast<int>(rng() % 5);
            CallSpec s;
            s.seq = seq;
            s.root = static_cast<int>(rng() % static_cast<std::uint64_t>(round.nranks));
            s.in_place = which != 0 && rng() % 2 == 0;
            s.misalign = rng() % 8;
            s.type = rng() % 2 ? kInt32 : kByte;
            const std::uint64_t bytes = random_bytes(rng);
            // v-forms: a rank's block is 0 to 3 units (support/collective_checks' layout).
            s.count = bytes / (which >= 3 ? 2 * s.type.size : s.type.size);
            kCheckCalls[which](team, ctx, s);
          }
        },
        &job);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("stress: %d ranks (%s): %llu operations in %.1f s\n", round.nranks, round.label,
                static_cast<unsigned long long>(per_round), seconds);
    std::fflush(stdout);
    INFO("team size " << round.nranks << " (" << round.label << "): " << outcome.summary());
    CHECK(outcome.succeeded());
    CHECK(leftover_segments(job).empty());
    done += per_round;
  }
  std::printf("stress: %llu operations in all, every result checked\n",
              static_cast<unsigned long long>(done));
}

}  // namespace shmcoll::test
