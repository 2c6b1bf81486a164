#include "support/collective_checks.hpp"

#include <algorithm>
#include <memory>
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

RandomCall random_call(std::mt19937_64& rng, int team_size, std::uint64_t seq,
                       std::span<const std::uint64_t> sizes) {
  RandomCall c;
  c.which = static_cast<int>(rng() % 5);
  CallSpec& s = c.spec;
  s.seq = seq;
  s.root = static_cast<int>(rng() % static_cast<std::uint64_t>(team_size));
  s.in_place = c.which != 0 && rng() % 2 == 0;
  s.misalign = rng() % 8;
  s.type = rng() % 2 ? kInt32 : kByte;
  s.count = sizes[rng() % sizes.size()] / (c.which >= 3 ? 4 * s.type.size : s.type.size);
  return c;
}

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

namespace {

// Runs the blocking form, or starts the non-blocking one (same arguments) when the spec asks.
template <class Blocking, class NonBlocking>
Request call(const CallSpec& s, Blocking&& blocking, NonBlocking&& nonblocking) {
  if (s.nonblocking) return nonblocking();
  blocking();
  return {};
}

}  // namespace

PendingCheck start_bcast(Team& team, RankContext& ctx, const CallSpec& s) {
  const std::uint64_t bytes = s.count * s.type.size;
  auto buf = std::make_shared<GuardedBuffer>(bytes, s.misalign);
  if (team.rank() == s.root) fill(buf->data(), bytes, s.seq, s.root);
  const auto count = static_cast<Count>(s.count);
  PendingCheck p;
  p.request = call(
      s, [&] { team.bcast(buf->data(), count, s.type, s.root); },
      [&] { return team.ibcast(buf->data(), count, s.type, s.root); });
  p.verify = [&ctx, s, buf, bytes] {
    expect_block(ctx, "bcast", buf->data(), bytes, s.seq, s.root);
    expect_guards(ctx, "bcast", *buf);
  };
  return p;
}

PendingCheck start_scatter(Team& team, RankContext& ctx, const CallSpec& s) {
  const int n = team.size(), me = team.rank();
  const std::uint64_t b = s.count * s.type.size;
  const auto count = static_cast<Count>(s.count);
  auto recv = std::make_shared<GuardedBuffer>(b, s.misalign);
  PendingCheck p;
  if (me == s.root) {
    auto send = std::make_shared<GuardedBuffer>(b * static_cast<std::uint64_t>(n), s.misalign);
    for (int r = 0; r < n; ++r) fill(send->data() + r * b, b, s.seq, r);
    if (s.in_place) {
      p.request = call(
          s, [&] { team.scatter(send->data(), count, s.type, in_place, s.root); },
          [&] { return team.iscatter(send->data(), count, s.type, in_place, s.root); });
    } else {
      p.request = call(
          s,
          [&] { team.scatter(send->data(), count, s.type, recv->data(), count, s.type, s.root); },
          [&] {
            return team.iscatter(send->data(), count, s.type, recv->data(), count, s.type, s.root);
          });
    }
    p.verify = [&ctx, s, send, recv, b, n, me] {
      if (!s.in_place) expect_block(ctx, "scatter root recv", recv->data(), b, s.seq, me);
      for (int r = 0; r < n; ++r)
        expect_block(ctx, "scatter root send (must stay)", send->data() + r * b, b, s.seq, r);
      expect_guards(ctx, "scatter root send", *send);
      expect_guards(ctx, "scatter root recv", *recv);
    };
  } else {
    // Root-only arguments are ignored here: pass garbage.
    p.request = call(
        s, [&] { team.scatter(nullptr, -1, kByte, recv->data(), count, s.type, s.root); },
        [&] { return team.iscatter(nullptr, -1, kByte, recv->data(), count, s.type, s.root); });
    p.verify = [&ctx, s, recv, b, me] {
      expect_block(ctx, "scatter recv", recv->data(), b, s.seq, me);
      expect_guards(ctx, "scatter recv", *recv);
    };
  }
  return p;
}

