// The non-blocking operations of one team: a queue of started operations, advanced in the order
// they were started, by test()/wait(), by every other call into the team, and -- with
// Options::progress_thread -- by a thread of its own.
//
// Why in order, one at a time: each rank has one status line and one progress line, whose tags
// (operation, step) only grow, and a peer reads a later operation's tag as "this rank is done
// with the earlier ones". So an operation may publish nothing before the operations started
// before it are complete on this rank. The queue spares the caller the waiting, not the order.
//
// Depth: at most Team::slots() operations are outstanding (the ring depth: back-to-back small
// operations overlap through the slots). Starting one more first completes the oldest, making
// progress while it waits.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/buffer_guard.hpp"
#include "protocol/operation.hpp"
#include "shmcoll/error.hpp"

namespace shmcoll {

class ProgressEngine;

namespace detail {
// One started operation and what its requests see of it. A non-blocking call's operation lives
// in its state (OpState: one allocation for both); a persistent request's state builds its
// operation anew at every start (PersistentState).
struct RequestState {
  virtual ~RequestState() = default;
  ProgressEngine* engine = nullptr;
  // The operation while it is queued; null once it is complete, and for a refused start.
  CollectiveOp* op = nullptr;
  // An argument error found when the operation was started: it becomes the team's error when
  // the operation's turn comes (as the blocking call would have raised it then).
  Status start_status = Status::kOk;
  std::string start_message;
  SendBufferGuard send_buffers;       // debug builds: what the caller must leave alone
  std::exception_ptr error;           // set before `complete`
  std::atomic<bool> complete{false};  // release/acquire: publishes `error`
  // Ends the operation once it is complete, in its turn: its destructor may hand back what it
  // held of the team's (the staging buffer) before the next operation starts.
  virtual void end_op() {}
};

// The state of one operation of class Op, built in place.
template <class Op>
struct OpState : RequestState {
  // User-provided: make_shared's value-initialization would otherwise zero the operation's
  // storage (a large operation's whole size) before it is built.
  OpState() {}  // NOLINT(modernize-use-equals-default)
  template <class... Args>
  void build(Args&&... args) {
    op = &storage.emplace(std::forward<Args>(args)...);
  }
  void end_op() override { storage.reset(); }
  std::optional<Op> storage;
};

// A persistent request's: inactive (complete) until started; each start builds the operation
// from the arguments given at init and queues the same state again.
struct PersistentState : RequestState {
  PersistentState() { complete.store(true, std::memory_order_relaxed); }
  // Builds the operation (op); throws an argument's error.
  virtual void build() = 0;
  // False once the team's engine is gone: a start would reach a destroyed team.
  std::shared_ptr<const std::atomic<bool>> team_alive;
};
}  // namespace detail

class ProgressEngine {
 public:
  // `concurrent_calls`: Options::concurrent_calls (a progress thread implies the lock too).
  ProgressEngine(TeamImpl& team, bool progress_thread, bool concurrent_calls);
  // Completes what is queued (errors end there), then stops the thread.
  ~ProgressEngine();
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  // Held by every call into the team while a progress thread runs; a no-op lock otherwise.
  std::unique_lock<std::mutex> lock();

  // Queues a started operation (state->op, built) and advances the queue once. Caller holds
  // lock().
  void start(const std::shared_ptr<detail::RequestState>& state);
  // Queues an operation whose arguments were refused. Caller holds lock().
  std::shared_ptr<detail::RequestState> start_refused(Status status, std::string message);
  // Makes `state` a persistent request of this engine's team.
  void adopt(detail::PersistentState& state);
  // Starts a persistent request again: builds its operation (an argument error is raised in
  // its turn, as for start_refused) and queues it, as `queued` (the same state, held as the
  // queue holds it: no reference count changes unless it is queued). InvalidArgument if its
  // last start is not complete, or its team has ended. Takes lock() itself.
  static void restart(detail::PersistentState& state,
                      const std::shared_ptr<detail::RequestState>& queued);
  // Completes every queued operation; errors are left in their requests (and in the team).
  // Caller holds lock(). Blocking collectives call this first.
  void drain();
  bool idle() const { return queue_.empty(); }

  // For Request. Each takes lock() itself.
  bool test(detail::RequestState& request);
  bool wait_until(detail::RequestState& request, std::int64_t deadline_ns);
  // The last handle of `request` goes away before it completed: waits for it, so that buffers
  // that outlive the handle are not released under a transfer (debug builds say so on stderr:
  // it is usually a forgotten wait). Errors stay recorded in the team.
  void release_incomplete(detail::RequestState& request);
  // Until one of `requests` (non-null) is complete, in queue order.
  void wait_any(detail::RequestState* const* requests, std::size_t n);

 private:
  // Advances the queue, completing operations in order, until the head must wait (false, with
  // `blocked_on`) or the queue is empty (true). Never waits; never throws: an error completes
  // the head and every later request with it.
  bool advance(sync::WaitTarget& blocked_on);
  void enqueue(const std::shared_ptr<detail::RequestState>& state);
  // Advances the queue, waiting for the head whenever it blocks, until `done()` holds (true)
  // or the deadline passes (false, unless `done()` holds by then).
  template <class Done>
  bool progress_until(Done&& done, std::int64_t deadline_ns);
  // Waits for the head's target, with the team's slow checks; false at the deadline.
  bool wait_head(const sync::WaitTarget& target, std::int64_t deadline_ns);
  // The slow checks (abort, dead peer, timeout, mismatch) for a caller that polls instead of
  // waiting: run at most every millisecond, timing the stall from when the target last changed.
  void check_stall(const sync::WaitTarget& target);
  void fail_all(const std::exception_ptr& error);
  // An operation queued behind none, without a progress thread: what can be done at once is
  // done before it is queued, and one complete by then never is.
  void advance_alone(const std::shared_ptr<detail::RequestState>& state);
  void complete_head(std::exception_ptr error);
  // Ends an operation, queued or not: its error, if any, and `complete`.
  void complete(detail::RequestState& state, std::exception_ptr error);
  // Debug builds: an error if the caller touched the head's send buffers before completion.
  std::exception_ptr check_send_buffers(detail::RequestState& head);
  void thread_main();

  TeamImpl& team_;
  std::deque<std::shared_ptr<detail::RequestState>> queue_;
  const std::size_t max_outstanding_;

  sync::WaitTarget stalled_on_{};
  std::int64_t stalled_since_ns_ = 0;
  std::int64_t last_check_ns_ = 0;

  // Shared with the persistent requests (adopt), which may outlive the team.
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);

  const bool threaded_;
  const bool locked_;  // lock() serializes the calls: a progress thread, or concurrent callers
  std::mutex mutex_;
  std::condition_variable work_;  // signals the thread: queue not empty, or stop
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above is initialised
};

}  // namespace shmcoll
