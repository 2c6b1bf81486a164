// The table of the plugin's generalized requests (requests.hpp).
#include "mpi/requests.hpp"

#include <atomic>
#include <boost/container/small_vector.hpp>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "shmcoll/error.hpp"

namespace shmcoll::mpi {
namespace {

// A request complete at once: nothing to unpack.
class CompletedCall final : public PendingCall {
 public:
  int finish(MPI_Comm) override { return MPI_SUCCESS; }
  bool unpacks() const override { return false; }
};

std::mutex table_lock;
std::vector<PendingCall*> table;  // under table_lock
std::atomic<int> outstanding{0};  // calls not done
// The handles and codes of failed requests not yet completed by the program, under
// table_lock; `failed` counts them. A handle stays the request's until the program completes
// or frees it, so it names one request while it is here.
std::vector<std::pair<MPI_Request, int>> failures;
std::atomic<int> failed{0};

int query(void*, MPI_Status* status) {
  set_empty_status(status);  // MPI never passes MPI_STATUS_IGNORE here
  return MPI_SUCCESS;
}
int release(void* extra) {
  static_cast<PendingCall*>(extra)->entry.released.store(true, std::memory_order_release);
  return MPI_SUCCESS;
}
// A started collective cannot be cancelled (MPI: cancelling one is erroneous); its request
// completes normally.
int refuse_cancel(void*, int) { return MPI_SUCCESS; }

// Starts the MPI's request for `call`. MPICH's extended generalized requests take a poll
// function that its progress engine calls in every wait and test, the program's own and those
// of its Fortran layer, which calls PMPI_Wait from `use mpi_f08`: there the operations progress
// whichever call waits. Open MPI 4 has no such requests; its waits progress shmcoll's
// operations only through the interposed completion calls (completion.cpp).
int start_mpi_request(PendingCall* call, MPI_Request* handle) {
#if defined(MPICH)
  auto poll = [](void*, MPI_Status*) {
    progress_requests();
    return MPI_SUCCESS;
  };
  // Called before MPICH's own wait loop, which polls: one pass too, so that the MPI's other
  // requests keep progressing while it waits.
  auto wait = [](int, void**, double, MPI_Status*) {
    progress_requests();
    return MPI_SUCCESS;
  };
  return PMPIX_Grequest_start(query, release, refuse_cancel, poll, wait, call, handle);
#else
  return PMPI_Grequest_start(query, release, refuse_cancel, call, handle);
#endif
}

// A call whose operation is over, taken by one pass to be finished (PendingCall::Entry::
// claimed), with the error its operation ended with, if any.
struct Ready {
  PendingCall* call;
  std::exception_ptr error;
};
using ReadyCalls = boost::container::small_vector<Ready, 8>;

// Unpacks a ready call's data (with `wait`, once its operation is over) and reports its error
// through the communicator's error handler: MPI calls, so without table_lock (MPICH may hold
// its own lock around the poll function, which takes table_lock).
void finish_call(Ready& ready, bool wait) {
  PendingCall& call = *ready.call;
  PendingCall::Entry& entry = call.entry;
  try {
    if (ready.error) std::rethrow_exception(ready.error);
    if (wait) call.wait();
    const int rc = call.finish(entry.comm);
    if (rc != MPI_SUCCESS) {
      entry.error = Call(entry.function, entry.coll, entry.comm)
                        .fail(InvalidArgument(std::string(entry.function) +
                                              ": unpacking the data failed with MPI code " +
                                              std::to_string(rc)));
    }
  } catch (const std::exception& e) {
    entry.error = Call(entry.function, entry.coll, entry.comm).fail(e);
  }
}

// Records a finished call's failure, if any, for claim_failure. Under table_lock.
void record_failure(const PendingCall::Entry& entry) {
  if (entry.error == MPI_SUCCESS || entry.key == MPI_REQUEST_NULL) return;
  failures.emplace_back(entry.key, entry.error);
  failed.fetch_add(1, std::memory_order_relaxed);
}

// Records the finished calls (their failures for claim_failure), then completes their MPI
// requests without the table's lock: completing a request the program has already freed makes
// the MPI call free_fn at once. A persistent request's activation may have none yet; the handle
// is read under the lock, where mpi_request_for sets it.
void conclude(const ReadyCalls& finished) {
  boost::container::small_vector<MPI_Request, 8> to_complete;
  {
    std::lock_guard<std::mutex> guard(table_lock);
    for (const Ready& ready : finished) {
      PendingCall::Entry& entry = ready.call->entry;
      record_failure(entry);
      entry.done.store(true, std::memory_order_release);
      outstanding.fetch_sub(1, std::memory_order_relaxed);
      if (entry.handle != MPI_REQUEST_NULL) to_complete.push_back(entry.handle);
    }
  }
  for (MPI_Request handle : to_complete) PMPI_Grequest_complete(handle);
}

// Takes out of the table the calls that are done and released, deleting those it owns. Under
// table_lock.
void reap() {
  std::erase_if(table, [](PendingCall* call) {
    PendingCall::Entry& entry = call->entry;
    if (!entry.done.load(std::memory_order_relaxed) ||
        !entry.released.load(std::memory_order_acquire)) {
      return false;
    }
    entry.in_table = false;
    if (entry.owned_by_table) delete call;
    return true;
  });
}

// Finishes, waiting for each, every call that `which` selects.
template <class Which>
void finish_where(Which&& which) {
  ReadyCalls ready;
  {
    std::lock_guard<std::mutex> guard(table_lock);
    for (PendingCall* call : table) {
      if (call->entry.claimed || !which(call->entry)) continue;
      call->entry.claimed = true;
      ready.push_back({call, nullptr});
    }
  }
  for (Ready& r : ready) finish_call(r, true);
  conclude(ready);
}

// Whether the operation of `call`, just started, is already over (a root whose data went into
// the slots, say), then finished at once: its data unpacked, its failure, if any, recorded in
// entry.error, so that no pass need take it and its completion waits for nothing. Only the
// program's thread knows of the call yet (or of this activation of it).
bool finished_at_start(PendingCall& call) {
  if (call.across_nodes || !call.request.done()) return false;
  Ready ready{&call, nullptr};
  try {
    call.request.test();
  } catch (...) {
    ready.error = std::current_exception();
  }
  if (ready.error || call.unpacks()) finish_call(ready, false);
  return true;
}

int add(std::unique_ptr<PendingCall> call, MPI_Request* request) {
  PendingCall* raw = call.get();
  const int rc = start_mpi_request(raw, &raw->entry.handle);
  if (rc != MPI_SUCCESS) return rc;
  *request = raw->entry.key = raw->entry.handle;
  const bool done = raw->entry.done.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> guard(table_lock);
    if (done) record_failure(raw->entry);
    reap();
    table.push_back(call.release());
    raw->entry.in_table = true;
    if (!done) outstanding.fetch_add(1, std::memory_order_relaxed);
  }
  if (done) PMPI_Grequest_complete(raw->entry.handle);
  return MPI_SUCCESS;
}

}  // namespace

