// Long back-to-back sequences of mixed collectives with changing roots and sizes (no barriers
// in between, so slot reuse across operations with different roots is exercised), teams formed
// one after another on one bootstrap, a team of one, and messages of 256 MiB.
#include <doctest/doctest.h>

#include <chrono>
#include <random>
#include <thread>

#include "segment/layout.hpp"
#include "support/buffers.hpp"
#include "support/collective_checks.hpp"

namespace shmcoll::test {

TEST_CASE("mixed collectives back to back with changing roots, sizes and in-place") {
  // Flat, and all five along the tree of a 2-package x 2-NUMA machine, interleaved on the same
  // slots.
  for (const char* topology : {"", "package:2 numa:2 core:4 pu:1"}) {
    for (int n : {2, 7, 16}) {
      CAPTURE(topology);
      std::string job;
      auto outcome = run_ranks(
          {.nranks = n},
          [&](RankContext& ctx) {
            Options o = test_options(1024, 2);  // two slots: reuse as early as possible
            o.topology = topology;
            if (*topology != '\0')
              o.bcast_algorithm = o.scatter_algorithm = o.gather_algorithm = Algorithm::kTree;
            Team team(ctx.bootstrap, o);
            std::mt19937_64 rng(12345);  // same sequence on every rank
            const std::uint64_t sizes[] = {0, 1, 8, 40, 41, 100, 1024, 1500, 5000};
            for (std::uint64_t seq = 1; seq <= 400; ++seq) {
              const RandomCall c = random_call(rng, n, seq, sizes);
              kCheckCalls[c.which](team, ctx, c.spec);
            }
          },
          &job);
      INFO("team size " << n << ": " << outcome.summary());
      CHECK(outcome.succeeded());
      CHECK(leftover_segments(job).empty());
    }
  }
}

TEST_CASE("scatterv: roots run ahead of a late receiver by more than its inbox holds") {
  // Small blocks reach their receivers in the root's records (scatterv_inbox.hpp), so a root
  // need not wait for anyone until it comes back to a record line the late rank still holds:
  // rank 3 starts 300 ms late, after root 0 posted all the records it could. Then roots change
  // from call to call, so each inbox line is rewritten by other writers; unit 2 gives inline
  // blocks, unit 24 some that go through the stream. Deferred checks: under full ones the root
  // would wait for every arrival; under deferred ones it comes back to an inbox line in its
  // data, before it waits for the history of the same operation (both hold 32).
  std::string job;
  auto outcome = run_ranks(
      {.nranks = 4},
      [&](RankContext& ctx) {
        Options o = test_options(1024, 2);
        o.checks = CheckLevel::kDeferred;
        Team team(ctx.bootstrap, o);
        if (team.rank() == 3) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        // One and a half times the inbox's lines from root 0, then as many with other roots.
        constexpr std::uint64_t kFirst = segment::Inbox::kRecords * 3 / 2;
        for (std::uint64_t seq = 1; seq <= kFirst; ++seq)
          check_scatterv(team, ctx, {.seq = seq, .root = 0, .count = seq % 3 == 0 ? 24u : 2u});
        for (std::uint64_t seq = kFirst + 1; seq <= 2 * kFirst + 16; ++seq) {
          if (team.rank() == static_cast<int>(seq % 4))
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          check_scatterv(team, ctx,
                         {.seq = seq, .root = static_cast<int>(seq % 3), .count = 2 + seq % 2});
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

TEST_CASE("teams are formed one after another, and a team of one works") {
  for (int n : {1, 3}) {
    std::string job;
    auto outcome = run_ranks(
        {.nranks = n},
        [&](RankContext& ctx) {
          for (int round = 0; round < 5; ++round) {
            Team team(ctx.bootstrap, test_options(4096, 1 + round));
            ctx.check(team.rank() == ctx.rank && team.size() == n, "team rank and size");
            for (int root = 0; root < n; ++root) {
              check_bcast(team, ctx,
                          {.seq = static_cast<std::uint64_t>(round), .root = root, .count = 5000});
              check_gatherv(
                  team, ctx,
                  {.seq = 7, .root = root, .count = 300, .type = kInt32, .in_place = true});
            }
            team.barrier();
          }
        },
        &job);
    INFO(outcome.summary());
    CHECK(outcome.succeeded());
    CHECK(leftover_segments(job).empty());
  }
}

// "heavy": bulk copying, long under the sanitizers (run.sh runs it optimized only); the same
// synchronization runs in every other collective test.
TEST_CASE("messages of 256 MiB per rank move through the slots in chunks" *
          doctest::test_suite("heavy")) {
  std::string job;
  auto outcome = run_ranks(
      {.nranks = 2, .deadline_s = 300},
      [&](RankContext& ctx) {
        Options o = test_options(64 * 1024, 4);
        o.timeout_s = 120;
        Team team(ctx.bootstrap, o);
        const std::uint64_t bytes = (256ull << 20) + 3;
        std::vector<std::byte> buf(bytes);
        auto value = [](std::uint64_t i, int r) {
          return std::byte(static_cast<unsigned char>((i * 2654435761u >> 7) + r));
        };
        if (ctx.rank == 1) {
          for (std::uint64_t i = 0; i < bytes; ++i) buf[i] = value(i, 1);
        }
        team.bcast(buf.data(), static_cast<Count>(bytes), kByte, 1);
        std::uint64_t bad = 0;
        for (std::uint64_t i = 0; i < bytes; ++i) bad += buf[i] != value(i, 1);
        ctx.check(bad == 0, "256 MiB bcast content");
        // Gather the same amount from each rank.
        for (std::uint64_t i = 0; i < bytes; ++i) buf[i] = value(i, ctx.rank);
        std::vector<std::byte> all(ctx.rank == 0 ? 2 * bytes : 0);
        team.gather(buf.data(), static_cast<Count>(bytes), kByte, all.data(),
                    static_cast<Count>(bytes), kByte, 0);
        if (ctx.rank == 0) {
          bad = 0;
          for (int r = 0; r < 2; ++r) {
            for (std::uint64_t i = 0; i < bytes; ++i) bad += all[r * bytes + i] != value(i, r);
          }
          ctx.check(bad == 0, "256 MiB gather content");
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

}  // namespace shmcoll::test
