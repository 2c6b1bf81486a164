// The handle of a non-blocking collective (Team::ibcast and the others), as MPI_Request is for
// MPI_Ibcast. A request completes on this rank when the operation is done here; its buffers must
// not be touched (read or written) before that, as in MPI.
//
// Progress: a team's operations run in the order they were started, and they move forward
// inside test(), wait() and any other call into the same team -- or all the time, with
// Options::progress_thread. An error (bad argument here or on another rank, mismatch, dead
// peer, timeout) completes the request and is thrown by test() or wait(), with the same message
// the blocking call would give; the team is then unusable, like after a blocking error.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>

#include "shmcoll/export.hpp"

namespace shmcoll {

namespace detail {
struct RequestState;
struct PersistentState;
}  // namespace detail

class SHMCOLL_API Request {
 public:
  Request() = default;  // an empty request: already complete
  explicit Request(std::shared_ptr<detail::RequestState> state) : state_(std::move(state)) {}
  // Copies share the operation. When the last handle of an incomplete request is destroyed or
  // assigned over, it waits for the operation first (as std::future from std::async does), so
  // buffers declared before the request are not released under a transfer. Debug builds say so
  // on stderr, as it is usually a forgotten wait(); an error stays recorded in the team, whose
  // next call raises it.
  Request(const Request&) = default;
  Request(Request&&) noexcept = default;
  Request& operator=(const Request& other);
  Request& operator=(Request&& other) noexcept;
  ~Request();

  // Makes what progress is possible without waiting; true once the operation is complete on
  // this rank (then throws its error, if it failed).
  bool test();
  // Until complete; throws the operation's error.
  void wait();
  // Until complete or `deadline`; false if the deadline came first (the request stays valid).
  bool wait_until(std::chrono::steady_clock::time_point deadline);
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    return wait_until(std::chrono::steady_clock::now() + timeout);
  }
  // Complete (successfully or not), without making progress.
  bool done() const;

  // Waits for every request; throws the first error met after all are complete.
  static void wait_all(std::span<Request> requests);
  // Waits until one of the non-empty requests is complete and returns its index (it is not
  // reset); throws its error. With no non-empty request, returns requests.size().
  static std::size_t wait_any(std::span<Request> requests);

 private:
  friend class PersistentRequest;  // starts its operation as the queue holds it (state_)
  void release();                  // this handle lets go of state_ (see the destructor)
  std::shared_ptr<detail::RequestState> state_;
};

// The handle of a persistent collective (Team::bcast_init and the others), as MPI_Request is
// for MPI_Bcast_init: made once, then started any number of times, each start completed (by
// test() or wait()) before the next. Starting it is a collective call of its own: every rank
// starts its request where it would call the collective, in the same order as its other
// collectives. The operation is planned at init (which of the collective's operation classes
// serves this rank); a start builds it from the arguments given at init, in the request's own
// memory, and reads the send buffers and writes the receive buffers as that call would. The
// counts and displacements arrays are copied at init. Errors are those of the non-blocking
// call, thrown by the completion; starting a request whose last start is not complete, or
// whose team was destroyed, throws InvalidArgument.
class SHMCOLL_API PersistentRequest {
 public:
  PersistentRequest() = default;  // empty: starting it throws InvalidArgument
  explicit PersistentRequest(std::shared_ptr<detail::PersistentState> state);
  PersistentRequest(PersistentRequest&&) noexcept = default;
  PersistentRequest& operator=(PersistentRequest&& other) noexcept;
  PersistentRequest(const PersistentRequest&) = delete;
  PersistentRequest& operator=(const PersistentRequest&) = delete;
  // Waits for an incomplete start first, as Request's destructor does.
  ~PersistentRequest();

  void start();
  // As Request's, for the last start (an inactive request is complete).
  bool test() { return request_.test(); }
  void wait() { request_.wait(); }
  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    return request_.wait_until(deadline);
  }
  bool done() const { return request_.done(); }
  // A Request that completes every start of this one (for Request::wait_all, wait_any).
  const Request& request() const { return request_; }

 private:
  void release();
  std::shared_ptr<detail::PersistentState> state_;
  Request request_;  // on state_
};

}  // namespace shmcoll
