// A collective operation as a resumable state machine. advance() does what it can without
// blocking and reports what it waits for; the blocking calls drive it in a loop (TeamImpl::run)
// and non-blocking requests will drive the same machines from test()/wait().
//
// Every operation goes through the same stages:
//   start    number the operation, publish arrival and signature in this rank's status line
//   data     the algorithm's own work (advance_data), in chunks
//   agree    CheckLevel::kFull and barriers: every peer's signature for this operation
//            matches (a peer already past this operation has checked ours);
//            CheckLevel::kDeferred: the same for the peers that arrived before this rank, read
//            from their status or history, without waiting for the others (they compare
//            themselves with this rank when they arrive), or, in an operation in which this
//            rank moves nothing (quiet_), later in a batch (deferred_checks.hpp); then this
//            rank's signature goes into its history for them
//   verdict  when the algorithm asks for it, wait until the root has finished its checks
//   done     publish departure
// The stage machine is operation.cpp; the comparisons of the agree stage, and those a slow wait
// or a later arrival makes, are cross_checks.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/buffer_guard.hpp"
#include "protocol/signature.hpp"
#include "protocol/team_impl.hpp"
#include "sync/waiter.hpp"

namespace shmcoll {

class CollectiveOp {
 public:
  CollectiveOp(TeamImpl& team, const OpSignature& sig) : team_(team), sig_(sig) {}
  virtual ~CollectiveOp() = default;
  CollectiveOp(const CollectiveOp&) = delete;
  CollectiveOp& operator=(const CollectiveOp&) = delete;

  // True when the operation is complete on this rank; otherwise `blocked_on` says what it
  // waits for.
  bool advance(sync::WaitTarget& blocked_on);
  // Only the start stage (numbering, arrival), if not done yet: what a caller that leaves the
  // rest to a progress thread does, so that peers waiting for this rank can go on.
  void arrive();
  // Set by the blocking calls (TeamImpl::run), which drive the operation to its end with the
  // team's lock held: its steps need not yield (SteppedTransfer).
  void mark_blocking() { blocking_ = true; }
  bool blocking() const { return blocking_; }

  const OpSignature& signature() const { return sig_; }
  std::uint64_t op() const { return op_; }
  // What this rank published as a root's copy weight with its arrival (offer_copy_weight).
  std::uint64_t offered_copy_weight() const { return copy_weight_; }

  // Called when this rank leaves the operation because of an error (the team is aborted), before
  // the error reaches the caller: an algorithm whose peers may still write into this rank's
  // buffers waits here until they no longer do.
  virtual void abandon() {}

  // Compares a peer's published signature for this operation with ours; aborts the team on a
  // mismatch. Inline for the common case, the same word and the size expected: most calls make
  // at least one such comparison. A v-form root's `bytes` is its word about the others' sizes
  // (root_word): a size expected of it is compared only where that word is uniform.
  void check_peer_signature(int peer, std::uint64_t packed, std::uint64_t bytes) const {
    if (packed == sig_.packed()) {
      const std::int64_t expected = expected_peer_bytes(peer);
      // Without the uniform bit: a v-form root's uniform word of the expected size matches here
      // too (a gatherv sender's every call). Sizes never carry that bit (validate::kMaxBytes).
      if (expected < 0 || (bytes & ~root_word::kUniform) == static_cast<std::uint64_t>(expected))
        return;
    }
    compare_peer_signature(peer, packed, bytes);
  }
  // The words of a size mismatch with a v-form root's uniform word of `size` bytes.
  std::string root_word_text(std::int64_t size) const;
  // CheckLevel::kDeferred: the same for a peer that has left this operation, from the
  // signature it left in its history; returns the size it left there.
  std::uint64_t compare_with_history(int peer) const;

  // "bcast (root 3)" (the operation's number, once started, is op()).
  std::string where() const;

  // Debug builds: the caller's memory this operation only reads (see base/buffer_guard.hpp).
  const std::vector<ByteRange>& lent_ranges() const { return lent_; }

