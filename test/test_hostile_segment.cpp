// Garbage in the shared segment, as a buggy or hostile process that maps it could leave: one
// rank scribbles plausible tags with random contents over its own control lines, slot headers
// and slots, the scatterv records a root writes into the others' lines (and sometimes the
// team's abort record), then stays alive without taking part. The other ranks run a
// collective against it. Whatever they read, they must end with a shmcoll
// error or a completed call, inside the deadline, with their buffers' guards intact: no value
// from shared memory may make a process read or write outside its buffers or the segment.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <random>

#include "protocol/signature.hpp"
#include "segment/layout.hpp"
#include "support/buffers.hpp"
#include "support/collective_checks.hpp"
#include "sync/tag.hpp"

namespace shmcoll::test {
namespace {

constexpr int kRanks = 3;
constexpr int kHostile = 1;
constexpr std::size_t kSlotBytes = 1024;
constexpr std::uint32_t kSlots = 2;
const segment::Geometry kGeometry{kRanks, kSlots, kSlotBytes};

// This process's mapping of its team's segment, found in /proc/self/maps (the name is removed
// from /dev/shm once every rank attached, so the mapping shows as deleted).
std::byte* find_segment_mapping() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("/dev/shm/shmcoll-") == std::string::npos) continue;
    return reinterpret_cast<std::byte*>(std::stoull(line.substr(0, line.find('-')), nullptr, 16));
  }
  return nullptr;
}

void scribble(std::byte* base, std::uint64_t op, Kind kind, std::uint64_t count,
              std::mt19937_64& rng) {
  const segment::RankArea area(base + kGeometry.ranks_offset() + kHostile * kGeometry.rank_stride(),
                               kSlots, kSlotBytes);
  auto random_bytes = [&](void* p, std::size_t n) {
    auto* b = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(rng());
  };
  // Sizes and offsets: small, near slot boundaries, or anything at all.
  auto random_size = [&]() -> std::uint64_t {
    switch (rng() % 3) {
      case 0:
        return rng() % 64;
      case 1:
        return rng() % (4 * kSlotBytes);
      default:
        return rng();
    }
  };
  for (std::uint32_t s = 0; s < kSlots; ++s) {
    random_bytes(area.slot_data(s), kSlotBytes);
    segment::SlotHeader& h = area.slot_header(s);
    random_bytes(h.inline_data, sizeof h.inline_data);
    h.kind = rng() % 2 ? static_cast<std::uint8_t>(kind) : static_cast<std::uint8_t>(rng());
    h.root = rng() % 2 ? kHostile : static_cast<std::uint32_t>(rng());
    h.stream_bytes = random_size();
    // The tag of the chunk the slot would hold in `op` (slot (op + c) mod K), so readers get past
    // their wait and on to the contents.
    const std::uint64_t c = (s + kSlots - op % kSlots) % kSlots;
    h.tag.store(sync::make_tag(op, sync::step_chunk(c)), std::memory_order_release);
  }
  // A scatterv root's records in the other ranks' inboxes (the only lines of theirs a root
  // writes): plausible or random signatures and sizes, a random place or inline block, the
  // direct bit sometimes set.
  for (int r = 0; r < kRanks; ++r) {
    if (r == kHostile) continue;
    const segment::RankArea peer(base + kGeometry.ranks_offset() + r * kGeometry.rank_stride(),
                                 kSlots, kSlotBytes);
    segment::InboxRecord& line = peer.inbox(op);
    line.signature.store(rng() % 2 ? (static_cast<std::uint64_t>(kind) | kHostile << 8) : rng());
    line.bytes.store(rng() % 2 ? count : random_size());  // count: what the receiver expects
    for (auto& word : line.payload) word.store(rng());
    if (rng() % 2)
      line.payload[0].store(rng() % 2 ? random_size() : (rng() | (std::uint64_t{1} << 63)));
    line.tag.store(sync::make_tag(op, sync::kStepArrived), std::memory_order_release);
  }
  segment::StatusLine& st = area.status();
  st.signature.store(rng() % 2 ? (static_cast<std::uint64_t>(kind) | kHostile << 8) : rng());
  st.bytes.store(random_size());
  st.address.store(rng());
  st.tag.store(sync::make_tag(op, sync::kStepArrived), std::memory_order_release);
  area.progress().tag.store(rng() % 2 ? sync::make_tag(op, sync::kStepDone) : rng());
  area.progress().copied_op.store(rng() % 2 ? op : rng());
  if (rng() % 8 == 0) {
    // A "team error" with an unterminated message and an unknown status.
    auto& record = *reinterpret_cast<segment::AbortRecord*>(base + sizeof(segment::SegmentHeader));
    std::memset(record.message, 'x', sizeof record.message);
    record.status = static_cast<std::int32_t>(rng());
    record.rank = static_cast<std::int32_t>(rng());
    record.state.store(segment::AbortRecord::kSet, std::memory_order_release);
  }
}

