#include "support/collective_checks.hpp"

#include <algorithm>
#include <numeric>

#include "support/buffers.hpp"

namespace shmcoll::test {
namespace {

void fill(std::byte* p, std::uint64_t bytes, std::uint64_t seq, int owner) {
  for (std::uint64_t i = 0; i < bytes; ++i) p[i] = pattern(seq, owner, i);
}

// Records one failure for the first wrong byte of a block.
void expect_block(RankContext& ctx, const char* what, const std::byte* p, std::uint64_t bytes,
                  std::uint64_t seq, int owner) {
  for (std::uint64_t i = 0; i < bytes; ++i) {
    if (p[i] != pattern(seq, owner, i)) {
      ctx.fail("%s: byte %llu of rank %d's block is %d, expected %d (seq %llu, %llu bytes)", what,
               static_cast<unsigned long long>(i), owner, static_cast<int>(p[i]),
               static_cast<int>(pattern(seq, owner, i)), static_cast<unsigned long long>(seq),
               static_cast<unsigned long long>(bytes));
      return;
    }
  }
}

void expect_unwritten(RankContext& ctx, const char* what, const std::byte* p, std::uint64_t bytes) {
  for (std::uint64_t i = 0; i < bytes; ++i) {
    if (p[i] != kUnwritten) {
      ctx.fail("%s: byte %llu outside every block was written", what,
               static_cast<unsigned long long>(i));
      return;
    }
  }
}

// Element counts of the layouts are never negative; clamping says so to the compiler.
std::size_t bytes_of(Count count, std::size_t elem) {
  return static_cast<std::size_t>(std::max<Count>(count, 0)) * elem;
}

void expect_guards(RankContext& ctx, const char* what, const GuardedBuffer& b) {
  if (!b.guards_intact()) ctx.fail("%s: guard bytes around the buffer were overwritten", what);
}

}  // namespace

VLayout v_layout(int size, std::uint64_t seq, std::uint64_t unit) {
  VLayout l;
  l.counts.resize(static_cast<std::size_t>(size));
  l.displs.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    // 0, 1, 2 or 3 units; a zero count for some ranks in every layout of 3 or more ranks.
    l.counts[static_cast<std::size_t>(r)] = static_cast<Count>(
        ((static_cast<std::uint64_t>(r) * 7 + seq) % 4) * unit + (r % 3 == 1 ? 1 : 0));
  }
  std::vector<int> order(static_cast<std::size_t>(size));
  std::iota(order.begin(), order.end(), 0);
  if (seq % 2 == 1) {
    std::reverse(order.begin(), order.end());
  } else {
    std::stable_partition(order.begin(), order.end(), [](int r) { return r % 2 == 1; });
  }
  Count at = 2;  // a gap before the first block too
  for (int r : order) {
    l.displs[static_cast<std::size_t>(r)] = at;
    at += l.counts[static_cast<std::size_t>(r)] + 3;  // gap of 3 elements after each block
  }
  l.extent = at;
  return l;
}

void check_bcast(Team& team, RankContext& ctx, const CallSpec& s) {
  const std::uint64_t bytes = s.count * s.type.size;
  GuardedBuffer buf(bytes, s.misalign);
  if (team.rank() == s.root) fill(buf.data(), bytes, s.seq, s.root);
  team.bcast(buf.data(), static_cast<Count>(s.count), s.type, s.root);
  expect_block(ctx, "bcast", buf.data(), bytes, s.seq, s.root);
  expect_guards(ctx, "bcast", buf);
}

void check_scatter(Team& team, RankContext& ctx, const CallSpec& s) {
  const int n = team.size(), me = team.rank();
  const std::uint64_t b = s.count * s.type.size;
  const auto count = static_cast<Count>(s.count);
  if (me == s.root) {
    GuardedBuffer send(b * static_cast<std::uint64_t>(n), s.misalign);
    for (int r = 0; r < n; ++r) fill(send.data() + r * b, b, s.seq, r);
    GuardedBuffer recv(b, s.misalign);
    if (s.in_place) {
      team.scatter(send.data(), count, s.type, in_place, s.root);
    } else {
      team.scatter(send.data(), count, s.type, recv.data(), count, s.type, s.root);
      expect_block(ctx, "scatter root recv", recv.data(), b, s.seq, me);
    }
    for (int r = 0; r < n; ++r)
      expect_block(ctx, "scatter root send (must stay)", send.data() + r * b, b, s.seq, r);
    expect_guards(ctx, "scatter root send", send);
    expect_guards(ctx, "scatter root recv", recv);
  } else {
    GuardedBuffer recv(b, s.misalign);
    // Root-only arguments are ignored here: pass garbage.
    team.scatter(nullptr, -1, kByte, recv.data(), count, s.type, s.root);
    expect_block(ctx, "scatter recv", recv.data(), b, s.seq, me);
    expect_guards(ctx, "scatter recv", recv);
  }
}

