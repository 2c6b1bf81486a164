// The state of one rank's membership in a team: the mapped segment, the operation counter and
// the arrivals, the writer-side slot records, and what a slow wait checks about the operation
// it waits in. How the team fails, and the bounds of every wait, are its FailureDomain's.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "copy/huge_pages.hpp"
#include "copy/staging_buffer.hpp"
#include "protocol/deferred_checks.hpp"
#include "protocol/failure_domain.hpp"
#include "protocol/shared_buffers.hpp"
#include "protocol/signature.hpp"
#include "segment/parked_segment.hpp"
#include "segment/segment.hpp"
#include "shmcoll/bootstrap.hpp"
#include "shmcoll/error.hpp"
#include "shmcoll/options.hpp"
#include "sync/tag.hpp"
#include "sync/waiter.hpp"
#include "topology/hierarchy.hpp"

namespace shmcoll {

class CollectiveOp;

// Who must acknowledge a slot before its writer may fill it again (the slot-reuse rule):
// slot s may be rewritten only when every rank in `readers` shows a status tag >= ack_tag,
// i.e. has consumed the chunk last published in s. Readers acknowledge chunks in increasing
// order, so one monotone status tag per reader is enough.
struct SlotRecord {
  std::uint64_t ack_tag = 0;
  std::vector<int> readers;
};

class TeamImpl final : public sync::WaitObserver {
 public:
  TeamImpl(Bootstrap& bootstrap, const Options& options);
  ~TeamImpl() override;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const Options& options() const { return options_; }
  std::size_t segment_bytes() const { return segment_.size(); }
  std::uint64_t slot_bytes() const { return segment_.geometry().slot_bytes; }
  std::uint32_t slots() const { return segment_.geometry().slots; }
  const std::vector<topology::Place>& places() const { return places_; }
  // The topology tree rooted at `root`, built on first use and kept.
  const topology::Tree& tree(int root) {
    // Inline: the agree stage asks on every call (compared_toward_root).
    if (!trees_.empty() && trees_[static_cast<std::size_t>(root)]) [[likely]]
      return *trees_[static_cast<std::size_t>(root)];
    return build_tree(root);
  }
  // Whether every pair of ranks passed the cross-memory-attach probe at formation, and why not.
  bool single_copy_available() const { return single_copy_; }
  const std::string& single_copy_why() const { return single_copy_why_; }
  // Rank 0's measure of cross-memory attach against memcpy at formation (0: not measured).
  double cross_copy_cost() const { return cross_copy_cost_; }
  // This rank's buffers that peers reach through cross-memory attach (Options::huge_pages).
  copy::HugePageCollapser& huge_pages() { return huge_pages_; }
  // Where a broadcast pair's root stages the head both buffers hold on small pages.
  copy::StagingBuffer& staging_buffer() { return staging_buffer_; }
  // More ranks than CPUs to run on: a waiting rank holds no CPU of its own, so splitting work
  // between ranks only adds waits (the same answer on every rank).
  bool oversubscribed() const { return oversubscribed_; }
  // "team of 4 ranks, full checks, segment of ... bytes, ...": what formation settled, for
  // SHMCOLL_VERBOSE.
  std::string formation_summary() const;
  pid_t pid(int r) const { return pids_[static_cast<std::size_t>(r)]; }

  segment::RankArea area(int r) const { return segment_.rank(static_cast<std::uint32_t>(r)); }
  segment::RankArea self() const { return area(rank_); }
  std::uint32_t slot_of(std::uint64_t op, std::uint64_t chunk) const {
    // A mask where the count is a power of two (the default): a division takes tens of cycles.
    if (slot_mask_ != 0) return static_cast<std::uint32_t>((op + chunk) & slot_mask_);
    return static_cast<std::uint32_t>((op + chunk) % slots());
  }
  SlotRecord& slot_record(std::uint32_t s) { return slot_records_[s]; }

  // Whether rank r's progress tag has reached `tag`. Tags only grow, so the last value seen is a
  // lower bound that answers most questions without touching r's cache line.
  bool progress_reached(int r, std::uint64_t tag) {
    std::uint64_t& seen = seen_progress_[static_cast<std::size_t>(r)];
    if (seen >= tag) return true;
    // acquire: the caller goes on to reuse what r acknowledged having read.
    seen = area(r).progress().tag.load(std::memory_order_acquire);
    return seen >= tag;
  }

  // Runs `op` to completion (the blocking driver). Any error aborts the team.
  void run(CollectiveOp& op);
  // Numbers the next operation; throws if the team was aborted or this rank left it.
  std::uint64_t next_op();
  // Makes the comparisons this rank deferred (deferred_checks.hpp), then publishes how many
  // operations this rank ran and compares it with the ranks that left
  // before: every pair of ranks is compared by the later of the two to leave, so that a rank
  // that ran fewer or more collectives than another is found at the latest when the team ends
  // (deferred checks never compare an operation a rank skipped). Throws InvalidArgument
  // (Cause::kCollectiveMismatch) naming the ranks and their counts, recorded for the ranks still
  // in the team. Raises the team's error instead where a peer recorded one this rank has not
  // raised yet (under deferred checks, one found after this rank's last call). Idempotent.
  void leave();
  // The last operation numbered.
  std::uint64_t last_op() const { return op_; }

  // The comparisons this rank deferred (deferred_checks.hpp).
  DeferredChecks& deferred_checks() { return deferred_checks_; }

