#include "protocol/stream.hpp"

#include "base/text.hpp"
#include "copy/copy.hpp"

namespace shmcoll {
using sync::make_tag;
using sync::step_chunk;

namespace {

std::string mismatch_text(const StreamSource& src, int reader, const std::string& what) {
  return concat("mismatch in ", kind_name(src.kind), " (root ", src.root, ", operation #", src.op,
                "): rank ", src.writer, " ", what, " (seen by rank ", reader, ")");
}

}  // namespace

ChunkCopy plan_chunk_copy(const PublishedChunk& chunk, const StreamSource& src, std::uint64_t c,
                          std::uint64_t begin, std::uint64_t end, std::uint64_t slot_bytes) {
  ChunkCopy copy;
  if (chunk.kind != static_cast<std::uint8_t>(src.kind) ||
      chunk.root != static_cast<std::uint32_t>(src.root)) {
    copy.problem = ChunkProblem::kForeign;
    return copy;
  }
  const std::uint64_t bytes = chunk.stream_bytes;
  if (src.bytes_known ? bytes != src.bytes : end > bytes) {
    copy.problem = ChunkProblem::kLength;
    return copy;
  }
  // From here the stream's length is the reader's own expectation (or at least `end`), so the
  // chunk's bounds below come from values this rank chose, not from shared memory alone.
  const StreamShape shape{bytes, slot_bytes};
  const std::uint64_t lo = std::max(begin, shape.chunk_begin(c));
  const std::uint64_t hi = std::min(end, shape.chunk_end(c));
  if (lo < hi) {
    copy.from_inline = shape.is_inline();
    copy.source_offset = lo - shape.chunk_begin(c);
    copy.dest_offset = lo - begin;
    copy.bytes = hi - lo;
  }
  return copy;
}

std::string chunk_problem_text(ChunkProblem problem, const PublishedChunk& chunk,
                               const StreamSource& src, std::uint64_t end, int reader) {
  if (problem == ChunkProblem::kForeign) {
    return mismatch_text(src, reader,
                         concat("published data for ", kind_name(static_cast<Kind>(chunk.kind)),
                                " (root ", chunk.root, ")"));
  }
  const std::uint64_t bytes = chunk.stream_bytes;
  const std::string arg =
      src.indexed ? concat(src.count_name, '[', src.writer, ']') : std::string(src.count_name);
  return mismatch_text(src, reader,
                       src.bytes_known ? concat("sends ", bytes, " bytes, but rank ", reader, "'s ",
                                                arg, " x datatype gives ", src.bytes, " bytes")
                                       : concat("sends ", bytes, " bytes, but at least ", end,
                                                " bytes were expected"));
}

bool read_chunk(TeamImpl& team, const StreamSource& src, std::uint64_t c, std::uint64_t begin,
                std::uint64_t end, std::byte* dst, sync::WaitTarget& blocked_on) {
  const segment::RankArea writer = team.area(src.writer);
  const std::uint32_t s = team.slot_of(src.op, c);
  segment::SlotHeader& header = writer.slot_header(s);
  const std::uint64_t want = make_tag(src.op, step_chunk(c));
  sync::WaitTarget t{&header.tag, want, src.writer};
  if (!sync::reached(t)) {
    blocked_on = t;
    return false;
  }
  // acquire load above: the header and data written before the tag are visible now.
  if (header.tag.load(std::memory_order_acquire) != want) {
    team.fail(Status::kInvalidArgument,
              mismatch_text(src, team.rank(),
                            "overwrote a chunk this rank had not read: the ranks disagree on "
                            "the arguments"));
  }
  const PublishedChunk chunk{header.kind, header.root, header.stream_bytes};
  const ChunkCopy copy = plan_chunk_copy(chunk, src, c, begin, end, team.slot_bytes());
  if (copy.problem != ChunkProblem::kNone) [[unlikely]] {
    const Cause cause = copy.problem == ChunkProblem::kLength ? Cause::kSizeMismatch
                        : chunk.kind != static_cast<std::uint8_t>(src.kind)
                            ? Cause::kCollectiveMismatch
                            : Cause::kRootMismatch;
    team.fail(Status::kInvalidArgument,
              chunk_problem_text(copy.problem, chunk, src, end, team.rank()), cause);
  }
  if (copy.bytes > 0) {
    const std::byte* base = copy.from_inline
                                ? reinterpret_cast<const std::byte*>(header.inline_data)
                                : writer.slot_data(s);
    copy::copy_bytes(dst + copy.dest_offset, base + copy.source_offset, copy.bytes);
  }
  fault_point(FaultPoint::kChunkRead);
  return true;
}

void acknowledge_below(TeamImpl& team, std::uint64_t op, std::uint64_t chunk,
                       std::uint64_t& acked) {
  if (chunk > acked) {
    acked = chunk;
    team.publish_step(op, sync::step_consumed(chunk - 1));
  }
}

bool RangeReader::pull(TeamImpl& team, std::uint64_t& acked, sync::WaitTarget& blocked_on,
                       bool ack_last) {
  if (begin_ >= end_) return true;
  const std::uint64_t last = shape_.chunk_of(end_ - 1);
  for (; next_ <= last; ++next_) {
    // Release the chunks before this one first: the writer may need their slots to publish it.
    acknowledge_below(team, src_.op, next_, acked);
    if (!read_chunk(team, src_, next_, begin_, end_, dst_, blocked_on)) return false;
  }
  if (ack_last) acknowledge_below(team, src_.op, last + 1, acked);
  return true;
}

}  // namespace shmcoll
