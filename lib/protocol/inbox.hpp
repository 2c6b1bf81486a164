// Records in a rank's inbox (segment::InboxRecord): a writer (a scatterv's root) puts into a
// record the receiver owns its signature, a size and either a small block itself or two words
// about a larger one; the receiver waits on its own record and reads everything there. Record
// op mod Inbox::kRecords serves operation op, and is rewritten only once its owner has left the
// operation that used it last, and DeferredChecks::kWindow more. What the words mean is the
// writer's algorithm's business (coll/scatterv/scatterv_inbox.hpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "protocol/deferred_checks.hpp"
#include "protocol/team_impl.hpp"
#include "segment/layout.hpp"
#include "sync/tag.hpp"
#include "sync/waiter.hpp"

namespace shmcoll::inbox {

using segment::InboxRecord;

inline std::uint64_t tag_of(std::uint64_t op) { return sync::make_tag(op, sync::kStepArrived); }

// Writer: whether receiver `r`'s record for `op` may be rewritten, i.e. r has left the operation
// that used the record last and the DeferredChecks::kWindow after it; otherwise `blocked_on` says
// what to wait for. Departures are monotone, so the cached lower bound of progress_reached answers
// most calls without reading r's progress line.
inline bool record_free(TeamImpl& team, int r, std::uint64_t op, sync::WaitTarget& blocked_on) {
  // Kept kWindow operations longer for a receiver that checks its record late
  // (deferred_checks.hpp).
  constexpr std::uint64_t kKept = segment::Inbox::kRecords - DeferredChecks::kWindow;
  if (op <= kKept) return true;
  const std::uint64_t left = sync::make_tag(op - kKept, sync::kStepDone);
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

// Writer: writes receiver `r`'s record of `op`. A block of at most kInlineBytes is copied into
// the record from `block`; a larger one is described by two words, `where` and `root_share`.
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
  std::uint64_t where = 0;       // payload[0] of a block that is not inline
  std::uint64_t root_share = 0;  // payload[1] of a block that is not inline
};

// Receiver: whether its record of `op` has been posted (acquire, as awaited()'s wait).
inline bool posted(TeamImpl& team, std::uint64_t op) {
  return team.self().inbox(op).tag.load(std::memory_order_acquire) == tag_of(op);
}

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

// Receiver: copies the inline block of the record of `op` to `dst`; `bytes` (the record's,
// checked by the caller) is at most kInlineBytes.
inline void copy_inline(TeamImpl& team, std::uint64_t op, std::uint64_t bytes, std::byte* dst) {
  InboxRecord& record = team.self().inbox(op);
  for (std::uint64_t w = 0; w * 8 < bytes; ++w)
    store_word(dst + 8 * w, bytes - 8 * w, record.payload[w].load(std::memory_order_relaxed));
}

}  // namespace shmcoll::inbox
