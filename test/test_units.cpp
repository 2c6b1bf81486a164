// Unit tests of the pure parts: tags, stream geometry, scatter stream layout, validation,
// parameter parsing, layout sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "coll/scatter/scatter_stream.hpp"
#include "protocol/validation.hpp"
#include "segment/layout.hpp"
#include "shmcoll/shmcoll.hpp"
#include "sync/tag.hpp"

namespace shmcoll {

TEST_CASE("tags order by operation first, then step") {
  using namespace sync;
  CHECK(make_tag(1, kStepDone) < make_tag(2, kStepWriting));
  CHECK(make_tag(7, kStepArrived) < make_tag(7, step_consumed(0)));
  CHECK(make_tag(7, step_consumed(kMaxChunks)) < make_tag(7, kStepDone));
  CHECK(op_of(make_tag(kMaxOperation, 5)) == kMaxOperation);
  CHECK(step_of(make_tag(kMaxOperation, 5)) == 5);
}

TEST_CASE("stream shape: chunk geometry does not depend on the inline decision") {
  for (std::uint64_t bytes : {0ull, 1ull, 40ull, 41ull, 1023ull, 1024ull, 1025ull, 10000ull}) {
    const StreamShape s{bytes, 1024};
    CAPTURE(bytes);
    CHECK(s.is_inline() == (bytes <= segment::SlotHeader::kInlineBytes));
    CHECK(s.chunks() == (bytes + 1023) / 1024);
    std::uint64_t covered = 0;
    for (std::uint64_t c = 0; c < s.chunks(); ++c) {
      CHECK(s.chunk_begin(c) == covered);
      CHECK(s.chunk_end(c) > s.chunk_begin(c));
      covered = s.chunk_end(c);
      for (std::uint64_t off = s.chunk_begin(c); off < s.chunk_end(c); off += 97)
        CHECK(s.chunk_of(off) == c);
    }
    CHECK(covered == bytes);
  }
}

TEST_CASE("scatter stream: every byte of every block is filled once and read by its owner") {
  for (int n : {1, 2, 3, 7, 16}) {
    for (int root = 0; root < n; ++root) {
      for (std::uint64_t unit : {0ull, 1ull, 40ull, 300ull, 5000ull}) {
        CAPTURE(n);
        CAPTURE(root);
        CAPTURE(unit);
        std::vector<std::uint64_t> bytes(static_cast<std::size_t>(n));
        std::vector<std::vector<std::byte>> data(static_cast<std::size_t>(n));
        std::vector<const std::byte*> src(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) {
          bytes[static_cast<std::size_t>(r)] = (static_cast<std::uint64_t>(r) % 3) * unit;
          data[static_cast<std::size_t>(r)].resize(bytes[static_cast<std::size_t>(r)]);
          for (std::size_t i = 0; i < data[static_cast<std::size_t>(r)].size(); ++i) {
            data[static_cast<std::size_t>(r)][i] =
                std::byte(static_cast<unsigned char>(r * 37 + i));
          }
          src[static_cast<std::size_t>(r)] = data[static_cast<std::size_t>(r)].data();
        }
        ScatterRootStream plan;
        plan.plan(root, n, [&](int r) {
          return std::pair(src[static_cast<std::size_t>(r)], bytes[static_cast<std::size_t>(r)]);
        });
        const StreamShape shape{plan.bytes(), 1024};
        std::vector<std::byte> stream(plan.bytes());
        std::vector<std::set<int>> readers(shape.chunks());
        for (std::uint64_t c = 0; c < shape.chunks(); ++c) {
          plan.fill(stream.data() + shape.chunk_begin(c), shape.chunk_begin(c),
                    shape.chunk_end(c) - shape.chunk_begin(c));
          std::vector<int> out;
          plan.readers(shape, c, out);
          readers[c].insert(out.begin(), out.end());
          CHECK(readers[c].count(root) == 0);
        }
        // Each receiver's block is where offset_of says (what scatterv's records tell the
        // receivers), and it is listed as a reader of every chunk its block touches.
        std::uint64_t end = 0;
        for (int r = 0; r < n; ++r) {
          if (r == root) continue;
          const std::uint64_t b = bytes[static_cast<std::size_t>(r)];
          std::uint64_t at = place_block(end, b);
          end = at + b;
          CHECK(plan.offset_of(r) == at);
          CHECK(std::equal(stream.begin() + static_cast<long>(at),
                           stream.begin() + static_cast<long>(at + b),
                           data[static_cast<std::size_t>(r)].begin()));
          for (std::uint64_t off = at; off < at + b; off += 1024)
            CHECK(readers[shape.chunk_of(off)].count(r) == 1);
          if (b > 0) CHECK(readers[shape.chunk_of(at + b - 1)].count(r) == 1);
        }
        CHECK(end == plan.bytes());
      }
    }
  }
}

TEST_CASE("scatter stream, equal blocks: the arithmetic plan places blocks as the general rule") {
  for (int n : {1, 2, 5, 16}) {
    for (std::uint64_t b : {0ull, 1ull, 8ull, 255ull, 256ull, 1000ull, 3000ull}) {
      for (int root : {0, n / 2, n - 1}) {
        CAPTURE(n);
        CAPTURE(b);
        CAPTURE(root);
        std::vector<std::byte> send(b * static_cast<std::uint64_t>(n));
        for (std::size_t i = 0; i < send.size(); ++i)
          send[i] = std::byte(static_cast<unsigned char>(i * 13 + 1));
        ScatterRootStream uniform, general;
        uniform.plan_uniform(root, n, send.data(), b);
        general.plan(root, n, [&](int r) { return std::pair(send.data() + r * b, b); });
        REQUIRE(uniform.bytes() == general.bytes());
        const StreamShape shape{uniform.bytes(), 1024};
        std::vector<std::byte> a(uniform.bytes()), g(general.bytes());
        for (std::uint64_t c = 0; c < shape.chunks(); ++c) {
          const std::uint64_t lo = shape.chunk_begin(c), len = shape.chunk_end(c) - lo;
          uniform.fill(a.data() + lo, lo, len);
          general.fill(g.data() + lo, lo, len);
          std::vector<int> ru, rg;
          uniform.readers(shape, c, ru);
          general.readers(shape, c, rg);
          CHECK(ru == rg);
        }
        for (int r = 0; r < n; ++r) {
          if (r == root || b == 0) continue;
          const std::uint64_t at =
              static_cast<std::uint64_t>(r < root ? r : r - 1) * uniform_stride(b);
          CHECK(std::equal(a.begin() + static_cast<long>(at), a.begin() + static_cast<long>(at + b),
                           send.begin() + static_cast<long>(r * b)));
          CHECK(std::equal(a.begin() + static_cast<long>(at), a.begin() + static_cast<long>(at + b),
                           g.begin() + static_cast<long>(at)));
        }
      }
    }
  }
}

TEST_CASE("validation: messages name the collective, the rank, the argument and the value") {
  const validate::Context ctx{Kind::kScatterv, 2, 4, 0, 1024};
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message([&] {
          validate::root({Kind::kBcast, 1, 4, 9, 1024});
        }) == "bcast on rank 1 (root 9): root = 9 is outside the team [0, 4)");
  CHECK(message([&] { validate::bytes(ctx, "recvcount", -2, kInt32); }) ==
        "scatterv on rank 2 (root 0): recvcount = -2 is negative");
  CHECK(message([&] { validate::buffer(ctx, "recvbuf", nullptr, 8); }) ==
        "scatterv on rank 2 (root 0): recvbuf is null but must hold 8 bytes");
  CHECK(message([&] { validate::buffer(ctx, "recvbuf", nullptr, 0); }).empty());
  CHECK(message([&] { validate::bytes(ctx, "count", Count{1} << 62, kInt64); }).find("overflows") !=
        std::string::npos);

