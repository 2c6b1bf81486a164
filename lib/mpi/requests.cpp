// The table of the plugin's generalized requests (requests.hpp).
#include "mpi/requests.hpp"

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "shmcoll/error.hpp"

namespace shmcoll::mpi {
namespace {

// One request the plugin made. Lives until both: the plugin completed it (done), and the MPI
// released it (free_fn, which the MPI calls once the program has waited for it, tested it
// complete or freed it, and the plugin has completed it).
struct Entry {
  const char* function = "";
  Coll coll = Coll::kBcast;
  MPI_Comm comm = MPI_COMM_NULL;
  std::unique_ptr<PendingCall> pending;  // null for a request complete at once
  MPI_Request handle = MPI_REQUEST_NULL;
  int error = MPI_SUCCESS;  // what the completion call returns for it (claim_failure)
  bool done = false;        // under table_lock
  // Set by free_fn, without the table's lock: the MPI may call it from inside any completion
  // call, on any thread, while another thread holds the lock and waits for the MPI.
  std::atomic<bool> released{false};
};

std::mutex table_lock;
std::vector<Entry*> table;        // under table_lock
std::atomic<int> outstanding{0};  // entries not done
// The handles and codes of failed requests not yet completed by the program, under
// table_lock; `failed` counts them. A handle stays the request's until the program completes
// or frees it, so it names one request while it is here.
std::vector<std::pair<MPI_Request, int>> failures;
std::atomic<int> failed{0};
using Completed = std::vector<Entry*>;

// The status of a completed collective: empty, as the MPIs' own non-blocking collectives leave
// it. MPI never passes MPI_STATUS_IGNORE here. Its error is the completion call's to return
// (claim_failure).
int query(void*, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  return MPI_SUCCESS;
}
int release(void* extra) {
  static_cast<Entry*>(extra)->released.store(true, std::memory_order_release);
  return MPI_SUCCESS;
}
// A started collective cannot be cancelled (MPI: cancelling one is erroneous); its request
// completes normally.
int refuse_cancel(void*, int) { return MPI_SUCCESS; }

// Finishes the entry if its operation is complete (or, with `wait`, once it is): its data
// unpacked, its error reported through the communicator's error handler. Under table_lock.
bool try_finish(Entry& entry, bool wait) {
  try {
    if (wait) {
      entry.pending->request.wait();
    } else if (!entry.pending->request.test()) {
      return false;
    }
    const int rc = entry.pending->finish(entry.comm);
    if (rc != MPI_SUCCESS) {
      entry.error = Call(entry.function, entry.coll, entry.comm)
                        .fail(InvalidArgument(std::string(entry.function) +
                                              ": unpacking the data failed with MPI code " +
                                              std::to_string(rc)));
    }
  } catch (const std::exception& e) {
    entry.error = Call(entry.function, entry.coll, entry.comm).fail(e);
  }
  entry.pending.reset();  // its temporary buffers
  if (entry.error != MPI_SUCCESS) {
    failures.emplace_back(entry.handle, entry.error);
    failed.fetch_add(1, std::memory_order_relaxed);
  }
  entry.done = true;
  outstanding.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

// Deletes the entries the MPI has released. Under table_lock.
void reap() {
  std::erase_if(table, [](Entry* entry) {
    if (!entry->done || !entry->released.load(std::memory_order_acquire)) return false;
    delete entry;
    return true;
  });
}

// Completes the MPI requests of entries just finished, without the table's lock: completing a
// request the program has already freed makes the MPI call free_fn at once.
void complete(const Completed& completed) {
  for (Entry* entry : completed) PMPI_Grequest_complete(entry->handle);
}

// Finishes, waiting for each, every entry that `which` selects.
template <class Which>
void finish_where(Which&& which) {
  Completed completed;
  {
    std::lock_guard<std::mutex> guard(table_lock);
    for (Entry* entry : table) {
      if (!entry->done && which(*entry) && try_finish(*entry, true)) completed.push_back(entry);
    }
  }
  complete(completed);
}

int add(std::unique_ptr<Entry> entry, MPI_Request* request) {
  Entry* raw = entry.get();
  const int rc = PMPI_Grequest_start(query, release, refuse_cancel, raw, &raw->handle);
  if (rc != MPI_SUCCESS) return rc;
  *request = raw->handle;
  const bool done = raw->done;
  {
    std::lock_guard<std::mutex> guard(table_lock);
    table.push_back(entry.release());
    if (!done) outstanding.fetch_add(1, std::memory_order_relaxed);
  }
  if (done) PMPI_Grequest_complete(raw->handle);
  return MPI_SUCCESS;
}

}  // namespace

int start_request(const char* function, Coll coll, MPI_Comm comm,
                  std::unique_ptr<PendingCall> pending, MPI_Request* request) {
  auto entry = std::make_unique<Entry>();
  entry->function = function;
  entry->coll = coll;
  entry->comm = comm;
  entry->pending = std::move(pending);
  return add(std::move(entry), request);
}

int completed_request(MPI_Request* request) {
  auto entry = std::make_unique<Entry>();
  entry->done = true;
  return add(std::move(entry), request);
}

bool requests_outstanding() { return outstanding.load(std::memory_order_relaxed) > 0; }

void progress_requests() {
  Completed completed;
  {
    std::lock_guard<std::mutex> guard(table_lock);
    reap();
    for (Entry* entry : table) {
      if (!entry->done && try_finish(*entry, false)) completed.push_back(entry);
    }
  }
  complete(completed);
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
  finish_where([comm](const Entry& entry) { return entry.comm == comm; });
}

void finish_all_requests() {
  finish_where([](const Entry&) { return true; });
}

}  // namespace shmcoll::mpi