PendingCheck start_gather(Team& team, RankContext& ctx, const CallSpec& s) {
  const int n = team.size(), me = team.rank();
  const std::uint64_t b = s.count * s.type.size;
  const auto count = static_cast<Count>(s.count);
  auto send = std::make_shared<GuardedBuffer>(b, s.misalign);
  fill(send->data(), b, s.seq, me);
  PendingCheck p;
  std::shared_ptr<GuardedBuffer> recv;
  if (me == s.root) {
    recv = std::make_shared<GuardedBuffer>(b * static_cast<std::uint64_t>(n), s.misalign);
    if (s.in_place) {
      fill(recv->data() + me * b, b, s.seq, me);
      p.request = call(
          s, [&] { team.gather(in_place, recv->data(), count, s.type, s.root); },
          [&] { return team.igather(in_place, recv->data(), count, s.type, s.root); });
    } else {
      p.request = call(
          s, [&] { team.gather(send->data(), count, s.type, recv->data(), count, s.type, s.root); },
          [&] {
            return team.igather(send->data(), count, s.type, recv->data(), count, s.type, s.root);
          });
    }
  } else {
    p.request = call(
        s, [&] { team.gather(send->data(), count, s.type, nullptr, -1, kByte, s.root); },
        [&] { return team.igather(send->data(), count, s.type, nullptr, -1, kByte, s.root); });
  }
  p.verify = [&ctx, s, send, recv, b, n, me] {
    if (recv) {
      for (int r = 0; r < n; ++r)
        expect_block(ctx, "gather root recv", recv->data() + r * b, b, s.seq, r);
      expect_guards(ctx, "gather root recv", *recv);
    }
    expect_block(ctx, "gather send (must stay)", send->data(), b, s.seq, me);
    expect_guards(ctx, "gather send", *send);
  };
  return p;
}

PendingCheck start_scatterv(Team& team, RankContext& ctx, const CallSpec& s) {
  const int me = team.rank();
  // The layout dies with this function when the call is non-blocking: the counts and
  // displacements need only live through the start.
  const VLayout l = v_layout(team.size(), s.seq, s.count);
  const std::uint64_t es = s.type.size;
  const Count mycount = l.counts[static_cast<std::size_t>(me)];
  const std::uint64_t mine = static_cast<std::uint64_t>(mycount) * es;
  auto recv = std::make_shared<GuardedBuffer>(mine, s.misalign);
  PendingCheck p;
  if (me == s.root) {
    auto send = std::make_shared<GuardedBuffer>(bytes_of(l.extent, es), s.misalign);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks;  // (offset, bytes) per rank
    for (int r = 0; r < team.size(); ++r) {
      blocks.emplace_back(l.displs[static_cast<std::size_t>(r)] * es,
                          l.counts[static_cast<std::size_t>(r)] * es);
      fill(send->data() + blocks.back().first, blocks.back().second, s.seq, r);
    }
    if (s.in_place) {
      p.request = call(
          s, [&] { team.scatterv(send->data(), l.counts, l.displs, s.type, in_place, s.root); },
          [&] {
            return team.iscatterv(send->data(), l.counts, l.displs, s.type, in_place, s.root);
          });
    } else {
      p.request = call(
          s,
          [&] {
            team.scatterv(send->data(), l.counts, l.displs, s.type, recv->data(), mycount, s.type,
                          s.root);
          },
          [&] {
            return team.iscatterv(send->data(), l.counts, l.displs, s.type, recv->data(), mycount,
                                  s.type, s.root);
          });
    }
    p.verify = [&ctx, s, send, recv, blocks, mine, me] {
      if (!s.in_place) expect_block(ctx, "scatterv root recv", recv->data(), mine, s.seq, me);
      for (std::size_t r = 0; r < blocks.size(); ++r) {
        expect_block(ctx, "scatterv root send (must stay)", send->data() + blocks[r].first,
                     blocks[r].second, s.seq, static_cast<int>(r));
      }
      expect_guards(ctx, "scatterv root send", *send);
      expect_guards(ctx, "scatterv recv", *recv);
    };
  } else {
    p.request = call(
        s, [&] { team.scatterv(nullptr, {}, {}, kByte, recv->data(), mycount, s.type, s.root); },
        [&] {
          return team.iscatterv(nullptr, {}, {}, kByte, recv->data(), mycount, s.type, s.root);
        });
    p.verify = [&ctx, s, recv, mine, me] {
      expect_block(ctx, "scatterv recv", recv->data(), mine, s.seq, me);
      expect_guards(ctx, "scatterv recv", *recv);
    };
  }
  return p;
}

