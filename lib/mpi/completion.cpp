// The MPI's completion calls, interposed so that shmcoll's non-blocking collectives progress in
// them (requests.hpp). Without a request of the plugin's in play each goes straight to PMPI. With
// one, a test advances shmcoll's operations and then asks the MPI; a wait does that in a loop
// (the MPI's test advances the MPI's own requests), yielding the CPU once it has looked for a
// while, for ranks that share one. A call that completes a failed shmcoll request returns its
// error as the MPI returns a failed request's: the code itself from a call on one request, or
// MPI_ERR_IN_STATUS with the code in the request's status from a call on several.
//
// An active persistent request of the plugin's (persistent.hpp), or an active call kept for
// non-blocking calls (reused_calls.hpp), is served here: alone, or in an array of such requests
// only, its start is completed directly; in an array with other requests, the MPI is handed the
// start's generalized request instead (MpiRequests). Completing a kept call makes the program's
// handle MPI_REQUEST_NULL.
#include <sched.h>

#include <boost/container/small_vector.hpp>

#include "mpi/persistent.hpp"
#include "mpi/requests.hpp"

namespace {

using shmcoll::mpi::claim_failure;
using shmcoll::mpi::failures_recorded;
using shmcoll::mpi::persistent_active;
using shmcoll::mpi::PersistentCall;
using shmcoll::mpi::progress_requests;
using shmcoll::mpi::requests_outstanding;

// Whether a completion call may be given a request the plugin must serve: one outstanding, a
// persistent or kept call active, or a failure to return. Three relaxed loads; without any of
// them each call goes straight to the MPI (the program's point-to-point waits, most often).
bool in_play() { return requests_outstanding() || persistent_active() || failures_recorded(); }

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

// The requests a call passes to the MPI: the program's own array, or a copy of it in which each
// active persistent request of the plugin's is its start's generalized request (made now).
// restore() writes back what the MPI changed, but the persistent requests' handles, which stay
// the program's; a start whose generalized request the MPI completed leaves its request inactive.
class MpiRequests {
 public:
  MpiRequests(int count, MPI_Request* requests) : program_(requests), count_(count) {
    if (!persistent_active() || count <= 0 || requests == nullptr) return;
    for (int i = 0; i < count; ++i) {
      PersistentCall* call = shmcoll::mpi::find_active(requests[i]);
      if (call == nullptr) continue;
      if (copy_.empty()) copy_.assign(requests, requests + count);
      shmcoll::mpi::mpi_request_for(call, &copy_[static_cast<std::size_t>(i)]);
      persistent_.push_back({i, call});
    }
  }
  MpiRequests(const MpiRequests&) = delete;
  MpiRequests& operator=(const MpiRequests&) = delete;
  MPI_Request* get() { return copy_.empty() ? program_ : copy_.data(); }
  void restore() {
    if (copy_.empty()) return;
    auto substituted = persistent_.begin();
    for (int i = 0; i < count_; ++i) {
      const MPI_Request handle = copy_[static_cast<std::size_t>(i)];
      if (substituted == persistent_.end() || substituted->index != i) {
        program_[i] = handle;
        continue;
      }
      if (handle == MPI_REQUEST_NULL) {
        shmcoll::mpi::completed_by_mpi(*substituted->call);
        shmcoll::mpi::after_completion(*substituted->call, &program_[i]);
      }
      ++substituted;
    }
  }

