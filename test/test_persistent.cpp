// Persistent collectives (Team::bcast_init and the others, PersistentRequest): each request,
// started again and again with new data, gives the blocking call's results, between blocking
// and non-blocking calls, with and without the progress thread; the counts arrays are the
// ones given at init; a start of an active request, or after the team ended, is refused; an
// argument error fails the start's request as the non-blocking call's would. The MPI plugin's
// TeamPersistent makes a new request where a start's arguments change.
#include <doctest/doctest.h>

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "mpi/team_persistent.hpp"
#include "support/ranks.hpp"

namespace shmcoll::test {
namespace {

// The value at `i` of round `round`'s data from `rank`.
int value(int round, int rank, int i) { return round * 100'000 + rank * 1'000 + i; }

// Every collective as one persistent request each, at root `root`; blocks of `k` ints (the
// v-forms: rank r's block holds k + r). `in_place` at the root where the form has it.
struct Persistent {
  Persistent(Team& team, int rank, int n, int root, int k, bool in_place)
      : rank_(rank), n_(n), root_(root), k_(k) {
    bcast_buf.resize(static_cast<std::size_t>(k));
    scatter_send.resize(static_cast<std::size_t>(n * k));
    scatter_recv.resize(static_cast<std::size_t>(k));
    gather_send.resize(static_cast<std::size_t>(k));
    gather_recv.resize(static_cast<std::size_t>(n * k));
    for (int r = 0; r < n; ++r) {
      counts.push_back(k + r);
      displs.push_back(r == 0 ? 0 : displs.back() + counts[static_cast<std::size_t>(r) - 1] + 1);
    }
    const auto v_total = static_cast<std::size_t>(displs.back() + counts.back() + 1);
    scatterv_send.resize(v_total);
    scatterv_recv.resize(static_cast<std::size_t>(k + rank));
    gatherv_send.resize(static_cast<std::size_t>(k + rank));
    gatherv_recv.resize(v_total);
    const bool at_root_in_place = in_place && rank == root;
    bcast = team.bcast_init(bcast_buf.data(), k, kInt32, root);
    scatter = at_root_in_place
                  ? team.scatter_init(scatter_send.data(), k, kInt32, in_place_tag, root)
                  : team.scatter_init(scatter_send.data(), k, kInt32, scatter_recv.data(), k,
                                      kInt32, root);
    gather = at_root_in_place ? team.gather_init(in_place_tag, gather_recv.data(), k, kInt32, root)
                              : team.gather_init(gather_send.data(), k, kInt32, gather_recv.data(),
                                                 k, kInt32, root);
    scatterv = at_root_in_place ? team.scatterv_init(scatterv_send.data(), counts, displs, kInt32,
                                                     in_place_tag, root)
                                : team.scatterv_init(scatterv_send.data(), counts, displs, kInt32,
                                                     scatterv_recv.data(), k + rank, kInt32, root);
    gatherv =
        at_root_in_place
            ? team.gatherv_init(in_place_tag, gatherv_recv.data(), counts, displs, kInt32, root)
            : team.gatherv_init(gatherv_send.data(), k + rank, kInt32, gatherv_recv.data(), counts,
                                displs, kInt32, root);
    // The arrays were copied at init: what the caller does with them afterwards changes nothing.
    std::fill(counts.begin(), counts.end(), -1);
    in_place_root = at_root_in_place;
  }

