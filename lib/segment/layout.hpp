// Layout of a team's shared segment. Everything is addressed by offsets from the segment base
// (each process maps it at its own address); sizes and offsets read from the header are
// validated against what this process computes before anything else is touched.
//
//   SegmentHeader                       2 lines
//   AbortRecord                         4 lines, then padding to a page boundary
//   RankArea[0 .. nranks)               rank_stride bytes each (a whole number of pages, so
//                                       that each area can live on its rank's NUMA node):
//     StatusLine                        1 line   arrival and signature, written by the owner
//     WakeLine                          1 line   epoch written by the owner, sleepers by waiters
//     ProgressLine                      1 line   acknowledgements and departure, by the owner
//     SignatureHistory                 12 lines  signatures of recent operations, by the owner
//     Inbox                           160 lines  32 scatterv records, by each operation's root
//     SlotHeader[slots]                 1 line each, written by the owner only
//     slot data[slots]                  slot_bytes each, cache-line aligned
//
// Arrival and progress live on different lines, two lines apart: peers read the arrival line
// when they check signatures, and if acknowledgements shared it every later store of the owner
// would first have to win the line back. Two lines apart keeps them out of one adjacent-line
// prefetch pair as well.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shmcoll/options.hpp"
#include "sync/wake_line.hpp"

