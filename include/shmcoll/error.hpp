// Errors raised by shmcoll. Inside C++ every failure is an exception that carries a Status;
// a C or MPI boundary turns the Status into a return code instead.
#pragma once

#include <stdexcept>
#include <string>

namespace shmcoll {

enum class Status : int {
  kOk = 0,
  kInvalidArgument = 1,  // bad user input, detected locally or by comparing ranks' arguments
  kPeerFailed = 2,       // a peer process died
  kTimeout = 3,          // a peer did not make progress within the configured bound
  kSegmentError = 4,     // the shared segment could not be created, attached or validated
  kBootstrapError = 5,   // the out-of-band exchange used to form a team failed
  kInternal = 6,         // a broken invariant inside shmcoll
};

const char* status_name(Status status);

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

// One subclass per status, so callers can catch the kind they can handle.
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& m) : Error(Status::kInvalidArgument, m) {}
};
class PeerFailed : public Error {
 public:
  explicit PeerFailed(const std::string& m) : Error(Status::kPeerFailed, m) {}
};
class Timeout : public Error {
 public:
  explicit Timeout(const std::string& m) : Error(Status::kTimeout, m) {}
};
class SegmentError : public Error {
 public:
  explicit SegmentError(const std::string& m) : Error(Status::kSegmentError, m) {}
};
class BootstrapError : public Error {
 public:
  explicit BootstrapError(const std::string& m) : Error(Status::kBootstrapError, m) {}
};
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& m) : Error(Status::kInternal, m) {}
};

// Throws the subclass that matches `status`.
[[noreturn]] void throw_error(Status status, const std::string& message);

}  // namespace shmcoll
