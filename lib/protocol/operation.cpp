#include "protocol/operation.hpp"

#include "base/fault_points.hpp"

namespace shmcoll {
using sync::make_tag;

PeerState read_peer_arrival(const segment::StatusLine& status, std::uint64_t op,
                            PeerArrival& arrival) {
  return read_status(status, op, [&] {  // the seqlock rule: see read_status
    arrival.packed = status.signature.load(std::memory_order_relaxed);
    arrival.bytes = status.bytes.load(std::memory_order_relaxed);
    arrival.address = status.address.load(std::memory_order_relaxed);
    arrival.shared_id = status.shared_id.load(std::memory_order_relaxed);
    arrival.copy_weight = status.copy_weight.load(std::memory_order_relaxed);
    arrival.huge_pages = status.huge_pages.load(std::memory_order_relaxed);
  });
}

void CollectiveOp::flush_deferred_ack() {
  if (deferred_ack_step_ != 0) {
    team_.publish_step(op_, deferred_ack_step_);
    deferred_ack_step_ = 0;
  }
}

void CollectiveOp::prepare_exposed_buffer() {
  if (!team_.options().huge_pages) return;
  // Here, before the arrival, no peer can be copying from or into the buffer: a collapse
  // skips pages a peer holds pinned (copy/huge_pages.hpp).
  if (direct_end_ > direct_begin_) {  // a v-form's root: its blocks that take the single copy
    team_.huge_pages().note_use(reinterpret_cast<const void*>(direct_begin_),
                                direct_end_ - direct_begin_);
    return;
  }
  if (exposed_bytes_ < copy::HugePageCollapser::kMinBufferBytes || !exposed_cross_memory_) return;
  const copy::HugeRun run = team_.huge_pages().note_use(exposed_, exposed_bytes_);
  huge_pages_ = copy::pack_offsets(run, exposed_);
  // A head left on small pages (the run starts past the buffer's start) is what may be staged.
  if (huge_pages_ != 0 && run.begin > reinterpret_cast<std::uintptr_t>(exposed_) && may_stage() &&
      team_.staging_buffer().claim(op_))
    huge_pages_ |= copy::kStagesBit;
}

void CollectiveOp::arrive() {
  if (stage_ != Stage::kStart) return;
  // A quiet operation leaves the pending comparisons to a later call, as long as the window
  // allows (deferred_checks.hpp); any other makes them first.
  const DeferredChecks& pending = team_.deferred_checks();
  if (!pending.empty() && (!quiet_ || pending.due_before(team_.last_op() + 1)))
    settle_deferred_checks(team_);
  op_ = team_.next_op();
  plan_before_arrival();
  // Small calls have nothing to prepare: the test here spares them the call.
  if (direct_end_ > direct_begin_ || exposed_bytes_ >= copy::HugePageCollapser::kMinBufferBytes)
    prepare_exposed_buffer();
  team_.publish_arrival(op_, sig_, exposed_, exposed_bytes_, copy_weight_, huge_pages_);
  fence_at_arrival_ = fence_at_arrival_ && team_.options().checks == CheckLevel::kDeferred &&
                      team_.rank() == sig_.root && !team_.oversubscribed();
  if (fence_at_arrival_) {
    // The fence of compare_everyone_arrived, which a root always reaches under deferred checks,
    // taken here: what it orders is this arrival before the loads of the peers' status lines,
    // and those come later either way. After the data it waits for the stores of every line
    // the root wrote, which the receivers had read in the call before. Here it delays the data
    // instead, by the store of the arrival alone, which costs small calls more than the late fence
    // does (expect_root_stores), so only from 1 KiB, and not in oversubscribed teams, where the
    // receivers mostly start after the root has finished (docs/tuning.md).
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  fault_point(FaultPoint::kArrived);
  stage_ = Stage::kData;
}

bool CollectiveOp::advance(sync::WaitTarget& blocked_on) {
  switch (stage_) {
    case Stage::kStart:
      arrive();
      [[fallthrough]];
    case Stage::kData:
      if (!advance_data(blocked_on)) return false;
      fault_point(FaultPoint::kDataMoved);
      stage_ = Stage::kAgree;
      [[fallthrough]];
    case Stage::kAgree:
      if (team_.options().checks == CheckLevel::kFull || sig_.kind == Kind::kBarrier) {
        for (; next_peer_ < team_.size(); ++next_peer_) {
          if (compared_without_agreeing(next_peer_)) continue;
          if (!agree_with(next_peer_, blocked_on)) {
            flush_deferred_ack();
            return false;
          }
        }
      } else if (quiet_) {
        defer_comparisons();
      } else {
        compare_arrived_peers();
        for (; has_must_compare_ && next_required_ < team_.size(); ++next_required_) {
          if (!must_compare(next_required_)) continue;
          if (!agree_with(next_required_, blocked_on)) {
            flush_deferred_ack();
            return false;
          }
        }
      }
      // Under deferred checks every operation, a barrier too, leaves its signature for peers
      // that compare themselves with this rank after it has left.
      if (team_.options().checks == CheckLevel::kDeferred && !record_signature(blocked_on)) {
        flush_deferred_ack();
        return false;
      }
      stage_ = Stage::kVerdict;
      [[fallthrough]];
    case Stage::kVerdict:
      if (needs_root_verdict() && team_.options().checks == CheckLevel::kFull) {
        segment::ProgressLine& root_progress = team_.area(sig_.root).progress();
        sync::WaitTarget t{&root_progress.tag, make_tag(op_, sync::kStepDone), sig_.root};
        if (!sync::reached(t)) {
          flush_deferred_ack();
          blocked_on = t;
          return false;
        }
      }
      stage_ = Stage::kDone;
      team_.publish_step(op_, sync::kStepDone);
      [[fallthrough]];
    case Stage::kDone:
      return true;
  }
  return true;
}

}  // namespace shmcoll
