// Scatterv's records in the receivers' inboxes (segment::InboxRecord): the root writes each
// receiver its size and, for a block of up to 296 bytes, the block itself, into a record the
// receiver owns. A receiver waits on its own record and finds everything it needs there; only
// larger blocks then go through the root's stream (or a single copy), at the place the record
// names. Before this, every receiver read a table at the head of the root's stream first:
// three lines from the root's slots for an 8-byte block, written after the root had laid out
// the whole stream.
#pragma once

#include <cstdint>
#include <cstring>

#include "protocol/operation.hpp"
#include "protocol/team_impl.hpp"
#include "segment/layout.hpp"
#include "sync/tag.hpp"
#include "sync/waiter.hpp"

namespace shmcoll::scatterv_inbox {

using segment::InboxRecord;

// Set in a record's payload[0] when the block does not travel in the stream: the receiver
// copies it itself from the root's buffer (single copy), and the rest of payload[0] is the
// block's place in that buffer; payload[1] is then the root's share, the block's leading
// bytes that the root writes itself (root_shares.hpp). Otherwise payload[0] is the block's
// offset in the root's stream.
inline constexpr std::uint64_t kDirect = std::uint64_t{1} << 63;

inline std::uint64_t tag_of(std::uint64_t op) { return sync::make_tag(op, sync::kStepArrived); }

// Root: whether receiver `r`'s record for `op` may be rewritten, i.e. r has left the operation
// that used the record last; otherwise `blocked_on` says what to wait for. Departures are
// monotone, so the cached lower bound of progress_reached answers most calls without reading
// r's progress line.
inline bool record_free(TeamImpl& team, int r, std::uint64_t op, sync::WaitTarget& blocked_on) {
  if (op <= segment::Inbox::kRecords) return true;
  const std::uint64_t left = sync::make_tag(op - segment::Inbox::kRecords, sync::kStepDone);
  // progress_reached loads with acquire: r's reads of the record's last contents happen before
  // the stores below.
  if (team.progress_reached(r, left)) return true;
  blocked_on = {&team.area(r).progress().tag, left, r};
  return false;
}

// The next at most 8 of `left` bytes at `p` as a word (zero-filled), and back: fixed-size
// copies for whole words, so that the few bytes of a record cost no call to memcpy.
inline std::uint64_t load_word(const std::byte* p, std::uint64_t left) {
  std::uint64_t v = 0;
  if (left >= 8) {
    std::memcpy(&v, p, 8);
  } else {
    for (std::uint64_t i = 0; i < left; ++i) reinterpret_cast<std::byte*>(&v)[i] = p[i];
  }
  return v;
}
inline void store_word(std::byte* p, std::uint64_t left, std::uint64_t v) {
  if (left >= 8) {
    std::memcpy(p, &v, 8);
  } else {
    for (std::uint64_t i = 0; i < left; ++i) p[i] = reinterpret_cast<const std::byte*>(&v)[i];
  }
}

// Root: writes receiver `r`'s record of `op`. A block of at most kInlineBytes is copied into
// the record from `block`; a larger one is described by `where` (and `root_share`, see kDirect).
inline void post(TeamImpl& team, int r, std::uint64_t op, std::uint64_t signature,
                 std::uint64_t bytes, const std::byte* block, std::uint64_t where,
                 std::uint64_t root_share) {
  InboxRecord& record = team.area(r).inbox(op);
  // relaxed: the release store of the tag below publishes them.
  record.signature.store(signature, std::memory_order_relaxed);
  record.bytes.store(bytes, std::memory_order_relaxed);
  if (bytes <= InboxRecord::kInlineBytes) {
    for (std::uint64_t w = 0; w * 8 < bytes; ++w)
      record.payload[w].store(load_word(block + 8 * w, bytes - 8 * w), std::memory_order_relaxed);
  } else {
    record.payload[0].store(where, std::memory_order_relaxed);
    record.payload[1].store(root_share, std::memory_order_relaxed);
  }
  // release (publish): the fields above are visible to the owner once it sees the tag.
  team.publish(record.tag, tag_of(op));
}

// Receiver: the wait for this rank's record of `op` from `root` (its slow-path checks look at
// the root).
inline sync::WaitTarget awaited(TeamImpl& team, std::uint64_t op, int root) {
  return {&team.self().inbox(op).tag, tag_of(op), root};
}

// What the receiver read from its record.
struct Record {
  std::uint64_t signature = 0;
  std::uint64_t bytes = 0;
  std::uint64_t where = 0;       // payload[0]: the block's place when it is not inline
  std::uint64_t root_share = 0;  // payload[1] of a direct block: the bytes the root writes
};

// Receiver, once awaited() is reached (its acquire load makes the fields visible): reads the
// record of `op`. The owner reads its record while no root may rewrite it (record_free), but a
// second rank wrongly taking itself for the root could, so the caller checks what it read
// before it trusts it.
inline Record read(TeamImpl& team, std::uint64_t op) {
  InboxRecord& record = team.self().inbox(op);
  Record rec;
  rec.signature = record.signature.load(std::memory_order_relaxed);
  rec.bytes = record.bytes.load(std::memory_order_relaxed);
  rec.where = record.payload[0].load(std::memory_order_relaxed);
  rec.root_share = record.payload[1].load(std::memory_order_relaxed);
  return rec;
}

// What a receiver may do with the record it read (shared memory: garbage or hostile values
// must not make it read outside the stream or its own buffer).
enum class RecordUse {
  kOtherCall,  // another collective or root: the caller reports it from the signature
  kMismatch,   // the root sends another number of bytes than this rank receives
  kCorrupt,    // a streamed block's offset beyond any possible stream, a share beyond its block
  kInline,     // the block is in the record
  kDirect,     // this rank copies its block itself from the root's buffer
  kInStream,   // the block is at `where` in the root's stream
};
// For kInStream, where + bytes cannot overflow (both are at most 2^62).
inline RecordUse classify(const Record& rec, std::uint64_t signature, std::uint64_t bytes) {
  constexpr std::uint64_t kMaxOffset = std::uint64_t{1} << 62;
  if (rec.signature != signature) return RecordUse::kOtherCall;
  if (rec.bytes != bytes) return RecordUse::kMismatch;
  if (rec.bytes <= InboxRecord::kInlineBytes) return RecordUse::kInline;
  if ((rec.where & kDirect) != 0)
    return rec.root_share < rec.bytes ? RecordUse::kDirect : RecordUse::kCorrupt;
  return rec.where > kMaxOffset || rec.bytes > kMaxOffset ? RecordUse::kCorrupt
                                                          : RecordUse::kInStream;
}

// Receiver: raises the error that a record it cannot use (kOtherCall, kMismatch, kCorrupt)
// stands for, naming operation `op`, this rank and the values.
[[noreturn]] void fail_unusable(const CollectiveOp& op, TeamImpl& team, RecordUse use,
                                const Record& rec);

// Receiver: copies the inline block of the record of `op` to `dst`; `bytes` (the record's,
// checked by the caller) is at most kInlineBytes.
inline void copy_inline(TeamImpl& team, std::uint64_t op, std::uint64_t bytes, std::byte* dst) {
  InboxRecord& record = team.self().inbox(op);
  for (std::uint64_t w = 0; w * 8 < bytes; ++w)
    store_word(dst + 8 * w, bytes - 8 * w, record.payload[w].load(std::memory_order_relaxed));
}

}  // namespace shmcoll::scatterv_inbox
