// The cross-rank checks of every operation (see operation.hpp for when each runs): whether
// the peers called the same collective with the same root and matching sizes, compared from
// what they published on arrival (status lines), from the signatures they left once gone
// (history), or, for a rank that defers them, at its next arrival. A mismatch fails the team.
#include "base/text.hpp"
#include "protocol/inbox.hpp"
#include "protocol/operation.hpp"

namespace shmcoll {

std::string CollectiveOp::where() const {
  std::string s = kind_name(sig_.kind);
  if (sig_.kind != Kind::kBarrier) s += " (root " + std::to_string(sig_.root) + ")";
  return s;
}

std::int64_t CollectiveOp::expected_peer_bytes(int) const {
  return sig_.kind == Kind::kBarrier ? -1 : static_cast<std::int64_t>(sig_.bytes);
}

std::string CollectiveOp::expected_bytes_text(int) const {
  return "rank " + std::to_string(team_.rank()) + " has " + sig_.describe_bytes();
}

std::string CollectiveOp::root_word_text(std::int64_t size) const {
  const std::string me = std::to_string(team_.rank());
  return sig_.kind == Kind::kGatherv
             ? concat("expects ", size, " bytes from rank ", me, " (recvcounts[", me,
                      "] x recvtype)")
             : concat("sends ", size, " bytes to rank ", me, " (sendcounts[", me, "] x sendtype)");
}

void CollectiveOp::compare_peer_signature(int peer, std::uint64_t packed,
                                          std::uint64_t bytes) const {
  const Kind kind = OpSignature::kind_of(packed);
  const int root = OpSignature::root_of(packed);
  const std::int64_t expected = expected_peer_bytes(peer);
  // A v-form root publishes a word about the other ranks' sizes, not a size of its own
  // (root_word): a rank that expects its own size there finds it only in a uniform word.
  const bool v_form_root = peer == sig_.root && team_.rank() != sig_.root &&
                           (sig_.kind == Kind::kScatterv || sig_.kind == Kind::kGatherv);
  const std::int64_t root_says = v_form_root ? root_word::uniform_size(bytes) : -1;
  const bool bytes_match =
      expected < 0 || (v_form_root ? root_says < 0 || root_says == expected
                                   : bytes == static_cast<std::uint64_t>(expected));
  if (kind == sig_.kind && root == sig_.root && bytes_match) return;  // the common case: no text
  const std::string me = "rank " + std::to_string(team_.rank());
  const std::string them = "rank " + std::to_string(peer);
  const std::string opno = " (operation #" + std::to_string(op_) + ")";
  if (kind != sig_.kind) {
    team_.fail(Status::kInvalidArgument,
               "collective mismatch" + opno + ": " + me + " called " + where() + ", " + them +
                   " called " + kind_name(kind) +
                   (kind == Kind::kBarrier ? "" : " (root " + std::to_string(root) + ")"),
               Cause::kCollectiveMismatch);
  }
  if (root != sig_.root) {
    team_.fail(Status::kInvalidArgument,
               std::string("root mismatch in ") + kind_name(kind) + opno + ": " + me +
                   " passed root=" + std::to_string(sig_.root) + ", " + them +
                   " passed root=" + std::to_string(root),
               Cause::kRootMismatch);
  }
  if (!bytes_match) {
    team_.fail(Status::kInvalidArgument,
               "type signature mismatch in " + where() + opno + ": " + expected_bytes_text(peer) +
                   ", but " + them +
                   (v_form_root ? ", the root, " + root_word_text(root_says)
                                : " has " + std::to_string(bytes) + " bytes"),
               Cause::kSizeMismatch);
  }
}

bool CollectiveOp::agree_with(int peer, sync::WaitTarget& blocked_on) {
  segment::StatusLine& status = team_.area(peer).status();
  std::uint64_t packed = 0, bytes = 0;
  switch (read_peer_signature(status, op_, packed, bytes)) {
    case PeerState::kNotArrived:
      blocked_on = awaited_arrival(status, op_, peer);
      return false;
    case PeerState::kPassed:
      // Under full checks it left this operation only after checking us. Under deferred ones
      // (a barrier) it may have run a deferred comparison before this rank arrived.
      if (team_.options().checks == CheckLevel::kDeferred) compare_with_history(peer);
      return true;
    case PeerState::kRead:
      check_peer_signature(peer, packed, bytes);
      return true;
  }
  return true;
}

bool CollectiveOp::compared_toward_root() const {
  const int me = team_.rank(), root = sig_.root;
  if (me == root || !data_path_compares_) return false;
  if (checked_in_data_path(root)) return true;
  const int parent = team_.tree(root).parent[static_cast<std::size_t>(me)];
  return parent != root && parent >= 0 && checked_in_data_path(parent);
}

void CollectiveOp::compare_arrived_peers() {
  if (next_peer_ == team_.size()) return;  // done before this stage blocked (must_compare)
  // A rank whose data path compared it with the root, or with its parent in the root's tree,
  // compares no one else. Why every mismatch is still found: call the ranks that compare
  // everyone else (the roots, in their own view, and the others) full. Each other rank matches
  // the rank it compared, one step up the tree of the root it names, so following those steps
  // ends at a full rank that names itself root, with the same kind and root as every rank on
  // the way (a size mismatch is found in the step it occurs). Full ranks compare each other
  // pairwise (the fence below), so there is one such root, every full rank agrees with it, and
  // so does everyone else. Broadcast and scatter(v) receivers take this path. Gather senders,
  // whose data path compares nothing, compare themselves with the root directly if it has
  // arrived (or left), which is the same step up (matched_arrived_root) and needs no fence: they
  // saw the root's arrival themselves. If it has not, they stay full, but make their
  // comparisons at their next arrival (defer_to_root), when the root has most likely arrived.
  if (compared_toward_root() || matched_arrived_root() || defer_to_root()) {
    next_peer_ = team_.size();
    return;
  }
  compare_everyone_arrived();
}

void CollectiveOp::compare_everyone_arrived() {
  // Skip the peers this rank's data path compared, and the fence too when none is left (a
  // gather root that read every sender's stream). A pair that this rank's data path compares
  // needs no fence from either side.
  while (next_peer_ < team_.size() && compared_without_agreeing(next_peer_)) ++next_peer_;
  if (next_peer_ == team_.size()) return;
  // seq_cst, paired with the same fence of every peer that compares this one: each rank
  // published its arrival before its fence and reads the others' status lines after it, so of
  // any two ranks at least one sees the other arrived (or past): every pair is compared by one
  // of its ranks. A root under deferred checks took it at its arrival (arrive), which keeps
  // both halves of that order.
  if (!fence_at_arrival_) std::atomic_thread_fence(std::memory_order_seq_cst);
  for (; next_peer_ < team_.size(); ++next_peer_) {
    if (compared_without_agreeing(next_peer_)) continue;
    compare_if_arrived(next_peer_);
  }
}

bool CollectiveOp::matched_arrived_root() const {
  if (team_.rank() == sig_.root || sig_.kind == Kind::kBarrier) return false;
  std::uint64_t packed = 0, bytes = 0;
  switch (read_peer_signature(team_.area(sig_.root).status(), op_, packed, bytes)) {
    case PeerState::kNotArrived:
      return false;
    case PeerState::kRead:
      check_peer_signature(sig_.root, packed, bytes);  // fails on a mismatch
      return true;
    case PeerState::kPassed:
      // Its entry for op_ stays until every peer, this rank too, has arrived in a later one.
      compare_with_history(sig_.root);
      return true;
  }
  return false;
}

bool CollectiveOp::defer_to_root() {
  // Why deferring loses no mismatch: the comparisons are only made later, by the same rules
  // (settle_deferred_checks), and what they read of the root stays in place until they are
  // (the window's invariant, deferred_checks.hpp). Meanwhile peers that arrive compare
  // themselves with this rank as before. Only the rank's last numbered operation defers this
  // way: the comparisons are due at its next arrival.
  // The full comparison costs a small sender a fence and a status line per peer, most of them
  // another core's: about twice the time of its call without cross-rank comparisons.
  if (team_.rank() == sig_.root || sig_.kind == Kind::kBarrier || team_.last_op() != op_ ||
      team_.deferred_checks().full())
    return false;
  defer_comparisons();
  return true;
}

void CollectiveOp::defer_comparisons() {
  // A root defers only in a quiet operation, where it expects the same (nothing) of every
  // peer: the first one that is not the root stands for all.
  const int me = team_.rank();
  const int other = sig_.root != 0 ? 0 : 1;
  const std::int64_t expected = me == sig_.root
                                    ? (team_.size() > 1 ? expected_peer_bytes(other) : -1)
                                    : expected_peer_bytes(sig_.root);
  // arrive() settled what was due, which leaves room; a queue full all the same (operations
  // that arrived before this one reached its agree stage) is settled first.
  if (team_.deferred_checks().full()) settle_deferred_checks(team_);
  team_.deferred_checks().push(op_, sig_, expected);
  next_peer_ = team_.size();
}

namespace {

// An operation this rank has left with its comparisons deferred, seen again to make them.
class LeftOperation final : public CollectiveOp {
 public:
  LeftOperation(TeamImpl& team, const DeferredCheck& check)
      : CollectiveOp(team, check.sig), expected_bytes_(check.expected_bytes) {
    op_ = check.op;
    sig_.type.name = check.type_name;  // the caller's name may be gone
  }

