#include "protocol/pieces.hpp"

#include <algorithm>

#include "copy/copy.hpp"

namespace shmcoll {

void StreamSources::fill(std::byte* dst, std::uint64_t offset, std::uint64_t length) const {
  const std::uint64_t end = offset + length;
  // The first piece that ends after `offset`.
  auto it =
      std::upper_bound(pieces_.begin(), pieces_.end(), offset,
                       [](std::uint64_t o, const Piece& p) { return o < p.offset + p.bytes; });
  for (; it != pieces_.end() && it->offset < end; ++it) {
    const std::uint64_t lo = std::max(offset, it->offset);
    const std::uint64_t hi = std::min(end, it->offset + it->bytes);
    copy::copy_bytes(dst + (lo - offset), it->src + (lo - it->offset), hi - lo);
  }
}

bool pump_buffer(TeamImpl& team, StreamWriter& writer, const std::byte* data, int reader,
                 sync::WaitTarget& blocked_on) {
  auto fill = [&](std::byte* dst, std::uint64_t off, std::uint64_t len) {
    copy::copy_bytes(dst, data + off, len);
  };
  return writer.pump(
      team, fill, [&](std::uint64_t, std::vector<int>& out) { out.push_back(reader); }, blocked_on);
}

bool PieceReader::next_round(std::uint64_t& round) const {
  bool any = false;
  for (const Writer& w : writers_) {
    if (w.next >= w.end) continue;
    const std::uint64_t c = std::max(chunk_of(pieces_[w.next].begin), round_);
    round = any ? std::min(round, c) : c;
    any = true;
  }
  return any;
}

std::uint64_t PieceReader::copied_below(std::size_t w) const {
  const Writer& writer = writers_[w];
  if (writer.next >= writer.end) return UINT64_MAX;
  // Chunks below round_ are copied for every writer; round_ itself for this one once the loop
  // in pull has moved past it. Bytes before the next piece belong to no piece.
  const std::uint64_t done_chunks = round_ + (next_writer_ > w ? 1 : 0);
  return std::max(pieces_[writer.next].begin, done_chunks * slot_bytes_);
}

bool PieceReader::pull(TeamImpl& team, std::uint64_t& acked, sync::WaitTarget& blocked_on,
                       bool acks, bool ack_last) {
  for (;;) {
    if (next_writer_ == 0) {
      std::uint64_t round = 0;
      if (!next_round(round)) break;
      round_ = round;
      started_ = true;
    }
    // Release the chunks before this round first: a writer may need their slots to publish it.
    if (acks) acknowledge_below(team, op_, round_, acked);
    for (; next_writer_ < writers_.size(); ++next_writer_) {
      Writer& w = writers_[next_writer_];
      for (; w.next < w.end; ++w.next) {
        const Piece& p = pieces_[w.next];
        if (chunk_of(p.begin) > round_) break;
        // Copying the same chunk twice is harmless: its slot stays ours until we acknowledge.
        if (!read_chunk(team, w.src, round_, p.begin, p.end, p.dst, blocked_on)) return false;
        if (chunk_of(p.end - 1) > round_) break;  // the piece goes on in the next chunk
      }
    }
    last_chunk_ = round_;
    next_writer_ = 0;
    ++round_;
  }
  if (acks && ack_last && started_) acknowledge_below(team, op_, last_chunk_ + 1, acked);
  return true;
}

}  // namespace shmcoll
