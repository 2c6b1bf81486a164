// What scatterv's root puts in its receivers' inbox records (protocol/inbox.hpp): each
// receiver's size and, for a block of up to 296 bytes, the block itself; a larger block goes
// through the root's stream (or a single copy), at the place the record names. A receiver thus
// finds everything it needs in one place of its own, without reading a table at the head of the
// root's stream, which the root writes only after laying out the whole stream.
#pragma once

#include <cstdint>
#include <cstring>

#include "protocol/inbox.hpp"
#include "protocol/operation.hpp"

namespace shmcoll::scatterv_inbox {

using inbox::awaited;
using inbox::copy_inline;
using inbox::InboxRecord;
using inbox::post;
using inbox::read;
using inbox::Record;
using inbox::record_free;

// Set in a record's payload[0] when the block does not travel in the stream: the receiver
// copies it itself from the root's buffer (single copy), and the rest of payload[0] is the
// block's place in that buffer; payload[1] is then the root's share, the block's leading
// bytes that the root writes itself (root_shares.hpp). Otherwise payload[0] is the block's
// offset in the root's stream.
inline constexpr std::uint64_t kDirect = std::uint64_t{1} << 63;

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

}  // namespace shmcoll::scatterv_inbox