PendingCheck start_gatherv(Team& team, RankContext& ctx, const CallSpec& s) {
  const int me = team.rank();
  const VLayout l = v_layout(team.size(), s.seq, s.count);
  const std::uint64_t es = s.type.size;
  const Count mycount = l.counts[static_cast<std::size_t>(me)];
  auto send = std::make_shared<GuardedBuffer>(bytes_of(mycount, es), s.misalign);
  fill(send->data(), send->size(), s.seq, me);
  PendingCheck p;
  std::shared_ptr<GuardedBuffer> recv;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks;  // (offset, bytes) per rank
  if (me == s.root) {
    recv = std::make_shared<GuardedBuffer>(bytes_of(l.extent, es), s.misalign);
    for (int r = 0; r < team.size(); ++r) {
      blocks.emplace_back(l.displs[static_cast<std::size_t>(r)] * es,
                          l.counts[static_cast<std::size_t>(r)] * es);
    }
    if (s.in_place) {
      fill(recv->data() + blocks[static_cast<std::size_t>(me)].first, send->size(), s.seq, me);
      p.request = call(
          s, [&] { team.gatherv(in_place, recv->data(), l.counts, l.displs, s.type, s.root); },
          [&] {
            return team.igatherv(in_place, recv->data(), l.counts, l.displs, s.type, s.root);
          });
    } else {
      p.request = call(
          s,
          [&] {
            team.gatherv(send->data(), mycount, s.type, recv->data(), l.counts, l.displs, s.type,
                         s.root);
          },
          [&] {
            return team.igatherv(send->data(), mycount, s.type, recv->data(), l.counts, l.displs,
                                 s.type, s.root);
          });
    }
  } else {
    p.request = call(
        s, [&] { team.gatherv(send->data(), mycount, s.type, nullptr, {}, {}, kByte, s.root); },
        [&] {
          return team.igatherv(send->data(), mycount, s.type, nullptr, {}, {}, kByte, s.root);
        });
  }
  p.verify = [&ctx, s, send, recv, blocks, me] {
    if (recv) {
      // Every block arrived, and every byte outside the blocks (the gaps) is untouched.
      std::vector<bool> covered(recv->size(), false);
      for (std::size_t r = 0; r < blocks.size(); ++r) {
        const auto [off, len] = blocks[r];
        expect_block(ctx, "gatherv root recv", recv->data() + off, len, s.seq, static_cast<int>(r));
        std::fill(covered.begin() + static_cast<long>(off),
                  covered.begin() + static_cast<long>(off + len), true);
      }
      for (std::size_t i = 0; i < recv->size(); ++i) {
        if (!covered[i]) expect_unwritten(ctx, "gatherv root recv gap", recv->data() + i, 1);
      }
      expect_guards(ctx, "gatherv root recv", *recv);
    }
    expect_block(ctx, "gatherv send (must stay)", send->data(), send->size(), s.seq, me);
    expect_guards(ctx, "gatherv send", *send);
  };
  return p;
}

namespace {
template <PendingCheck (*Start)(Team&, RankContext&, const CallSpec&)>
void check_now(Team& team, RankContext& ctx, const CallSpec& s) {
  PendingCheck p = Start(team, ctx, s);
  p.request.wait();
  p.verify();
}
}  // namespace

void check_bcast(Team& t, RankContext& c, const CallSpec& s) { check_now<start_bcast>(t, c, s); }
void check_scatter(Team& t, RankContext& c, const CallSpec& s) {
  check_now<start_scatter>(t, c, s);
}
void check_gather(Team& t, RankContext& c, const CallSpec& s) { check_now<start_gather>(t, c, s); }
void check_scatterv(Team& t, RankContext& c, const CallSpec& s) {
  check_now<start_scatterv>(t, c, s);
}
void check_gatherv(Team& t, RankContext& c, const CallSpec& s) {
  check_now<start_gatherv>(t, c, s);
}

}  // namespace shmcoll::test
