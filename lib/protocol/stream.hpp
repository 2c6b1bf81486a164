// Streams: the copy-in/copy-out primitive every flat algorithm is written in.
//
// In one operation a writer publishes a stream of bytes through its own slots: chunk c (bytes
// [c*S, (c+1)*S), S = slot bytes) goes into slot (op + c) mod K with tag (op, c + 1). A stream
// of at most SlotHeader::kInlineBytes travels inline in the slot's flag line. Readers copy the
// byte ranges they need and acknowledge chunks in their status line; the writer refills a slot
// only after the readers of its previous chunk acknowledged it (SlotRecord).
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/fault_points.hpp"
#include "protocol/signature.hpp"
#include "protocol/team_impl.hpp"
#include "segment/layout.hpp"
#include "sync/tag.hpp"
#include "sync/waiter.hpp"

namespace shmcoll {

struct StreamShape {
  std::uint64_t bytes = 0;
  std::uint64_t slot_bytes = 0;
  // Where chunk 0 lives: a stream of at most kInlineBytes sits in the slot's flag line. The
  // chunk geometry does not depend on it (slot_bytes >= 64 > kInlineBytes), so a reader that
  // does not know the stream's length still computes the right chunk for any offset.
  bool is_inline() const { return bytes <= segment::SlotHeader::kInlineBytes; }
  std::uint64_t chunk_bytes() const { return slot_bytes; }
  std::uint64_t chunks() const {
    // Most streams fit in one chunk: no division for them (it takes tens of cycles).
    if (bytes <= chunk_bytes()) return bytes == 0 ? 0 : 1;
    return (bytes + chunk_bytes() - 1) / chunk_bytes();
  }
  std::uint64_t chunk_begin(std::uint64_t c) const { return c * chunk_bytes(); }
  std::uint64_t chunk_end(std::uint64_t c) const {
    return std::min(bytes, (c + 1) * chunk_bytes());
  }
  std::uint64_t chunk_of(std::uint64_t offset) const { return offset / chunk_bytes(); }
};

// What a reader expects of the stream it reads.
struct StreamSource {
  int writer = 0;
  std::uint64_t op = 0;
  Kind kind = Kind::kBcast;
  int root = 0;
  std::uint64_t bytes = 0;  // expected stream length
  bool bytes_known = true;  // false: only check that the ranges read lie inside the stream
  // For error messages: the argument that gave `bytes`, indexed by the writer if `indexed`.
  const char* count_name = "count";
  bool indexed = false;
};

// What a reader makes of a published chunk's header: fields read from the writer's slot header
// (possibly garbage, or hostile), checked against what the reader expects before any byte is
// copied.
struct PublishedChunk {
  std::uint8_t kind;
  std::uint32_t root;
  std::uint64_t stream_bytes;
};
// Why a chunk cannot be read: it belongs to another collective or root, or its stream has
// another length than the reader expects (or is shorter than the range it reads).
enum class ChunkProblem : std::uint8_t { kNone, kForeign, kLength };
// The copy to make: `bytes` bytes from `source_offset` within the slot's data (or its inline
// area) to `dest_offset` from the reader's destination. Always inside both when `problem` is
// kNone: the slot (slot_bytes, or kInlineBytes inline) and the range [begin, end). The text of
// a problem is only made when there is one (chunk_problem_text): a string built and destroyed
// on every read cost small calls about 20 instructions.
struct ChunkCopy {
  ChunkProblem problem = ChunkProblem::kNone;
  bool from_inline = false;
  std::uint64_t source_offset = 0, dest_offset = 0, bytes = 0;
};
ChunkCopy plan_chunk_copy(const PublishedChunk& chunk, const StreamSource& src, std::uint64_t c,
                          std::uint64_t begin, std::uint64_t end, std::uint64_t slot_bytes);
// The error message for plan_chunk_copy's `problem` (not kNone), as rank `reader` reports it.
std::string chunk_problem_text(ChunkProblem problem, const PublishedChunk& chunk,
                               const StreamSource& src, std::uint64_t end, int reader);

// Copies the part of chunk `c` that overlaps stream range [begin, end) to dst, where dst
// corresponds to stream offset `begin`. Returns false (with `blocked_on`) while the chunk has
// not been published. Aborts the team if the chunk belongs to another collective or size.
bool read_chunk(TeamImpl& team, const StreamSource& src, std::uint64_t c, std::uint64_t begin,
                std::uint64_t end, std::byte* dst, sync::WaitTarget& blocked_on);

// Writer side of one operation's stream. `fill(dst, offset, length)` writes stream bytes
// [offset, offset + length) to dst; `readers(c, out)` appends the ranks that will read chunk c.
class StreamWriter {
 public:
  void start(std::uint64_t op, Kind kind, int root, std::uint64_t bytes, std::uint64_t slot_bytes) {
    op_ = op;
    kind_ = kind;
    root_ = root;
    shape_ = {bytes, slot_bytes};
    next_ = 0;
    gate_ = 0;
  }
  bool done() const { return next_ >= shape_.chunks(); }
  int root() const { return root_; }
  const StreamShape& shape() const { return shape_; }