 private:
  struct Substituted {
    int index;
    PersistentCall* call;
  };
  MPI_Request* program_;
  int count_;
  boost::container::small_vector<MPI_Request, 8> copy_;
  boost::container::small_vector<Substituted, 4> persistent_;
};

// The program's active persistent request at `*request` whose start the MPI has not been handed
// (completed directly), or nullptr.
PersistentCall* direct_request(const MPI_Request* request) {
  if (!persistent_active() || request == nullptr) return nullptr;
  PersistentCall* call = shmcoll::mpi::find_active(*request);
  return call != nullptr && call->entry.handle == MPI_REQUEST_NULL ? call : nullptr;
}

// Whether every request of the array is null or a direct_request, which `calls` then holds.
using DirectCalls = boost::container::small_vector<PersistentCall*, 8>;
bool direct_requests(int count, const MPI_Request* requests, DirectCalls& calls) {
  if (!persistent_active() || count <= 0 || requests == nullptr) return false;
  for (int i = 0; i < count; ++i) {
    PersistentCall* call = nullptr;
    if (requests[i] != MPI_REQUEST_NULL && (call = direct_request(&requests[i])) == nullptr)
      return false;
    calls.push_back(call);
  }
  return true;
}

// Waits for or tests one persistent request's start (complete_directly), the program's
// `*handle`; `flag` may be null for a wait.
int complete_one(PersistentCall& call, MPI_Request* handle, bool wait, int* flag,
                 MPI_Status* status) {
  bool done = false;
  const int code = shmcoll::mpi::complete_directly(call, wait, done);
  if (flag != nullptr) *flag = done ? 1 : 0;
  if (!done) return code;
  if (status != MPI_STATUS_IGNORE) {
    shmcoll::mpi::set_empty_status(status);
    if (code != MPI_SUCCESS) status->MPI_ERROR = code;
  }
  shmcoll::mpi::after_completion(call, handle);
  return code;
}

// Waits for or tests (all or none) the starts of `calls` (direct_requests of the program's
// `requests`; a null request's status is empty). MPI_ERR_IN_STATUS if one of them failed.
int complete_all(const DirectCalls& calls, MPI_Request requests[], bool wait, int* flag,
                 MPI_Status statuses[]) {
  if (!wait) {
    progress_requests();
    for (PersistentCall* call : calls) {
      if (call != nullptr && !call->entry.done.load(std::memory_order_acquire)) {
        *flag = 0;
        return MPI_SUCCESS;
      }
    }
    *flag = 1;
  }
  int result = MPI_SUCCESS;
  boost::container::small_vector<int, 8> codes;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    PersistentCall* call = calls[i];
    bool done = false;
    const int code =
        call != nullptr ? shmcoll::mpi::complete_directly(*call, true, done) : MPI_SUCCESS;
    codes.push_back(code);
    if (code != MPI_SUCCESS) result = statuses == MPI_STATUSES_IGNORE ? code : MPI_ERR_IN_STATUS;
    if (call != nullptr) shmcoll::mpi::after_completion(*call, &requests[i]);
  }
  if (statuses == MPI_STATUSES_IGNORE) return result;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    shmcoll::mpi::set_empty_status(&statuses[i]);
    if (result == MPI_ERR_IN_STATUS) statuses[i].MPI_ERROR = codes[i];
  }
  return result;
}

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
  if (!in_play()) return PMPI_Test(request, flag, status);
  if (PersistentCall* call = direct_request(request))
    return complete_one(*call, request, false, flag, status);
  const Handles handles(1, request);
  MpiRequests mpi(1, request);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Test(mpi.get(), flag, status);
  mpi.restore();
  return *flag ? single(rc, handles, 0, status) : rc;
}

extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!in_play()) return PMPI_Testall(count, requests, flag, statuses);
  if (DirectCalls calls; direct_requests(count, requests, calls))
    return complete_all(calls, requests, false, flag, statuses);
  const Handles handles(count, requests);
  MpiRequests mpi(count, requests);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Testall(count, mpi.get(), flag, statuses);
  mpi.restore();
  return *flag ? several(
                     rc, handles, count, [](int k) { return k; }, statuses)
               : rc;
}

extern "C" int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                           MPI_Status* status) {
  if (!in_play()) return PMPI_Testany(count, requests, index, flag, status);
  const Handles handles(count, requests);
  MpiRequests mpi(count, requests);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Testany(count, mpi.get(), index, flag, status);
  mpi.restore();
  return *flag && *index != MPI_UNDEFINED ? single(rc, handles, *index, status) : rc;
}

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  if (!in_play()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  const Handles handles(incount, requests);
  MpiRequests mpi(incount, requests);
  if (requests_outstanding()) progress_requests();
  const int rc = PMPI_Testsome(incount, mpi.get(), outcount, indices, statuses);
  mpi.restore();
  if (*outcount == MPI_UNDEFINED) return rc;
  return several(
      rc, handles, *outcount, [&](int k) { return indices[k]; }, statuses);
}