  const std::vector<Count> counts{2, 2, 2, 2};
  const std::vector<Count> displs{0, 2, 3, 8};
  const auto blocks = validate::blocks(ctx, "sendcounts", counts, "displs", displs, kInt32);
  CHECK(blocks[3].offset == 32);
  CHECK(message([&] {
          validate::no_overlap(ctx, as_span(blocks), "sendcounts", "displs", "read");
        }).find("blocks of ranks 1 and 2 overlap") != std::string::npos);
  const std::vector<Count> zero_overlap{0, 2, 0, 2};
  const std::vector<Count> same_place{4, 4, 4, 0};
  CHECK(message([&] {
          const auto zero = validate::blocks(ctx, "c", zero_overlap, "d", same_place, kInt32);
          validate::no_overlap(ctx, as_span(zero), "c", "d", "read");
        }).empty());  // zero-count blocks never overlap anything
  // Blocks in rank order take one pass; any other order is sorted first. Both find the same.
  auto overlap_message = [&](const std::vector<Count>& places) {
    return message([&] {
      const auto b = validate::blocks(ctx, "sendcounts", counts, "displs", places, kInt32);
      validate::no_overlap(ctx, as_span(b), "sendcounts", "displs", "read");
    });
  };
  CHECK(overlap_message({0, 2, 5, 7}).empty());  // in rank order, with a gap
  CHECK(overlap_message({6, 4, 2, 0}).empty());  // reversed, touching
  CHECK(overlap_message({6, 4, 3, 0}).find("blocks of ranks 2 and 1 overlap") != std::string::npos);
  CHECK(overlap_message({0, 1, 4, 6}).find("blocks of ranks 0 and 1 overlap") != std::string::npos);
  CHECK(message([&] {
          validate::blocks(ctx, "sendcounts", std::vector<Count>{1, 1}, "displs", displs, kInt32);
        }).find("sendcounts has 2 entries, the team has 4 ranks") != std::string::npos);
}

