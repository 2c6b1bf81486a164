// Errors raised by shmcoll. Inside C++ every failure is an exception that carries a Status;
// a C or MPI boundary turns the Status into a return code instead.
#pragma once

#include <stdexcept>
#include <string>

#include "shmcoll/export.hpp"

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

SHMCOLL_API const char* status_name(Status status);

// Which argument an InvalidArgument is about, for callers that sort errors into classes of
// their own (the MPI plugin: MPI_ERR_COUNT, MPI_ERR_ROOT, ...). A rank that learns of a
// peer's error gets the peer's cause with it.
enum class Cause : int {
  kUnspecified = 0,
  kCount = 1,               // a count is negative or overflows
  kRoot = 2,                // the root is outside the team
  kDatatype = 3,            // a datatype cannot be used (size 0 where bytes must move)
  kBuffer = 4,              // a buffer is null, aliased, or in_place where it is not allowed
  kSizeMismatch = 5,        // ranks disagree on how many bytes move (a type signature mismatch)
  kRootMismatch = 6,        // ranks passed different roots
  kCollectiveMismatch = 7,  // ranks called different collectives
};
inline constexpr int kCauseCount = 8;

class SHMCOLL_API Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message, Cause cause = Cause::kUnspecified)
      : std::runtime_error(message), status_(status), cause_(cause) {}
  Status status() const noexcept { return status_; }
  Cause cause() const noexcept { return cause_; }

 private:
  Status status_;
  Cause cause_;
};

// One subclass per status, so callers can catch the kind they can handle.
class SHMCOLL_API InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& m, Cause cause = Cause::kUnspecified)
      : Error(Status::kInvalidArgument, m, cause) {}
};
class SHMCOLL_API PeerFailed : public Error {
 public:
  explicit PeerFailed(const std::string& m) : Error(Status::kPeerFailed, m) {}
};
class SHMCOLL_API Timeout : public Error {
 public:
  explicit Timeout(const std::string& m) : Error(Status::kTimeout, m) {}
};
class SHMCOLL_API SegmentError : public Error {
 public:
  explicit SegmentError(const std::string& m) : Error(Status::kSegmentError, m) {}
};
class SHMCOLL_API BootstrapError : public Error {
 public:
  explicit BootstrapError(const std::string& m) : Error(Status::kBootstrapError, m) {}
};
class SHMCOLL_API InternalError : public Error {
 public:
  explicit InternalError(const std::string& m) : Error(Status::kInternal, m) {}
};

// Throws the subclass that matches `status`.
[[noreturn]] void throw_error(Status status, const std::string& message,
                              Cause cause = Cause::kUnspecified);

}  // namespace shmcoll