// A persistent request's start that is done, asked about without completing it: an empty
// status (its error is returned by the call that completes it).
extern "C" int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (!in_play()) return PMPI_Request_get_status(request, flag, status);
  if (requests_outstanding()) progress_requests();
  if (PersistentCall* call = persistent_active() ? shmcoll::mpi::find_active(request) : nullptr) {
    *flag = call->entry.done.load(std::memory_order_acquire) ? 1 : 0;
    if (*flag && status != MPI_STATUS_IGNORE) shmcoll::mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  return PMPI_Request_get_status(request, flag, status);
}

// A failed request freed by the program: its error was reported through the communicator's
// error handler when the operation failed, and is forgotten with it.
extern "C" int MPI_Request_free(MPI_Request* request) {
  if (request != nullptr && failures_recorded()) claim_failure(*request);
  if (int rc = MPI_SUCCESS; request != nullptr && shmcoll::mpi::free_persistent(request, rc))
    return rc;
  return PMPI_Request_free(request);
}

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!in_play()) return PMPI_Wait(request, status);
  if (PersistentCall* call = direct_request(request))
    return complete_one(*call, request, true, nullptr, status);
  const Handles handles(1, request);
  MpiRequests mpi(1, request);
  MPI_Request* const mpi_request = mpi.get();
  const int rc =
      wait_with_progress([&](int& flag) { return PMPI_Test(mpi_request, &flag, status); },
                         [&] { return PMPI_Wait(mpi_request, status); });
  mpi.restore();
  return single(rc, handles, 0, status);
}

extern "C" int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!in_play()) return PMPI_Waitall(count, requests, statuses);
  if (DirectCalls calls; direct_requests(count, requests, calls))
    return complete_all(calls, requests, true, nullptr, statuses);
  const Handles handles(count, requests);
  MpiRequests mpi(count, requests);
  MPI_Request* const array = mpi.get();
  const int rc =
      wait_with_progress([&](int& flag) { return PMPI_Testall(count, array, &flag, statuses); },
                         [&] { return PMPI_Waitall(count, array, statuses); });
  mpi.restore();
  return several(
      rc, handles, count, [](int k) { return k; }, statuses);
}

extern "C" int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!in_play()) return PMPI_Waitany(count, requests, index, status);
  const Handles handles(count, requests);
  MpiRequests mpi(count, requests);
  MPI_Request* const array = mpi.get();
  const int rc = wait_with_progress(
      [&](int& flag) { return PMPI_Testany(count, array, index, &flag, status); },
      [&] { return PMPI_Waitany(count, array, index, status); });
  mpi.restore();
  return *index != MPI_UNDEFINED ? single(rc, handles, *index, status) : rc;
}

extern "C" int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  if (!in_play()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  const Handles handles(incount, requests);
  MpiRequests mpi(incount, requests);
  MPI_Request* const array = mpi.get();
  const int rc = wait_with_progress(
      [&](int& flag) {
        const int rc = PMPI_Testsome(incount, array, outcount, indices, statuses);
        // None complete yet: 0. None active: MPI_UNDEFINED, which ends the wait as it is.
        flag = *outcount != 0;
        return rc;
      },
      [&] { return PMPI_Waitsome(incount, array, outcount, indices, statuses); });
  mpi.restore();
  if (*outcount == MPI_UNDEFINED) return rc;
  return several(
      rc, handles, *outcount, [&](int k) { return indices[k]; }, statuses);
}

// A communicator may be freed with collectives outstanding (MPI lets them complete): they are
// completed here, before its team ends with it. The program's later wait finds them complete.
// One that persistent requests use stays, for them, until the last is freed (persistent.hpp);
// the program's handle becomes MPI_COMM_NULL at once, as MPI_Comm_free makes it.
extern "C" int MPI_Comm_free(MPI_Comm* comm) {
  if (comm != nullptr && requests_outstanding()) shmcoll::mpi::finish_requests_of(*comm);
  if (comm != nullptr && *comm != MPI_COMM_WORLD && *comm != MPI_COMM_SELF &&
      *comm != MPI_COMM_NULL && shmcoll::mpi::hold_freed_communicator(*comm)) {
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return PMPI_Comm_free(comm);
}
