// The started calls across nodes and their progress (started.hpp).
#include "mpi/spanning/started.hpp"

#include <sched.h>

#include <algorithm>
#include <mutex>

#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {
namespace {

// Held by the thread that advances the calls, for a whole pass (the MPI is called under it).
std::mutex advance_lock;
// The started calls not yet taken out after they ended, in the order they were started; under
// calls_lock, held only to change or copy the list (never while the MPI is called).
std::mutex calls_lock;
std::vector<std::shared_ptr<StartedCall>> calls;
std::atomic<int> outstanding{0};
// This thread is inside a pass: an MPI calling back into the plugin from a step's MPI call.
thread_local bool in_pass = false;

// Waits that spin this long before they give up the CPU, for ranks that share one.
constexpr int kSpinsBeforeYield = 64;

}  // namespace

bool StartedCall::test() const {
  if (!over_.load(std::memory_order_acquire)) return false;
  if (error_) std::rethrow_exception(error_);
  return true;
}

void StartedCall::wait() const {
  for (int spins = 0; !over_.load(std::memory_order_acquire); ++spins) {
    progress_started_calls();
    if (spins >= kSpinsBeforeYield) sched_yield();
  }
  test();
}

bool StartedCall::waiting_over() {
  try {
    if (!waiting_.team.test()) return false;
  } catch (...) {
    waiting_.team = Request();  // over, with its error
    throw;
  }
  if (waiting_.until) {
    bool met = false;
    try {
      met = waiting_.until();
    } catch (...) {
      waiting_.until = nullptr;
      throw;
    }
    if (!met) return false;
    waiting_.until = nullptr;
  }
  if (!waiting_.mpi.empty()) {
    int done = 0;
    const int rc = PMPI_Testall(static_cast<int>(waiting_.mpi.size()), waiting_.mpi.data(), &done,
                                MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) waiting_.mpi.clear();
    check_mpi(rc, "PMPI_Testall for a call across nodes");
    if (done == 0) return false;
    waiting_.mpi.clear();
  }
  return true;
}

void StartedCall::fail(std::exception_ptr error) {
  if (error_) return;  // the first error stands; the team was aborted for it
  error_ = error;
  try {
    std::rethrow_exception(error);
  } catch (const NodeTeamIntact&) {
    // The node's team finished its part of the call: it stays.
  } catch (const Error& e) {
    // The node's other ranks get it too (a team's own error is recorded already).
    spanning_->abort(e.status(), e.what(), e.cause());
  } catch (const std::exception& e) {
    spanning_->abort(Status::kInternal, e.what());
  }
}

bool StartedCall::advance() {
  for (;;) {
    bool over = false;
    try {
      over = waiting_over();
    } catch (...) {
      // The part that failed is over; what else the step started is still waited for.
      fail(std::current_exception());
      continue;
    }
    if (!over) return false;
    while (next_ < steps_.size() && failed() && !steps_[next_].settles) ++next_;
    if (next_ == steps_.size()) {
      over_.store(true, std::memory_order_release);
      return true;
    }
    const Entry& entry = steps_[next_++];
    try {
      entry.step(waiting_);
    } catch (...) {
      fail(std::current_exception());
    }
  }
}

void start_across_nodes(const std::shared_ptr<StartedCall>& call) {
  {
    std::lock_guard<std::mutex> guard(calls_lock);
    calls.push_back(call);
  }
  outstanding.fetch_add(1, std::memory_order_relaxed);
  progress_started_calls();
}

void progress_started_calls() {
  if (outstanding.load(std::memory_order_relaxed) == 0 || in_pass) return;
  std::unique_lock<std::mutex> advancing(advance_lock, std::try_to_lock);
  if (!advancing.owns_lock()) return;  // another thread is at it
  in_pass = true;
  std::vector<std::shared_ptr<StartedCall>> pass;
  {
    std::lock_guard<std::mutex> guard(calls_lock);
    pass = calls;
  }
  // Only the oldest call of each communicator runs; one that ends lets the next one run.
  std::vector<const Spanning*> behind;
  int ended = 0;
  for (const std::shared_ptr<StartedCall>& call : pass) {
    const Spanning* spanning = &call->spanning();
    if (std::find(behind.begin(), behind.end(), spanning) != behind.end()) continue;
    if (call->advance()) {
      ++ended;
    } else {
      behind.push_back(spanning);
    }
  }
  in_pass = false;
  if (ended == 0) return;
  {
    std::lock_guard<std::mutex> guard(calls_lock);
    std::erase_if(calls, [](const std::shared_ptr<StartedCall>& call) { return call->over(); });
  }
  outstanding.fetch_sub(ended, std::memory_order_relaxed);
}

void drain_started(const Spanning& spanning) {
  auto pending = [&spanning] {
    if (outstanding.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard<std::mutex> guard(calls_lock);
    return std::any_of(calls.begin(), calls.end(),
                       [&spanning](const auto& call) { return &call->spanning() == &spanning; });
  };
  for (int spins = 0; pending(); ++spins) {
    progress_started_calls();
    if (spins >= kSpinsBeforeYield) sched_yield();
  }
}

}  // namespace shmcoll::mpi
