// Fuzz target: everything shmcoll reads from memory other processes write, and the argument
// checks in front of every collective. The first input byte picks the part:
//   0: a segment header (random bytes) against a random expected geometry -- attach's check;
//   1: a published chunk's header (kind, root, stream length) against a reader's expectation
//      -- the check before every copy out of a slot;
//   2: a scatterv record -- where a receiver finds its block;
//   3: random v-form counts, displacements and datatype -- validate::blocks and no_overlap;
//   4: random scatter/gather arguments -- validate::uniform_blocks;
//   5: a root's published copy weight -- the share of each block its peers leave it.
// Whatever the input, nothing may crash, and every accepted value must keep each access inside
// the segment, the slot, the stream or the caller's buffer: the target checks those invariants
// and traps when one fails.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "coll/copy_balance.hpp"
#include "coll/scatterv/scatterv_inbox.hpp"
#include "coll/single_copy.hpp"
#include "fuzz/input.hpp"
#include "protocol/stream.hpp"
#include "protocol/validation.hpp"
#include "segment/segment.hpp"
#include "shmcoll/error.hpp"

namespace shmcoll::fuzz {
namespace {

void require(bool invariant) {
  if (!invariant) __builtin_trap();
}

void segment_header(Input& in) {
  const segment::Geometry expected{in.take<std::uint32_t>() % 4096 + 1,
                                   in.take<std::uint32_t>() % 64 + 1,
                                   (in.take<std::uint64_t>() % 4096 + 1) * 64};
  // A header built from raw bytes, as a hostile or broken creator could leave it; sometimes
  // starting from a valid header with a few fields changed, so that the later checks are reached.
  alignas(segment::SegmentHeader) unsigned char raw[sizeof(segment::SegmentHeader)];
  std::memset(raw, 0, sizeof raw);
  auto* h = reinterpret_cast<segment::SegmentHeader*>(raw);
  if (in.take<std::uint8_t>() % 2 == 0) {
    h->magic = segment::kMagic;
    h->version = segment::kVersion;
    h->nranks = expected.nranks;
    h->layout_hash = segment::layout_hash();
    h->total_bytes = expected.total_bytes();
    h->slot_bytes = expected.slot_bytes;
    h->slots = expected.slots;
    h->ranks_offset = expected.ranks_offset();
    h->rank_stride = expected.rank_stride();
    const std::size_t at = in.take<std::uint8_t>() % sizeof raw;
    const std::size_t n = std::min<std::size_t>(in.take<std::uint8_t>() % 9, sizeof raw - at);
    in.fill(raw + at, n);
  } else {
    in.fill(raw, sizeof raw);
  }
  const std::uint64_t object =
      in.take<std::uint8_t>() % 2 ? expected.total_bytes() : in.take<std::uint64_t>();
  if (segment::check_header(*h, object, expected).empty()) {
    // Accepted: everything a process derives from the segment lies inside the object.
    require(h->magic == segment::kMagic && h->version == segment::kVersion);
    require(object == expected.total_bytes() && h->total_bytes == object);
    require(h->ranks_offset + std::uint64_t{expected.nranks} * h->rank_stride <= object);
    require(h->rank_stride >= (segment::RankArea::kControlLines + h->slots) * 64 +
                                  std::uint64_t{h->slots} * h->slot_bytes);
  }
}

void chunk_header(Input& in) {
  const std::uint64_t slot_bytes = (in.take<std::uint32_t>() % 1024 + 1) * 64;
  StreamSource src;
  src.writer = in.take<std::uint8_t>();
  src.op = in.take<std::uint64_t>();
  src.kind = static_cast<Kind>(in.take<std::uint8_t>() % 7);  // 0: no collective
  src.root = in.take<std::uint8_t>();
  src.bytes_known = in.take<std::uint8_t>() % 2 == 0;
  src.bytes = in.take<std::uint64_t>() >> (in.take<std::uint8_t>() % 64);
  src.indexed = in.take<std::uint8_t>() % 2 == 0;
  // The reader's own range [begin, end): at most 2^62 each, as validation guarantees.
  constexpr std::uint64_t kMax = std::uint64_t{1} << 62;
  const std::uint64_t begin = (in.take<std::uint64_t>() >> (in.take<std::uint8_t>() % 64)) % kMax;
  const std::uint64_t end =
      begin + (in.take<std::uint64_t>() >> (in.take<std::uint8_t>() % 64)) % kMax;
  // The reader reads chunks of its own range only.
  const std::uint64_t first = begin / slot_bytes;
  const std::uint64_t last = end > begin ? (end - 1) / slot_bytes : first;
  const std::uint64_t c = first + in.take<std::uint64_t>() % (last - first + 1);
  PublishedChunk published{in.take<std::uint8_t>(), in.take<std::uint32_t>(),
                           in.take<std::uint64_t>()};
  if (in.take<std::uint8_t>() % 2 == 0) {  // often a matching header, to reach the copy plan
    published.kind = static_cast<std::uint8_t>(src.kind);
    published.root = static_cast<std::uint32_t>(src.root);
  }
  const ChunkCopy copy = plan_chunk_copy(published, src, c, begin, end, slot_bytes);
  if (copy.problem != ChunkProblem::kNone) {
    require(!chunk_problem_text(copy.problem, published, src, end, 0).empty());
  } else if (copy.bytes > 0) {
    const std::uint64_t room = copy.from_inline ? segment::SlotHeader::kInlineBytes : slot_bytes;
    require(copy.source_offset <= room && copy.bytes <= room - copy.source_offset);
    require(end >= begin && copy.dest_offset <= end - begin &&
            copy.bytes <= end - begin - copy.dest_offset);
    if (src.bytes_known) require(published.stream_bytes == src.bytes);
  }
}

void scatterv_record(Input& in) {
  scatterv_inbox::Record rec{in.take<std::uint64_t>(), in.take<std::uint64_t>(),
                             in.take<std::uint64_t>()};
  const std::uint64_t signature = in.take<std::uint8_t>();
  const std::uint64_t expected = in.take<std::uint64_t>() % ((std::uint64_t{1} << 62) + 1);
  if (in.take<std::uint8_t>() % 2 == 0) rec.signature = signature;
  if (in.take<std::uint8_t>() % 2 == 0) rec.bytes = expected;
  switch (scatterv_inbox::classify(rec, signature, expected)) {
    case scatterv_inbox::RecordUse::kInStream: {
      std::uint64_t end = 0;
      require(!__builtin_add_overflow(rec.where, rec.bytes, &end));
      require(rec.bytes == expected && rec.signature == signature);
      break;
    }
    case scatterv_inbox::RecordUse::kInline:
      require(rec.bytes == expected && rec.bytes <= segment::InboxRecord::kInlineBytes);
      break;
    default:
      break;
  }
}

validate::Context random_context(Input& in) {
  const int size = in.take<std::uint8_t>() % 64 + 1;
  return {static_cast<Kind>(in.take<std::uint8_t>() % 5 + 1), in.take<std::uint8_t>() % size, size,
          static_cast<int>(in.take<std::uint32_t>() % 80) - 8, 65536};
}

Count random_count(Input& in) {
  switch (in.take<std::uint8_t>() % 4) {
    case 0:
      return in.take<std::uint8_t>();
    case 1:
      return static_cast<Count>(in.take<std::uint64_t>());
    case 2:
      return -static_cast<Count>(in.take<std::uint8_t>());
    default:
      return static_cast<Count>(in.take<std::uint32_t>());
  }
}

void v_arguments(Input& in) {
  const validate::Context ctx = random_context(in);
  const std::size_t n = static_cast<std::size_t>(ctx.size) + in.take<std::uint8_t>() % 3 - 1;
  std::vector<Count> counts(n), displs(n);
  for (std::size_t r = 0; r < n; ++r) {
    counts[r] = random_count(in);
    displs[r] = random_count(in);
  }
  const Datatype type{static_cast<std::size_t>(in.take<std::uint8_t>() % 17), "fuzz"};
  try {
    const auto blocks = validate::blocks(ctx, "counts", counts, "displs", displs, type);
    require(blocks.size() == static_cast<std::size_t>(ctx.size));
    for (std::size_t r = 0; r < blocks.size(); ++r) {
      require(counts[r] >= 0 && displs[r] >= 0);
      require(blocks[r].bytes == static_cast<std::uint64_t>(counts[r]) * type.size);
      require(blocks[r].offset == static_cast<std::uint64_t>(displs[r]) * type.size);
      require(blocks[r].offset + blocks[r].bytes <= (std::uint64_t{1} << 62));
    }
    bool disjoint = true;
    for (std::size_t a = 0; a < blocks.size(); ++a) {
      for (std::size_t b = a + 1; b < blocks.size(); ++b) {
        const auto& x = blocks[a];
        const auto& y = blocks[b];
        if (x.bytes > 0 && y.bytes > 0 && x.offset < y.offset + y.bytes &&
            y.offset < x.offset + x.bytes) {
          disjoint = false;
        }
      }
    }
    try {
      validate::no_overlap(ctx, as_span(blocks), "counts", "displs", "read");
      require(disjoint);
    } catch (const InvalidArgument&) {
      require(!disjoint);
    }
  } catch (const InvalidArgument& e) {
    require(std::strstr(e.what(), " on rank ") != nullptr);
  }
}

void uniform_arguments(Input& in) {
  const validate::Context ctx = random_context(in);
  static const char some_buffer[1] = {};
  auto side = [&](const char* count_name, const char* buffer_name) {
    return validate::Side{count_name, random_count(in),
                          Datatype{static_cast<std::size_t>(in.take<std::uint8_t>() % 17), "fuzz"},
                          buffer_name, in.take<std::uint8_t>() % 4 ? some_buffer : nullptr};
  };
  const validate::Side whole = side("sendcount", "sendbuf");
  const validate::Side own = side("recvcount", "recvbuf");
  const bool in_place = in.take<std::uint8_t>() % 2 == 0;
  try {
    validate::common(ctx, in_place);
    const std::uint64_t b = validate::uniform_blocks(ctx, whole, own, in_place);
    require(ctx.root >= 0 && ctx.root < ctx.size);
    require(b <= (std::uint64_t{1} << 62));
    if (ctx.is_root())
      require(b * static_cast<std::uint64_t>(ctx.size) <= (std::uint64_t{1} << 62));
    const validate::Side& counted = ctx.is_root() ? whole : own;
    require(counted.count >= 0 && counted.type.size > 0);
    require(b == static_cast<std::uint64_t>(counted.count) * counted.type.size);
    if (b > 0) require(counted.buffer != nullptr);
  } catch (const InvalidArgument& e) {
    require(std::strstr(e.what(), " on rank ") != nullptr);
  }
}

}  // namespace

// A peer of a cooperative single copy splits each block by the weight the root published in its
// status line (SingleCopyExchange::settle_root_share): whatever that word holds, the root's share
// must stay within the block, or the peer's part would start past it.
void root_copy_weight(Input& in) {
  const std::uint64_t units = in.take<std::uint64_t>();
  const std::uint64_t block = in.take<std::uint64_t>() % (validate::kMaxBytes + 1);
  const int sharers = in.take<std::uint16_t>() % 4096 + 1;
  const double weight = CopyBalance::fraction(units);
  require(weight >= 0.25 && weight <= 1.0);
  require(SingleCopyExchange::balanced_root_share(block, sharers, block, weight) <= block);
}

void run_one(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  switch (in.take<std::uint8_t>() % 6) {
    case 0:
      segment_header(in);
      break;
    case 1:
      chunk_header(in);
      break;
    case 2:
      scatterv_record(in);
      break;
    case 3:
      v_arguments(in);
      break;
    case 5:
      root_copy_weight(in);
      break;
    default:
      uniform_arguments(in);
      break;
  }
}

}  // namespace shmcoll::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  shmcoll::fuzz::run_one(data, size);
  return 0;
}