TEST_CASE("parameters are read from the environment once and checked") {
  setenv("SHMCOLL_SLOT_BYTES", "16K", 1);
  setenv("SHMCOLL_CHECKS", "full", 1);
  const Options o = Options::from_env();
  CHECK(o.slot_bytes == 16384);
  CHECK(o.checks == CheckLevel::kFull);
  CHECK(std::string(check_level_name(CheckLevel::kFull)) == "full");
  setenv("SHMCOLL_CHECKS", "deferred", 1);
  CHECK(Options::from_env().checks == CheckLevel::kDeferred);
  CHECK(std::string(check_level_name(CheckLevel::kDeferred)) == "deferred");
  CHECK(Options{}.checks == CheckLevel::kDeferred);  // the default
  for (const char* gone : {"basic", "auto"}) {
    setenv("SHMCOLL_CHECKS", gone, 1);
    CHECK_THROWS_AS(Options::from_env(), InvalidArgument);
  }
  setenv("SHMCOLL_SLOTS", "0", 1);
  CHECK_THROWS_AS(Options::from_env(), InvalidArgument);
  setenv("SHMCOLL_SLOTS", "3", 1);
  setenv("SHMCOLL_CHECKS", "sometimes", 1);
  CHECK_THROWS_WITH_AS(Options::from_env(),
                       "SHMCOLL_CHECKS='sometimes' must be 'deferred' or 'full'", InvalidArgument);
  for (const char* v : {"SHMCOLL_SLOT_BYTES", "SHMCOLL_CHECKS", "SHMCOLL_SLOTS"}) unsetenv(v);
  bool found = false;
  for (const ParameterInfo& p : parameters(Options::from_env()))
    found = found || p.name == "SHMCOLL_TIMEOUT";
  CHECK(found);
}

TEST_CASE("options: SHMCOLL_* variables that shmcoll does not read are named") {
  setenv("SHMCOLL_CHEKS", "full", 1);          // a typo of a parameter
  setenv("SHMCOLL_QUITE_UNLIKE_ANY", "1", 1);  // a name far from any
  setenv("SHMCOLL_CHECKS", "full", 1);         // a parameter
  setenv("SHMCOLL_RANK", "0", 1);              // what shmcoll-run gives its ranks
  setenv("SHMCOLL_CALLERS_OWN", "1", 1);       // a caller's own (as the plugin's)
  const std::vector<std::string> unknown = unknown_variables({"SHMCOLL_CALLERS_OWN"});
  auto named = [&](const std::string& text) {
    return std::count(unknown.begin(), unknown.end(), text);
  };
  CHECK(unknown.size() == 2);
  CHECK(named("SHMCOLL_CHEKS is not a shmcoll variable (did you mean SHMCOLL_CHECKS?); "
              "ignored") == 1);
  CHECK(named("SHMCOLL_QUITE_UNLIKE_ANY is not a shmcoll variable; ignored") == 1);
  CHECK(unknown_variables().size() == 3);  // without the caller's own
  for (const char* v : {"SHMCOLL_CHEKS", "SHMCOLL_QUITE_UNLIKE_ANY", "SHMCOLL_CHECKS",
                        "SHMCOLL_RANK", "SHMCOLL_CALLERS_OWN"})
    unsetenv(v);
}

TEST_CASE("segment geometry: a fixed part plus a per-rank part, all page aligned") {
  segment::Geometry g{16, 4, 65536};
  CHECK(g.ranks_offset() % segment::kPageBytes == 0);
  CHECK(g.rank_stride() % segment::kPageBytes == 0);
  CHECK(g.total_bytes() == g.ranks_offset() + 16 * g.rank_stride());
  // 175 control lines, 4 slot headers and 4 slots (273,600 bytes), rounded up to whole pages.
  static_assert(segment::RankArea::kControlLines == 175);
  CHECK(g.rank_stride() == 67 * 4096);
  segment::Geometry small{3, 2, 1024};
  CHECK(small.rank_stride() == 4 * 4096);  // 177 lines + 2 KiB: just over three pages
  // The default small team: 191 lines (the control lines and 16 slot headers) and 1 MiB.
  CHECK(segment::Geometry{2, 16, 65536}.rank_stride() == 259 * 4096);
}

}  // namespace shmcoll

#include "coll/registry.hpp"