int start_request(const char* function, Coll coll, MPI_Comm comm,
                  std::unique_ptr<PendingCall> pending, MPI_Request* request) {
  stats().served_nonblocking++;
  pending->entry.function = function;
  pending->entry.coll = coll;
  pending->entry.comm = comm;
  if (finished_at_start(*pending)) pending->entry.finished_already();
  return add(std::move(pending), request);
}

int completed_request(MPI_Request* request) {
  stats().served_nonblocking++;
  auto call = std::make_unique<CompletedCall>();
  call->entry.finished_already();
  return add(std::move(call), request);
}

void set_empty_status(MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
}

bool requests_outstanding() { return outstanding.load(std::memory_order_relaxed) > 0; }

void progress_requests() {
  // The calls across nodes first: they call the MPI, which must not happen under table_lock.
  progress_started_calls();
  ReadyCalls ready;
  {
    std::lock_guard<std::mutex> guard(table_lock);
    reap();
    for (PendingCall* call : table) {
      if (call->entry.claimed) continue;
      std::exception_ptr error;
      try {
        if (!call->test()) continue;
      } catch (...) {
        error = std::current_exception();  // the operation failed: reported by finish_call
      }
      call->entry.claimed = true;
      ready.push_back({call, error});
    }
  }
  if (ready.empty()) return;
  for (Ready& r : ready) finish_call(r, false);
  conclude(ready);
}

