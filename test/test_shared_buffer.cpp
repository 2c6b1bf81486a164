// Team::allocate_shared (shmcoll/shared_buffer.hpp): every rank maps every part, nothing stays
// in /dev/shm, and collectives whose buffers lie in such memory move their large blocks with
// memcpy -- shown by forbidding cross-memory attach after the team formed: they still work,
// while the same call on private buffers fails. Team::adopt_shared: the same for memory the
// ranks map themselves, and an error on every rank when they describe different memory.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "base/fault_points.hpp"
#include "support/buffers.hpp"
#include "support/ranks.hpp"
#include "support/seccomp.hpp"

namespace shmcoll::test {
namespace {

bool matches(const std::byte* data, std::uint64_t bytes, std::uint64_t seq, int owner) {
  for (std::uint64_t i = 0; i < bytes; ++i) {
    if (data[i] != pattern(seq, owner, i)) return false;
  }
  return true;
}

void fill(std::byte* data, std::uint64_t bytes, std::uint64_t seq, int owner) {
  for (std::uint64_t i = 0; i < bytes; ++i) data[i] = pattern(seq, owner, i);
}

// The five collectives with root `root`, every block `b` bytes, send and receive areas in
// `mem` (n * b bytes each); checks every rank's result.
void run_all_five(Team& team, RankContext& ctx, std::byte* send, std::byte* recv, std::uint64_t b,
                  int root, std::uint64_t& seq) {
  const int n = team.size();
  const int me = team.rank();
  const auto count = static_cast<Count>(b);
  std::vector<Count> counts(static_cast<std::size_t>(n), count), displs;
  for (int r = 0; r < n; ++r) displs.push_back(static_cast<Count>(b) * (n - 1 - r));  // reversed

  ++seq;  // bcast
  if (me == root) fill(send, b, seq, root);
  team.bcast(send, count, kByte, root);
  ctx.check(matches(send, b, seq, root), "bcast: wrong bytes");

  ++seq;  // scatter: block r of the root's buffer goes to rank r
  if (me == root)
    for (int r = 0; r < n; ++r) fill(send + b * static_cast<std::uint64_t>(r), b, seq, r);
  team.scatter(send, count, kByte, recv, count, kByte, root);
  ctx.check(matches(recv, b, seq, me), "scatter: wrong bytes");

  ++seq;  // scatterv, blocks in reverse order
  if (me == root)
    for (int r = 0; r < n; ++r) fill(send + static_cast<std::uint64_t>(displs[r]), b, seq, r);
  team.scatterv(send, counts, displs, kByte, recv, count, kByte, root);
  ctx.check(matches(recv, b, seq, me), "scatterv: wrong bytes");

  ++seq;  // gather
  fill(send, b, seq, me);
  team.gather(send, count, kByte, recv, count, kByte, root);
  if (me == root)
    for (int r = 0; r < n; ++r)
      ctx.check(matches(recv + b * static_cast<std::uint64_t>(r), b, seq, r), "gather: wrong");

  ++seq;  // gatherv, blocks in reverse order
  fill(send, b, seq, me);
  team.gatherv(send, count, kByte, recv, counts, displs, kByte, root);
  if (me == root)
    for (int r = 0; r < n; ++r)
      ctx.check(matches(recv + static_cast<std::uint64_t>(displs[r]), b, seq, r), "gatherv: wrong");
}

// What this process's collectives did, counted at their fault points (base/fault_points.hpp):
// chunks through the slots, and single-copy transfers (memcpy between shared buffers included).
std::atomic<int> chunks_published{0};
std::atomic<int> chunks_read{0};
std::atomic<int> single_copies{0};

void count_point(FaultPoint point) {
  if (point == FaultPoint::kChunkPublished) chunks_published.fetch_add(1);
  if (point == FaultPoint::kChunkRead) chunks_read.fetch_add(1);
  if (point == FaultPoint::kSingleCopy) single_copies.fetch_add(1);
}

void reset_counts() {
  chunks_published = 0;
  chunks_read = 0;
  single_copies = 0;
}

// Scatterv with its blocks in reverse order, every buffer in `send` and `recv` (in place at the
// root when `in_place`), checking the bytes.
void run_scatterv(Team& team, RankContext& ctx, std::byte* send, std::byte* recv, std::uint64_t b,
                  int root, bool in_place, std::uint64_t& seq) {
  const int n = team.size();
  const int me = team.rank();
  const auto count = static_cast<Count>(b);
  std::vector<Count> counts(static_cast<std::size_t>(n), count), displs;
  for (int r = 0; r < n; ++r) displs.push_back(count * (n - 1 - r));
  const auto at = [&](int r) { return send + static_cast<std::uint64_t>(displs[r]); };
  ++seq;
  if (me == root)
    for (int r = 0; r < n; ++r) fill(at(r), b, seq, r);
  if (me == root && in_place) {
    team.scatterv(send, counts, displs, kByte, shmcoll::in_place, root);
    ctx.check(matches(at(me), b, seq, me), "scatterv in place: root's block changed");
  } else {
    team.scatterv(send, counts, displs, kByte, recv, count, kByte, root);
    ctx.check(matches(recv, b, seq, me), "scatterv: wrong bytes");
  }
}

// Gatherv with its blocks in reverse order, every buffer in `send` and `recv` (in place at the
// root when `in_place`), checking the bytes.
void run_gatherv(Team& team, RankContext& ctx, std::byte* send, std::byte* recv, std::uint64_t b,
                 int root, bool in_place, std::uint64_t& seq) {
  const int n = team.size();
  const int me = team.rank();
  const auto count = static_cast<Count>(b);
  std::vector<Count> counts(static_cast<std::size_t>(n), count), displs;
  for (int r = 0; r < n; ++r) displs.push_back(count * (n - 1 - r));
  const auto at = [&](int r) { return recv + static_cast<std::uint64_t>(displs[r]); };
  ++seq;
  if (me == root && in_place) {
    fill(at(me), b, seq, me);
    team.gatherv(shmcoll::in_place, recv, counts, displs, kByte, root);
  } else {
    fill(send, b, seq, me);
    team.gatherv(send, count, kByte, recv, counts, displs, kByte, root);
  }
  if (me == root)
    for (int r = 0; r < n; ++r) ctx.check(matches(at(r), b, seq, r), "gatherv: wrong bytes");
}

// Whether this rank's part of the last gatherv went straight between the shared buffers
// (`straight`) or through the slots: a sender writes its block itself or streams it; the root
// reads no stream, or some (its table of places goes through its slots either way).
void check_gatherv_path(RankContext& ctx, int root, bool straight) {
  if (ctx.rank == root) {
    ctx.check(straight ? chunks_read == 0 : chunks_read > 0, "gatherv: the root's path");
  } else {
    ctx.check(straight ? single_copies > 0 && chunks_published == 0
                       : single_copies == 0 && chunks_published > 0,
              "gatherv: the sender's path");
  }
}

// Broadcast, scatter, scatterv (with `with_scatterv`) and gather with every buffer in `send` and
// `recv` (in place at the root when `in_place`), checking the bytes.
void run_shared_copies(Team& team, RankContext& ctx, std::byte* send, std::byte* recv,
                       std::uint64_t b, int root, bool in_place, bool with_scatterv,
                       std::uint64_t& seq) {
  const int n = team.size();
  const int me = team.rank();
  const auto count = static_cast<Count>(b);
  const auto block = [&](std::byte* base, int r) {
    return base + b * static_cast<std::uint64_t>(r);
  };

  ++seq;
  if (me == root) fill(send, b, seq, root);
  team.bcast(send, count, kByte, root);
  ctx.check(matches(send, b, seq, root), "bcast: wrong bytes");

  ++seq;
  if (me == root)
    for (int r = 0; r < n; ++r) fill(block(send, r), b, seq, r);
  if (me == root && in_place) {
    team.scatter(send, count, kByte, shmcoll::in_place, root);
    ctx.check(matches(block(send, me), b, seq, me), "scatter in place: root's block changed");
  } else {
    team.scatter(send, count, kByte, recv, count, kByte, root);
    ctx.check(matches(recv, b, seq, me), "scatter: wrong bytes");
  }

  if (with_scatterv) run_scatterv(team, ctx, send, recv, b, root, in_place, seq);

  ++seq;
  if (me == root && in_place) {
    fill(block(recv, me), b, seq, me);
    team.gather(shmcoll::in_place, recv, count, kByte, root);
  } else {
    fill(send, b, seq, me);
    team.gather(send, count, kByte, recv, count, kByte, root);
  }
  if (me == root)
    for (int r = 0; r < n; ++r) ctx.check(matches(block(recv, r), b, seq, r), "gather: wrong");
}

}  // namespace

// Team shapes in which the straight copy between shared buffers takes every block from
// `least` bytes on (TeamImpl::shared_copy_for): 2 ranks with a CPU each, from
// shared_copy_min_bytes; 3 ranks counted on one CPU (oversubscribed), where the single copy's
// rules apply, which take scatters from 16 KiB, gathers from 32 KiB and broadcasts only from
// 1 MiB and past the slot ring (`least` is then the smallest of them).
struct SharedCopyShape {
  int nranks;
  int team_cpus;
  std::uint64_t least;
  std::uint64_t block;  // a block size every collective moves straight
};
const SharedCopyShape kSharedCopyShapes[] = {{2, 64, 4096, 100'000}, {3, 1, 16384, 1'100'000}};

TEST_CASE(
    "without cross-memory attach, broadcast, scatter(v) and gather(v) between shared buffers "
    "copy straight between them") {
  // A container's seccomp profile forbids cross-memory attach, so the team forms without the
  // single copy: blocks from the threshold on still move once, with memcpy between the
  // buffers, and never through the slots; smaller ones take the slots.
  for (const SharedCopyShape& shape : kSharedCopyShapes) {
    std::string job;
    auto outcome = run_ranks(
        {.nranks = shape.nranks, .deadline_s = 60},
        [&](RankContext& ctx) {
          if (!forbid_cross_memory_attach()) {
            ctx.fail("seccomp filter refused");
            return;
          }
          Options o = test_options(64 * 1024, 4);
          o.team_cpus = shape.team_cpus;
          Team team(ctx.bootstrap, o);
          ctx.check(!team.single_copy_available(), "no single copy without cross-memory attach");
          const std::uint64_t largest = std::max<std::uint64_t>(shape.block, 700'000);
          const std::uint64_t area = largest * static_cast<std::uint64_t>(team.size());
          SharedBuffer mem = team.allocate_shared(2 * area);
          std::byte* send = mem.local().data();
          std::byte* recv = send + area;
          fault_hook.store(count_point, std::memory_order_relaxed);
          std::uint64_t seq = 0;
          const std::uint64_t sizes[] = {shape.nranks == 2 ? shape.least : shape.block, shape.block,
                                         largest};
          for (const std::uint64_t b : sizes) {
            for (int root = 0; root < team.size(); ++root) {
              for (const bool in_place : {false, true}) {
                reset_counts();
                run_shared_copies(team, ctx, send, recv, b, root, in_place, true, seq);
                ctx.check(chunks_published == 0 && chunks_read == 0, "no chunk through the slots");
                // The root of an oversubscribed team leaves the copies to the others.
                ctx.check(team.rank() == root || single_copies > 0,
                          "the blocks moved with the single copy's transfers");
                reset_counts();
                run_gatherv(team, ctx, send, recv, b, root, in_place, seq);
                check_gatherv_path(ctx, root, true);
              }
            }
          }
          // Below the threshold the same calls take the slots.
          reset_counts();
          run_shared_copies(team, ctx, send, recv, shape.least - 1, 0, false, true, seq);
          ctx.check(single_copies == 0, "a block below the threshold moves through the slots");
          ctx.check(chunks_published + chunks_read > 0, "... which this rank used");
          reset_counts();
          run_gatherv(team, ctx, send, recv, shape.least - 1, 0, false, seq);
          check_gatherv_path(ctx, 0, false);
          fault_hook.store(nullptr, std::memory_order_relaxed);
        },
        &job);
    INFO(shape.nranks << " ranks: " << outcome.summary());
    CHECK(outcome.succeeded());
    CHECK(leftover_segments(job).empty());
  }
}

TEST_CASE("non-blocking broadcast, scatter and gather between shared buffers, several at once") {
  // Each request decides its path when the engine first advances it; three outstanding at
  // once, each with its own bytes of the allocation.
  for (const SharedCopyShape& shape : kSharedCopyShapes) {
    auto outcome = run_ranks({.nranks = shape.nranks, .deadline_s = 60}, [&](RankContext& ctx) {
      if (!forbid_cross_memory_attach()) {
        ctx.fail("seccomp filter refused");
        return;
      }
      Options o = test_options(64 * 1024, 4);
      o.team_cpus = shape.team_cpus;
      Team team(ctx.bootstrap, o);
      const int n = team.size();
      const std::uint64_t b = shape.block;
      const std::uint64_t area = b * static_cast<std::uint64_t>(n);
      SharedBuffer mem = team.allocate_shared(4 * area);
      std::byte* bcast_buf = mem.local().data();
      std::byte* scatter_send = bcast_buf + area;
      std::byte* scatter_recv = scatter_send + area;
      std::byte* gather_recv = scatter_recv + area;
      const int root = n - 1;
      const auto count = static_cast<Count>(b);
      fault_hook.store(count_point, std::memory_order_relaxed);
      for (std::uint64_t seq = 500; seq < 503; ++seq) {
        reset_counts();
        if (ctx.rank == root) {
          fill(bcast_buf, b, seq, root);
          for (int r = 0; r < n; ++r)
            fill(scatter_send + b * static_cast<std::uint64_t>(r), b, seq + 1, r);
        }
        // Every rank sends its block from its own slice of gather_recv (the root in place),
        // so that no two of the outstanding requests touch the same bytes.
        fill(gather_recv + b * static_cast<std::uint64_t>(ctx.rank), b, seq + 2, ctx.rank);
        std::vector<Request> requests;
        requests.push_back(team.ibcast(bcast_buf, count, kByte, root));
        requests.push_back(
            team.iscatter(scatter_send, count, kByte, scatter_recv, count, kByte, root));
        if (ctx.rank == root) {
          requests.push_back(team.igather(shmcoll::in_place, gather_recv, count, kByte, root));
        } else {
          requests.push_back(team.igather(gather_recv + b * static_cast<std::uint64_t>(ctx.rank),
                                          count, kByte, nullptr, 0, kByte, root));
        }
        Request::wait_all(requests);
        ctx.check(matches(bcast_buf, b, seq, root), "ibcast: wrong bytes");
        ctx.check(matches(scatter_recv, b, seq + 1, ctx.rank), "iscatter: wrong bytes");
        if (ctx.rank == root) {
          for (int r = 0; r < n; ++r)
            ctx.check(matches(gather_recv + b * static_cast<std::uint64_t>(r), b, seq + 2, r),
                      "igather: wrong bytes");
        }
        ctx.check(chunks_published == 0 && chunks_read == 0, "no chunk through the slots");
      }
      fault_hook.store(nullptr, std::memory_order_relaxed);
    });
    INFO(shape.nranks << " ranks: " << outcome.summary());
    CHECK(outcome.succeeded());
  }
}

TEST_CASE("a rank whose buffer is private, or in another allocation, keeps the slots for all") {
  // The root's buffer is shared, but the last rank's lies in private memory (first) or in a
  // second allocation (then): every rank must take the slots, since that rank does not map the
  // root's allocation with certainty, nor the root its buffer. Without cross-memory attach a
  // wrong choice would fail or hang.
  for (const SharedCopyShape& shape : kSharedCopyShapes) {
    for (const bool second_allocation : {false, true}) {
      auto outcome = run_ranks({.nranks = shape.nranks, .deadline_s = 60}, [&](RankContext& ctx) {
        if (!forbid_cross_memory_attach()) {
          ctx.fail("seccomp filter refused");
          return;
        }
        Options o = test_options(64 * 1024, 4);
        o.team_cpus = shape.team_cpus;
        Team team(ctx.bootstrap, o);
        const std::uint64_t b = shape.block;
        const std::uint64_t area = b * static_cast<std::uint64_t>(team.size());
        SharedBuffer first = team.allocate_shared(2 * area);
        SharedBuffer second = team.allocate_shared(2 * area);
        std::vector<std::byte> priv(2 * area);
        std::byte* base = first.local().data();
        if (ctx.rank == ctx.size - 1)
          base = second_allocation ? second.local().data() : priv.data();
        fault_hook.store(count_point, std::memory_order_relaxed);
        std::uint64_t seq = 300;
        for (int root = 0; root < team.size(); ++root) {
          reset_counts();
          run_shared_copies(team, ctx, base, base + area, b, root, false, false, seq);
          ctx.check(single_copies == 0, "no straight copy");
          ctx.check(chunks_published + chunks_read > 0, "the slots");
          // Scatterv chooses per receiver (the root's record says which way): a receiver
          // reads its block straight from the root's buffer where both lie in the first
          // allocation, from the stream otherwise.
          reset_counts();
          run_scatterv(team, ctx, base, base + area, b, root, false, seq);
          if (ctx.rank != root) {
            const int last = ctx.size - 1;
            const bool straight = ctx.rank != last && root != last;
            ctx.check(straight ? single_copies > 0 && chunks_read == 0
                               : single_copies == 0 && chunks_read > 0,
                      "scatterv: each receiver's own path");
          }
          // Gatherv, the same per sender.
          reset_counts();
          run_gatherv(team, ctx, base, base + area, b, root, false, seq);
          const int last = ctx.size - 1;
          if (ctx.rank != root) check_gatherv_path(ctx, root, ctx.rank != last && root != last);
        }
        fault_hook.store(nullptr, std::memory_order_relaxed);
      });
      INFO(shape.nranks << " ranks, second allocation " << second_allocation << ": "
                        << outcome.summary());
      CHECK(outcome.succeeded());
    }
  }
}

TEST_CASE("between shared buffers, a size mismatch is an error on every rank") {
  for (const SharedCopyShape& shape : kSharedCopyShapes) {
    auto outcome = run_ranks({.nranks = shape.nranks, .deadline_s = 60}, [&](RankContext& ctx) {
      if (!forbid_cross_memory_attach()) {
        ctx.fail("seccomp filter refused");
        return;
      }
      Options o = test_options(64 * 1024, 4);
      o.team_cpus = shape.team_cpus;
      Team team(ctx.bootstrap, o);
      SharedBuffer mem = team.allocate_shared(shape.block);
      // Rank 1 receives half of what the root sends.
      const Count count = static_cast<Count>(ctx.rank == 1 ? shape.block / 2 : shape.block);
      try {
        team.bcast(mem.local().data(), count, kByte, 0);
        ctx.fail("the mismatched broadcast returned");
      } catch (const InvalidArgument& e) {
        ctx.check(std::string(e.what()).find("mismatch") != std::string::npos, e.what());
      }
    });
    INFO(shape.nranks << " ranks: " << outcome.summary());
    CHECK(outcome.succeeded());
  }
}

TEST_CASE("allocate_shared: every rank maps every part, and nothing stays in /dev/shm") {
  for (int n : {1, 3, 5}) {
    std::string job;
    auto outcome = run_ranks(
        {.nranks = n},
        [&](RankContext& ctx) {
          Team team(ctx.bootstrap, test_options());
          // Different sizes per rank, one of them empty.
          const std::size_t mine =
              ctx.rank == 1 ? 0 : 1000 * static_cast<std::size_t>(ctx.rank + 1);
          SharedBuffer buf = team.allocate_shared(mine);
          ctx.check(buf.local().size() == mine, "the local part has the size asked for");
          fill(buf.local().data(), mine, 7, ctx.rank);
          team.barrier();
          for (int r = 0; r < n; ++r) {
            const std::size_t want = r == 1 ? 0 : 1000 * static_cast<std::size_t>(r + 1);
            ctx.check(buf.part(r).size() == want, "every part has its rank's size");
            ctx.check(matches(buf.part(r).data(), want, 7, r), "every part holds its rank's bytes");
          }
          ctx.check(leftover_segments(ctx.bootstrap.job_id()).empty(),
                    "the name is gone from /dev/shm while the memory is in use");
          team.barrier();
          SharedBuffer second = team.allocate_shared(64);  // a second one while the first lives
          ctx.check(second.local().data() != buf.local().data(), "a new allocation");
        },
        &job);
    INFO("n=" << n << ": " << outcome.summary());
    CHECK(outcome.succeeded());
    CHECK(leftover_segments(job).empty());
  }
}

TEST_CASE(
    "collectives over shared buffers copy with memcpy: they work without cross-memory "
    "attach") {
  std::string job;
  auto outcome = run_ranks(
      {.nranks = 3, .deadline_s = 60},
      [&](RankContext& ctx) {
        Options o = test_options(64 * 1024, 4);
        o.single_copy_min_bytes = 1;  // every block takes the single-copy path
        o.single_copy = SingleCopy::kAlways;
        Team team(ctx.bootstrap, o);
        if (!team.single_copy_available()) {
          ctx.fail("no single copy on this machine: %s", team.data_paths().c_str());
          return;
        }
        const std::uint64_t b = 700'000;  // more than one 512 KiB piece
        const std::uint64_t area = b * static_cast<std::uint64_t>(team.size());
        SharedBuffer mem = team.allocate_shared(2 * area);
        // From here on, a transfer through cross-memory attach fails with EPERM.
        if (!forbid_cross_memory_attach()) ctx.fail("seccomp filter refused");
        team.barrier();
        std::uint64_t seq = 0;
        for (int root = 0; root < team.size(); ++root)
          run_all_five(team, ctx, mem.local().data(), mem.local().data() + area, b, root, seq);
        // The same broadcast from private memory needs cross-memory attach, and fails.
        std::vector<std::byte> priv(b);
        try {
          team.bcast(priv.data(), static_cast<Count>(b), kByte, 0);
          ctx.fail("a private-buffer broadcast worked without cross-memory attach");
        } catch (const Error& e) {
          ctx.check(std::string(e.what()).find("cross-memory attach") != std::string::npos,
                    "the private broadcast fails for want of cross-memory attach");
        }
      },
      &job);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
  CHECK(leftover_segments(job).empty());
}

TEST_CASE("collectives with shared buffers on some ranks and private ones on others") {
  // Counted on more CPUs than ranks, the roots take shares of the blocks (not in a team that
  // is oversubscribed), which follow whether the root's buffer is shared (start_blocks).
  for (const int team_cpus : {0, 64}) {
    auto outcome = run_ranks({.nranks = 4, .deadline_s = 60}, [&](RankContext& ctx) {
      Options o = test_options(64 * 1024, 4);
      o.single_copy_min_bytes = 1;
      o.single_copy = SingleCopy::kAlways;
      o.team_cpus = team_cpus;
      Team team(ctx.bootstrap, o);
      const std::uint64_t b = 100'000;
      const std::uint64_t area = b * static_cast<std::uint64_t>(team.size());
      SharedBuffer mem = team.allocate_shared(ctx.rank % 2 == 0 ? 2 * area : 0);
      std::vector<std::byte> priv(ctx.rank % 2 == 0 ? 0 : 2 * area);
      std::byte* base = ctx.rank % 2 == 0 ? mem.local().data() : priv.data();
      std::uint64_t seq = 100;
      for (int root = 0; root < team.size(); ++root)
        run_all_five(team, ctx, base, base + area, b, root, seq);
    });
    INFO("team_cpus " << team_cpus << ": " << outcome.summary());
    CHECK(outcome.succeeded());
  }
}

TEST_CASE(
    "adopt_shared: memory the ranks map themselves, each at its own address, copies with "
    "memcpy") {
  const std::uint64_t b = 300'000;
  const int nranks = 3;
  const std::uint64_t area = b * nranks;
  const std::uint64_t part = 2 * area;
  // Made before the ranks fork: each maps it itself, as processes map an MPI shared window.
  const int fd = memfd_create("shmcoll-test-adopt", 0);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, static_cast<off_t>(part * nranks)) == 0);
  auto outcome = run_ranks({.nranks = nranks, .deadline_s = 60}, [&](RankContext& ctx) {
    Options o = test_options(64 * 1024, 4);
    o.single_copy_min_bytes = 1;
    o.single_copy = SingleCopy::kAlways;
    Team team(ctx.bootstrap, o);
    if (!team.single_copy_available()) {
      ctx.fail("no single copy on this machine: %s", team.data_paths().c_str());
      return;
    }
    // Each rank maps it at another offset of a reservation of its own, so that the ranks'
    // addresses differ (a plain mmap lands at the same address in each forked rank).
    const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    const std::uint64_t shift = page * 16 * static_cast<std::uint64_t>(ctx.rank);
    void* room = mmap(nullptr, part * nranks + page * 16 * nranks, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* at = room == MAP_FAILED ? MAP_FAILED
                                  : mmap(static_cast<std::byte*>(room) + shift, part * nranks,
                                         PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (at == MAP_FAILED) {
      ctx.fail("mmap failed");
      return;
    }
    auto* base = static_cast<std::byte*>(at);
    std::vector<std::span<std::byte>> parts;
    for (int r = 0; r < nranks; ++r)
      parts.emplace_back(base + part * static_cast<std::uint64_t>(r), part);
    SharedBuffer mem = team.adopt_shared({base, part * nranks}, parts);
    ctx.check(mem.local().data() == parts[static_cast<std::size_t>(ctx.rank)].data() &&
                  mem.part(2).size() == part,
              "the parts are where they were passed");
    if (!forbid_cross_memory_attach()) ctx.fail("seccomp filter refused");
    team.barrier();
    std::uint64_t seq = 200;
    for (int root = 0; root < team.size(); ++root)
      run_all_five(team, ctx, mem.local().data(), mem.local().data() + area, b, root, seq);
  });
  close(fd);
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

TEST_CASE("adopt_shared: ranks that describe different memory all get the error, and go on") {
  auto outcome = run_ranks({.nranks = 3, .deadline_s = 60}, [&](RankContext& ctx) {
    Team team(ctx.bootstrap, test_options(64 * 1024, 4));
    auto expect_error = [&](std::span<std::byte> mapped,
                            std::span<const std::span<std::byte>> parts, const std::string& text) {
      try {
        team.adopt_shared(mapped, parts);
        ctx.fail("adopt_shared accepted: %s", text.c_str());
      } catch (const InvalidArgument& e) {
        ctx.check(std::string(e.what()).find(text) != std::string::npos, text.c_str());
      }
    };
    // Rank 1 passes twice the bytes of the others.
    std::vector<std::byte> mine(ctx.rank == 1 ? 8192 : 4096);
    std::vector<std::span<std::byte>> parts(3, std::span<std::byte>(mine.data(), 1024));
    expect_error(mine, parts, "rank 1 maps 8192 bytes, rank 0 maps 4096");
    // Rank 2's part 0 lies at another offset.
    std::vector<std::byte> same(4096);
    std::vector<std::span<std::byte>> laid(3, std::span<std::byte>(same.data(), 1024));
    if (ctx.rank == 2) laid[0] = {same.data() + 64, 1024};
    expect_error(same, laid, "rank 2's parts lie elsewhere in its range than rank 0's");
    // Rank 0 names a part outside its range.
    std::vector<std::span<std::byte>> outside(3, std::span<std::byte>(same.data(), 1024));
    if (ctx.rank == 0) outside[1] = {same.data() + 4000, 1024};
    expect_error(same, outside, "rank 0 passed a part outside its mapped range");
    // Rank 1 passes no range at all (as the MPI plugin does to refuse a window).
    const std::vector<std::span<std::byte>> whole(3, std::span<std::byte>(same.data(), 1024));
    expect_error(ctx.rank == 1 ? std::span<std::byte>() : std::span<std::byte>(same), whole,
                 "rank 1 passed an empty mapped range");
    // The team goes on.
    std::uint64_t value = ctx.rank == 0 ? 42 : 0;
    team.bcast(&value, 1, kInt64, 0);
    ctx.check(value == 42, "a broadcast after the errors");
  });
  INFO(outcome.summary());
  CHECK(outcome.succeeded());
}

}  // namespace shmcoll::test