 protected:
  virtual bool advance_data(sync::WaitTarget& blocked_on) = 0;
  // Local work done once op() is known, before this rank announces its arrival: building a
  // plan writes many small structs, and right after the arrival's stores to a shared line
  // (whose ownership takes a cross-core round trip) those writes fill the store buffer and
  // stall the core until that round trip is over. Only local memory: nothing a peer sees.
  // It delays the arrival, which peers may wait for: worth it for the v-forms along the tree,
  // not for the uniform forms, whose plans are small, nor for the gatherv root once its plan
  // was kept from call to call (see GathervOp; docs/tuning.md).
  virtual void plan_before_arrival() {}
  // Whether this rank may stage part of its exposed buffer for its peer when that part sits on
  // small pages (a broadcast pair's root: coll/broadcast_split.hpp); it then claims the team's
  // staging buffer for the operation before its arrival, and must release it when done.
  virtual bool may_stage() const { return false; }
  // The bytes `peer` must report, or -1 if this rank does not check them. Of a v-form root: the
  // size its word must give this rank, where it gives one (check_peer_signature).
  virtual std::int64_t expected_peer_bytes(int peer) const;
  // Text for a count mismatch with `peer`, describing what this rank expected.
  virtual std::string expected_bytes_text(int peer) const;
  // True on ranks that must not return before the root has checked everything (never the root).
  virtual bool needs_root_verdict() const { return false; }
  // True when the data stage already compared `peer`'s kind, root and size with ours (a chunk
  // header carries them), which makes the agree stage's check of that peer redundant.
  virtual bool checked_in_data_path(int) const { return false; }
  // CheckLevel::kDeferred: peers this rank waits for and compares, not only if they arrived in
  // time. For a pair whose size only this rank can check and no read of its data checks: if
  // the peer came late, nothing else would (a gatherv root and a rank it expects nothing from).
  // Asked only where the operation set has_must_compare_ (kept off every call's hot path).
  virtual bool must_compare(int) const { return false; }

  // CheckLevel::kDeferred: what compare_arrived_peers does for a rank that no shortcut serves:
  // compares this rank with every peer that arrived, or left, with a fence for the pairing.
  void compare_everyone_arrived();

  // The data stage's last acknowledgement, published only if this rank must wait before it
  // departs (a departure acknowledges everything), saving one store to a shared line.
  void defer_final_ack(std::uint64_t step) { deferred_ack_step_ = step; }
  // The root, from its constructor: `bytes` of data it stores in this call into lines its peers
  // read (a stream, records). From kEarlyFenceBytes on, under CheckLevel::kDeferred and in a
  // team with a CPU per rank, the fence of its comparisons runs at its arrival instead of
  // after the data (see arrive).
  void expect_root_stores(std::uint64_t bytes) { fence_at_arrival_ = bytes >= kEarlyFenceBytes; }
  static constexpr std::uint64_t kEarlyFenceBytes = 1024;

  // Records memory the operation reads from its caller, in debug builds only.
  void lend(const void* data, std::uint64_t bytes) {
    if constexpr (kDebugChecks) {
      if (bytes > 0) lent_.push_back({static_cast<const std::byte*>(data), bytes});
    }
  }

  // Set by the algorithms that can move data with a single copy, before the operation starts:
  // the buffer peers may copy from or into, and the bytes from there the operation touches
  // (0 where it is not known, as at a v-form's root: then only its start is looked up), and
  // whether peers copy from or into it with cross-memory attach in this call (the algorithm's
  // choice): such a buffer moves onto huge pages before the arrival (Options::huge_pages).
  void expose(const void* buffer, std::uint64_t bytes, bool cross_memory) {
    exposed_ = buffer;
    exposed_bytes_ = bytes;
    exposed_cross_memory_ = cross_memory;
  }
  // A v-form's root, from its constructor, for each block a peer copies from or into with
  // cross-memory attach: the span of those blocks moves onto huge pages (Options::huge_pages).
  void expose_direct_block(const void* data, std::uint64_t bytes) {
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    if (bytes == 0) return;
    if (direct_end_ == 0 || begin < direct_begin_) direct_begin_ = begin;
    direct_end_ = std::max<std::uintptr_t>(direct_end_, begin + bytes);
  }
  // A scatter's or gather's root, before the operation starts: the weight (CopyBalance units)
  // its cooperative single copy splits blocks by, published with its arrival for its peers.
  void offer_copy_weight(std::uint64_t units) { copy_weight_ = units; }
  // The bytes of a scatter's or gather's root buffer: `ranks` blocks. Past any buffer when that
  // overflows, so that no shared allocation is taken to hold it.
  static std::uint64_t all_blocks_bytes(std::uint64_t block, int ranks) {
    std::uint64_t total = 0;
    return __builtin_mul_overflow(block, static_cast<std::uint64_t>(ranks), &total) ? UINT64_MAX
                                                                                    : total;
  }

