#include "mpi/error_codes.hpp"

#include <mpi.h>

#include <map>
#include <mutex>
#include <vector>

namespace shmcoll::mpi {

int error_class_of(Status status, Cause cause) {
  switch (status) {
    case Status::kOk:
      return MPI_SUCCESS;
    case Status::kInvalidArgument:
      switch (cause) {
        case Cause::kCount:
          return MPI_ERR_COUNT;
        case Cause::kRoot:
          return MPI_ERR_ROOT;
        case Cause::kDatatype:
          return MPI_ERR_TYPE;
        case Cause::kBuffer:
          return MPI_ERR_BUFFER;
        case Cause::kSizeMismatch:
          return MPI_ERR_TRUNCATE;
        case Cause::kUnspecified:
        case Cause::kRootMismatch:
        case Cause::kCollectiveMismatch:
          break;
      }
      return MPI_ERR_ARG;
    case Status::kPeerFailed:
    case Status::kTimeout:
    case Status::kSegmentError:
    case Status::kBootstrapError:
      return MPI_ERR_OTHER;
    case Status::kInternal:
      break;
  }
  return MPI_ERR_INTERN;
}

Cause cause_of_class(int mpi_class) {
  if (mpi_class == MPI_ERR_COUNT) return Cause::kCount;
  if (mpi_class == MPI_ERR_ROOT) return Cause::kRoot;
  if (mpi_class == MPI_ERR_TYPE) return Cause::kDatatype;
  if (mpi_class == MPI_ERR_BUFFER) return Cause::kBuffer;
  if (mpi_class == MPI_ERR_TRUNCATE) return Cause::kSizeMismatch;
  return Cause::kUnspecified;
}

namespace {

std::mutex codes_mutex;
// The message of each code handed out, its latest when a code is reused.
std::map<int, std::string>& messages() {
  static std::map<int, std::string> m;
  return m;
}

}  // namespace

int error_code_for(int mpi_class, const std::string& message) {
  struct Codes {
    std::vector<int> codes;  // added so far, at most kCodesPerClass
    std::size_t next = 0;    // the one to use next once all are added
  };
  static std::map<int, Codes> by_class;
  const std::lock_guard lock(codes_mutex);
  Codes& c = by_class[mpi_class];
  int code = mpi_class;
  if (c.codes.size() < static_cast<std::size_t>(kCodesPerClass)) {
    if (PMPI_Add_error_code(mpi_class, &code) != MPI_SUCCESS) return mpi_class;
    c.codes.push_back(code);
  } else {
    code = c.codes[c.next];
    c.next = (c.next + 1) % c.codes.size();
  }
  const std::string text = message.substr(0, MPI_MAX_ERROR_STRING - 1);
  if (PMPI_Add_error_string(code, text.c_str()) != MPI_SUCCESS) return mpi_class;
  messages()[code] = text;
  return code;
}

bool message_of(int code, std::string& message) {
  const std::lock_guard lock(codes_mutex);
  const auto it = messages().find(code);
  if (it == messages().end()) return false;
  message = it->second;
  return true;
}

}  // namespace shmcoll::mpi
