// Request: the caller's handle on a queued operation (team/progress_engine.hpp). A complete
// request no longer touches its engine, so it may outlive its team.
#include "shmcoll/request.hpp"

#include <vector>

#include "team/progress_engine.hpp"

namespace shmcoll {
namespace {

bool finish(const detail::RequestState& state) {
  if (state.error) std::rethrow_exception(state.error);
  return true;
}

}  // namespace

Request& Request::operator=(const Request& other) {
  if (state_ != other.state_) {
    release();
    state_ = other.state_;
  }
  return *this;
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
  }
  return *this;
}

Request::~Request() { release(); }

void Request::release() {
  // The engine's queue holds the other reference of an incomplete request; more means other
  // handles remain. Once complete, the count may only fall, and nothing is waited for.
  if (state_ && state_.use_count() <= 2 && !state_->complete.load(std::memory_order_acquire)) {
    try {
      state_->engine->release_incomplete(*state_);
    } catch (...) {
      // Only a failing mutex lands here; the operation stays queued and completes later.
    }
  }
  state_.reset();
}

bool Request::done() const { return !state_ || state_->complete.load(std::memory_order_acquire); }

bool Request::test() {
  if (!state_) return true;
  if (!state_->complete.load(std::memory_order_acquire) && !state_->engine->test(*state_))
    return false;
  return finish(*state_);
}

void Request::wait() {
  if (!state_) return;
  if (!state_->complete.load(std::memory_order_acquire))
    state_->engine->wait_until(*state_, sync::kNoDeadline);
  finish(*state_);
}

bool Request::wait_until(std::chrono::steady_clock::time_point deadline) {
  if (!state_) return true;
  if (!state_->complete.load(std::memory_order_acquire)) {
    const std::int64_t deadline_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    if (!state_->engine->wait_until(*state_, deadline_ns)) return false;
  }
  return finish(*state_);
}

void Request::wait_all(std::span<Request> requests) {
  std::exception_ptr first;
  for (Request& r : requests) {
    try {
      r.wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

std::size_t Request::wait_any(std::span<Request> requests) {
  std::vector<detail::RequestState*> states;
  ProgressEngine* engine = nullptr;
  for (Request& r : requests) {
    states.push_back(r.state_.get());
    if (r.state_ && !r.state_->complete.load(std::memory_order_acquire)) engine = r.state_->engine;
  }
  // Operations complete in the order they were started, team by team; waiting on one team's
  // queue until any of these completes is enough when they share a team, which is the case
  // this serves (requests of several teams: wait_any waits on the first incomplete one's team).
  if (engine != nullptr) engine->wait_any(states.data(), states.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (states[i] != nullptr && states[i]->complete.load(std::memory_order_acquire)) {
      finish(*states[i]);
      return i;
    }
  }
  return requests.size();
}

}  // namespace shmcoll