  TeamImpl& team_;
  OpSignature sig_;
  std::uint64_t op_ = 0;
  // Set by the constructor where, under CheckLevel::kDeferred, this rank moves nothing in the
  // call and no peer waits for anything from it but its arrival: a flat v-form's rank whose
  // own part is empty (and, at the root, every other rank's too). Its data stage is empty and
  // its comparisons wait for a later call (deferred_checks.hpp), so that the call reads no
  // peer's line. A scatterv receiver's is then made from the root's word, or, where that gives
  // no size, from the record the root posted it (such a flat root posts one to every receiver).
  bool quiet_ = false;
  bool has_must_compare_ = false;  // some peer may need must_compare (set before the call runs)
  // False in operations whose checked_in_data_path is false for every peer (a gatherv sender):
  // the agree stage then asks no one, and looks up no parent in the root's tree.
  bool data_path_compares_ = true;

 private:
  // Before the arrival that lets peers reach the exposed buffer: moves it onto huge pages if
  // they will copy with cross-memory attach (Options::huge_pages).
  void prepare_exposed_buffer();

  const void* exposed_ = nullptr;
  std::uint64_t exposed_bytes_ = 0;
  bool exposed_cross_memory_ = false;
  std::uintptr_t direct_begin_ = 0, direct_end_ = 0;  // see expose_direct_block
  std::uint64_t copy_weight_ = 0;
  std::uint64_t huge_pages_ = 0;  // published with the arrival (prepare_exposed_buffer)
  std::vector<ByteRange> lent_;
  bool agree_with(int peer, sync::WaitTarget& blocked_on);
  // check_peer_signature's whole comparison, field by field, with the messages.
  void compare_peer_signature(int peer, std::uint64_t packed, std::uint64_t bytes) const;
  // Whether the agree stage skips `peer`: this rank itself, or a peer its data path compared.
  bool compared_without_agreeing(int peer) const {
    return peer == team_.rank() || (data_path_compares_ && checked_in_data_path(peer));
  }
  // CheckLevel::kDeferred: compares with every peer that arrived, without waiting for any.
  void compare_arrived_peers();
  // Whether this rank (not the root) compared itself in its data path with the root, or with
  // its parent in the root's tree: it then needs no other comparison (compare_arrived_peers).
  bool compared_toward_root() const;
  // CheckLevel::kDeferred, not the root: whether the root has arrived in this operation (or
  // left it), after comparing it with this rank from its status (or its history); a mismatch
  // fails the team.
  bool matched_arrived_root() const;
  // CheckLevel::kDeferred, not the root, and the root not arrived yet: leaves the comparisons to
  // settle_deferred_checks, at this rank's next arrival. False where that is not allowed.
  bool defer_to_root();
  void compare_if_arrived(int peer);
  // Leaves this operation's comparisons to settle_deferred_checks (deferred_checks.hpp).
  void defer_comparisons();
  bool record_signature(sync::WaitTarget& blocked_on);
  void flush_deferred_ack();