  // Fills this round's inputs (the root's in-place blocks too).
  void fill(int round) {
    if (rank_ == root_) {
      for (int i = 0; i < k_; ++i) bcast_buf[static_cast<std::size_t>(i)] = value(round, 0, i);
      for (int r = 0; r < n_; ++r) {
        for (int i = 0; i < k_; ++i)
          scatter_send[static_cast<std::size_t>(r * k_ + i)] = value(round, r, i);
        for (int i = 0; i < k_ + r; ++i)
          scatterv_send[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)] + i)] =
              value(round, r, i);
      }
    }
    for (int i = 0; i < k_; ++i) {
      gather_send[static_cast<std::size_t>(i)] = value(round, rank_, i);
      if (in_place_root)
        gather_recv[static_cast<std::size_t>(rank_ * k_ + i)] = value(round, rank_, i);
    }
    for (int i = 0; i < k_ + rank_; ++i) {
      gatherv_send[static_cast<std::size_t>(i)] = value(round, rank_, i);
      if (in_place_root)
        gatherv_recv[static_cast<std::size_t>(displs[static_cast<std::size_t>(rank_)] + i)] =
            value(round, rank_, i);
    }
  }

  void verify(RankContext& ctx, int round) const {
    bool ok = true;
    for (int i = 0; i < k_; ++i) {
      ok &= bcast_buf[static_cast<std::size_t>(i)] == value(round, 0, i);
      const int scattered = in_place_root ? scatter_send[static_cast<std::size_t>(rank_ * k_ + i)]
                                          : scatter_recv[static_cast<std::size_t>(i)];
      ok &= scattered == value(round, rank_, i);
    }
    for (int i = 0; i < k_ + rank_; ++i) {
      const int scattered =
          in_place_root
              ? scatterv_send[static_cast<std::size_t>(displs[static_cast<std::size_t>(rank_)] + i)]
              : scatterv_recv[static_cast<std::size_t>(i)];
      ok &= scattered == value(round, rank_, i);
    }
    if (rank_ == root_) {
      for (int r = 0; r < n_; ++r) {
        for (int i = 0; i < k_; ++i)
          ok &= gather_recv[static_cast<std::size_t>(r * k_ + i)] == value(round, r, i);
        for (int i = 0; i < k_ + r; ++i)
          ok &= gatherv_recv[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)] + i)] ==
                value(round, r, i);
        // The gap after each v-block stays as it was.
        ok &=
            gatherv_recv[static_cast<std::size_t>(displs[static_cast<std::size_t>(r)] + k_ + r)] ==
            0;
      }
    }
    ctx.check(ok, "a persistent collective's start gave the blocking call's results");
  }

  std::vector<Request> start_all() {
    std::vector<Request> started;
    for (PersistentRequest* p : {&bcast, &scatter, &scatterv, &gather, &gatherv}) {
      p->start();
      started.push_back(p->request());
    }
    return started;
  }

  int rank_, n_, root_, k_;
  bool in_place_root = false;
  std::vector<int> bcast_buf, scatter_send, scatter_recv, gather_send, gather_recv;
  std::vector<int> scatterv_send, scatterv_recv, gatherv_send, gatherv_recv;
  std::vector<Count> counts, displs;
  PersistentRequest bcast, scatter, scatterv, gather, gatherv;
  static constexpr InPlace in_place_tag{};
};

}  // namespace

TEST_CASE("persistent collectives give the blocking results at every start, mixed") {
  for (bool thread : {false, true}) {
    for (int n : {2, 3, 5}) {
      std::string job;
      auto outcome = run_ranks(
          {.nranks = n},
          [&](RankContext& ctx) {
            Options o = test_options(1024, 4);
            o.progress_thread = thread;
            Team team(ctx.bootstrap, o);
            // Small blocks (one chunk) and blocks of several chunks, in place or not.
            for (int k : {2, 700}) {
              for (bool in_place : {false, true}) {
                const int root = (k + (in_place ? 1 : 0)) % n;
                Persistent p(team, ctx.rank, n, root, k, in_place);
                for (int round = 1; round <= 4; ++round) {
                  p.fill(round);
                  std::vector<Request> started = p.start_all();
                  // A blocking and a non-blocking call between the starts and their completion.
                  std::vector<int> extra(16, ctx.rank == 0 ? round : -1);
                  team.bcast(extra.data(), 16, kInt32, 0);
                  Request other = team.ibcast(extra.data(), 16, kInt32, 0);
                  if (round % 2 == 0) {
                    Request::wait_all(started);
                  } else {
                    for (Request& r : started) {
                      while (!r.test()) {
                      }
                    }
                  }
                  other.wait();
                  ctx.check(extra[15] == round, "the calls between the starts ran");
                  p.verify(ctx, round);
                }
              }
            }
          },
          &job);
      INFO("team size " << n << (thread ? ", progress thread" : "") << ": " << outcome.summary());
      CHECK(outcome.succeeded());
      CHECK(leftover_segments(job).empty());
    }
  }
}