namespace shmcoll::segment {

using sync::kCacheLine;
using sync::WakeLine;

inline constexpr std::uint64_t kMagic = 0x4c4c4f434d485321ull;  // "!SHMCOLL" little-endian
inline constexpr std::uint32_t kVersion = 13;
// The granule of NUMA placement (numa_placement.hpp): rank areas start on multiples of it. The
// base page size of the platforms shmcoll runs on; a larger page only coarsens the placement.
inline constexpr std::uint64_t kPageBytes = 4096;

struct alignas(kCacheLine) SegmentHeader {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t nranks;
  std::uint64_t layout_hash;
  std::uint64_t total_bytes;
  std::uint64_t slot_bytes;
  std::uint32_t slots;
  std::int32_t creator_pid;
  std::uint64_t ranks_offset;
  std::uint64_t rank_stride;
  // Published last by the creator (release); attachers acquire it before reading the rest.
  std::atomic<std::uint32_t> ready;
  std::atomic<std::uint32_t> attached;  // ranks that validated and mapped the segment
  // The creator's start time (sync::process_start_ticks): with creator_pid, whether the
  // process that made the segment still runs (stale_segments.hpp).
  std::uint64_t creator_start_ticks;
};
static_assert(sizeof(SegmentHeader) == 2 * kCacheLine);

// The first error of a team, written once and seen by every rank (see TeamImpl::record_abort).
struct alignas(kCacheLine) AbortRecord {
  static constexpr std::uint32_t kClear = 0, kWriting = 1, kSet = 2;
  std::atomic<std::uint32_t> state;  // kClear -> kWriting (CAS winner) -> kSet (release)
  std::int32_t rank;
  std::int32_t status;
  std::int32_t cause;  // a shmcoll::Cause; readers map unknown values to kUnspecified
  char message[4 * kCacheLine - 16];
};
static_assert(sizeof(AbortRecord) == 4 * kCacheLine);

// What a rank says about the operation it is in (see read_peer_arrival for the seqlock rule).
struct alignas(kCacheLine) StatusLine {
  std::atomic<std::uint64_t> tag;        // (op, kStepWriting or kStepArrived)
  std::atomic<std::uint64_t> signature;  // collective kind and root of `op`
  std::atomic<std::uint64_t> bytes;      // bytes this rank sends or receives in `op`
  // This rank's user buffer for `op` (its address space), for peers' single-copy transfers.
  std::atomic<std::uint64_t> address;
  // The operation in which this rank is writing into a peer's buffer right now (cross-memory
  // attach), 0 when it is not. Not part of the seqlock: a rank leaving an operation because of
  // an error waits until no peer writes into its buffers (SingleCopyExchange::drain).
  std::atomic<std::uint64_t> writing_op;
  // The shared allocation (Team::allocate_shared, adopt_shared; its team-wide id) that holds
  // the whole range the operation touches from `address` on, 0 for none: peers that map it
  // copy with memcpy instead of cross-memory attach. Part of the seqlock.
  std::atomic<std::uint64_t> shared_id;
  // A scatter's or gather's root: the weight its cooperative single copy splits each block by
  // (CopyBalance units), which its peers split by too. 0 elsewhere. Part of the seqlock.
  std::atomic<std::uint64_t> copy_weight;
  // The part of the buffer at `address` this rank put on huge pages (copy::pack_offsets), 0
  // for none known: a broadcast's pair splits its copy by it. Part of the seqlock.
  std::atomic<std::uint64_t> huge_pages;
};
static_assert(sizeof(StatusLine) == kCacheLine);

// How far a rank got: (op, step_consumed(c)) once it read chunk c of every stream it reads in
// `op`, (op, kStepDone) once it left `op`. Writers gate slot reuse on it.
struct alignas(kCacheLine) ProgressLine {
  std::atomic<std::uint64_t> tag;
  // The last operation in which this rank finished its single-copy transfers of a v-form
  // (scatterv, gatherv), where chunk acknowledgements in `tag` cannot say it, or of a single
  // copy it left without waiting for the root (SingleCopyExchange without a root share).
  std::atomic<std::uint64_t> copied_op;
  // The last v-form operation in which this rank, as its root, finished its share of the
  // single-copy blocks (the leading bytes of each, written into a scatterv receiver's buffer or
  // read from a gatherv sender's). Those ranks wait for it before they leave.
  std::atomic<std::uint64_t> shared_op;
  // The root's choice in the operations that may copy straight between shared buffers
  // (SharedCopyChoice): 2 x op + 1 where it chose that, 2 x op where it chose the slots.
  std::atomic<std::uint64_t> shared_copy_choice;
  // A broadcast pair's root: where it staged the head of the message for its peer
  // (coll/broadcast_split.hpp), valid once `tag` shows step_consumed(0) of that operation.
  std::atomic<std::uint64_t> staged_address;
  // 0 while this rank is in the team; 1 + the number of operations it ran once it has left
  // (TeamImpl::leave), for the ranks that leave after it to compare with their own.
  std::atomic<std::uint64_t> left_after;
};
static_assert(sizeof(ProgressLine) == kCacheLine);

// The signatures of this rank's last kEntries operations, for CheckLevel::kDeferred: a peer
// that arrives after this rank left an operation compares its own signature with the entry of
// that operation here (the status line shows only the current one). Entry op % kEntries holds
// operation `op`; the owner rewrites an entry only once every peer is a few operations past
// the one it held (CollectiveOp::record_signature: the window of deferred comparisons). Each entry
// is a seqlock on `op`, as the status line.
//
// Both this and the inbox bound how far a rank runs ahead of its slowest peer (in operations),
// which is what an oversubscribed team lives on: a rank that must stop hands its CPU to another,
// and the fewer stops the fewer context switches: 32 entries took small oversubscribed calls to
// a third of the context switches of 8, and 128 gained little more (docs/tuning.md).
struct alignas(kCacheLine) SignatureHistory {
  static constexpr std::uint64_t kEntries = 32;
  struct Entry {
    std::atomic<std::uint64_t> op;  // 0 while being written
    std::atomic<std::uint64_t> signature;
    std::atomic<std::uint64_t> bytes;
  };
  Entry entries[kEntries];
};
static_assert(sizeof(SignatureHistory) == 12 * kCacheLine);

// What the root of a scatterv leaves for one receiver (the only lines of a rank's area that
// other ranks write): the receiver's size as the root's sendcounts give it and the block itself
// when it fits, so that a small block costs its receiver one run of adjacent lines, with no
// table or stream to read first. Record op % kRecords holds operation op; its root rewrites it
// only a few operations after the owner has left operation op - kRecords (inbox::record_free).
// Every field is atomic: two ranks that both take themselves for the root (a user error, which they
// find between them) may write the same record at once.
//
// Five lines, 296 bytes of payload, so that blocks up to that size need no second, dependent
// read from the root's stream. The tag shares the first line with the size and the first 40
// bytes.
struct alignas(kCacheLine) InboxRecord {
  static constexpr std::size_t kLines = 5;
  static constexpr std::size_t kPayloadWords = (kLines * kCacheLine) / 8 - 3;
  static constexpr std::uint64_t kInlineBytes = 8 * kPayloadWords;
  std::atomic<std::uint64_t> tag;        // (op, kStepArrived), stored last (release)
  std::atomic<std::uint64_t> signature;  // the root's OpSignature::packed(): kind and root
  std::atomic<std::uint64_t> bytes;      // the receiver's block, by the root's sendcounts
  // The block when bytes <= kInlineBytes; otherwise payload[0] says where it is.
  std::atomic<std::uint64_t> payload[kPayloadWords];
};
static_assert(sizeof(InboxRecord) == InboxRecord::kLines * kCacheLine);
static_assert(InboxRecord::kInlineBytes == 296);

struct Inbox {
  static constexpr std::uint64_t kRecords = 32;
  InboxRecord records[kRecords];
};

// Flag line of one slot: the chunk tag, what the chunk belongs to, and small payloads inline,
// so a message of up to kInlineBytes costs the reader a single cache-line transfer.
struct alignas(kCacheLine) SlotHeader {
  static constexpr std::size_t kInlineBytes = 40;
  std::atomic<std::uint64_t> tag;  // (op, chunk + 1), stored last (release)
  std::uint8_t kind;
  std::uint8_t reserved[3];
  std::uint32_t root;
  std::uint64_t stream_bytes;  // length of the writer's whole stream in this operation
  std::uint8_t inline_data[kInlineBytes];
};
static_assert(sizeof(SlotHeader) == kCacheLine);

// Sizes of everything in the segment, derived from the team size and the slot parameters.
struct Geometry {
  std::uint32_t nranks = 0;
  std::uint32_t slots = 0;
  std::uint64_t slot_bytes = 0;