void check_gather(Team& team, RankContext& ctx, const CallSpec& s) {
  const int n = team.size(), me = team.rank();
  const std::uint64_t b = s.count * s.type.size;
  const auto count = static_cast<Count>(s.count);
  GuardedBuffer send(b, s.misalign);
  fill(send.data(), b, s.seq, me);
  if (me == s.root) {
    GuardedBuffer recv(b * static_cast<std::uint64_t>(n), s.misalign);
    if (s.in_place) {
      fill(recv.data() + me * b, b, s.seq, me);
      team.gather(in_place, recv.data(), count, s.type, s.root);
    } else {
      team.gather(send.data(), count, s.type, recv.data(), count, s.type, s.root);
    }
    for (int r = 0; r < n; ++r)
      expect_block(ctx, "gather root recv", recv.data() + r * b, b, s.seq, r);
    expect_guards(ctx, "gather root recv", recv);
  } else {
    team.gather(send.data(), count, s.type, nullptr, -1, kByte, s.root);
  }
  expect_block(ctx, "gather send (must stay)", send.data(), b, s.seq, me);
  expect_guards(ctx, "gather send", send);
}

void check_scatterv(Team& team, RankContext& ctx, const CallSpec& s) {
  const int me = team.rank();
  const VLayout l = v_layout(team.size(), s.seq, s.count);
  const std::uint64_t es = s.type.size;
  const std::uint64_t mine =
      static_cast<std::uint64_t>(l.counts[static_cast<std::size_t>(me)]) * es;
  GuardedBuffer recv(mine, s.misalign);
  if (me == s.root) {
    GuardedBuffer send(bytes_of(l.extent, es), s.misalign);
    for (int r = 0; r < team.size(); ++r) {
      fill(send.data() + l.displs[static_cast<std::size_t>(r)] * es,
           l.counts[static_cast<std::size_t>(r)] * es, s.seq, r);
    }
    if (s.in_place) {
      team.scatterv(send.data(), l.counts, l.displs, s.type, in_place, s.root);
    } else {
      team.scatterv(send.data(), l.counts, l.displs, s.type, recv.data(),
                    l.counts[static_cast<std::size_t>(me)], s.type, s.root);
      expect_block(ctx, "scatterv root recv", recv.data(), mine, s.seq, me);
    }
    for (int r = 0; r < team.size(); ++r) {
      expect_block(ctx, "scatterv root send (must stay)",
                   send.data() + l.displs[static_cast<std::size_t>(r)] * es,
                   l.counts[static_cast<std::size_t>(r)] * es, s.seq, r);
    }
    expect_guards(ctx, "scatterv root send", send);
  } else {
    team.scatterv(nullptr, {}, {}, kByte, recv.data(), l.counts[static_cast<std::size_t>(me)],
                  s.type, s.root);
    expect_block(ctx, "scatterv recv", recv.data(), mine, s.seq, me);
  }
  expect_guards(ctx, "scatterv recv", recv);
}

void check_gatherv(Team& team, RankContext& ctx, const CallSpec& s) {
  const int me = team.rank();
  const VLayout l = v_layout(team.size(), s.seq, s.count);
  const std::uint64_t es = s.type.size;
  const Count mycount = l.counts[static_cast<std::size_t>(me)];
  GuardedBuffer send(bytes_of(mycount, es), s.misalign);
  fill(send.data(), send.size(), s.seq, me);
  if (me == s.root) {
    GuardedBuffer recv(bytes_of(l.extent, es), s.misalign);
    if (s.in_place) {
      fill(recv.data() + l.displs[static_cast<std::size_t>(me)] * es, send.size(), s.seq, me);
      team.gatherv(in_place, recv.data(), l.counts, l.displs, s.type, s.root);
    } else {
      team.gatherv(send.data(), mycount, s.type, recv.data(), l.counts, l.displs, s.type, s.root);
    }
    // Every block arrived, and every byte outside the blocks (the gaps) is untouched.
    std::vector<bool> covered(recv.size(), false);
    for (int r = 0; r < team.size(); ++r) {
      const std::uint64_t off = l.displs[static_cast<std::size_t>(r)] * es;
      const std::uint64_t len = l.counts[static_cast<std::size_t>(r)] * es;
      expect_block(ctx, "gatherv root recv", recv.data() + off, len, s.seq, r);
      std::fill(covered.begin() + static_cast<long>(off),
                covered.begin() + static_cast<long>(off + len), true);
    }
    for (std::size_t i = 0; i < recv.size(); ++i) {
      if (!covered[i]) expect_unwritten(ctx, "gatherv root recv gap", recv.data() + i, 1);
    }
    expect_guards(ctx, "gatherv root recv", recv);
  } else {
    team.gatherv(send.data(), mycount, s.type, nullptr, {}, {}, kByte, s.root);
  }
  expect_block(ctx, "gatherv send (must stay)", send.data(), send.size(), s.seq, me);
  expect_guards(ctx, "gatherv send", send);
}

}  // namespace shmcoll::test