  void settle() {
    if (team_.rank() == sig_.root) {  // as any root under deferred checks
      compare_everyone_arrived();
      return;
    }
    std::uint64_t packed = 0, bytes = 0;
    switch (read_peer_signature(team_.area(sig_.root).status(), op_, packed, bytes)) {
      case PeerState::kRead:  // the same step up as matched_arrived_root
        check_peer_signature(sig_.root, packed, bytes);
        break;
      case PeerState::kPassed:  // the root left: its history holds its signature
        bytes = compare_with_history(sig_.root);
        break;
      case PeerState::kNotArrived:
        // The root compares this rank when it arrives (it compares every peer that has).
        compare_everyone_arrived();
        return;
    }
    // A scatterv receiver of an empty block whose root's word gives no size: the record.
    if (sig_.kind == Kind::kScatterv && root_word::uniform_size(bytes) < 0) check_record();
  }

 private:
  bool advance_data(sync::WaitTarget&) override { return true; }
  // A v-form's other ranks may differ in size: only the root's word is compared with them.
  std::int64_t expected_peer_bytes(int peer) const override {
    if (team_.rank() == sig_.root) return expected_bytes_;
    const bool v_form = sig_.kind == Kind::kScatterv || sig_.kind == Kind::kGatherv;
    return v_form && peer != sig_.root ? -1 : expected_bytes_;
  }

