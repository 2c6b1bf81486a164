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
}

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
  void release();  // this handle lets go of state_ (see the destructor)
  std::shared_ptr<detail::RequestState> state_;
};

}  // namespace shmcoll