namespace shmcoll {

TEST_CASE("algorithm registry: by collective, size and team shape; options force either") {
  registry::TeamShape shape{.size = 16,
                            .splits = true,
                            .single_copy = true,
                            .single_copy_min_bytes = 32768,
                            .slot_bytes = 65536,
                            .slots = 4};
  using registry::choose;
  CHECK(choose(shape, Kind::kBcast, 8).tree);
  CHECK(choose(shape, Kind::kBcast, 1 << 24).tree);  // each byte crosses a boundary once
  CHECK(choose(shape, Kind::kScatter, 8).tree);
  CHECK_FALSE(choose(shape, Kind::kScatter, 32768).tree);  // the flat single copy from here
  CHECK_FALSE(choose(shape, Kind::kGather, 1 << 20).tree);
  CHECK_FALSE(choose(shape, Kind::kScatterv, 8).tree);  // sizes unknown: single copy decides
  shape.single_copy = false;
  CHECK(choose(shape, Kind::kGather, 1 << 20).tree);
  CHECK(choose(shape, Kind::kGatherv, 0).tree);
  shape.splits = false;  // one group: nothing to save
  shape.one_level = true;
  for (Kind k : {Kind::kBcast, Kind::kScatter, Kind::kGather, Kind::kScatterv, Kind::kGatherv})
    CHECK_FALSE(choose(shape, k, 8).tree);
  // A one-level tree is the flat algorithm, forced or not.
  shape.scatter = Algorithm::kTree;
  CHECK_FALSE(choose(shape, Kind::kScatter, 8).tree);
  CHECK_FALSE(choose(shape, Kind::kScatterv, 8).tree);
  shape.splits = true;  // split, but this root's tree has one level (single-rank groups)
  CHECK_FALSE(choose(shape, Kind::kScatter, 8).tree);
  CHECK_FALSE(choose(shape, Kind::kBcast, 1 << 20).tree);
  shape.one_level = false;
  CHECK(choose(shape, Kind::kScatter, 8).tree);
  CHECK(choose(shape, Kind::kScatterv, 8).tree);
  shape.gather = Algorithm::kFlat;
  CHECK_FALSE(choose(shape, Kind::kGatherv, 8).tree);
  // A v-form's size table must fit in a writer's slots: 16 ranks need 128 bytes.
  shape.slot_bytes = 64;
  shape.slots = 1;
  CHECK_FALSE(choose(shape, Kind::kScatterv, 8).tree);
  CHECK(choose(shape, Kind::kScatter, 8).tree);
  shape.size = 1;
  CHECK_FALSE(choose(shape, Kind::kScatter, 8).tree);
}

TEST_CASE("algorithm registry: oversubscribed, gather blocks take the single copy later") {
  registry::TeamShape shape{.size = 4,
                            .single_copy = true,
                            .oversubscribed = true,
                            .single_copy_min_bytes = 16384,
                            .oversubscribed_bcast_single_copy_min_bytes = 1 << 20,
                            .oversubscribed_gather_single_copy_min_bytes = 32768,
                            .slot_bytes = 65536,
                            .slots = 16};
  using registry::single_copy_block;
  for (Kind k : {Kind::kGather, Kind::kGatherv}) {
    CAPTURE(kind_name(k));
    CHECK_FALSE(single_copy_block(shape, k, 16384));
    CHECK_FALSE(single_copy_block(shape, k, 32767));
    CHECK(single_copy_block(shape, k, 32768));
    shape.oversubscribed = false;  // a CPU each (2 ranks: no team-size rule): the general size
    shape.size = 2;
    CHECK(single_copy_block(shape, k, 16384));
    CHECK_FALSE(single_copy_block(shape, k, 16383));
    shape.single_copy_always = true;  // always: no exception
    shape.oversubscribed = true;
    shape.size = 4;
    CHECK(single_copy_block(shape, k, 16384));
    shape.single_copy_always = false;
  }
  for (Kind k : {Kind::kScatter, Kind::kScatterv}) {  // the general size
    CAPTURE(kind_name(k));
    CHECK(single_copy_block(shape, k, 16384));
    CHECK_FALSE(single_copy_block(shape, k, 16383));
  }
  // Broadcast keeps its own rule: from 1 MiB and past the 1 MiB ring.
  CHECK_FALSE(single_copy_block(shape, Kind::kBcast, 32768));
  CHECK(single_copy_block(shape, Kind::kBcast, (1 << 20) + 1));
  // A smaller oversubscribed minimum does not go below the general one.
  shape.oversubscribed_gather_single_copy_min_bytes = 1024;
  CHECK_FALSE(single_copy_block(shape, Kind::kGather, 8192));
  CHECK(single_copy_block(shape, Kind::kGather, 16384));
}

TEST_CASE("options: the default ring is 1 MiB per rank up to 8 ranks, 4 slots above") {
  Options o;
  CHECK(o.slots_for(2) == 16);
  CHECK(o.slots_for(8) == 16);
  CHECK(o.slots_for(9) == 4);
  CHECK(o.slots_for(128) == 4);
  o.slot_bytes = 256 << 10;
  CHECK(o.slots_for(2) == 4);
  o.slot_bytes = 1024;
  CHECK(o.slots_for(2) == 64);  // the most slots a rank may have
  o.slots = 6;
  CHECK(o.slots_for(2) == 6);
  CHECK(o.slots_for(100) == 6);
}

TEST_CASE("algorithm registry: slow cross-memory attach starts the single copy later") {
  Options o;
  o.single_copy_min_bytes = 16384;
  using registry::single_copy_min_bytes;
  constexpr std::uint64_t kSlow = registry::kSlowCrossCopySingleCopyMinBytes;
  CHECK(single_copy_min_bytes(o, 0) == 16384);  // not measured
  CHECK(single_copy_min_bytes(o, 1.8) == 16384);
  CHECK(single_copy_min_bytes(o, Options::kSlowCrossCopyCost) == kSlow);
  CHECK(single_copy_min_bytes(o, 4.5) == kSlow);
  o.single_copy_min_bytes = 1 << 20;  // a larger minimum stays
  CHECK(single_copy_min_bytes(o, 4.5) == 1 << 20);
  o.single_copy_min_bytes = 16384;
  o.single_copy = SingleCopy::kAlways;  // as asked, whatever the cost
  CHECK(single_copy_min_bytes(o, 4.5) == 16384);
}

TEST_CASE("algorithm registry: always_flat agrees with choose for every shape, kind and size") {
  // Every combination of the fields the rules read; where always_flat says flat, no call may
  // pick the tree (the hot path skips choose() on its word).
  int flat_shapes = 0;
  for (int size : {1, 2, 16})
    for (int bits = 0; bits < 64; ++bits)
      for (Algorithm forced : {Algorithm::kAuto, Algorithm::kFlat, Algorithm::kTree}) {
        registry::TeamShape shape{.size = size,
                                  .splits = (bits & 1) != 0,
                                  .one_level = (bits & 2) != 0,
                                  .single_copy = (bits & 4) != 0,
                                  .oversubscribed = (bits & 8) != 0,
                                  .single_copy_always = (bits & 16) != 0,
                                  .single_copy_min_bytes = 32768,
                                  .oversubscribed_bcast_single_copy_min_bytes = 1 << 20,
                                  .slot_bytes = (bits & 32) != 0 ? 64u : 65536u,
                                  .slots = 4,
                                  .bcast = forced,
                                  .scatter = forced,
                                  .gather = forced};
        if (!registry::always_flat(shape)) continue;
        ++flat_shapes;
        for (Kind k :
             {Kind::kBcast, Kind::kScatter, Kind::kGather, Kind::kScatterv, Kind::kGatherv})
          for (std::uint64_t b : {0ull, 8ull, 32768ull, 1ull << 20, 1ull << 24}) {
            CAPTURE(size);
            CAPTURE(bits);
            CAPTURE(kind_name(k));
            CHECK_FALSE(registry::choose(shape, k, b).tree);
          }
      }
  CHECK(flat_shapes == 3 * 64 * 3 - 2 * 16 * 3);  // all but size > 1, split, deeper than one level
}

TEST_CASE(
    "algorithm registry: single copy from its size, broadcast from its own when oversubscribed") {
  registry::TeamShape shape{.size = 2,
                            .single_copy = true,
                            .single_copy_min_bytes = 32768,
                            .oversubscribed_bcast_single_copy_min_bytes = 1 << 20,
                            .scatter_single_copy_min_team_bytes = 4 << 20,
                            .gather_single_copy_min_team_bytes = 8 << 20,
                            .slot_bytes = 65536,
                            .slots = 4};
  using registry::choose;
  for (Kind k : {Kind::kBcast, Kind::kScatter, Kind::kGather}) {
    CAPTURE(kind_name(k));
    CHECK_FALSE(choose(shape, k, 32767).single_copy);
    CHECK(choose(shape, k, 32768).single_copy);
  }
  CHECK_FALSE(choose(shape, Kind::kScatterv, 1 << 20).single_copy);  // decided block by block
  // More than 2 ranks, each with a CPU: broadcast keeps the slots, scatter(v) and gather(v)
  // take the single copy once ranks x block reaches their sizes.
  shape.size = 4;
  CHECK_FALSE(choose(shape, Kind::kBcast, 16 << 20).single_copy);
  CHECK_FALSE(choose(shape, Kind::kScatter, (1 << 20) - 1).single_copy);
  CHECK(choose(shape, Kind::kScatter, 1 << 20).single_copy);
  CHECK_FALSE(choose(shape, Kind::kGather, (2 << 20) - 1).single_copy);
  CHECK(choose(shape, Kind::kGather, 2 << 20).single_copy);
  CHECK_FALSE(registry::single_copy_block(shape, Kind::kScatterv, (1 << 20) - 1));
  CHECK(registry::single_copy_block(shape, Kind::kScatterv, 1 << 20));
  CHECK_FALSE(registry::single_copy_block(shape, Kind::kGatherv, (2 << 20) - 1));
  CHECK(registry::single_copy_block(shape, Kind::kGatherv, 2 << 20));
  CHECK(registry::single_copy_block(shape, Kind::kGatherv, std::uint64_t{1} << 62));  // no overflow
  shape.single_copy_always = true;  // no exception
  CHECK(choose(shape, Kind::kBcast, 32768).single_copy);
  CHECK(choose(shape, Kind::kScatter, 32768).single_copy);
  shape.single_copy_always = false;
  shape.oversubscribed = true;
  CHECK_FALSE(choose(shape, Kind::kBcast, (1 << 20) - 1).single_copy);
  CHECK(choose(shape, Kind::kBcast, 1 << 20).single_copy);
  shape.slots = 16;  // a 1 MiB ring holds a 1 MiB broadcast: the slots keep it
  CHECK_FALSE(choose(shape, Kind::kBcast, 1 << 20).single_copy);
  CHECK(choose(shape, Kind::kBcast, (1 << 20) + 1).single_copy);
  shape.slots = 4;
  CHECK(choose(shape, Kind::kScatter, 32768).single_copy);
  CHECK(choose(shape, Kind::kGather, 32768).single_copy);
  shape.single_copy_always = true;  // no exception for the broadcast
  CHECK_FALSE(choose(shape, Kind::kBcast, 32767).single_copy);
  CHECK(choose(shape, Kind::kBcast, 32768).single_copy);
  shape.single_copy_always = false;
  shape.oversubscribed_bcast_single_copy_min_bytes = 1024;  // never below the general size
  CHECK_FALSE(choose(shape, Kind::kBcast, 32767).single_copy);
  shape.single_copy = false;  // the probe failed, or SHMCOLL_SINGLE_COPY=off
  CHECK_FALSE(choose(shape, Kind::kBcast, 1 << 20).single_copy);
  CHECK_FALSE(choose(shape, Kind::kScatter, 1 << 20).single_copy);
  shape.single_copy = true;
  shape.size = 1;
  CHECK_FALSE(choose(shape, Kind::kScatter, 1 << 20).single_copy);
}

TEST_CASE("algorithm registry: the v-forms' single-copy threshold agrees with the rule") {
  // TeamImpl::single_copy_for compares each block with v_form_single_copy_from instead of
  // asking single_copy_block: the two must agree at every size, in every team shape.
  constexpr std::uint64_t kMax = std::uint64_t{1} << 40;
  int shapes = 0;
  for (int size : {1, 2, 3, 8, 16})
    for (bool single_copy : {false, true})
      for (bool oversubscribed : {false, true})
        for (bool always : {false, true})
          for (std::uint64_t min : {std::uint64_t{1}, std::uint64_t{32768}, kMax + 1}) {
            const registry::TeamShape shape{.size = size,
                                            .single_copy = single_copy,
                                            .oversubscribed = oversubscribed,
                                            .single_copy_always = always,
                                            .single_copy_min_bytes = min,
                                            .oversubscribed_bcast_single_copy_min_bytes = 1 << 20,
                                            .scatter_single_copy_min_team_bytes = 4 << 20,
                                            .gather_single_copy_min_team_bytes = 8 << 20,
                                            .slot_bytes = 65536,
                                            .slots = 16};
            for (Kind kind : {Kind::kScatterv, Kind::kGatherv}) {
              ++shapes;
              const std::uint64_t from = registry::v_form_single_copy_from(shape, kind, kMax);
              CAPTURE(size);
              CAPTURE(min);
              CAPTURE(from);
              for (std::uint64_t b :
                   {std::uint64_t{0}, std::uint64_t{1}, from - 1, from, from + 1,
                    std::uint64_t{32767}, std::uint64_t{32768}, std::uint64_t{262143},
                    std::uint64_t{262144}, std::uint64_t{524288}, std::uint64_t{1} << 20, kMax}) {
                if (b > kMax) continue;
                CHECK(registry::single_copy_block(shape, kind, b) == (b >= from));
              }
            }
          }
  CHECK(shapes == 5 * 2 * 2 * 2 * 3 * 2);
}

}  // namespace shmcoll