  // Publishes chunks below `limit` (a relaying rank passes how many it has received). Returns
  // true when it caught up with min(limit, chunks()), false when blocked on a reader.
  template <class Fill, class Readers>
  bool pump(TeamImpl& team, Fill&& fill, Readers&& readers, sync::WaitTarget& blocked_on,
            std::uint64_t limit = UINT64_MAX) {
    const segment::RankArea self = team.self();
    const std::uint64_t end = std::min(shape_.chunks(), limit);
    while (next_ < end) {
      const std::uint32_t s = team.slot_of(op_, next_);
      SlotRecord& record = team.slot_record(s);
      // The slot-reuse rule: wait for every reader of the chunk this slot held last.
      for (; gate_ < record.readers.size(); ++gate_) {
        const int r = record.readers[gate_];
        if (!team.progress_reached(r, record.ack_tag)) {
          blocked_on = {&team.area(r).progress().tag, record.ack_tag, r};
          return false;
        }
      }
      gate_ = 0;
      segment::SlotHeader& header = self.slot_header(s);
      std::byte* dst =
          shape_.is_inline() ? reinterpret_cast<std::byte*>(header.inline_data) : self.slot_data(s);
      const std::uint64_t begin = shape_.chunk_begin(next_);
      fill(dst, begin, shape_.chunk_end(next_) - begin);
      header.kind = static_cast<std::uint8_t>(kind_);
      header.root = static_cast<std::uint32_t>(root_);
      header.stream_bytes = shape_.bytes;
      record.readers.clear();
      readers(next_, record.readers);
      record.ack_tag = sync::make_tag(op_, sync::step_consumed(next_));
      // Publishing the tag releases the data and header written above.
      team.publish(header.tag, sync::make_tag(op_, sync::step_chunk(next_)));
      fault_point(FaultPoint::kChunkPublished);
      ++next_;
    }
    return true;
  }

 private:
  std::uint64_t op_ = 0;
  Kind kind_ = Kind::kBcast;
  int root_ = 0;
  StreamShape shape_;
  std::uint64_t next_ = 0;
  std::size_t gate_ = 0;
};

// Reader side: reads one contiguous range of one writer's stream, chunk by chunk, and
// acknowledges each chunk once it is copied (and, before waiting for a later chunk, the chunks
// it skipped, so the writer can reuse their slots).
class RangeReader {
 public:
  void start(const StreamSource& src, std::uint64_t slot_bytes, std::uint64_t begin,
             std::uint64_t end, std::byte* dst) {
    src_ = src;
    shape_ = {src.bytes, slot_bytes};
    begin_ = begin;
    end_ = end;
    dst_ = dst;
    next_ = begin < end ? shape_.chunk_of(begin) : 0;
  }
  // `ack_last`: also acknowledge the range's last chunk when done (false when this rank will
  // read more of that chunk afterwards).
  bool pull(TeamImpl& team, std::uint64_t& acked, sync::WaitTarget& blocked_on,
            bool ack_last = true);
  bool empty() const { return begin_ >= end_; }
  int writer() const { return src_.writer; }
  std::uint64_t last_chunk() const { return shape_.chunk_of(end_ - 1); }

 private:
  StreamSource src_;
  StreamShape shape_;
  std::uint64_t begin_ = 0, end_ = 0, next_ = 0;
  std::byte* dst_ = nullptr;
};

// Acknowledges every chunk below `chunk` not yet acknowledged. `acked` counts the chunks this
// rank has acknowledged in the current operation.
void acknowledge_below(TeamImpl& team, std::uint64_t op, std::uint64_t chunk, std::uint64_t& acked);

}  // namespace shmcoll