  // The record the root posted this rank in operation op_: posted by the time the root left
  // the operation, and not rewritten before this rank is kWindow operations further
  // (inbox::record_free). Its size must be this rank's.
  void check_record() {
    const int root = sig_.root;
    const sync::WaitTarget root_left{&team_.area(root).progress().tag,
                                     sync::make_tag(op_, sync::kStepDone), root};
    if (!sync::reached(root_left)) {
      // It has arrived (its word was read), so it posts the records and leaves without
      // waiting for this rank. The slow-path checks are the caller's operation's, which this
      // one is not.
      CollectiveOp* current = team_.current();
      team_.set_current(nullptr);
      team_.wait(root_left);
      team_.set_current(current);
    }
    if (!inbox::posted(team_, op_)) {
      team_.fail(Status::kInternal, concat("rank ", root, " left ", where(), " (operation #", op_,
                                           ") without posting the record of rank ", team_.rank()));
    }
    // The record's size is this rank's alone: compared as a word that gives every rank it.
    const inbox::Record record = inbox::read(team_, op_);
    check_peer_signature(root, record.signature, record.bytes | root_word::kUniform);
  }

  std::int64_t expected_bytes_;
};

// The common case of a deferred check, without building an operation: every peer it compares
// has arrived in the operation or left it, with the same collective and root, and the size
// expected. False where one did not, or where a v-form root's word gives no size: LeftOperation
// then makes the comparisons again, with their messages and the cases this one leaves out.
bool matched_at_once(TeamImpl& team, const DeferredCheck& check) {
  const std::uint64_t own = check.sig.packed();
  const bool v_form = check.sig.kind == Kind::kScatterv || check.sig.kind == Kind::kGatherv;
  auto matches = [&](int peer, bool v_form_root) {
    std::uint64_t packed = 0, bytes = 0;
    switch (read_peer_signature(team.area(peer).status(), check.op, packed, bytes)) {
      case PeerState::kNotArrived:
        return false;
      case PeerState::kPassed:
        if (!read_history(team.area(peer).history(), check.op, packed, bytes)) return false;
        break;
      case PeerState::kRead:
        break;
    }
    if (packed != own) return false;
    if (v_form_root) return root_word::uniform_size(bytes) == check.expected_bytes;
    return check.expected_bytes < 0 || bytes == static_cast<std::uint64_t>(check.expected_bytes);
  };
  if (team.rank() != check.sig.root) return matches(check.sig.root, v_form);
  for (int peer = 0; peer < team.size(); ++peer) {
    if (peer != team.rank() && !matches(peer, false)) return false;
  }
  return true;
}

}  // namespace

void settle_deferred_checks(TeamImpl& team) {
  // The fence of compare_everyone_arrived, once for the batch: every operation in it published
  // its arrival before, and every comparison reads the peers' lines after it.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  DeferredChecks& pending = team.deferred_checks();
  while (!pending.empty()) {
    if (matched_at_once(team, pending.oldest())) {
      pending.drop_oldest();
      continue;
    }
    const DeferredCheck check = pending.oldest();
    pending.drop_oldest();  // before the comparisons, which throw on a mismatch
    LeftOperation(team, check).settle();
  }
}

void CollectiveOp::compare_if_arrived(int peer) {
  std::uint64_t packed = 0, bytes = 0;
  switch (read_peer_signature(team_.area(peer).status(), op_, packed, bytes)) {
    case PeerState::kNotArrived:
      return;  // it compares itself with this rank when it arrives
    case PeerState::kRead:
      check_peer_signature(peer, packed, bytes);
      return;
    case PeerState::kPassed:
      // It may have left before this rank arrived: its history holds the signature.
      compare_with_history(peer);
      return;
  }
}

std::uint64_t CollectiveOp::compare_with_history(int peer) const {
  std::uint64_t packed = 0, bytes = 0;
  if (!read_history(team_.area(peer).history(), op_, packed, bytes)) {
    team_.fail(Status::kInternal,
               concat("rank ", peer, " left ", where(), " (operation #", op_,
                      ") without leaving its signature for rank ", team_.rank()));
  }
  check_peer_signature(peer, packed, bytes);
  return bytes;
}

bool CollectiveOp::record_signature(sync::WaitTarget& blocked_on) {
  constexpr std::uint64_t kEntries = segment::SignatureHistory::kEntries;
  // The entry last held operation op_ - kEntries, which a peer may still be reading until it
  // arrives in the operation after that one, or, where it deferred its comparisons, until it
  // arrives kWindow operations later (deferred_checks.hpp).
  constexpr std::uint64_t kKept = kEntries - DeferredChecks::kWindow;
  if (op_ > kKept && !team_.peers_reached(op_ - kKept, blocked_on)) return false;
  segment::SignatureHistory::Entry& entry = team_.self().history().entries[op_ % kEntries];
  entry.op.store(0, std::memory_order_relaxed);
  // release fence: the 0 above is visible before any of the new fields (seqlock write).
  std::atomic_thread_fence(std::memory_order_release);
  entry.signature.store(sig_.packed(), std::memory_order_relaxed);
  entry.bytes.store(sig_.bytes, std::memory_order_relaxed);
  // release: a peer that reads op_ here reads the fields above. Peers read the entry only
  // once this rank's status shows a later operation, published with release after this.
  entry.op.store(op_, std::memory_order_release);
  return true;
}

}  // namespace shmcoll
