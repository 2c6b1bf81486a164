// Streams made of, and read into, several pieces: what the tree algorithms need when a rank
// relays a subtree's blocks (coll/tree_scatter.hpp, coll/tree_gather.hpp).
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "base/plan_vector.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

// What a writer's stream is made of: pieces of memory at increasing stream offsets. Stream
// bytes no piece covers are left as they are in the slot (no reader reads them).
class StreamSources {
 public:
  void clear() { pieces_.clear(); }
  // In increasing, non-overlapping order; empty pieces are dropped.
  void add(std::uint64_t offset, const std::byte* src, std::uint64_t bytes) {
    if (bytes > 0) pieces_.emplace_back(offset, src, bytes);  // in place (see add_writer)
  }
  // Writes stream bytes [offset, offset + length) to dst (dst is stream offset `offset`).
  void fill(std::byte* dst, std::uint64_t offset, std::uint64_t length) const;

 private:
  struct Piece {
    // A constructor, so that emplace_back builds it in place with every compiler (C++20's
    // parenthesized aggregate initialization is not in clang 14).
    Piece(std::uint64_t offset_, const std::byte* src_, std::uint64_t bytes_)
        : offset(offset_), src(src_), bytes(bytes_) {}
    std::uint64_t offset;
    const std::byte* src;
    std::uint64_t bytes;
  };
  PlanVector<Piece> pieces_;
};

// Publishes `writer`'s chunks below `limit` with bytes from `sources` (see StreamWriter::pump).
template <class Readers>
bool pump_sources(TeamImpl& team, StreamWriter& writer, const StreamSources& sources,
                  Readers&& readers, sync::WaitTarget& blocked_on, std::uint64_t limit) {
  auto fill = [&](std::byte* dst, std::uint64_t offset, std::uint64_t length) {
    sources.fill(dst, offset, length);
  };
  return writer.pump(team, fill, readers, blocked_on, limit);
}

// Publishes `writer`'s stream, which is `data` alone, to the one rank `reader` (a gather
// sender's block, to the root or to its parent in the tree).
bool pump_buffer(TeamImpl& team, StreamWriter& writer, const std::byte* data, int reader,
                 sync::WaitTarget& blocked_on);

// Reads pieces of several writers' streams in one operation, chunk index by chunk index
// (rounds), so that this rank's single acknowledgement covers every stream it reads: chunk c is
// acknowledged once every piece byte in chunk c of every writer is copied (the rule GatherRoot
// follows too).
class PieceReader {
 public:
  void reset(std::uint64_t op, Kind kind, int root, std::uint64_t slot_bytes) {
    op_ = op;
    kind_ = kind;
    root_ = root;
    slot_bytes_ = slot_bytes;
    writers_.clear();
    restart();
  }
  // Room for `writers` writers at once: past the inline room, growing one by one would
  // allocate and move every Writer several times.
  void reserve_writers(std::size_t writers) { writers_.reserve(writers); }
  // Reads `writer`'s stream of this operation, whose length becomes known later (source(w)).
  // `count_name`, `indexed`: as in StreamSource. Returns the writer's index for add_piece.
  std::size_t add_writer(int writer, const char* count_name, bool indexed) {
    // Built in place, field by field: copying a freshly built StreamSource as a whole cost
    // more than the rest of a small call's plan (its wide loads wait for narrow stores).
    Writer& w = writers_.emplace_back();
    w.src.writer = writer;
    w.src.op = op_;
    w.src.kind = kind_;
    w.src.root = root_;
    w.src.bytes = 0;
    w.src.bytes_known = false;
    w.src.count_name = count_name;
    w.src.indexed = indexed;
    return writers_.size() - 1;
  }
  StreamSource& source(std::size_t w) { return writers_[w].src; }
  // Stream bytes [begin, end) go to dst. Per writer in increasing order, and one writer's
  // pieces after another's: all of writer w's before any of a later one's (every caller plans
  // child by child). Empty pieces are dropped.
  void add_piece(std::size_t w, std::uint64_t begin, std::uint64_t end, std::byte* dst) {
    if (begin >= end) return;
    Writer& writer = writers_[w];
    if (writer.first == writer.end) {
      writer.first = writer.end = writer.next = static_cast<std::uint32_t>(pieces_.size());
    }
    assert(writer.end == pieces_.size() && "pieces added writer by writer");
    pieces_.emplace_back(begin, end, dst);
    ++writer.end;
  }
  // Forgets the pieces (not the writers) and starts again from chunk 0: after a first pass that
  // read only the tables, whose chunks hold data read in the second pass.
  void restart() {
    pieces_.clear();
    for (Writer& w : writers_) w.first = w.end = w.next = 0;
    round_ = 0;
    next_writer_ = 0;
    started_ = false;
    last_chunk_ = 0;
  }

  // Copies every piece added. `acks`: acknowledge chunks once every writer's part of them is
  // copied (false for a first pass, whose chunks must stay unacknowledged). `ack_last`: also
  // the last chunk read (false when it can wait for this rank's departure, see last_chunk()).
  bool pull(TeamImpl& team, std::uint64_t& acked, sync::WaitTarget& blocked_on, bool acks,
            bool ack_last);
  // Stream offset of writer w below which every piece byte is copied.
  std::uint64_t copied_below(std::size_t w) const;
  bool read_anything() const { return started_; }
  // Whether this pass copied anything from writer w: its chunk headers were then compared
  // with what this rank expects (collective, root, stream length).
  bool read_from(std::size_t w) const { return writers_[w].first != writers_[w].end; }
  std::uint64_t last_chunk() const { return last_chunk_; }

 private:
  struct Piece {
    Piece(std::uint64_t begin_, std::uint64_t end_, std::byte* dst_)
        : begin(begin_), end(end_), dst(dst_) {}  // as StreamSources::Piece
    std::uint64_t begin, end;
    std::byte* dst;
  };
  // Its pieces are pieces_[first, end); pieces_[next] is the first not copied to its end.
  struct Writer {
    StreamSource src;
    std::uint32_t first = 0, end = 0, next = 0;
  };
  std::uint64_t chunk_of(std::uint64_t offset) const { return offset / slot_bytes_; }
  // The lowest chunk some writer still needs, or false when everything is copied.
  bool next_round(std::uint64_t& round) const;

  std::uint64_t op_ = 0;
  Kind kind_ = Kind::kBcast;
  int root_ = 0;
  std::uint64_t slot_bytes_ = 0;
  // Inline for a small team's children (a root's whole team in a one-level tree), one piece
  // each: planning an 8-byte call allocates nothing. All writers' pieces share one vector.
  PlanVector<Writer> writers_;
  PlanVector<Piece> pieces_;
  std::uint64_t round_ = 0;  // the chunk index being read
  std::size_t next_writer_ = 0;
  bool started_ = false;
  std::uint64_t last_chunk_ = 0;
};

}  // namespace shmcoll