  enum class Stage { kStart, kData, kAgree, kVerdict, kDone };
  Stage stage_ = Stage::kStart;
  int next_peer_ = 0;
  int next_required_ = 0;  // the next peer to check for must_compare
  std::uint64_t deferred_ack_step_ = 0;
  // The root's pairing fence runs right after its arrival: asked for by expect_root_stores,
  // cleared by arrive where it does not apply, so that once arrived it says whether
  // compare_everyone_arrived still needs its own.
  bool fence_at_arrival_ = false;
  bool blocking_ = false;  // mark_blocking
};

// Makes the comparisons that team.deferred_checks() holds, oldest first, and empties it: a rank
// that is not the root compares with the root if it has arrived in that operation or left it,
// else with every peer that has; the root with every peer that has. Throws (and aborts the
// team) on a mismatch. Waits only for a scatterv root that has arrived to post its records.
void settle_deferred_checks(TeamImpl& team);

// What a peer published on arrival in an operation (its status line).
struct PeerArrival {
  std::uint64_t packed = 0;       // OpSignature::packed(): collective and root
  std::uint64_t bytes = 0;        // what it sends or receives
  std::uint64_t address = 0;      // its buffer, in its address space (single-copy transfers)
  std::uint64_t shared_id = 0;    // the allocate_shared allocation holding it, 0 for none
  std::uint64_t copy_weight = 0;  // a scatter's or gather's root: CopyBalance units, else 0
  std::uint64_t huge_pages = 0;   // copy::pack_offsets of its buffer's part on huge pages
};

// The wait for `peer`'s arrival in operation `op`: its status line's tag.
inline sync::WaitTarget awaited_arrival(const segment::StatusLine& status, std::uint64_t op,
                                        int peer) {
  return {&status.tag, sync::make_tag(op, sync::kStepArrived), peer};
}

// Reads a peer's arrival for operation `op` with the seqlock rule of the status line.
// Returns: kNotArrived, kPassed (the peer is beyond `op`), or kRead with the values.
enum class PeerState { kNotArrived, kPassed, kRead };
PeerState read_peer_arrival(const segment::StatusLine& status, std::uint64_t op,
                            PeerArrival& arrival);

// The seqlock read behind both: `load_fields()` loads (relaxed) the fields the caller needs.
// Paired with TeamImpl::publish_arrival: the writer stores (op, writing), a release fence, the
// fields, then (op, arrived) with release. The acquire load of the tag makes the fields of
// that arrival visible; if they belong to a later operation, the acquire fence makes that
// later (op', writing) store visible to the re-read of the tag, and the values are discarded.
template <class LoadFields>
inline PeerState read_status(const segment::StatusLine& status, std::uint64_t op,
                             LoadFields&& load_fields) {
  const std::uint64_t t1 = status.tag.load(std::memory_order_acquire);
  if (sync::op_of(t1) > op) return PeerState::kPassed;
  if (sync::op_of(t1) < op || sync::step_of(t1) == sync::kStepWriting)
    return PeerState::kNotArrived;
  load_fields();
  std::atomic_thread_fence(std::memory_order_acquire);
  const std::uint64_t t2 = status.tag.load(std::memory_order_relaxed);
  return sync::op_of(t2) == op ? PeerState::kRead : PeerState::kPassed;
}

// The same read for the signature comparisons, which need two of those fields: every small
// call makes one or more (a gatherv sender with its root, a scatterv root with each receiver),
// and four loads fewer each, inline, took about 15 instructions off each comparison.
inline PeerState read_peer_signature(const segment::StatusLine& status, std::uint64_t op,
                                     std::uint64_t& packed, std::uint64_t& bytes) {
  return read_status(status, op, [&] {
    packed = status.signature.load(std::memory_order_relaxed);
    bytes = status.bytes.load(std::memory_order_relaxed);
  });
}

// A peer's signature for operation `op` from its history (segment::SignatureHistory), with the
// seqlock rule of record_signature: the acquire load of `op` makes the fields stored before it
// visible; the acquire fence orders the field loads before the re-check, so values of a later
// rewrite are discarded. False where the entry holds another operation.
inline bool read_history(const segment::SignatureHistory& history, std::uint64_t op,
                         std::uint64_t& packed, std::uint64_t& bytes) {
  const segment::SignatureHistory::Entry& entry =
      history.entries[op % segment::SignatureHistory::kEntries];
  const std::uint64_t before = entry.op.load(std::memory_order_acquire);
  packed = entry.signature.load(std::memory_order_relaxed);
  bytes = entry.bytes.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return before == op && entry.op.load(std::memory_order_relaxed) == op;
}

}  // namespace shmcoll
