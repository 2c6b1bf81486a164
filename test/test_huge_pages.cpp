// Buffers that peers reach through cross-memory attach move onto huge pages on their second use
// (copy/huge_pages.hpp, Options::huge_pages): when, how often, which part, and that the
// contents and the collectives' results stay what they were.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "copy/huge_pages.hpp"
#include "support/buffers.hpp"
#include "support/ranks.hpp"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

namespace shmcoll::test {
namespace {

using copy::HugePageCollapser;
constexpr std::uint64_t kHuge = HugePageCollapser::kHugePageBytes;

// Anonymous memory of `bytes` whose start is `offset` bytes past a huge-page boundary, with at
// least one huge page of the same mapping before and after it (so that every huge page the
// buffer overlaps can be collapsed); unmapped at the end of the scope.
class Mapping {
 public:
  Mapping(std::uint64_t bytes, std::uint64_t offset) : length_(bytes + offset + 3 * kHuge) {
    void* p = mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    raw_ = static_cast<std::byte*>(p);
    // A first page without access keeps the kernel from merging this mapping with the one
    // before it, so that huge_page_bytes counts this mapping's pages alone.
    REQUIRE(mprotect(raw_, 4096, PROT_NONE) == 0);
    const auto at = ((reinterpret_cast<std::uintptr_t>(raw_) + kHuge - 1) & ~(kHuge - 1)) + kHuge;
    data_ = reinterpret_cast<std::byte*>(at) + offset;
  }
  ~Mapping() { munmap(raw_, length_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::byte* data() { return data_; }
  // The whole accessible mapping, around the buffer too.
  std::byte* raw() { return raw_ + 4096; }
  std::uint64_t length() const { return length_ - 4096; }

 private:
  std::uint64_t length_;
  std::byte* raw_ = nullptr;
  std::byte* data_ = nullptr;
};

// Bytes of [begin, end) that sit on huge pages, from /proc/self/smaps: the AnonHugePages of
// the mapping that holds `begin` (a collapse changes no mapping, so one covers the range).
std::uint64_t huge_page_bytes(const void* begin) {
  const auto at = reinterpret_cast<std::uintptr_t>(begin);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      std::istringstream fields(line.substr(14));
      std::uint64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

// Whether this kernel collapses anonymous memory on request here: one huge page of a fresh
// mapping, asked directly. Where it does not (before Linux 6.1, THP disabled for the process),
// the collapser's counts still hold but no page changes size.
bool kernel_collapses() {
  Mapping probe(kHuge, 0);
  std::memset(probe.data(), 1, kHuge);
  return madvise(probe.data(), kHuge, MADV_COLLAPSE) == 0 && huge_page_bytes(probe.data()) > 0;
}

// Whether the system puts all anonymous memory on huge pages where it can.
bool thp_always() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(setting, text);
  return text.find("[always]") != std::string::npos;
}

TEST_CASE("huge pages: a buffer below kMinBufferBytes is never collapsed") {
  Mapping m(kHuge, 4096);
  HugePageCollapser collapser;
  for (int use = 0; use < 3; ++use)
    collapser.note_use(m.data(), HugePageCollapser::kMinBufferBytes - 1);
  CHECK(collapser.collapses() == 0);
}

// The use on which a buffer of `bytes` whose huge pages add up to `pages` is first collapsed:
// the first whose bytes, with those before it, reach kAmortization times the pages' bytes.
std::uint64_t collapsing_use(std::uint64_t bytes, std::uint64_t pages) {
  const std::uint64_t due = HugePageCollapser::kAmortization * pages * kHuge;
  return std::max<std::uint64_t>(2, (due + bytes - 1) / bytes);
}

TEST_CASE("huge pages: collapsed once its uses moved kAmortization x its pages, contents kept") {
  const std::uint64_t bytes = 3 * kHuge + 12345;  // overlaps four huge pages, off the grid
  Mapping m(bytes, 4096 + 16);
  std::byte* buffer = m.data();
  // The whole mapping, so that the memory around the buffer in its edge pages is checked too.
  for (std::uint64_t i = 0; i < m.length(); ++i) m.raw()[i] = pattern(7, 0, i);
  HugePageCollapser collapser;
  const std::uint64_t due = collapsing_use(bytes, 4);
  REQUIRE(due == 6);  // 32 MiB of pages, 6.01 MiB a use
  for (std::uint64_t use = 1; use < due; ++use) collapser.note_use(buffer, bytes);
  CHECK(collapser.collapses() == 0);  // a buffer used fewer times costs nothing
  if (!thp_always()) CHECK(huge_page_bytes(buffer) == 0);
  collapser.note_use(buffer, bytes);
  CHECK(collapser.collapses() == 1);
  CHECK(collapser.refusals() == 0);
  bool same = true;
  for (std::uint64_t i = 0; i < m.length(); ++i) same = same && m.raw()[i] == pattern(7, 0, i);
  CHECK(same);
  // Every huge page the buffer overlaps, the partial ones at either end included.
  if (kernel_collapses() && !thp_always()) CHECK(huge_page_bytes(buffer) == 4 * kHuge);
  for (std::uint64_t use = 1; use < HugePageCollapser::kRecollapseUses; ++use)
    collapser.note_use(buffer, bytes);
  CHECK(collapser.collapses() == 1);
  collapser.note_use(buffer, bytes);  // kRecollapseUses after the first collapse
  CHECK(collapser.collapses() == 2);
}

TEST_CASE("huge pages: a buffer smaller than a huge page moves with the page around it") {
  const std::uint64_t bytes = 1 << 20;
  Mapping m(bytes, 300 * 1024);  // inside one huge page
  std::memset(m.data(), 3, bytes);
  HugePageCollapser collapser;
  const std::uint64_t due = collapsing_use(bytes, 1);
  REQUIRE(due == 8);
  for (std::uint64_t use = 1; use < due; ++use) collapser.note_use(m.data(), bytes);
  CHECK(collapser.collapses() == 0);
  collapser.note_use(m.data(), bytes);
  CHECK(collapser.collapses() == 1);
  if (kernel_collapses() && !thp_always()) CHECK(huge_page_bytes(m.data()) == kHuge);
  bool same = true;
  for (std::uint64_t i = 0; i < bytes; ++i) same = same && m.data()[i] == std::byte{3};
  CHECK(same);
}

TEST_CASE("huge pages: the least recently used of more buffers than it holds is forgotten") {
  // Nine buffers of one untouched mapping, each exactly one huge page; a collapse fills only
  // the buffer it collapses.
  constexpr int kBuffers = 9;
  Mapping m(kBuffers * 2 * kHuge, 0);
  auto buffer = [&](int i) { return m.data() + static_cast<std::uint64_t>(i) * 2 * kHuge; };
  const std::uint64_t due = collapsing_use(kHuge, 1);
  HugePageCollapser collapser;
  for (int i = 0; i < kBuffers; ++i) collapser.note_use(buffer(i), kHuge);  // 8 remembered
  collapser.note_use(buffer(0), kHuge);  // forgotten by the ninth: a first use again
  for (std::uint64_t use = 2; use < due; ++use) collapser.note_use(buffer(0), kHuge);
  CHECK(collapser.collapses() == 0);
  for (std::uint64_t use = 2; use <= due; ++use) collapser.note_use(buffer(2), kHuge);
  CHECK(collapser.collapses() == 1);  // buffer 2 was still remembered
  collapser.note_use(buffer(0), kHuge);
  CHECK(collapser.collapses() == 2);
}

TEST_CASE("huge pages: memory the kernel refuses is not asked again") {
  // Memory marked against huge pages: MADV_COLLAPSE fails with EINVAL (or, on a kernel without
  // it, for any memory).
  Mapping m(2 * kHuge, 0);
  REQUIRE(madvise(m.data(), 2 * kHuge, MADV_NOHUGEPAGE) == 0);
  HugePageCollapser collapser;
  const std::uint64_t uses = collapsing_use(2 * kHuge, 2) + HugePageCollapser::kRecollapseUses;
  for (std::uint64_t use = 0; use < uses; ++use) collapser.note_use(m.data(), 2 * kHuge);
  CHECK(collapser.collapses() == 1);
  CHECK(collapser.refusals() == 1);
}

// Marks the huge page under `data` against huge pages, so that a collapse leaves the buffer's
// head there on small ones (as the kernel does with a page that reaches outside a mapping);
// returns that page's address.
std::uintptr_t refuse_first_huge_page(const std::byte* data) {
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(data) & ~(kHuge - 1);
  REQUIRE(madvise(reinterpret_cast<void*>(first), kHuge, MADV_NOHUGEPAGE) == 0);
  return first;
}

TEST_CASE("huge pages: note_use tells which part of the buffer the collapse moved") {
  const std::uint64_t bytes = 3 * kHuge + 12345;
  Mapping m(bytes, 8192);
  const auto start = reinterpret_cast<std::uintptr_t>(m.data());
  const std::uintptr_t first_page = refuse_first_huge_page(m.data());
  std::memset(m.data(), 3, bytes);
  HugePageCollapser collapser;
  const std::uint64_t due = collapsing_use(bytes, 4);
  for (std::uint64_t use = 1; use < due; ++use)
    CHECK(collapser.note_use(m.data(), bytes).empty());  // not collapsed yet
  const copy::HugeRun run = collapser.note_use(m.data(), bytes);
  REQUIRE(collapser.collapses() == 1);
  if (kernel_collapses()) {
    CHECK(run.begin == first_page + kHuge);
    CHECK(run.end == start + bytes);  // the last page reaches beyond the buffer: clipped
    // Later uses report it too, and the offsets a rank publishes round inward to 4 KiB.
    CHECK(collapser.note_use(m.data(), bytes).begin == run.begin);
    const copy::HugeOffsets at = copy::unpack_offsets(copy::pack_offsets(run, m.data()));
    CHECK(at.begin == run.begin - start);
    CHECK(at.end == (bytes / 4096) * 4096);
  } else {
    CHECK(run.empty());
  }
  CHECK(copy::pack_offsets({}, m.data()) == 0);
  CHECK(copy::unpack_offsets(0).empty());
}

// A broadcast pair whose buffers' heads stay on small pages (those of `small_heads`): the pair
// splits the copy by the pages (coll/broadcast_split.hpp). With one such head, the root's part
// is the tail when the root is the rank with all huge pages, the head when it is the other;
// with both, where the team measured cross-memory attach at more than twice memcpy's cost,
// the root stages the common head. Every result is compared.
void broadcast_pair_with_small_heads(std::vector<int> small_heads) {
  constexpr std::uint64_t kBytes = 3 * kHuge + 4096;
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = 2, .deadline_s = 120},
      [&](RankContext& ctx) {
        Options o = test_options(64 * 1024, 4);
        o.team_cpus = 2;  // one CPU per rank: the cooperative single copy, whatever runs here
        Team team(ctx.bootstrap, o);
        const int me = ctx.rank;
        // Heads of 1.94 and 1.5 MiB.
        Mapping buffer(kBytes, me == 0 ? 64 * 1024 : 512 * 1024);
        if (std::count(small_heads.begin(), small_heads.end(), me) > 0)
          refuse_first_huge_page(buffer.data());
        for (std::uint64_t seq = 0; seq < 24; ++seq) {
          const int root = static_cast<int>(seq % 2);
          for (std::uint64_t i = 0; i < kBytes; ++i)
            buffer.data()[i] = me == root ? pattern(seq, root, i) : kUnwritten;
          team.bcast(buffer.data(), static_cast<Count>(kBytes), kByte, root);
          bool ok = true;
          for (std::uint64_t i = 0; i < kBytes; ++i)
            ok = ok && buffer.data()[i] == pattern(seq, root, i);
          ctx.check(ok, "every broadcast delivered the root's bytes");
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

TEST_CASE("huge pages: a broadcast pair splits by the pages of both buffers and its results are intact" *
          doctest::test_suite("processes")) {
  SUBCASE("one head on small pages") { broadcast_pair_with_small_heads({1}); }
  SUBCASE("both heads on small pages") { broadcast_pair_with_small_heads({0, 1}); }
}

// The same pair, both heads on small pages, with one rank SIGKILLed at a random moment of its
// broadcasts (staging, its copy, or a wait for the other's report): the survivor gets an error
// within 2 s of its last completed call, and nothing is left in /dev/shm.
TEST_CASE("huge pages: a broadcast pair whose rank dies mid-split fails cleanly") {
  constexpr std::uint64_t kBytes = 3 * kHuge + 4096;
  std::mt19937 rng(1125);
  for (int job_index = 0; job_index < 8; ++job_index) {
    const int victim = static_cast<int>(rng() % 2);
    const int kill_after_us = 20000 + static_cast<int>(rng() % 40000);
    std::string job;
    const launch::JobOutcome outcome = run_ranks(
        {.nranks = 2, .deadline_s = 60, .stop_on_failure = false},
        [&](RankContext& ctx) {
          Options o = test_options(64 * 1024, 4);
          o.team_cpus = 2;
          using Clock = std::chrono::steady_clock;
          try {
            Team team(ctx.bootstrap, o);
            Mapping buffer(kBytes, ctx.rank == 0 ? 64 * 1024 : 512 * 1024);
            refuse_first_huge_page(buffer.data());
            std::memset(buffer.data(), 1, kBytes);
            // Both ranks past formation: the kill falls among the broadcasts.
            team.barrier();
            if (ctx.rank == victim) {
              std::thread([kill_after_us] {
                std::this_thread::sleep_for(std::chrono::microseconds(kill_after_us));
                raise(SIGKILL);
              }).detach();
            }
            auto last_progress = Clock::now();
            try {
              for (int i = 0; i < 100000; ++i) {
                team.bcast(buffer.data(), static_cast<Count>(kBytes), kByte, i % 2);
                last_progress = Clock::now();
              }
              ctx.fail("every broadcast completed although rank %d was killed", victim);
            } catch (const Error& e) {
              const double stalled =
                  std::chrono::duration<double>(Clock::now() - last_progress).count();
              if (stalled > 2.0)
                ctx.fail("the error came %.2f s after the last progress: %s", stalled, e.what());
              if (e.status() != Status::kPeerFailed && e.status() != Status::kTimeout)
                ctx.fail("unexpected error kind '%s': %s", status_name(e.status()), e.what());
            }
          } catch (const Error& e) {
            ctx.fail("formation failed: %s", e.what());
          }
        },
        &job);
    CAPTURE(job_index);
    CAPTURE(victim);
    CAPTURE(kill_after_us);
    INFO(outcome.summary());
    CHECK_FALSE(outcome.timed_out);
    CHECK(outcome.ranks[static_cast<std::size_t>(victim)].signal == SIGKILL);
    CHECK(outcome.ranks[static_cast<std::size_t>(1 - victim)].succeeded());
    CHECK(leftover_segments(job).empty());
  }
}

// A team of 2 whose ranks call each collective four times on buffers they keep, with new
// contents each time. Every result is compared; where the kernel collapses memory, the buffers
// must have moved onto huge pages with Options::huge_pages, and not without it.
void collectives_on_kept_buffers(bool huge_pages) {
  constexpr std::uint64_t kBlock = 2 * kHuge + 4096;  // a whole huge page inside any such block
  std::string job;
  const launch::JobOutcome outcome = run_ranks(
      {.nranks = 2, .deadline_s = 120},
      [&](RankContext& ctx) {
        Options o = test_options(64 * 1024, 4);
        o.huge_pages = huge_pages;
        o.team_cpus = 2;  // one CPU per rank: the cooperative single copy, whatever runs here
        Team team(ctx.bootstrap, o);
        const int me = ctx.rank;
        // `vwhole` is rank 0's buffer of the v-forms, whose root exposes only its blocks.
        Mapping whole(2 * kBlock, 64), mine(kBlock, 64), vwhole(2 * kBlock, 64);
        const std::vector<Count> counts{static_cast<Count>(kBlock), static_cast<Count>(kBlock)};
        const std::vector<Count> displs{0, static_cast<Count>(kBlock)};
        // Rank 0's two blocks of pattern `seq` in `buffer` (other ranks: unwritten), and
        // whether they are all there; this rank's block of pattern `seq` in `mine`.
        auto fill_blocks = [&](Mapping& buffer, std::uint64_t seq) {
          for (std::uint64_t i = 0; i < 2 * kBlock; ++i)
            buffer.data()[i] =
                me == 0 ? pattern(seq, static_cast<int>(i / kBlock), i % kBlock) : kUnwritten;
        };
        auto blocks_hold = [&](Mapping& buffer, std::uint64_t seq) {
          bool ok = true;
          for (std::uint64_t i = 0; i < 2 * kBlock; ++i)
            ok = ok && buffer.data()[i] == pattern(seq, static_cast<int>(i / kBlock), i % kBlock);
          return ok;
        };
        auto mine_holds = [&](std::uint64_t seq, int owner) {
          bool ok = true;
          for (std::uint64_t i = 0; i < kBlock; ++i)
            ok = ok && mine.data()[i] == pattern(seq, owner, i);
          return ok;
        };
        auto fill_mine = [&](std::uint64_t seq) {
          for (std::uint64_t i = 0; i < kBlock; ++i) mine.data()[i] = pattern(seq, me, i);
        };
        for (std::uint64_t seq = 0; seq < 4; ++seq) {
          // Broadcast from rank (seq % 2), in `mine`.
          const int root = static_cast<int>(seq % 2);
          for (std::uint64_t i = 0; i < kBlock; ++i)
            mine.data()[i] = me == root ? pattern(seq, root, i) : kUnwritten;
          team.bcast(mine.data(), kBlock, kByte, root);
          ctx.check(mine_holds(seq, root), "broadcast delivered the root's bytes");
          // Scatter from rank 0's `whole` into each rank's `mine`, then gather them back.
          fill_blocks(whole, seq + 10);
          team.scatter(whole.data(), kBlock, kByte, mine.data(), kBlock, kByte, 0);
          ctx.check(mine_holds(seq + 10, me), "scatter delivered this rank's block");
          fill_mine(seq + 20);
          if (me == 0) std::memset(whole.data(), static_cast<int>(kUnwritten), 2 * kBlock);
          team.gather(mine.data(), kBlock, kByte, whole.data(), kBlock, kByte, 0);
          if (me == 0) ctx.check(blocks_hold(whole, seq + 20), "gather collected every block");
          // The same through scatterv and gatherv, whose root is rank 0 with `vwhole`.
          fill_blocks(vwhole, seq + 30);
          team.scatterv(vwhole.data(), counts, displs, kByte, mine.data(), kBlock, kByte, 0);
          ctx.check(mine_holds(seq + 30, me), "scatterv delivered this rank's block");
          fill_mine(seq + 40);
          if (me == 0) std::memset(vwhole.data(), static_cast<int>(kUnwritten), 2 * kBlock);
          team.gatherv(mine.data(), kBlock, kByte, vwhole.data(), counts, displs, kByte, 0);
          if (me == 0) ctx.check(blocks_hold(vwhole, seq + 40), "gatherv collected every block");
        }
        // Rank 1 exposes `mine` in every call (20 uses of 4 MiB), rank 0 `whole` as the root of
        // scatter and gather (8 uses of 8 MiB) and in `vwhole` rank 1's block as the v-forms'
        // (8 uses of 4 MiB): each enough to be collapsed (HugePageCollapser::kAmortization).
        // Where THP is "always", anonymous memory may sit on huge pages without any collapse.
        Mapping& exposed = me == 0 ? whole : mine;
        if (huge_pages && team.single_copy_available() && kernel_collapses()) {
          ctx.check(huge_page_bytes(exposed.data()) > 0, "the kept buffer is on huge pages");
          if (me == 0)
            ctx.check(huge_page_bytes(vwhole.data() + kBlock) > 0,
                      "the v-form root's buffer is on huge pages");
        }
        if (!huge_pages && !thp_always())
          ctx.check(huge_page_bytes(exposed.data()) == 0, "the kept buffer stayed on 4 KiB pages");
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

TEST_CASE("huge pages: collectives on kept buffers move them onto huge pages and keep their results" *
          doctest::test_suite("processes")) {
  SUBCASE("on") { collectives_on_kept_buffers(true); }
  SUBCASE("off") { collectives_on_kept_buffers(false); }
}

}  // namespace
}  // namespace shmcoll::test
