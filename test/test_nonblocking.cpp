// Non-blocking collectives (Team::ibcast and the others, shmcoll/request.hpp): the same results
// as the blocking forms, several outstanding at once beyond the ring depth, mixed with blocking
// calls, completed by test loops, wait_any and deadlines, with and without the progress thread;
// errors at completion with the blocking forms' messages; a dead peer ends them.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "support/collective_checks.hpp"

namespace shmcoll::test {
namespace {

constexpr std::uint64_t kSizes[] = {0, 1, 8, 40, 100, 1024, 3000, 70'000};

Options nb_options(bool progress_thread) {
  Options o = test_options(1024, 4);
  o.single_copy_min_bytes = 4096;       // the larger sizes take the single copy when there is one
  o.single_copy = SingleCopy::kAlways;  // broadcast too, in these oversubscribed teams
  o.progress_thread = progress_thread;
  return o;
}

// Runs `body` with this process's stderr going to a file; returns what was written.
template <class Body>
std::string capture_stderr(Body&& body) {
  char path[] = "/tmp/shmcoll-stderr-XXXXXX";
  const int fd = mkstemp(path);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return text.str();
}

}  // namespace

TEST_CASE("non-blocking collectives give the blocking results, up to 8 outstanding, mixed") {
  // Flat, and (the last two rows) all five along the tree of a 2-package x 2-NUMA machine.
  struct Setup {
    bool thread;
    bool tree;
  };
  for (Setup setup :
       {Setup{false, false}, Setup{true, false}, Setup{false, true}, Setup{true, true}}) {
    const bool thread = setup.thread;
    for (int n : {2, 3, 5, 16}) {
      if (setup.tree && n < 5) continue;
      std::string job;
      auto outcome = run_ranks(
          {.nranks = n},
          [&](RankContext& ctx) {
            Options o = nb_options(thread);
            if (setup.tree) {
              o.topology = "package:2 numa:2 core:4 pu:1";
              o.bcast_algorithm = o.scatter_algorithm = o.gather_algorithm = Algorithm::kTree;
            }
            Team team(ctx.bootstrap, o);
            std::mt19937_64 rng(777 + static_cast<unsigned>(n));
            std::uint64_t seq = 1;
            for (int round = 0; round < 12; ++round) {
              // 1 to 8 operations in flight (the ring holds 4: more makes the start wait),
              // every third one blocking, completed in a way that depends on the round.
              const int batch = 1 + static_cast<int>(rng() % 8);
              std::vector<PendingCheck> pending;
              for (int i = 0; i < batch; ++i) {
                RandomCall c = random_call(rng, n, seq++, kSizes);
                c.spec.nonblocking = i % 3 != 2;
                pending.push_back(kStartCalls[c.which](team, ctx, c.spec));
              }
              std::vector<Request> requests;
              for (PendingCheck& p : pending) requests.push_back(p.request);
              switch (round % 4) {
                case 0:
                  Request::wait_all(requests);
                  break;
                case 1:  // test loops
                  for (Request& r : requests) {
                    while (!r.test()) {
                    }
                  }
                  break;
                case 2: {  // wait_any until none is left, taking each out once complete
                  int completed = 0;
                  for (;;) {
                    const std::size_t i = Request::wait_any(requests);
                    if (i == requests.size()) break;  // only empty requests are left
                    ctx.check(requests[i].done(), "wait_any's request is complete");
                    requests[i] = Request();  // empty: wait_any skips it from now on
                    ++completed;
                  }
                  ctx.check(completed == batch - batch / 3, "wait_any returned each request once");
                  break;
                }
                default:  // the last one first: the earlier ones complete on the way
                  requests.back().wait();
                  for (Request& r : requests) ctx.check(r.done(), "earlier requests completed");
                  break;
              }
              for (PendingCheck& p : pending) p.verify();
            }
          },
          &job);
      INFO("team size " << n << std::string(thread ? ", progress thread" : "")
                        << std::string(setup.tree ? ", tree" : "") << ": " << outcome.summary());
      CHECK(outcome.succeeded());
      CHECK(leftover_segments(job).empty());
    }
  }
}

TEST_CASE("the progress thread completes an operation while the caller makes no calls") {
  for (bool thread : {false, true}) {
    std::string job;
    auto outcome = run_ranks(
        {.nranks = 3},
        [&](RankContext& ctx) {
          Team team(ctx.bootstrap, nb_options(thread));
          std::vector<int> data(10'000, ctx.rank == 0 ? 42 : 0);
          // The root starts late, so nothing can complete at the receivers' start.
          if (ctx.rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
          Request r = team.ibcast(std::span<int>(data), 0);
          std::this_thread::sleep_for(std::chrono::milliseconds(300));  // "computing"
          const bool done_alone = r.done();
          if (ctx.rank != 0) {
            // Without the thread nothing moved while the receiver computed.
            ctx.check(done_alone == thread, thread ? "the progress thread completed it"
                                                   : "without calls nothing completes it");
          }
          r.wait();
          ctx.check(data[9'999] == 42 && data[0] == 42, "the data arrived");
        },
        &job);
    INFO(std::string(thread ? "progress thread: " : "no thread: ") << outcome.summary());
    CHECK(outcome.succeeded());
  }
}

TEST_CASE("concurrent callers: one thread tests the requests another starts and waits for") {
  // Options::concurrent_calls: a second thread polls the requests (as the MPI plugin's
  // completion calls do from any thread) while the first starts operations, runs a blocking
  // one among them and waits; every call into the team is serialized (the ThreadSanitizer
  // build checks that none races).
  std::string job;
  auto outcome = run_ranks(
      {.nranks = 3},
      [&](RankContext& ctx) {
        Options o = nb_options(false);
        o.concurrent_calls = true;
        Team team(ctx.bootstrap, o);
        std::mutex handed_lock;
        std::vector<Request> handed;  // the requests the other thread polls
        std::atomic<bool> stop{false};
        std::thread poller([&] {
          while (!stop.load()) {
            std::vector<Request> polled;
            {
              std::lock_guard<std::mutex> guard(handed_lock);
              polled = handed;
            }
            for (Request& r : polled) r.test();
          }
        });
        bool ok = true;
        for (int it = 0; it < 100; ++it) {
          std::vector<std::vector<int>> data(3, std::vector<int>(3000, ctx.rank == 0 ? it : -1));
          std::vector<Request> started;
          for (std::vector<int>& d : data) started.push_back(team.ibcast(std::span<int>(d), 0));
          {
            std::lock_guard<std::mutex> guard(handed_lock);
            handed = started;
          }
          int blocking = ctx.rank == 0 ? -it : 0;
          team.bcast(&blocking, 1, kInt32, 0);
          Request::wait_all(started);
          {
            std::lock_guard<std::mutex> guard(handed_lock);
            handed.clear();
          }
          for (const std::vector<int>& d : data) ok = ok && d.back() == it;
          ok = ok && blocking == -it;
        }
        stop = true;
        poller.join();
        ctx.check(ok, "the data of every operation arrived");
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

TEST_CASE("a deadline passes while a peer is late; the request completes later") {
  auto outcome = run_ranks({.nranks = 2}, [&](RankContext& ctx) {
    Team team(ctx.bootstrap, nb_options(false));
    std::vector<int> data(100, ctx.rank == 0 ? 7 : 0);
    if (ctx.rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Request r = team.ibcast(std::span<int>(data), 0);
    if (ctx.rank == 1) {
      const auto t0 = std::chrono::steady_clock::now();
      ctx.check(!r.wait_for(std::chrono::milliseconds(20)), "the deadline comes first");
      const auto waited = std::chrono::steady_clock::now() - t0;
      ctx.check(waited >= std::chrono::milliseconds(20) && waited < std::chrono::milliseconds(150),
                "wait_for returns at its deadline");
      ctx.check(!r.done(), "the request is still outstanding");
    }
    r.wait();
    ctx.check(data[99] == 7, "the data arrived");
  });
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

TEST_CASE("a bad argument fails the request at completion with the blocking message") {
  for (bool thread : {false, true}) {
    auto outcome = run_ranks({.nranks = 3}, [&](RankContext& ctx) {
      Team team(ctx.bootstrap, nb_options(thread));
      std::vector<int> a(64, 1), b(64, 2);
      // A good operation first: it must complete normally despite the bad one after it.
      Request good = team.ibcast(std::span<int>(a), 0);
      Request bad = team.ibcast(b.data(), ctx.rank == 2 ? -5 : 64, kInt32, 0);
      good.wait();
      try {
        bad.wait();
        ctx.fail("the bad request completed without an error");
      } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        ctx.check(what.find("count = -5 is negative") != std::string::npos &&
                      what.find("rank 2") != std::string::npos,
                  "the message names the argument, the rank and the value");
      }
      // The team is over, as after a blocking error.
      try {
        team.ibcast(std::span<int>(a), 0).wait();
        ctx.fail("a request on an aborted team succeeded");
      } catch (const InvalidArgument&) {
      }
    });
    INFO(outcome.summary());
    CHECK(outcome.succeeded());
  }
}

TEST_CASE("a peer dying during outstanding operations ends them with an error") {
  for (bool thread : {false, true}) {
    for (int mode = 0; mode < 2; ++mode) {  // completed by wait, or by a test loop
      std::string job;
      auto outcome = run_ranks(
          {.nranks = 4, .deadline_s = 60, .stop_on_failure = false},
          [&](RankContext& ctx) {
            Options o = nb_options(thread);
            o.timeout_s = 30;
            Team team(ctx.bootstrap, o);
            std::vector<int> a(50'000, 3), b(50'000, 4);
            if (ctx.rank == 3) {
              team.ibcast(std::span<int>(a), 0).wait();
              raise(SIGKILL);  // dies before the second operation
            }
            Request first = team.ibcast(std::span<int>(a), 0);
            Request second = team.igather(b.data(), 100, kInt32, b.data(), 100, kInt32, 1);
            const auto t0 = std::chrono::steady_clock::now();
            try {
              first.wait();
              if (mode == 0) {
                second.wait();
              } else {
                while (!second.test()) {
                }
              }
              ctx.fail("the operations completed although rank 3 died");
            } catch (const PeerFailed& e) {
              const double s =
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              ctx.check(s < 5, "the error comes within a bounded time");
              ctx.check(std::string(e.what()).find("rank 3") != std::string::npos,
                        "the error names the dead rank");
              ctx.check(second.done(), "every outstanding request is complete");
            }
          },
          &job);
      INFO("mode " << mode << std::string(thread ? ", progress thread" : "") << ": "
                   << outcome.summary());
      for (std::size_t r = 0; r < 3; ++r) CHECK_MESSAGE(outcome.ranks[r].succeeded(), "rank " << r);
      CHECK_FALSE(outcome.timed_out);
      CHECK(leftover_segments(job).empty());
    }
  }
}

TEST_CASE("the last handle of an incomplete request waits for its operation when released") {
  for (bool thread : {false, true}) {
    auto outcome = run_ranks({.nranks = 3}, [&](RankContext& ctx) {
      Team team(ctx.bootstrap, nb_options(thread));
      std::vector<int> data(20'000, ctx.rank == 0 ? 9 : 0);
      // The root starts late, so the receivers' requests are incomplete when they let go.
      if (ctx.rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const std::string said = capture_stderr([&] {
        Request r = team.ibcast(std::span<int>(data), 0);
        Request copy = r;  // two handles: dropping one must not wait
        r = Request();
        ctx.check(ctx.rank == 0 || !copy.done(), "a copy keeps the request outstanding");
      });  // the last handle goes here
      ctx.check(data[0] == 9 && data[19'999] == 9, "the data arrived before the release returned");
      if (ctx.rank != 0) {
#ifdef NDEBUG
        ctx.check(said.empty(), "release builds print nothing");
#else
        ctx.check(said.find("released before it completed") != std::string::npos &&
                      said.find("bcast (root 0)") != std::string::npos,
                  "debug builds name the operation on stderr");
#endif
      }
      team.barrier();  // the team is still in order
    });
    INFO(std::string(thread ? "progress thread: " : "no thread: ") << outcome.summary());
    CHECK(outcome.succeeded());
  }
}

#ifndef NDEBUG
TEST_CASE("debug builds: a send buffer written or freed before completion fails the request") {
  for (int mode = 0; mode < 2; ++mode) {  // written; unmapped
    auto outcome = run_ranks({.nranks = 2}, [&](RankContext& ctx) {
      Team team(ctx.bootstrap, nb_options(false));
      // 3000 bytes: below the single-copy size, so the root's start puts the whole message in
      // the slots (3 chunks of 1024 in a ring of 4) and its buffer is not read again.
      const std::size_t bytes = 3000;
      auto* page = static_cast<std::byte*>(
          mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      std::memset(page, ctx.rank == 0 ? 5 : 0, 4096);
      if (ctx.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      Request r = team.ibcast(page, static_cast<Count>(bytes), kByte, 0);
      if (ctx.rank == 0) {
        if (mode == 0) {
          page[100] = std::byte{6};
        } else {
          munmap(page, 4096);
        }
      }
      try {
        r.wait();
        team.barrier();  // the receiver learns of the root's error here at the latest
        ctx.fail("no error although the root's send buffer was %s", mode ? "freed" : "written");
      } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        ctx.check(
            what.find("touched before the request completed") != std::string::npos &&
                what.find("rank 0") != std::string::npos &&
                what.find(mode == 0 ? "3000 bytes at" : "no longer mapped") != std::string::npos,
            "the message names the operation, the rank and the buffer");
      }
      if (ctx.rank == 1 || mode == 0) munmap(page, 4096);
    });
    INFO("mode " << mode << ": " << outcome.summary());
    CHECK(outcome.succeeded());
  }
}
#endif

}  // namespace shmcoll::test
