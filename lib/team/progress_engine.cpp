#include "team/progress_engine.hpp"

#include <cstdio>

namespace shmcoll {
namespace {

// How often a caller that polls (test loops, the progress thread) runs the slow checks, and how
// long the progress thread sleeps at most between two looks at a stalled operation. Both bound
// how late a dead peer or a timeout is noticed without anybody waiting.
constexpr std::int64_t kPollCheckNs = 1'000'000;
// The progress thread spins this many pause iterations before it sleeps: short, because on a
// full machine it competes with the computation it is meant to overlap.
constexpr int kThreadSpin = 256;

}  // namespace

ProgressEngine::ProgressEngine(TeamImpl& team, bool progress_thread, bool concurrent_calls)
    : team_(team),
      max_outstanding_(static_cast<std::size_t>(team.slots())),
      threaded_(progress_thread),
      locked_(progress_thread || concurrent_calls) {
  if (threaded_) thread_ = std::thread([this] { thread_main(); });
}

ProgressEngine::~ProgressEngine() {
  {
    auto guard = lock();
    drain();
    stop_ = true;
  }
  alive_->store(false, std::memory_order_release);
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::unique_lock<std::mutex> ProgressEngine::lock() {
  return locked_ ? std::unique_lock<std::mutex>(mutex_) : std::unique_lock<std::mutex>();
}

void ProgressEngine::start(const std::shared_ptr<detail::RequestState>& state) {
  if constexpr (kDebugChecks) state->send_buffers.arm(state->op->lent_ranges());
  enqueue(state);
}

std::shared_ptr<detail::RequestState> ProgressEngine::start_refused(Status status,
                                                                    std::string message) {
  auto state = std::make_shared<detail::RequestState>();
  state->start_status = status;
  state->start_message = std::move(message);
  enqueue(state);
  return state;
}

void ProgressEngine::adopt(detail::PersistentState& state) {
  state.engine = this;
  state.team_alive = alive_;
}

void ProgressEngine::restart(detail::PersistentState& state,
                             const std::shared_ptr<detail::RequestState>& queued) {
  if (!state.team_alive || !state.team_alive->load(std::memory_order_acquire))
    throw InvalidArgument("start of a persistent request whose team has ended");
  ProgressEngine& engine = *state.engine;
  auto guard = engine.lock();
  if (!state.complete.load(std::memory_order_acquire)) {
    throw InvalidArgument("rank " + std::to_string(engine.team_.rank()) +
                          ": start of a persistent request whose last start is not complete "
                          "(wait for it, or test it until it is, before starting it again)");
  }
  state.complete.store(false, std::memory_order_relaxed);
  if (state.error) state.error = nullptr;  // (an exception_ptr's assignment is not free)
  state.start_status = Status::kOk;
  try {
    state.build();
  } catch (const Error& e) {
    state.start_status = e.status();
    state.start_message = e.what();
  } catch (const std::exception& e) {
    state.start_status = Status::kInternal;
    state.start_message = e.what();
  }
  if (state.start_status != Status::kOk) {
    state.op = nullptr;  // refused: raised in its turn
    engine.enqueue(queued);
    return;
  }
  engine.start(queued);
}

void ProgressEngine::enqueue(const std::shared_ptr<detail::RequestState>& state) {
  state->engine = this;
  // The ring bound: with max_outstanding_ queued, the oldest completes first. (An empty queue
  // is the common case; a deque's size takes a dozen instructions.)
  if (!queue_.empty())
    progress_until([&] { return queue_.size() < max_outstanding_; }, sync::kNoDeadline);
  if (!threaded_ && queue_.empty() && state->op) {
    advance_alone(state);
    team_.wake_sleepers();
    return;
  }
  queue_.push_back(state);
  if (threaded_) {
    // The thread does the work; the caller announces its arrival (when this operation's turn
    // has come), so that peers waiting for it go on, and returns to its computation at once.
    if (queue_.size() == 1 && state->op) {
      try {
        team_.set_current(state->op);
        state->op->arrive();
      } catch (...) {
        fail_all(std::current_exception());
      }
    }
    work_.notify_one();
  } else {
    sync::WaitTarget target;
    advance(target);  // what can be done at once: arrival, the first chunks
  }
  team_.wake_sleepers();
}

void ProgressEngine::drain() {
  progress_until([&] { return queue_.empty(); }, sync::kNoDeadline);
  team_.wake_sleepers();
}

template <class Done>
bool ProgressEngine::progress_until(Done&& done, std::int64_t deadline_ns) {
  for (;;) {
    if (done()) return true;
    sync::WaitTarget target;
    // An empty queue means every request is complete, so `done` holds or never will.
    if (advance(target) || done()) return true;
    if (!wait_head(target, deadline_ns)) return done();  // the deadline came first
  }
}

bool ProgressEngine::advance(sync::WaitTarget& blocked_on) {
  while (!queue_.empty()) {
    detail::RequestState& head = *queue_.front();
    try {
      // A refused start raises its error now, in its turn, as the blocking call would have.
      if (!head.op) team_.fail(head.start_status, head.start_message);
      team_.set_current(head.op);
      if (!head.op->advance(blocked_on)) return false;
      complete_head(nullptr);
    } catch (...) {
      fail_all(std::current_exception());
    }
  }
  return true;
}

bool ProgressEngine::wait_head(const sync::WaitTarget& target, std::int64_t deadline_ns) {
  try {
    return team_.wait(target, deadline_ns);
  } catch (...) {
    fail_all(std::current_exception());
    return true;
  }
}

void ProgressEngine::check_stall(const sync::WaitTarget& target) {
  const std::int64_t now = sync::now_ns();
  if (target.word != stalled_on_.word || target.at_least != stalled_on_.at_least) {
    stalled_on_ = target;
    stalled_since_ns_ = last_check_ns_ = now;
    return;
  }
  if (now - last_check_ns_ < kPollCheckNs) return;
  last_check_ns_ = now;
  try {
    team_.on_slow_wait(target, now - stalled_since_ns_);
  } catch (...) {
    fail_all(std::current_exception());
  }
}

void ProgressEngine::advance_alone(const std::shared_ptr<detail::RequestState>& state) {
  sync::WaitTarget target;
  try {
    team_.set_current(state->op);
    if (state->op->advance(target)) {
      complete(*state, nullptr);
      return;
    }
  } catch (...) {
    queue_.push_back(state);
    fail_all(std::current_exception());
    return;
  }
  queue_.push_back(state);  // the head now, as advance() would leave it
}

void ProgressEngine::complete_head(std::exception_ptr error) {
  std::shared_ptr<detail::RequestState> state = std::move(queue_.front());
  queue_.pop_front();
  complete(*state, std::move(error));
}

void ProgressEngine::complete(detail::RequestState& state, std::exception_ptr error) {
  team_.set_current(nullptr);
  if (kDebugChecks && !error && state.op) error = check_send_buffers(state);
  state.op = nullptr;
  state.end_op();
  if (error || state.error) state.error = std::move(error);
  // release: the error above is visible to whoever sees `complete` (Request::done, test).
  state.complete.store(true, std::memory_order_release);
}

std::exception_ptr ProgressEngine::check_send_buffers(detail::RequestState& head) {
  const std::string changed = head.send_buffers.changed();
  if (changed.empty()) return nullptr;
  try {
    // Recorded team-wide: the peers may have received bytes the caller was rewriting.
    team_.fail(Status::kInvalidArgument,
               "non-blocking " + head.op->where() + ", operation #" +
                   std::to_string(head.op->op()) + " on rank " + std::to_string(team_.rank()) +
                   ": its send buffer (" + changed +
                   ") was touched before the request completed; a non-blocking operation's "
                   "buffers must not be written or freed until test() or wait() reports it "
                   "complete (checked in debug builds)");
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

void ProgressEngine::fail_all(const std::exception_ptr& error) {
  team_.set_current(nullptr);
  // Record the error team-wide (fail() has done so for shmcoll's own errors; this covers the
  // others), as the blocking driver does.
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    team_.record_abort(e.status(), e.what(), e.cause());
  } catch (const std::exception& e) {
    team_.record_abort(Status::kInternal, e.what());
  } catch (...) {
    team_.record_abort(Status::kInternal, "unknown exception");
  }
  // The head may have peers writing into its buffers; it returns when they no longer do.
  if (!queue_.empty() && queue_.front()->op) queue_.front()->op->abandon();
  // The later operations never started; they end with the team's error.
  while (!queue_.empty()) complete_head(error);
}

bool ProgressEngine::test(detail::RequestState& request) {
  if (request.complete.load(std::memory_order_acquire)) return true;
  std::unique_lock<std::mutex> guard;
  if (locked_) {
    // The holder (the thread, or another caller) is making progress, and test() must not
    // wait for it.
    guard = std::unique_lock<std::mutex>(mutex_, std::try_to_lock);
    if (!guard.owns_lock()) return request.complete.load(std::memory_order_acquire);
  }
  sync::WaitTarget target;
  const bool empty = advance(target);
  team_.wake_sleepers();
  if (!empty && !request.complete.load(std::memory_order_relaxed)) check_stall(target);
  return request.complete.load(std::memory_order_acquire);
}

bool ProgressEngine::wait_until(detail::RequestState& request, std::int64_t deadline_ns) {
  if (request.complete.load(std::memory_order_acquire)) return true;
  auto guard = lock();
  progress_until([&] { return request.complete.load(std::memory_order_relaxed); }, deadline_ns);
  team_.wake_sleepers();
  return request.complete.load(std::memory_order_acquire);
}

void ProgressEngine::release_incomplete(detail::RequestState& request) {
  auto guard = lock();
  if (request.complete.load(std::memory_order_acquire)) return;
  if constexpr (kDebugChecks) {
    std::fprintf(stderr,
                 "shmcoll: rank %d: the last handle of a request for %s was released before it "
                 "completed; waiting for it (call wait() or test() before letting go of a "
                 "request: its buffers are in use until then)\n",
                 team_.rank(), request.op ? request.op->where().c_str() : "a refused operation");
  }
  progress_until([&] { return request.complete.load(std::memory_order_relaxed); },
                 sync::kNoDeadline);
  team_.wake_sleepers();
}

void ProgressEngine::wait_any(detail::RequestState* const* requests, std::size_t n) {
  auto any_complete = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      if (requests[i] != nullptr && requests[i]->complete.load(std::memory_order_acquire))
        return true;
    }
    return false;
  };
  auto guard = lock();
  progress_until(any_complete, sync::kNoDeadline);
  team_.wake_sleepers();
}

void ProgressEngine::thread_main() {
  std::unique_lock<std::mutex> guard(mutex_);
  while (!stop_) {
    if (queue_.empty()) {
      work_.wait(guard);
      continue;
    }
    sync::WaitTarget target;
    const bool empty = advance(target);
    team_.wake_sleepers();
    if (empty) continue;
    check_stall(target);
    if (queue_.empty()) continue;
    // Wait for the head's target without the lock, so the caller's own calls never queue
    // behind this thread's sleep. A peer's publish wakes the futex; the slice bounds how late
    // the slow checks run.
    guard.unlock();
    bool ready = false;
    for (int i = 0; i < kThreadSpin && !ready; ++i) {
      sync::cpu_relax();
      ready = sync::reached(target);
    }
    if (!ready) sync::sleep_once(target, team_.area(target.peer).wake(), kPollCheckNs);
    guard.lock();
  }
}

}  // namespace shmcoll
