#include "core/stream.hpp"

#include "copy/copy.hpp"
#include "core/text.hpp"

namespace shmcoll {
using sync::make_tag;
using sync::step_chunk;

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
  auto mismatch = [&](const std::string& what) {
    team.fail(Status::kInvalidArgument, std::string("mismatch in ") + kind_name(src.kind) +
                                            " (root " + std::to_string(src.root) + ", operation #" +
                                            std::to_string(src.op) + "): rank " +
                                            std::to_string(src.writer) + " " + what +
                                            " (seen by rank " + std::to_string(team.rank()) + ")");
  };
  // acquire load above: the header and data written before the tag are visible now.
  if (header.tag.load(std::memory_order_acquire) != want) {
    mismatch("overwrote a chunk this rank had not read: the ranks disagree on the arguments");
  }
  if (header.kind != static_cast<std::uint8_t>(src.kind) ||
      header.root != static_cast<std::uint32_t>(src.root)) {
    mismatch(concat("published data for ", kind_name(static_cast<Kind>(header.kind)), " (root ",
                    header.root, ")"));
  }
  const std::uint64_t bytes = header.stream_bytes;
  if (src.bytes_known ? bytes != src.bytes : end > bytes) {
    const std::string arg =
        src.indexed ? concat(src.count_name, '[', src.writer, ']') : std::string(src.count_name);
    mismatch(src.bytes_known
                 ? concat("sends ", bytes, " bytes, but rank ", team.rank(), "'s ", arg,
                          " x datatype gives ", src.bytes, " bytes")
                 : concat("sends ", bytes, " bytes, but at least ", end, " bytes were expected"));
  }
  const StreamShape shape{bytes, team.slot_bytes()};
  const std::uint64_t lo = std::max(begin, shape.chunk_begin(c));
  const std::uint64_t hi = std::min(end, shape.chunk_end(c));
  if (lo < hi) {
    const std::byte* base = shape.is_inline()
                                ? reinterpret_cast<const std::byte*>(header.inline_data)
                                : writer.slot_data(s);
    copy::copy_bytes(dst + (lo - begin), base + (lo - shape.chunk_begin(c)), hi - lo);
  }
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
