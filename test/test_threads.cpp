// Thread safety of the library: teams whose ranks are threads of one process, two teams at
// once, each thread running its own sequence of collectives. This is what an
// MPI_THREAD_MULTIPLE program does with several communicators; under the TSan build
// (SHMCOLL_SANITIZE=thread) it checks the process-wide state (options, topology, the
// cross-memory-attach probe) for races.
#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <thread>

#include "launch/job.hpp"
#include "support/child.hpp"
#include "support/collective_checks.hpp"
#include "support/thread_bootstrap.hpp"

namespace shmcoll::test {
namespace {

// One rank of one team: forms the team and runs `ops` random collectives.
void run_thread_rank(const std::shared_ptr<ThreadExchange>& exchange, int rank, Options options,
                     std::atomic<int>& failures) {
  ThreadBootstrap bootstrap(exchange, rank);
  RankContext ctx{rank, exchange->size(), bootstrap};
  try {
    Team team(bootstrap, options);
    ctx.check(team.single_copy_available(), "the single copy between threads of one process");
    std::mt19937_64 rng(77 + static_cast<unsigned>(exchange->size()));  // same on every rank
    const std::uint64_t sizes[] = {0, 8, 100, 5000, 70000, 300000};
    for (std::uint64_t seq = 1; seq <= 300; ++seq) {
      const int which = static_cast<int>(rng() % 5);
      CallSpec s;
      s.seq = seq;
      s.root = static_cast<int>(rng() % static_cast<std::uint64_t>(exchange->size()));
      s.in_place = which != 0 && rng() % 2 == 0;
      s.count = sizes[rng() % std::size(sizes)] / (which >= 3 ? 2 : 1);
      kCheckCalls[which](team, ctx, s);
    }
  } catch (const std::exception& e) {
    ctx.fail("%s", e.what());
  }
  failures += ctx.failures;
}

}  // namespace

TEST_CASE("two teams whose ranks are threads of one process run at the same time") {
  const int result = run_in_child([] {
    alarm(300);  // a hang ends the child, and the case fails
    Options flat = test_options(4096, 2);
    flat.single_copy_min_bytes = 16384;
    Options tree = test_options(4096, 4);
    tree.topology = "package:2 numa:2 core:2 pu:1";
    tree.bcast_algorithm = BcastAlgorithm::kTree;
    auto a = std::make_shared<ThreadExchange>(3, launch::make_job_id());
    auto b = std::make_shared<ThreadExchange>(5, launch::make_job_id());
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int r = 0; r < a->size(); ++r) {
      threads.emplace_back(run_thread_rank, a, r, flat, std::ref(failures));
    }
    for (int r = 0; r < b->size(); ++r) {
      threads.emplace_back(run_thread_rank, b, r, tree, std::ref(failures));
    }
    for (std::thread& t : threads) t.join();
    const bool clean =
        leftover_segments(a->job_id()).empty() && leftover_segments(b->job_id()).empty();
    if (!clean) std::fprintf(stderr, "segments left in /dev/shm\n");
    return failures.load() == 0 && clean ? 0 : 1;
  });
  CHECK(result == 0);
}

}  // namespace shmcoll::test
