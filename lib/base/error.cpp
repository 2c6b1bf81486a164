#include "shmcoll/error.hpp"

namespace shmcoll {

const char* status_name(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kInvalidArgument:
      return "invalid argument";
    case Status::kPeerFailed:
      return "peer failed";
    case Status::kTimeout:
      return "timeout";
    case Status::kSegmentError:
      return "segment error";
    case Status::kBootstrapError:
      return "bootstrap error";
    case Status::kInternal:
      return "internal error";
  }
  return "unknown status";
}

void throw_error(Status status, const std::string& message, Cause cause) {
  switch (status) {
    case Status::kInvalidArgument:
      throw InvalidArgument(message, cause);
    case Status::kPeerFailed:
      throw PeerFailed(message);
    case Status::kTimeout:
      throw Timeout(message);
    case Status::kSegmentError:
      throw SegmentError(message);
    case Status::kBootstrapError:
      throw BootstrapError(message);
    case Status::kOk:
    case Status::kInternal:
      break;
  }
  throw InternalError(message);
}

}  // namespace shmcoll
