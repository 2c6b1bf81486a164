// The typed forms of the C++ API as users write them: buffers as vectors, arrays and spans of
// T or const T, counts as ranges of int, int64_t or size_t, in place at the root, blocking and
// not. What they move is checked element by element.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "support/ranks.hpp"

namespace shmcoll::test {

TEST_CASE("typed API: containers and spans, counts of any integer type, in place") {
  constexpr int kRanks = 3;
  const launch::JobOutcome outcome = run_ranks({.nranks = kRanks}, [](RankContext& ctx) {
    Team team(ctx.bootstrap, test_options());
    const int me = ctx.rank;
    const bool root = me == 0;

    std::array<double, 3> x{};
    if (root) x = {1.5, 2.5, 3.5};
    team.bcast(x, 0);
    ctx.check(x[2] == 3.5, "bcast of a std::array");

    // The spelling that must compile: spans of T on both sides, no const spelt out.
    std::vector<int> mine = {me, me + 10}, all(root ? 2 * kRanks : 0, -1);
    team.gather(std::span(mine), std::span(all), 0);
    for (int r = 0; root && r < kRanks; ++r)
      ctx.check(all[2 * r] == r && all[2 * r + 1] == r + 10, "gather of spans");
    team.gather(mine, all, 0);  // and the containers themselves

    // scatterv with int counts, then the same blocks back with gatherv in place (size_t counts).
    const std::vector<int> counts = {1, 2, 3}, displs = {0, 1, 3};
    const std::vector<std::size_t> wide_counts = {1, 2, 3}, wide_displs = {0, 1, 3};
    std::vector<long> source(root ? 6 : 0);
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = 100 + static_cast<long>(i);
    std::vector<long> block(static_cast<std::size_t>(me + 1), -1);
    if (root) {
      team.scatterv(std::span<const long>(source), counts, displs, in_place, 0);
    } else {
      team.scatterv(source, counts, displs, block, 0);
      for (int i = 0; i <= me; ++i)
        ctx.check(
            block[static_cast<std::size_t>(i)] == 100 + displs[static_cast<std::size_t>(me)] + i,
            "scatterv block");
    }
    std::vector<long> back(root ? 6 : 0, -1);
    if (root) {
      back[0] = 100;
      team.gatherv(in_place, back, wide_counts, wide_displs, 0);
      for (std::size_t i = 0; i < back.size(); ++i)
        ctx.check(back[i] == 100 + static_cast<long>(i), "gatherv in place");
    } else {
      team.gatherv(block, back, wide_counts, wide_displs, 0);
    }

    // Non-blocking typed forms.
    std::vector<std::int64_t> piece(2, -1), pieces(root ? 2 * kRanks : 0);
    for (std::size_t i = 0; i < pieces.size(); ++i) pieces[i] = static_cast<std::int64_t>(i);
    team.iscatter(pieces, piece, 0).wait();
    ctx.check(piece[0] == 2 * me && piece[1] == 2 * me + 1, "iscatter");
    std::vector<std::int64_t> gathered(root ? 2 * kRanks : 0, -1);
    team.igather(piece, gathered, 0).wait();
    for (std::size_t i = 0; i < gathered.size(); ++i)
      ctx.check(gathered[i] == static_cast<std::int64_t>(i), "igather");
    std::vector<std::int64_t> one(1, -1);
    const std::vector<std::int64_t> ones(kRanks, 1), steps = {0, 2, 4};
    team.iscatterv(pieces, ones, steps, one, 0).wait();
    ctx.check(one[0] == 2 * me, "iscatterv");
    team.igatherv(one, gathered, ones, steps, 0).wait();
  });
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

TEST_CASE("typed API: a count that does not fit 64 bits is an error naming it, on every rank") {
  const launch::JobOutcome outcome = run_ranks({.nranks = 2}, [](RankContext& ctx) {
    Team team(ctx.bootstrap, test_options());
    const std::vector<std::size_t> counts = {1, SIZE_MAX}, displs = {0, 1};
    std::vector<int> send(2), recv(1);
    try {
      team.scatterv(send, counts, displs, recv, 0);
      ctx.fail("a count of SIZE_MAX was accepted");
    } catch (const InvalidArgument& e) {
      ctx.check(std::string(e.what()).find("sendcounts[1]") != std::string::npos,
                "the message names sendcounts[1]");
    }
    team.barrier();  // the team is still usable: nothing collective had started
  });
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

}  // namespace shmcoll::test