#include "coll/copy_balance.hpp"
#include "coll/single_copy.hpp"
#include "copy/cross_process.hpp"

namespace shmcoll {

TEST_CASE("single copy: the root's share balances its memcpy against the peers' copies") {
  constexpr std::uint64_t kMiB = 1 << 20;
  // No local copy: an equal split, whatever the weight.
  CHECK(SingleCopyExchange::balanced_root_share(kMiB, 2, 0, 0.3) == kMiB / 2);
  CHECK(SingleCopyExchange::balanced_root_share(kMiB, 4, 0, 1.0) == kMiB / 4);
  // Its own block at 0.8 of a cross-memory byte: 10% of each block (2 ranks).
  CHECK(SingleCopyExchange::balanced_root_share(kMiB, 2, kMiB, 0.8) == (kMiB / 10) / 64 * 64);
  // Where cross-memory copies cost 4x memcpy the root takes 37.5%: both then spend 2.5 units.
  const std::uint64_t share = SingleCopyExchange::balanced_root_share(kMiB, 2, kMiB, 0.25);
  CHECK(share == 3 * kMiB / 8);
  CHECK(share % 64 == 0);
  // A local copy as dear as the whole block leaves the root no share.
  CHECK(SingleCopyExchange::balanced_root_share(kMiB, 2, kMiB, 1.0) == 0);
  CHECK(SingleCopyExchange::balanced_root_share(kMiB, 1, 0, 0.5) == 0);
}

TEST_CASE("single copy: v-form shares level the largest blocks down to the root's work") {
  constexpr std::uint64_t kMiB = 1 << 20;
  std::uint64_t shares[3];
  // Equal blocks: the uniform rule, per block.
  const std::uint64_t equal[] = {kMiB, kMiB, kMiB};
  SingleCopyExchange::balanced_root_shares(equal, kMiB, 0.25, shares);
  for (std::uint64_t s : shares)
    CHECK(s == SingleCopyExchange::balanced_root_share(kMiB, 4, kMiB, 0.25));
  // One large block and two small ones: only the large one gives up bytes, until it moves as
  // much as the root (512 KiB each); the small ones keep their whole copy.
  const std::uint64_t uneven[] = {kMiB / 8, kMiB, kMiB / 4};
  SingleCopyExchange::balanced_root_shares(uneven, 0, 1.0, shares);
  CHECK(shares[0] == 0);
  CHECK(shares[1] == kMiB / 2);
  CHECK(shares[2] == 0);
  // Two large blocks and the root's own memcpy: root 0.5 * 1 MiB + 2 s = each peer's 1 MiB - s.
  const std::uint64_t two[] = {kMiB, kMiB};
  std::uint64_t two_shares[2];
  SingleCopyExchange::balanced_root_shares(two, kMiB, 0.5, two_shares);
  CHECK(two_shares[0] == (kMiB / 6) / 64 * 64);
  CHECK(two_shares[1] == two_shares[0]);
  // A root whose own work already exceeds every block takes no share.
  SingleCopyExchange::balanced_root_shares(uneven, 4 * kMiB, 1.0, shares);
  CHECK(shares[0] + shares[1] + shares[2] == 0);
}

TEST_CASE("single copy: a root's copy weight follows who finished first, per kind and size") {
  constexpr std::uint64_t kMiB = 1 << 20;
  CopyBalance balance;
  balance.reset(0.6);
  const std::uint64_t start = balance.weight(Kind::kScatter, kMiB);
  CHECK(start == 614);  // 0.6 of CopyBalance::kUnit, rounded down
  // Peers done before the root: its own memcpy weighs more, so its share shrinks.
  balance.observe(Kind::kScatter, kMiB, true);
  CHECK(balance.weight(Kind::kScatter, kMiB) == start + CopyBalance::kStep);
  const double before = CopyBalance::fraction(start);
  const double after = CopyBalance::fraction(balance.weight(Kind::kScatter, kMiB));
  CHECK(SingleCopyExchange::balanced_root_share(kMiB, 2, kMiB, after) <
        SingleCopyExchange::balanced_root_share(kMiB, 2, kMiB, before));
  // Sizes in the same power of two share a weight; other sizes and other kinds keep theirs.
  CHECK(balance.weight(Kind::kScatter, kMiB + kMiB / 2) == start + CopyBalance::kStep);
  CHECK(balance.weight(Kind::kScatter, 2 * kMiB) == start);
  CHECK(balance.weight(Kind::kGather, kMiB) == start);
  // A root that waited takes more; the weight stays within its bounds either way.
  for (int i = 0; i < 100; ++i) balance.observe(Kind::kGatherv, kMiB, false);
  CHECK(balance.weight(Kind::kGatherv, kMiB) == CopyBalance::kMin);
  for (int i = 0; i < 100; ++i) balance.observe(Kind::kGatherv, kMiB, true);
  CHECK(balance.weight(Kind::kGatherv, kMiB) == CopyBalance::kMax);
  CHECK(SingleCopyExchange::balanced_root_share(
            kMiB, 2, kMiB, CopyBalance::fraction(balance.weight(Kind::kGatherv, kMiB))) == 0);
  // A published weight read back is held to the bounds, whatever the line held: no share
  // computed from it exceeds its block.
  CHECK(CopyBalance::fraction(0) == 0.25);
  CHECK(CopyBalance::fraction(UINT64_MAX) == 1.0);
  CHECK(SingleCopyExchange::balanced_root_share(kMiB, 2, 0, CopyBalance::fraction(0)) <= kMiB);
}

TEST_CASE("single copy: the cross-memory cost is measured, or 0 where CMA is refused") {
  const double cost = copy::measure_cross_copy_cost(Options::kSlowCrossCopyCost);
  CHECK(cost >= 0);
  if (cost > 0) {
    CHECK(cost < 1000);  // a ratio of two copies of one megabyte, not a time
    MESSAGE("cross-memory copy here: " << cost << "x memcpy per byte");
  }
}

TEST_CASE("single copy: the cross-memory cost is the rounds' median, measured longer near 2.5") {
  using Rounds = copy::CrossCopyRounds;
  constexpr double kDecisive = 2.5;
  const auto settled = [](std::vector<double> ratios) {
    return Rounds::settled(ratios, kDecisive);
  };
  // Too few rounds to judge, however clear.
  CHECK(!settled({4.0, 4.0, 4.0}).has_value());
  // One round in which the process lost its CPU moves nothing: 1.6, not the mean 3.3.
  const auto preempted = settled({1.6, 1.5, 10.0, 1.7, 1.6});
  REQUIRE(preempted.has_value());
  CHECK(*preempted == doctest::Approx(1.6));
  // Clearly slow: settled at once.
  CHECK(settled({3.9, 4.1, 4.0, 3.8, 4.2}).value_or(0) == doctest::Approx(4.0));
  // Near the decisive ratio: more rounds, until the median leaves the margin or the rounds end.
  CHECK(!settled({2.4, 2.6, 2.5, 2.3, 2.7}).has_value());
  CHECK(!settled({2.4, 2.6, 2.5, 2.3, 2.7, 1.5, 1.6, 1.5, 1.6}).has_value());
  CHECK(settled({2.4, 2.6, 2.5, 2.3, 2.7, 1.5, 1.6, 1.5, 1.6, 1.5}).value_or(0) ==
        doctest::Approx(1.95));
  std::vector<double> undecided(Rounds::kMaxRounds, 2.5);
  CHECK(settled(undecided).value_or(0) == doctest::Approx(2.5));
  undecided.pop_back();
  CHECK(!settled(undecided).has_value());
}

}  // namespace shmcoll