// The collective of `which` with root `root` and `count` elements (per rank or unit), in
// guarded buffers. Returns false if a guard was touched.
bool call(Team& team, int which, int root, std::uint64_t count) {
  const auto n = static_cast<std::size_t>(kRanks);
  GuardedBuffer mine(count), all(count * n);
  const std::vector<Count> counts(n, static_cast<Count>(count));
  std::vector<Count> displs(n);
  for (std::size_t r = 0; r < n; ++r) displs[r] = static_cast<Count>(r * count);
  const auto c = static_cast<Count>(count);
  switch (which) {
    case 0:
      team.bcast(mine.data(), c, kByte, root);
      break;
    case 1:
      team.scatter(all.data(), c, kByte, mine.data(), c, kByte, root);
      break;
    case 2:
      team.gather(mine.data(), c, kByte, all.data(), c, kByte, root);
      break;
    case 3:
      team.scatterv(all.data(), counts, displs, kByte, mine.data(), c, kByte, root);
      break;
    default:
      team.gatherv(mine.data(), c, kByte, all.data(), counts, displs, kByte, root);
      break;
  }
  return mine.guards_intact() && all.guards_intact();
}

}  // namespace

TEST_CASE("garbage in a peer's control lines and slots is an error and never a stray access" *
          doctest::test_suite("processes")) {
  const Kind kinds[] = {Kind::kBcast, Kind::kScatter, Kind::kGather, Kind::kScatterv,
                        Kind::kGatherv};
  for (std::uint64_t trial = 0; trial < 200; ++trial) {
    std::mt19937_64 pick(trial);
    const int which = static_cast<int>(pick() % 5);
    const int root = pick() % 3 == 0 ? 0 : kHostile;
    const std::uint64_t count = std::uint64_t{1} << (pick() % 17);  // 1 B .. 64 KiB
    const bool single_copy = pick() % 2 == 0;
    std::string job;
    auto outcome = run_ranks(
        {.nranks = kRanks, .deadline_s = 30},
        [&](RankContext& ctx) {
          Options o = test_options(kSlotBytes, kSlots);
          o.timeout_s = 1;
          o.single_copy_min_bytes = single_copy ? 1 : SIZE_MAX;
          o.single_copy = SingleCopy::kAlways;  // broadcast too, oversubscribed
          Team team(ctx.bootstrap, o);
          team.barrier();
          // Every rank out of that barrier (whose last checks read the peers' status lines)
          // before the garbage lands.
          ctx.bootstrap.barrier();
          if (ctx.rank == kHostile) {
            std::byte* base = find_segment_mapping();
            if (!ctx.check(base != nullptr, "segment mapping not found")) return;
            const auto* own = reinterpret_cast<segment::StatusLine*>(
                base + kGeometry.ranks_offset() + kHostile * kGeometry.rank_stride());
            const std::uint64_t next_op = sync::op_of(own->tag.load()) + 1;
            std::mt19937_64 rng(trial * 7919 + 1);
            scribble(base, next_op, kinds[which], count, rng);
            // Stay alive (so only the contents can stop the others) until they are done.
            ctx.bootstrap.barrier();
            return;
          }
          try {
            ctx.check(call(team, which, root, count), "a guard byte around a buffer changed");
          } catch (const Error& e) {
            // What the first trials' garbage was reported as, for the log.
            if (trial < 8) {
              std::printf("trial %llu rank %d: %.160s\n", static_cast<unsigned long long>(trial),
                          ctx.rank, e.what());
            }
          }
          ctx.bootstrap.barrier();
        },
        &job);
    INFO("trial " << trial << " (" << kind_name(kinds[which]) << ", root " << root << ", " << count
                  << " bytes): " << outcome.summary());
    CHECK(outcome.succeeded());
    CHECK(leftover_segments(job).empty());
  }
}

}  // namespace shmcoll::test