bool failures_recorded() { return failed.load(std::memory_order_relaxed) > 0; }

int claim_failure(MPI_Request request) {
  std::lock_guard<std::mutex> guard(table_lock);
  for (auto it = failures.begin(); it != failures.end(); ++it) {
    if (it->first != request) continue;
    const int code = it->second;
    failures.erase(it);
    failed.fetch_sub(1, std::memory_order_relaxed);
    return code;
  }
  return MPI_SUCCESS;
}

void finish_requests_of(MPI_Comm comm) {
  finish_where([comm](const PendingCall::Entry& entry) { return entry.comm == comm; });
}

void finish_all_requests() {
  finish_where([](const PendingCall::Entry&) { return true; });
}

void activate(PendingCall* call, bool empty) {
  PendingCall::Entry& entry = call->entry;
  // Inactive until now: claimed and done, so no pass touches it.
  entry.error = MPI_SUCCESS;
  const bool done = empty || finished_at_start(*call);
  if (done && entry.error == MPI_SUCCESS) {
    // No pass needs it: an inactive request is in the table only as one a pass concluded
    // (claimed, which passes skip), and nothing else there is due (no failure to record, no
    // MPI request yet). Only its completion's flags are set, without the table's lock.
    entry.handle = MPI_REQUEST_NULL;
    entry.released.store(false, std::memory_order_relaxed);
    entry.done.store(true, std::memory_order_release);
    return;
  }
  std::lock_guard<std::mutex> guard(table_lock);
  if (done) record_failure(entry);
  entry.done.store(done, std::memory_order_relaxed);
  entry.handle = MPI_REQUEST_NULL;
  entry.claimed = done;
  entry.released.store(false, std::memory_order_relaxed);
  if (!entry.in_table) {
    table.push_back(call);
    entry.in_table = true;
  }
  if (!done) outstanding.fetch_add(1, std::memory_order_relaxed);
}

int mpi_request_for(PendingCall* call, MPI_Request* handle) {
  PendingCall::Entry& entry = call->entry;
  if (entry.handle != MPI_REQUEST_NULL) {  // set only by the program's thread, here
    *handle = entry.handle;
    return MPI_SUCCESS;
  }
  MPI_Request made = MPI_REQUEST_NULL;
  if (const int rc = start_mpi_request(call, &made); rc != MPI_SUCCESS) return rc;
  bool done = false;
  {
    std::lock_guard<std::mutex> guard(table_lock);
    done = entry.done.load(std::memory_order_relaxed);
    entry.handle = made;
  }
  if (done) PMPI_Grequest_complete(made);  // conclude has passed: it completes no other
  *handle = made;
  return MPI_SUCCESS;
}

void withdraw(PendingCall* call) {
  std::lock_guard<std::mutex> guard(table_lock);
  if (!call->entry.in_table) return;
  std::erase(table, call);
  call->entry.in_table = false;
}

void abandon(PendingCall* call) {
  PendingCall::Entry& entry = call->entry;
  std::lock_guard<std::mutex> guard(table_lock);
  entry.key = MPI_REQUEST_NULL;
  entry.owned_by_table = true;
  if (!entry.in_table) {  // an activation done at its start need not have been put there
    table.push_back(call);
    entry.in_table = true;
  }
  // Without an MPI request nothing else releases it; with one, the MPI does once the program's
  // free of it (persistent.cpp) meets its completion.
  if (entry.handle == MPI_REQUEST_NULL) entry.released.store(true, std::memory_order_release);
}

}  // namespace shmcoll::mpi