#include "coll/published_sizes.hpp"

namespace shmcoll {

TEST_CASE("published sizes: one size, or a fingerprint that any one wrong size changes") {
  using namespace published_sizes;
  const auto blocks = [](std::vector<std::uint64_t> sizes) {
    std::vector<validate::Block> b;
    for (const std::uint64_t s : sizes) b.push_back({0, s});
    return b;
  };
  // The root's own block (rank 1 here) does not count.
  CHECK(published(true, true, blocks({8, 99, 8, 8}), 1) == (kUniform | 8));
  CHECK(published(true, false, blocks({0, 5, 0}), 1) == kUniform);
  CHECK(published(false, true, blocks({8, 8, 8}), 0) == 0);   // along the tree
  CHECK(published(true, false, blocks({8, 9, 10}), 0) == 0);  // sizes differ, no fingerprint
  const std::uint64_t word = published(true, true, blocks({8, 9, 10, 11}), 0);
  CHECK(is_fingerprint(word));
  CHECK(word == fingerprint_word(term(1, 9) + term(2, 10) + term(3, 11)));
  // The largest size a uniform word can carry is no fingerprint.
  CHECK_FALSE(is_fingerprint(kUniform | validate::kMaxBytes));
  CHECK_FALSE(is_fingerprint(kUniform | 8));
  // Any one rank's size off by anything, or two ranks' sizes swapped, changes the word.
  for (int r = 1; r < 4; ++r) {
    for (const std::uint64_t wrong :
         std::initializer_list<std::uint64_t>{0, 1, 7, 12, 1ULL << 40, validate::kMaxBytes}) {
      std::vector<std::uint64_t> sizes = {8, 9, 10, 11};
      if (sizes[static_cast<std::size_t>(r)] == wrong) continue;
      sizes[static_cast<std::size_t>(r)] = wrong;
      CHECK(published(true, true, blocks(sizes), 0) != word);
    }
  }
  CHECK(published(true, true, blocks({8, 10, 9, 11}), 0) != word);
}

}  // namespace shmcoll
