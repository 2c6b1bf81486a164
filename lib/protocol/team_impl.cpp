#include "protocol/team_impl.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <map>

#include "base/text.hpp"
#include "protocol/operation.hpp"
#include "protocol/validation.hpp"
#include "sync/liveness.hpp"

namespace shmcoll {
using sync::make_tag;
using sync::op_of;
using sync::step_of;

namespace {

using sync::now_ns;

}  // namespace

TeamImpl::TeamImpl(Bootstrap& bootstrap, const Options& options) : options_(options) {
  rank_ = bootstrap.rank();
  failures_.set_rank(rank_);
  size_ = bootstrap.size();
  form(bootstrap);  // team_setup.cpp
  slot_records_.resize(slots());
  if (slots() > 1 && (slots() & (slots() - 1)) == 0) slot_mask_ = slots() - 1;
  seen_progress_.assign(static_cast<std::size_t>(size_), 0);
  // Spinning only helps when the awaited peer has a CPU of its own; in an oversubscribed team
  // it steals the peer's time slice, so go straight to yielding there.
  policy_.spin_iterations = options_.spin_iterations >= 0 ? options_.spin_iterations
                            : oversubscribed_             ? 0
                                                          : 4000;
  policy_.yield_iterations = options_.yield_iterations;
  policy_.sleep_slice_ns = std::int64_t{std::max(options_.peer_check_ms, 1)} * 1'000'000;
}

TeamImpl::~TeamImpl() { park_segment(); }

void TeamImpl::park_segment() {
  // Ranks that share a process (threads) would each park their own mapping of the segment, and
  // only one can be kept: such teams do not park.
  std::vector<pid_t> pids = pids_;
  std::sort(pids.begin(), pids.end());
  if (segment_.base() == nullptr || std::adjacent_find(pids.begin(), pids.end()) != pids.end())
    return;
  segment::ParkedSegment parked;
  parked.segment = std::move(segment_);
  parked.nonce = nonce_;
  parked.name = segment_name_;
  parked.pids = pids_;
  parked.probed = probed_;
  parked.single_copy = single_copy_;
  parked.single_copy_why = single_copy_why_;
  segment::park(std::move(parked));
}

void TeamImpl::leave() {
  if (left_) return;
  left_ = true;
  // The comparisons deferred in the last calls: a mismatch only this rank would find is raised
  // here, and recorded for the peers (this rank has no later call to report it in).
  std::exception_ptr mismatch;
  if (!deferred_checks_.empty() && !abort_recorded()) {
    try {
      settle_deferred_checks(*this);
    } catch (const Error&) {
      mismatch = std::current_exception();
    }
  }
  const std::uint64_t mine = op_ + 1;
  // release: pairs with the acquire below on the ranks that leave later.
  area(rank_).progress().left_after.store(mine, std::memory_order_release);
  if (mismatch) std::rethrow_exception(mismatch);
  if (failures_.failed()) return;  // this rank has raised the team's error already
  // The count each rank left with, as far as this rank knows: its own and those that left.
  std::map<std::uint64_t, std::vector<int>> ranks_by_count;
  for (int r = 0; r < size_; ++r) {
    const std::uint64_t left = area(r).progress().left_after.load(std::memory_order_acquire);
    if (left != 0) ranks_by_count[left - 1].push_back(r);
  }
  // An error a peer found that this rank has not heard of. Read after the counts: a rank that
  // left early because of it made it visible with its count (its release, the acquire above),
  // and it is the cause, not the counts.
  check_aborted();
  if (ranks_by_count.size() <= 1) return;
  std::string text = "ranks left the team after different numbers of collectives:";
  const char* separator = " ";
  for (const auto& [count, ranks] : ranks_by_count) {
    text += separator + rank_list(ranks) + " after " + std::to_string(count);
    separator = ", ";
  }
  text += " (seen by rank " + std::to_string(rank_) + " as it left)";
  record_abort(Status::kInvalidArgument, text, Cause::kCollectiveMismatch);
  throw InvalidArgument(text, Cause::kCollectiveMismatch);
}

const topology::Tree& TeamImpl::build_tree(int root) {
  if (trees_.empty()) trees_.resize(static_cast<std::size_t>(size_));
  auto& t = trees_[static_cast<std::size_t>(root)];
  if (!t) t = std::make_unique<topology::Tree>(topology::build_tree(places_, root));
  return *t;
}

std::uint64_t TeamImpl::next_op() {
  if (left_) [[unlikely]]
    throw InvalidArgument("rank " + std::to_string(rank_) +
                          " called a collective after it left the team");
  check_aborted();
  if (op_ >= sync::kMaxOperation) {
    fail(Status::kInternal, "team exhausted its operation counter; form a new team");
  }
  return ++op_;
}

void TeamImpl::publish_arrival(std::uint64_t op, const OpSignature& sig, const void* buffer,
                               std::uint64_t bytes, std::uint64_t copy_weight,
                               std::uint64_t huge_pages) {
  segment::StatusLine& status = self().status();
  // Seqlock write (see read_peer_arrival): mark "writing", fence, write the signature,
  // then publish "arrived". Only this rank writes its status line.
  status.tag.store(make_tag(op, sync::kStepWriting), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  status.signature.store(sig.packed(), std::memory_order_relaxed);
  status.bytes.store(sig.bytes, std::memory_order_relaxed);
  status.address.store(reinterpret_cast<std::uintptr_t>(buffer), std::memory_order_relaxed);
  status.shared_id.store(shared_buffers_.id_of(buffer, bytes), std::memory_order_relaxed);
  status.copy_weight.store(copy_weight, std::memory_order_relaxed);
  status.huge_pages.store(huge_pages, std::memory_order_relaxed);
  publish(status.tag, make_tag(op, sync::kStepArrived));
}

bool TeamImpl::peers_reached(std::uint64_t op, sync::WaitTarget& blocked_on) {
  if (op <= peers_reached_) return true;
  std::uint64_t lowest = sync::kMaxOperation;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    segment::StatusLine& status = area(r).status();
    // acquire: pairs with the peer's arrival (publish_arrival); nothing read here depends on
    // it, but the caller may rewrite what the peer read before it arrived.
    const std::uint64_t at = sync::op_of(status.tag.load(std::memory_order_acquire));
    if (at < op) {
      blocked_on = {&status.tag, sync::make_tag(op, sync::kStepWriting), r};
      return false;
    }
    lowest = std::min(lowest, at);
  }
  peers_reached_ = lowest;
  return true;
}

void TeamImpl::publish_step(std::uint64_t op, std::uint64_t step) {
  // The tag only grows. A rank that reads the streams of several writers in one operation (a
  // tree gatherv sender reads its children's and the root's table) acknowledges each on its
  // own; writers compare the tag with >=, so a lower acknowledgement after a higher one is
  // already given by it (GathervOp reads the root's entry before it acknowledges anything).
  const std::uint64_t tag = make_tag(op, step);
  if (tag > published_progress_) {
    published_progress_ = tag;
    publish(self().progress().tag, tag);
  }
  // Departing is the last chance to wake peers that sleep on something this rank published.
  // Unfenced (wake_line.hpp): the publications stay pending for the next sleep or departure.
  if (step == sync::kStepDone && wake_pending_) sync::wake_sleepers_unfenced(self().wake());
}

void TeamImpl::run(CollectiveOp& op) {
  current_ = &op;
  op.mark_blocking();
  sync::WaitTarget target;
  try {
    while (!op.advance(target)) wait(target);
  } catch (const Error&) {
    op.abandon();  // the abort is recorded by now (fail or check_aborted threw)
    throw;
  }
  current_ = nullptr;
}

bool TeamImpl::wait(const sync::WaitTarget& target, std::int64_t deadline_ns) {
  // Peers sleeping on something this rank published are woken before it sleeps itself
  // (before_sleep), not before it spins or yields: the fence of wake_sleepers waits until this
  // rank's stores reach the peers that read them, which delayed the yield that hands its CPU to
  // such a peer (see wake_line.hpp for the sleepers it misses meanwhile).
  return sync::wait_for(target, area(target.peer).wake(), policy_, *this, deadline_ns);
}

void TeamImpl::raise_abort() {
  current_ = nullptr;
  failures_.raise();
}

void TeamImpl::on_slow_wait(const sync::WaitTarget& target, std::int64_t waited_ns) {
  if (abort_recorded()) {
    // A peer that failed in a later call published what this call needs before it recorded
    // the abort (the acquire in check_aborted's load pairs with its release), so this wait
    // may have been met since the waiter last looked: then it ends normally, and the abort is
    // raised by the first wait that is not met, at the latest in this rank's next call.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!failures_.failed() && sync::reached(target)) return;
    check_aborted();
  }
  if (current_ != nullptr) check_peer_in_slow_wait(target);
  try {
    failures_.bound_wait(target, waited_ns, policy_.sleep_slice_ns, options_.timeout_s, [this] {
      return current_ ? std::string(" in ") + kind_name(current_->signature().kind) +
                            " (operation #" + std::to_string(current_->op()) + ")"
                      : std::string();
    });
  } catch (const Error&) {
    current_ = nullptr;  // as after every error: no operation is being driven
    throw;
  }
}

void TeamImpl::check_peer_in_slow_wait(const sync::WaitTarget& target) {
  // A wait that mismatched arguments made endless shows up here: the awaited peer is in the
  // same operation with another signature, or has left the operation without publishing
  // what this rank waits for (a writer publishes everything before it departs).
  const std::uint64_t op = current_->op();
  segment::StatusLine& status = area(target.peer).status();
  PeerArrival arrival;
  const PeerState state = read_peer_arrival(status, op, arrival);
  if (state == PeerState::kRead) {
    current_->check_peer_signature(target.peer, arrival.packed, arrival.bytes);
  } else if (state == PeerState::kPassed && options_.checks == CheckLevel::kDeferred) {
    // It left without comparing itself with this rank (which had not arrived): the precise
    // error comes from its history.
    current_->compare_with_history(target.peer);
  }
  // acquire: if the peer departed, everything it published before departing is visible to
  // the re-check of the target below.
  std::atomic<std::uint64_t>& progress = area(target.peer).progress().tag;
  const bool departed = progress.load(std::memory_order_acquire) >= make_tag(op, sync::kStepDone);
  const bool waits_for_data = target.word != &status.tag && target.word != &progress;
  if (departed && waits_for_data && !sync::reached(target)) {
    fail(Status::kInvalidArgument,
         std::string("mismatch in ") + kind_name(current_->signature().kind) + " (operation #" +
             std::to_string(op) + "): rank " + std::to_string(target.peer) +
             " finished the operation without sending the data rank " + std::to_string(rank_) +
             " waits for; the ranks disagree on the collective, its root or its counts");
  }
  // A peer that left the team (TeamImpl::leave) never gets to this operation.
  const std::uint64_t left =
      area(target.peer).progress().left_after.load(std::memory_order_acquire);
  if (left != 0 && left - 1 < op && !sync::reached(target)) {
    // A peer that left early because it raised the team's error recorded or read that error
    // before it left (its release, this acquire): that error, the cause, is the one to raise.
    check_aborted();
    fail(Status::kInvalidArgument,
         "rank " + std::to_string(target.peer) + " left the team after " +
             std::to_string(left - 1) + " collectives while rank " + std::to_string(rank_) +
             " waited for it in " + kind_name(current_->signature().kind) + " (operation #" +
             std::to_string(op) + ")",
         Cause::kCollectiveMismatch);
  }
}

}  // namespace shmcoll
