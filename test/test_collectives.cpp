// The correctness matrix of the five collectives: team sizes {1,2,3,4,7,8,11,16} (oversubscribed
// on small machines), every root, in-place on and off, and counts around every boundary of the
// data path: zero, one, odd, the inline limit, a cache line, a slot +-1, several slots, more
// chunks than slots. Slots are 1 KiB here, so these sizes cross the same boundaries as
// megabyte messages do with the default slots.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/fault_points.hpp"
#include "support/collective_checks.hpp"

namespace shmcoll::test {
namespace {

constexpr int kTeamSizes[] = {1, 2, 3, 4, 7, 8, 11, 16};
const std::vector<std::uint64_t> kBytes = {
    0, 1, 7, 40, 41, 65, 1023, 1024, 1025, 3 * 1024 + 100, 9 * 1024 + 5};
// Units of the v-form layouts, in int32 elements: blocks of 0..3 units (+1 element). 74 units
// are 296 bytes, the most a scatterv record carries: blocks of 296 bytes travel in it, 300 not.
const std::vector<std::uint64_t> kUnits = {0, 1, 13, 74, 300, 900};

using Check = CheckCall;

void run_matrix(Check check, bool has_in_place, bool v_form, int n,
                const Options& options = test_options()) {
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = n},
      [&](RankContext& ctx) {
        Team team(ctx.bootstrap, options);
        if (options.single_copy_min_bytes == 1 && n > 1 && !team.single_copy_available()) {
          ctx.fail("the single-copy matrix runs without single copy: %s",
                   team.data_paths().c_str());
        }
        std::uint64_t seq = 0;
        for (int root = 0; root < n; ++root) {
          for (int in_place = 0; in_place <= (has_in_place ? 1 : 0); ++in_place) {
            const std::vector<std::uint64_t>& counts = v_form ? kUnits : kBytes;
            for (std::uint64_t c : counts) {
              CallSpec s;
              s.seq = ++seq;
              s.root = root;
              s.in_place = in_place == 1;
              s.misalign = seq % 3;
              // Bytes as int32 elements where they divide, else as bytes.
              s.type = (v_form || c % 4 == 0) ? kInt32 : kByte;
              s.count = v_form ? c : c / s.type.size;
              check(team, ctx, s);
            }
          }
        }
        if (getenv("TRACE_COLLECTIVE_TESTS"))
          fprintf(stderr, "rank %d of %d ran %llu calls\n", ctx.rank, n, (unsigned long long)seq);
      },
      &job);
  INFO("team size " << n << ": " << outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

}  // namespace

TEST_CASE("bcast: matrix over team sizes, roots and counts") {
  for (int n : kTeamSizes) run_matrix(check_bcast, false, false, n);
}
// The trees of synthetic machines: 2 packages x 2 NUMA; 4 NUMA nodes of 3 cores (11 ranks
// leave one short); 1 package x 8 L3; and this machine's, ranks unbound (one NUMA node: a
// one-level tree, which runs the flat code even when forced) -- with 8, 11 and 16 ranks, so
// that roots fall in every group. Each collective is forced onto the tree at every size,
// including those the registry would send flat.
const char* const kSyntheticTopologies[] = {"package:2 numa:2 core:4 pu:1", "numa:4 core:3 pu:1",
                                            "package:1 l3:8 core:2 pu:1", ""};
Options tree_options(const char* topology) {
  Options o = test_options();
  o.topology = topology;
  o.bcast_algorithm = o.scatter_algorithm = o.gather_algorithm = Algorithm::kTree;
  return o;
}
void run_tree_matrix(Check check, bool has_in_place, bool v_form) {
  for (const char* topology : kSyntheticTopologies) {
    for (int n : {8, 11, 16}) {
      CAPTURE(topology);
      run_matrix(check, has_in_place, v_form, n, tree_options(topology));
    }
  }
}
TEST_CASE("bcast: matrix down the topology trees of synthetic machines" *
          doctest::test_suite("processes")) {
  run_tree_matrix(check_bcast, false, false);
}
TEST_CASE("scatter: matrix down the topology trees of synthetic machines" *
          doctest::test_suite("processes")) {
  run_tree_matrix(check_scatter, true, false);
}
TEST_CASE("gather: matrix up the topology trees of synthetic machines" *
          doctest::test_suite("processes")) {
  run_tree_matrix(check_gather, true, false);
}
TEST_CASE("scatterv: matrix down the topology trees of synthetic machines" *
          doctest::test_suite("processes")) {
  run_tree_matrix(check_scatterv, true, true);
}
TEST_CASE("gatherv: matrix up the topology trees of synthetic machines" *
          doctest::test_suite("processes")) {
  run_tree_matrix(check_gatherv, true, true);
}

// The single-copy path (cross-memory attach) from the smallest block on, so that every count
// of the matrix takes it, including misaligned buffers and splits that leave odd tails; and
// in these oversubscribed teams too, where the registry sends broadcast through the slots.
Options single_copy_everywhere() {
  Options o = test_options();
  o.single_copy = SingleCopy::kAlways;
  o.single_copy_min_bytes = 1;
  return o;
}
TEST_CASE("single copy: scatterv and gatherv matrices") {
  for (int n : {2, 3, 4, 7, 16}) {
    CAPTURE(n);
    run_matrix(check_scatterv, true, true, n, single_copy_everywhere());
    run_matrix(check_gatherv, true, true, n, single_copy_everywhere());
  }
}
// The root's shares of the single copies (each block split between the root and its rank)
// with more than two ranks: this machine's teams of 3 and more are oversubscribed, where the
// root takes no share, so these count on more CPUs (SHMCOLL_TEAM_CPUS) than there are.
TEST_CASE("single copy: the root's shares in teams larger than two") {
  Options o = single_copy_everywhere();
  o.team_cpus = 64;
  for (int n : {3, 4, 7}) {
    CAPTURE(n);
    run_matrix(check_scatterv, true, true, n, o);
    run_matrix(check_gatherv, true, true, n, o);
    run_matrix(check_scatter, true, false, n, o);
    run_matrix(check_gather, true, false, n, o);
    run_matrix(check_bcast, false, false, n, o);
  }
}
TEST_CASE("single copy: bcast, scatter and gather matrices") {
  for (int n : {2, 3, 4, 7, 16}) {
    CAPTURE(n);
    run_matrix(check_bcast, false, false, n, single_copy_everywhere());
    run_matrix(check_scatter, true, false, n, single_copy_everywhere());
    run_matrix(check_gather, true, false, n, single_copy_everywhere());
  }
}
// Along the trees with single copy from the smallest block on. Scatter and gather: the root
// shares blocks with its children, deeper ranks copy theirs whole from or into the root's
// buffer, and completion fans in along the tree. Broadcast: deeper ranks read the message
// from their parent's buffer once the parent holds it. Scatterv and gatherv: every nonempty
// block is direct, its owner copying it from or into the root's buffer, at the offset the
// streams carry (scatterv) or the root's table gives (gatherv).
TEST_CASE("single copy: scatterv and gatherv matrices along the topology trees" *
          doctest::test_suite("processes")) {
  for (const char* topology : kSyntheticTopologies) {
    for (int n : {8, 11, 16}) {
      CAPTURE(topology);
      Options o = tree_options(topology);
      o.single_copy = SingleCopy::kAlways;  // also where the ranks have a CPU each
      o.single_copy_min_bytes = 1;
      run_matrix(check_scatterv, true, true, n, o);
      run_matrix(check_gatherv, true, true, n, o);
    }
  }
}
TEST_CASE("single copy: bcast/scatter/gather matrices along the topology trees" *
          doctest::test_suite("processes")) {
  for (const char* topology : kSyntheticTopologies) {
    for (int n : {8, 11, 16}) {
      CAPTURE(topology);
      Options o = tree_options(topology);
      o.single_copy = SingleCopy::kAlways;
      o.single_copy_min_bytes = 1;
      run_matrix(check_bcast, false, false, n, o);
      run_matrix(check_scatter, true, false, n, o);
      run_matrix(check_gather, true, false, n, o);
    }
  }
}

TEST_CASE("scatter: matrix over team sizes, roots, in-place and counts") {
  for (int n : kTeamSizes) run_matrix(check_scatter, true, false, n);
}
TEST_CASE("gather: matrix over team sizes, roots, in-place and counts") {
  for (int n : kTeamSizes) run_matrix(check_gather, true, false, n);
}
TEST_CASE("scatterv: matrix with zero, uneven, gapped non-monotonic blocks") {
  for (int n : kTeamSizes) run_matrix(check_scatterv, true, true, n);
}
TEST_CASE("scatterv: matrix under deferred checks") {
  // A root whose blocks all fit in records and a receiver whose block fits take
  // InlineScattervOp (everywhere with units 0 and 1, next to ScattervOp in one call with 13:
  // blocks of one element beside larger ones), under full checks in the matrix above and
  // under deferred ones here, where ranks do not wait for the root's verdict.
  Options deferred = test_options();
  deferred.checks = CheckLevel::kDeferred;
  for (int n : {2, 3, 4, 7, 8, 11}) run_matrix(check_scatterv, true, true, n, deferred);
}
TEST_CASE("gatherv: matrix with zero, uneven, gapped non-monotonic blocks") {
  for (int n : kTeamSizes) run_matrix(check_gatherv, true, true, n);
}

// Under full checks the v-forms' other ranks must not wait for the root to leave where the
// root published what their sizes must be (lib/coll/published_sizes.hpp): one size, or, with
// sizes that differ, their fingerprint. The root stops after its data, before its own checks
// and its departure (the kDataMoved fault point), until every other rank has returned from the
// same call; a rank that waited for the root's departure would never return, and the root
// gives up after 5 s and fails (before the others time out).
namespace {
std::atomic<int>* g_returned = nullptr;  // in memory all the job's ranks share
int g_others = 0;
bool g_armed = false;
bool g_gave_up = false;

void hold_root_until_others_returned(FaultPoint point) {
  if (point != FaultPoint::kDataMoved || !g_armed) return;
  g_armed = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (g_returned->load() < g_others) {
    if (std::chrono::steady_clock::now() > give_up) {
      g_gave_up = true;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// `sizes` (bytes per rank): the root's counts; each rank passes its own.
void others_return_before_root_leaves(const char* kind, const std::vector<std::uint64_t>& sizes) {
  constexpr int kRanks = 4;
  constexpr int kRoot = 1;
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  g_returned = new (page) std::atomic<int>(0);
  const bool gather = std::string(kind) == "gatherv";
  const launch::JobOutcome outcome = run_ranks({.nranks = kRanks}, [&](RankContext& ctx) {
    Team team(ctx.bootstrap, test_options());
    std::vector<Count> counts(sizes.begin(), sizes.end()), displs(kRanks);
    for (int r = 1; r < kRanks; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    const Count total = displs[kRanks - 1] + counts[kRanks - 1];
    const Count mine = counts[static_cast<std::size_t>(ctx.rank)];
    std::vector<std::byte> whole(static_cast<std::size_t>(total)),
        own(static_cast<std::size_t>(mine));
    // One call first, so that the one under test finds the team formed on every rank.
    team.barrier();
    if (ctx.rank == kRoot) {
      g_others = kRanks - 1;
      g_armed = true;
      fault_hook.store(&hold_root_until_others_returned);
    }
    if (gather) {
      team.gatherv(own.data(), mine, kByte, whole.data(), counts, displs, kByte, kRoot);
    } else {
      team.scatterv(whole.data(), counts, displs, kByte, own.data(), mine, kByte, kRoot);
    }
    if (ctx.rank == kRoot) {
      fault_hook.store(nullptr);
      if (g_gave_up) ctx.fail("%s: the root waited 5 s for the others to return", kind);
    } else {
      g_returned->fetch_add(1);
    }
  });
  munmap(page, 4096);
  INFO(kind << ": " << outcome.summary());
  CHECK(outcome.succeeded());
}
}  // namespace

TEST_CASE("v-forms under full checks: the others check their sizes without the root's verdict") {
  // Rank 1 is the root; its own size does not count.
  others_return_before_root_leaves("gatherv", {8, 0, 8, 8});     // one size
  others_return_before_root_leaves("gatherv", {8, 0, 16, 24});   // a fingerprint
  others_return_before_root_leaves("scatterv", {8, 0, 16, 24});  // in the records
  // Blocks past a record's inline bytes go through the root's stream (ScattervOp).
  others_return_before_root_leaves("scatterv", {400, 0, 300, 500});
}

}  // namespace shmcoll::test