  // Marks the team aborted for every rank (first error wins) and throws on this rank.
  [[noreturn]] void fail(Status status, const std::string& message,
                         Cause cause = Cause::kUnspecified) {
    current_ = nullptr;
    failures_.fail(status, message, cause);
  }
  // Records the error team-wide (if none is recorded yet) and wakes every sleeper.
  void record_abort(Status status, const std::string& message, Cause cause = Cause::kUnspecified) {
    current_ = nullptr;
    failures_.record(status, message, cause);
  }
  // Throws the team's abort error if one was recorded. Inline: every call checks.
  void check_aborted() {
    if (failures_.pending()) [[unlikely]]
      raise_abort();
  }
  // Whether an abort is recorded, without throwing (callers order the load with a fence).
  bool abort_recorded() const { return failures_.recorded(); }
  bool peer_alive(int r) const { return failures_.alive(r); }

  // Waits for `target` with the slow-path checks of the operation set by set_current; false if
  // `deadline_ns` (sync::now_ns) came first.
  bool wait(const sync::WaitTarget& target, std::int64_t deadline_ns = sync::kNoDeadline);
  // The operation whose arguments the slow-path checks compare with a stalled peer's (run() sets
  // it; the non-blocking engine sets its head operation).
  void set_current(CollectiveOp* op) { current_ = op; }
  CollectiveOp* current() const { return current_; }
  const sync::WaitPolicy& wait_policy() const { return policy_; }
  void on_slow_wait(const sync::WaitTarget& target, std::int64_t waited_ns) override;
  void before_sleep() override { wake_sleepers(); }

  // Publishes a flag this rank owns; sleepers are woken before this rank next sleeps or departs.
  void publish(std::atomic<std::uint64_t>& flag, std::uint64_t value) {
    sync::publish(flag, value);
    wake_pending_ = true;
  }
  void wake_sleepers() {
    if (wake_pending_) {
      wake_pending_ = false;
      sync::wake_sleepers(self().wake());
    }
  }

  SharedBuffers& shared_buffers() { return shared_buffers_; }
  // The team segment's name (removed from /dev/shm after formation): allocate_shared names its
  // objects after it, so a launcher's sweep of the job's names finds them too.
  const std::string& segment_name() const { return segment_name_; }

  // Arrival (status line) and progress (progress line) of the current operation.
  // `copy_weight`: a scatter's or gather's root, its CopyBalance weight (0 elsewhere).
  // `huge_pages`: copy::pack_offsets of the buffer's part on huge pages (0: none known).
  void publish_arrival(std::uint64_t op, const OpSignature& sig, const void* buffer,
                       std::uint64_t bytes, std::uint64_t copy_weight, std::uint64_t huge_pages);
  void publish_step(std::uint64_t op, std::uint64_t step);
  // Whether every peer has arrived in operation `op` or a later one; otherwise `blocked_on`
  // names one that has not. Remembers the lowest operation it saw, so that most calls read no
  // peer's line.
  bool peers_reached(std::uint64_t op, sync::WaitTarget& blocked_on);

 private:
  void form(Bootstrap& bootstrap);
  // Whether this team probes cross-memory attach between its ranks: not with
  // SHMCOLL_SINGLE_COPY=off, nor in a team of one.
  bool wants_probe() const { return options_.single_copy != SingleCopy::kOff && size_ > 1; }
  // single_copy_ and single_copy_why_ from the probe's outcome (`failure`: what failed, empty
  // where every pair passed), or from why the team does not probe.
  void settle_single_copy(const std::string& failure);
  // Keeps the segment mapped for the next team of the same processes (parked_segment.hpp).
  void park_segment();
  // The rest of formation where every rank reuses `parked` (team_setup.cpp).
  void reuse(segment::ParkedSegment&& parked, Bootstrap& bootstrap);
  const topology::Tree& build_tree(int root);
  // Each rank's OS NUMA node for the segment's placement (empty when the topology is not this
  // machine's). An unbound rank's is where it ran at formation, the node first touch would
  // have chosen too.
  segment::RankNodes rank_nodes() const;

  void check_peer_in_slow_wait(const sync::WaitTarget& target);
  // check_aborted's error, after which no operation is being driven.
  [[noreturn]] void raise_abort();

  int rank_ = 0;
  int size_ = 0;
  Options options_;
  segment::Segment segment_;
  std::vector<pid_t> pids_;
  std::vector<topology::Place> places_;                 // every rank's place, from team formation
  std::vector<std::unique_ptr<topology::Tree>> trees_;  // by root
  std::uint64_t published_progress_ = 0;                // the last tag publish_step stored
  bool oversubscribed_ = false;  // more ranks than CPUs to run on (the same on every rank)
  bool probed_ = false;          // the CMA probe ran at formation (or at the segment's first)
  bool single_copy_ = false;     // every pair of ranks passed the CMA probe at formation
  std::string single_copy_why_;  // why not, when it did not
  // Rank 0's measure of cross-memory attach (copy::measure_cross_copy_cost, once per process;
  // 0: not measured).
  double cross_copy_cost_ = 0;
  copy::HugePageCollapser huge_pages_;
  copy::StagingBuffer staging_buffer_;
  std::vector<SlotRecord> slot_records_;
  std::uint64_t slot_mask_ = 0;  // slots() - 1 where that is a power of two above 1, else 0
  std::vector<std::uint64_t> seen_progress_;  // see progress_reached
  sync::WaitPolicy policy_;
  std::uint64_t op_ = 0;
  bool left_ = false;
  DeferredChecks deferred_checks_;
  FailureDomain failures_{segment_, pids_};
  bool wake_pending_ = false;        // published since the last wake_sleepers()
  std::uint64_t peers_reached_ = 0;  // every peer was seen in this operation or a later one
  CollectiveOp* current_ = nullptr;  // the operation being driven, for slow-path checks
  SharedBuffers shared_buffers_;
  std::string segment_name_;
  std::uint64_t nonce_ = 0;  // the random part of the segment's name
};

}  // namespace shmcoll
