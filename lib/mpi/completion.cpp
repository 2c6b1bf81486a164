// The MPI's completion calls, interposed so that shmcoll's non-blocking collectives progress in
// them (requests.hpp). Without an outstanding shmcoll request each goes straight to PMPI. With
// one, a test advances shmcoll's operations and then asks the MPI; a wait does that in a loop
// (the MPI's test advances the MPI's own requests), yielding the CPU once it has looked for a
// while, for ranks that share one. A call that completes a failed shmcoll request returns its
// error as the MPI returns a failed request's: the code itself from a call on one request, or
// MPI_ERR_IN_STATUS with the code in the request's status from a call on several.
#include <sched.h>

#include <boost/container/small_vector.hpp>

#include "mpi/requests.hpp"

namespace {

using shmcoll::mpi::claim_failure;
using shmcoll::mpi::failures_recorded;
using shmcoll::mpi::progress_requests;
using shmcoll::mpi::requests_outstanding;

// A wait: `test(flag)` until it sets the flag or fails; once no shmcoll request is
// outstanding, `wait()` ends it in the MPI alone.
template <class Test, class Wait>
int wait_with_progress(Test&& test, Wait&& wait) {
  constexpr int kSpinsBeforeYield = 64;
  for (int spins = 0;; ++spins) {
    if (!requests_outstanding()) return wait();
    progress_requests();
    int flag = 0;
    if (const int rc = test(flag); rc != MPI_SUCCESS || flag) return rc;
    if (spins >= kSpinsBeforeYield) sched_yield();
  }
}

// The handles a call is given, as they were before the MPI nulled those it completed; empty
// where none of them can be a shmcoll request that fails (none outstanding, none failed).
class Handles {
 public:
  Handles(int count, const MPI_Request* requests) {
    if (count > 0 && (requests_outstanding() || failures_recorded()))
      handles_.assign(requests, requests + count);
  }
  // The error of the request at `index` if the call completed a failed shmcoll request there.
  int failure(int index) const {
    if (handles_.empty() || index < 0 || !failures_recorded()) return MPI_SUCCESS;
    return claim_failure(handles_[static_cast<std::size_t>(index)]);
  }

 private:
  boost::container::small_vector<MPI_Request, 8> handles_;
};

// A call on one request that completed it: its error, if it failed.
int single(int rc, const Handles& handles, int index, MPI_Status* status) {
  if (rc != MPI_SUCCESS) return rc;
  const int code = handles.failure(index);
  if (code != MPI_SUCCESS && status != MPI_STATUS_IGNORE) status->MPI_ERROR = code;
  return code;
}

// A call on several that completed those at `indices` (statuses[k] belongs to indices[k]):
// MPI_ERR_IN_STATUS if one of them failed, with every completed one's error in its status.
template <class Index>
int several(int rc, const Handles& handles, int completed, Index&& indices, MPI_Status* statuses) {
  if (rc != MPI_SUCCESS) return rc;
  if (!failures_recorded()) return rc;
  int result = MPI_SUCCESS;
  boost::container::small_vector<int, 8> codes;
  for (int k = 0; k < completed; ++k) {
    const int code = handles.failure(indices(k));
    codes.push_back(code);
    if (code != MPI_SUCCESS) result = statuses == MPI_STATUSES_IGNORE ? code : MPI_ERR_IN_STATUS;
  }
  if (result == MPI_ERR_IN_STATUS) {
    for (int k = 0; k < completed; ++k) statuses[k].MPI_ERROR = codes[static_cast<std::size_t>(k)];
  }
  return result;
}

}  // namespace

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const Handles handles(1, request);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Test(request, flag, status);
  return *flag ? single(rc, handles, 0, status) : rc;
}

extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  const Handles handles(count, requests);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Testall(count, requests, flag, statuses);
  return *flag ? several(
                     rc, handles, count, [](int k) { return k; }, statuses)
               : rc;
}

extern "C" int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                           MPI_Status* status) {
  const Handles handles(count, requests);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Testany(count, requests, index, flag, status);
  return *flag && *index != MPI_UNDEFINED ? single(rc, handles, *index, status) : rc;
}

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  const Handles handles(incount, requests);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  if (*outcount == MPI_UNDEFINED) return rc;
  return several(
      rc, handles, *outcount, [&](int k) { return indices[k]; }, statuses);
}

extern "C" int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (requests_outstanding()) progress_requests();
  return PMPI_Request_get_status(request, flag, status);
}

// A failed request freed by the program: its error was reported through the communicator's
// error handler when the operation failed, and is forgotten with it.
extern "C" int MPI_Request_free(MPI_Request* request) {
  if (request != nullptr && failures_recorded()) claim_failure(*request);
  return PMPI_Request_free(request);
}

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  const Handles handles(1, request);
  const int rc = wait_with_progress([&](int& flag) { return PMPI_Test(request, &flag, status); },
                                    [&] { return PMPI_Wait(request, status); });
  return single(rc, handles, 0, status);
}

extern "C" int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  const Handles handles(count, requests);
  const int rc =
      wait_with_progress([&](int& flag) { return PMPI_Testall(count, requests, &flag, statuses); },
                         [&] { return PMPI_Waitall(count, requests, statuses); });
  return several(
      rc, handles, count, [](int k) { return k; }, statuses);
}

extern "C" int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  const Handles handles(count, requests);
  const int rc = wait_with_progress(
      [&](int& flag) { return PMPI_Testany(count, requests, index, &flag, status); },
      [&] { return PMPI_Waitany(count, requests, index, status); });
  return *index != MPI_UNDEFINED ? single(rc, handles, *index, status) : rc;
}

extern "C" int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  const Handles handles(incount, requests);
  const int rc = wait_with_progress(
      [&](int& flag) {
        const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        // None complete yet: 0. None active: MPI_UNDEFINED, which ends the wait as it is.
        flag = *outcount != 0;
        return rc;
      },
      [&] { return PMPI_Waitsome(incount, requests, outcount, indices, statuses); });
  if (*outcount == MPI_UNDEFINED) return rc;
  return several(
      rc, handles, *outcount, [&](int k) { return indices[k]; }, statuses);
}

// A communicator may be freed with collectives outstanding (MPI lets them complete): they are
// completed here, before its team ends with it. The program's later wait finds them complete.
extern "C" int MPI_Comm_free(MPI_Comm* comm) {
  if (comm != nullptr && requests_outstanding()) shmcoll::mpi::finish_requests_of(*comm);
  return PMPI_Comm_free(comm);
}