  std::uint64_t ranks_offset() const;
  std::uint64_t rank_stride() const;
  std::uint64_t total_bytes() const;

  // The geometry a team of `ranks` maps with `options` (SHMCOLL_SLOTS, SHMCOLL_SLOT_BYTES
  // rounded up to whole cache lines).
  static Geometry of(int ranks, const Options& options);
};

// Hash of the structure layout, so that two builds that disagree on it refuse to share.
std::uint64_t layout_hash();

// A view of one rank's area; computes addresses from the base and the geometry.
class RankArea {
 public:
  RankArea(std::byte* base, std::uint32_t slots, std::uint64_t slot_bytes)
      : base_(base), slots_(slots), slot_bytes_(slot_bytes) {}
  StatusLine& status() const { return *reinterpret_cast<StatusLine*>(base_); }
  WakeLine& wake() const { return *reinterpret_cast<WakeLine*>(base_ + kCacheLine); }
  ProgressLine& progress() const {
    return *reinterpret_cast<ProgressLine*>(base_ + 2 * kCacheLine);
  }
  SignatureHistory& history() const {
    return *reinterpret_cast<SignatureHistory*>(base_ + 3 * kCacheLine);
  }
  InboxRecord& inbox(std::uint64_t op) const {
    return reinterpret_cast<Inbox*>(base_ + 3 * kCacheLine + sizeof(SignatureHistory))
        ->records[op % Inbox::kRecords];
  }
  SlotHeader& slot_header(std::uint32_t s) const {
    return reinterpret_cast<SlotHeader*>(base_ + kControlLines * kCacheLine)[s];
  }
  std::byte* slot_data(std::uint32_t s) const {
    return base_ + (kControlLines + slots_) * kCacheLine + s * slot_bytes_;
  }
  // status, wake, progress, signature history, inbox
  static constexpr std::uint64_t kControlLines =
      3 + (sizeof(SignatureHistory) + sizeof(Inbox)) / kCacheLine;

 private:
  std::byte* base_;
  std::uint32_t slots_;
  std::uint64_t slot_bytes_;
};

}  // namespace shmcoll::segment