TEST_CASE("a persistent request refuses a start while active, and after its team ended") {
  auto outcome = run_ranks({.nranks = 2}, [&](RankContext& ctx) {
    std::optional<Team> team(std::in_place, ctx.bootstrap, test_options(1024, 4));
    std::vector<int> data(8, ctx.rank + 1);
    PersistentRequest request = team->bcast_init(data.data(), 8, kInt32, 0);
    // Rank 0 starts only once rank 1 has tried its second start (the bootstrap's barrier is
    // outside the team), so rank 1's first start cannot be complete by then.
    if (ctx.rank == 1) {
      request.start();
      try {
        request.start();
        ctx.fail("an active persistent request started again");
      } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        ctx.check(what.find("rank 1") != std::string::npos &&
                      what.find("not complete") != std::string::npos,
                  "the refusal names the rank and the reason");
      }
    }
    ctx.bootstrap.barrier();
    if (ctx.rank == 0) {
      for (int& x : data) x = 0;
      request.start();
    }
    request.wait();
    ctx.check(data[7] == 0, "the start completed with the root's data");
    team->leave();
    team.reset();
    try {
      request.start();
      ctx.fail("a persistent request started after its team ended");
    } catch (const InvalidArgument& e) {
      ctx.check(std::string(e.what()).find("team has ended") != std::string::npos,
                "the refusal says the team has ended");
    }
  });
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

TEST_CASE("a persistent start with a bad argument fails at completion with the blocking message") {
  auto outcome = run_ranks({.nranks = 3}, [&](RankContext& ctx) {
    Team team(ctx.bootstrap, test_options(1024, 4));
    std::vector<int> data(64, 1);
    PersistentRequest good = team.bcast_init(data.data(), 64, kInt32, 0);
    PersistentRequest bad = team.bcast_init(data.data(), ctx.rank == 2 ? -5 : 64, kInt32, 0);
    good.start();
    good.wait();
    try {
      bad.start();
      bad.wait();
      ctx.fail("the bad start completed without an error");
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      ctx.check(what.find("count = -5 is negative") != std::string::npos &&
                    what.find("rank 2") != std::string::npos,
                "the message names the argument, the rank and the value");
    }
  });
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

TEST_CASE("the plugin's team request is made again where a start's arguments change") {
  auto outcome = run_ranks({.nranks = 3}, [&](RankContext& ctx) {
    Team team(ctx.bootstrap, test_options(1024, 4));
    mpi::TeamPersistent on_team;
    Request completes;
    auto init = [](Team& t, auto... args) { return t.bcast_init(args...); };
    std::vector<int> first(8, -1), second(16, -1);
    for (int round = 1; round <= 4; ++round) {
      // Rounds 1 and 2 on the first buffer, then 3 and 4 on another one, twice its length.
      std::vector<int>& buffer = round <= 2 ? first : second;
      if (ctx.rank == 1) std::fill(buffer.begin(), buffer.end(), round);
      on_team.start(team, init, completes, buffer.data(), static_cast<Count>(buffer.size()), kInt32,
                    1);
      completes.wait();
      ctx.check(buffer.front() == round && buffer.back() == round,
                "each start broadcast its own buffer");
    }
    ctx.check(first.back() == 2, "the first buffer is left alone once the arguments changed");
  });
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

}  // namespace shmcoll::test
