// The plugin's persistent requests (persistent.hpp): their registry, MPI_Start, MPI_Startall,
// and their direct completion and freeing, which completion.cpp calls.
#include "mpi/persistent.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "mpi/error_codes.hpp"
#include "mpi/reused_calls.hpp"
#include "mpi/serve.hpp"

namespace shmcoll::mpi {
namespace {

// The persistent requests by the program's handle, under registry_lock; `alive` counts them
// and `active` those started and not yet completed by the program (only the program's calls
// change it).
std::mutex registry_lock;
std::unordered_map<MPI_Request, PersistentCall*> registry;
std::atomic<int> alive{0};
CallCount<int> active;
// Communicators the program freed while persistent requests of the plugin's used them, under
// registry_lock: the plugin frees each (PMPI_Comm_free, which ends its team) with the last of
// those requests, so that they can start meanwhile, as the MPI's own can.
std::vector<MPI_Comm> held;

// Whether a persistent request of the program's uses `comm` (the calls kept for non-blocking
// calls end with their communicator's team instead).
bool used_by_a_request(MPI_Comm comm) {
  for (const auto& [handle, call] : registry) {
    if (call->entry.comm == comm && !call->serves_nonblocking) return true;
  }
  return false;
}

class EmptyCall final : public PersistentCall {
 public:
  int start(Team&) override { return MPI_SUCCESS; }
  int start(Spanning&) override { return MPI_SUCCESS; }
  int finish(MPI_Comm) override { return MPI_SUCCESS; }
  bool unpacks() const override { return false; }
};

// A copy of the registry that lookups read without its lock, as a sequence lock: while a request
// of the plugin's is active, every completion call looks up each handle it is given, most of
// them the MPI's own, and the lock (with the map's hash) cost about 110 instructions each.
// `generation` is odd while the registry and the copy change (under registry_lock), and is
// even and different once they have; a reader that finds it odd, or changed after its reading,
// takes the lock instead. Beyond kCopied requests the copy holds none (count -1).
struct RegistryCopy {
  static constexpr int kCopied = 64;
  std::atomic<std::uint64_t> generation{0};
  std::atomic<int> count{0};
  std::array<std::atomic<MPI_Request>, kCopied> handles{};
  std::array<std::atomic<PersistentCall*>, kCopied> calls{};
};
RegistryCopy registry_copy;

// Brackets every change of the registry, under registry_lock.
void begin_registry_change() {
  registry_copy.generation.fetch_add(1, std::memory_order_relaxed);
  // A reader that reads any of the copy's writes below then reads the generation odd or
  // later (with its acquire fence in look_up_copy).
  std::atomic_thread_fence(std::memory_order_release);
}
void end_registry_change() {
  RegistryCopy& copy = registry_copy;
  int n = 0;
  if (registry.size() <= static_cast<std::size_t>(RegistryCopy::kCopied)) {
    for (const auto& [handle, call] : registry) {
      copy.handles[static_cast<std::size_t>(n)].store(handle, std::memory_order_relaxed);
      copy.calls[static_cast<std::size_t>(n)].store(call, std::memory_order_relaxed);
      ++n;
    }
  } else {
    n = -1;
  }
  copy.count.store(n, std::memory_order_relaxed);
  copy.generation.fetch_add(1, std::memory_order_release);
}

// The copy's answer for `handle` (`*call`, nullptr where it is none of the plugin's); false
// where the copy could not answer.
bool look_up_copy(MPI_Request handle, std::uint64_t generation, PersistentCall** call) {
  const RegistryCopy& copy = registry_copy;
  if (generation % 2 != 0) return false;
  const int n = copy.count.load(std::memory_order_relaxed);
  if (n < 0) return false;
  PersistentCall* found = nullptr;
  for (int i = 0; i < n; ++i) {
    if (copy.handles[static_cast<std::size_t>(i)].load(std::memory_order_relaxed) == handle) {
      found = copy.calls[static_cast<std::size_t>(i)].load(std::memory_order_relaxed);
      break;
    }
  }
  // The reads above happen before the generation's second reading.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (copy.generation.load(std::memory_order_relaxed) != generation) return false;
  *call = found;
  return true;
}

// Each thread's last answer of find(), valid while the registry's generation is the one
// recorded. All-zero at the start, which no generation is once a request exists (the first
// registration makes it 2), so that the thread-local needs no dynamic initialisation; and
// initial-exec, as comm_state.cpp's LastComm, so that an access is one load from the thread
// pointer.
struct Answer {
  MPI_Request handle{};
  PersistentCall* call = nullptr;
  std::uint64_t generation = 0;
};
thread_local Answer last_answer __attribute__((tls_model("initial-exec")));

// Every MPI_Start and every completion call while a request is active asks this: each thread
// keeps its last answer, so that a program starting and completing the same requests reads
// nothing else; other handles are looked up in the registry's copy, and only while the
// registry changes under its lock. (A handle the program passes may not be freed by another
// thread meanwhile: MPI forbids it.)
PersistentCall* find(MPI_Request handle) {
  if (alive.load(std::memory_order_relaxed) == 0) return nullptr;
  Answer& last = last_answer;
  const std::uint64_t generation = registry_copy.generation.load(std::memory_order_acquire);
  if (last.handle == handle && last.generation == generation) return last.call;
  if (PersistentCall* call = nullptr; look_up_copy(handle, generation, &call)) {
    last = {handle, call, generation};
    return call;
  }
  std::lock_guard<std::mutex> guard(registry_lock);
  const auto it = registry.find(handle);
  last = {handle, it == registry.end() ? nullptr : it->second,
          registry_copy.generation.load(std::memory_order_relaxed)};
  return last.call;
}

void set_active(PersistentCall& call, bool on) {
  call.active = on;
  active.add(on ? 1 : -1);
}

// A start on a communicator no longer served (its team failed, say): MPI_COMM_SELF's error
// handler is called, as for errors outside any communicator.
int refuse_start(const PersistentCall& call, const char* why) {
  const std::string message = call.start_function + ": " + why;
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  PMPI_Comm_get_errhandler(MPI_COMM_SELF, &handler);
  if (handler == MPI_ERRORS_ARE_FATAL) std::fprintf(stderr, "shmcoll-mpi: %s\n", message.c_str());
  if (handler != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&handler);
  const int code = error_code_for(MPI_ERR_REQUEST, "shmcoll: " + message);
  PMPI_Comm_call_errhandler(MPI_COMM_SELF, code);
  return code;
}

// A start by PersistentCall::direct, where it holds; false where the start must go through a
// call's frame: the request is active (the frame reports it), the communicator is no longer
// served by the same team, or the team's request refused the start (its team ended: the frame
// makes a new one, or reports why it cannot).
bool start_directly(PersistentCall& call) {
  PersistentCall::Direct& direct = call.direct;
  if (direct.state == nullptr || call.active) return false;
  // The communicator outlives its persistent requests (hold_freed_communicator), so its state
  // does too.
  if (direct.state->mode != CommState::Mode::kShmcoll || direct.state->team.get() != direct.team)
    return false;
  try {
    direct.request->start();
  } catch (...) {
    direct = {};
    return false;
  }
  stats().served++;  // as Call::engage counts a start through the frame
  return true;
}

int start_persistent(PersistentCall& call) {
  if (call.serves_nonblocking) [[unlikely]]
    return refuse_start(call, "the request is a non-blocking call's, not a persistent request");
  const PendingCall::Entry& entry = call.entry;
  auto activated = [&](bool empty) {
    activate(&call, empty);
    set_active(call, true);
    stats().served_persistent++;
    return MPI_SUCCESS;
  };
  if (start_directly(call)) return activated(false);
  // On the node's team, or across nodes (started.hpp).
  auto body = [&](auto& target) {
    if (const int rc = call.start(target); rc != MPI_SUCCESS) return rc;
    if constexpr (std::is_same_v<std::decay_t<decltype(target)>, Team>) {
      // Logged calls keep the frame, which logs them.
      if (call.direct.request != nullptr && !config().verbose)
        call.direct = {call.direct.request, state_of(entry.comm), &target};
    }
    return activated(false);
  };
  return serve(
      call.start_function.c_str(), entry.coll, entry.comm,
      [&](int rank, int, LocalError& error) {
        if (!call.active) [[likely]]
          return true;
        error.emplace(ArgumentError{MPI_ERR_REQUEST,
                                    "rank " + std::to_string(rank) +
                                        ": the request is active (started, not yet completed)"});
        return false;
      },
      [&](int) { return call.moves_nothing; }, body,
      [&] { return refuse_start(call, "the communicator is no longer served by shmcoll"); },
      [&] { return activated(true); }, call.root);
}

}  // namespace

int register_call(PersistentCall& call) {
  PendingCall::Entry& entry = call.entry;
  entry.owned_by_table = false;
  entry.finished_already();  // inactive: as a concluded activation leaves it (activate)
  // Never started, so always inactive to the MPI.
  if (const int rc =
          PMPI_Recv_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &call.identity);
      rc != MPI_SUCCESS) {
    return rc;
  }
  entry.key = call.identity;
  {
    std::lock_guard<std::mutex> guard(registry_lock);
    begin_registry_change();
    registry.emplace(call.identity, &call);
    end_registry_change();
  }
  alive.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

void delete_call(PersistentCall* call) {
  {
    std::lock_guard<std::mutex> guard(registry_lock);
    begin_registry_change();
    registry.erase(call->identity);
    end_registry_change();
  }
  alive.fetch_sub(1, std::memory_order_relaxed);
  withdraw(call);
  PMPI_Request_free(&call->identity);
  delete call;
}

int add_persistent(const char* function, Coll coll, MPI_Comm comm,
                   std::unique_ptr<PersistentCall> call, MPI_Request* request) {
  PendingCall::Entry& entry = call->entry;
  call->start_function = std::string("MPI_Start (") + function + ")";
  entry.function = call->start_function.c_str();
  entry.coll = coll;
  entry.comm = comm;
  if (const int rc = register_call(*call); rc != MPI_SUCCESS) return rc;
  *request = call.release()->identity;
  stats().served_persistent++;
  return MPI_SUCCESS;
}

void activate_nonblocking(PersistentCall& call, const char* function, MPI_Request* request) {
  call.entry.function = function;
  // Active first: an operation that failed at its start ends the team, whose inactive kept
  // calls are deleted (ReusedCalls), while activate reports the failure.
  set_active(call, true);
  activate(&call, false);
  stats().served_nonblocking++;
  *request = call.identity;
}

int empty_persistent(const char* function, Coll coll, MPI_Comm comm, MPI_Request* request) {
  auto call = std::make_unique<EmptyCall>();
  call->moves_nothing = true;
  return add_persistent(function, coll, comm, std::move(call), request);
}

bool persistent_active() { return active.load() > 0; }

PersistentCall* find_active(MPI_Request handle) {
  PersistentCall* call = find(handle);
  return call != nullptr && call->active ? call : nullptr;
}

int complete_directly(PersistentCall& call, bool wait, bool& done) {
  constexpr int kSpinsBeforeYield = 64;
  constexpr int kSpinsPerMpiProgress = 16;
  const std::atomic<bool>& finished = call.entry.done;
  for (int spins = 0; !finished.load(std::memory_order_acquire); ++spins) {
    progress_requests();
    if (finished.load(std::memory_order_acquire)) break;
    if (!wait) {
      done = false;
      return MPI_SUCCESS;
    }
    // The MPI's own requests progress too while the program waits here, as in any MPI wait
    // (a peer may wait on a transfer of this rank's before it joins the operation).
    if (spins % kSpinsPerMpiProgress == kSpinsPerMpiProgress - 1) {
      int flag = 0;
      PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    }
    if (spins >= kSpinsBeforeYield) sched_yield();
  }
  done = true;
  set_active(call, false);
  call.entry.released.store(true, std::memory_order_release);
  return failures_recorded() ? claim_failure(call.identity) : MPI_SUCCESS;
}

void completed_by_mpi(PersistentCall& call) { set_active(call, false); }

void after_completion(PersistentCall& call, MPI_Request* handle) {
  if (!call.serves_nonblocking) return;
  *handle = MPI_REQUEST_NULL;
  if (call.detached) delete_call(&call);
}

bool hold_freed_communicator(MPI_Comm comm) {
  if (alive.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> guard(registry_lock);
  if (!used_by_a_request(comm)) return false;
  held.push_back(comm);
  return true;
}

void free_held_communicators() {
  std::vector<MPI_Comm> freeing;
  {
    std::lock_guard<std::mutex> guard(registry_lock);
    freeing.swap(held);
  }
  for (MPI_Comm comm : freeing) PMPI_Comm_free(&comm);
}

bool free_persistent(MPI_Request* request, int& rc) {
  PersistentCall* call = nullptr;
  {
    if (alive.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard<std::mutex> guard(registry_lock);
    const auto it = registry.find(*request);
    if (it == registry.end()) return false;
    call = it->second;
    begin_registry_change();
    registry.erase(it);
    end_registry_change();
  }
  // The communicator the program freed before this, its last request, is freed after it.
  MPI_Comm freed_before = MPI_COMM_NULL;
  {
    std::lock_guard<std::mutex> guard(registry_lock);
    const auto it = std::find(held.begin(), held.end(), call->entry.comm);
    if (it != held.end() && !used_by_a_request(*it)) {
      freed_before = *it;
      held.erase(it);
    }
  }
  alive.fetch_sub(1, std::memory_order_relaxed);
  if (call->serves_nonblocking && !call->detached) forget_reused_call(*call);
  if (call->active) {
    // MPI lets the program free an active request: its operation completes unobserved.
    set_active(*call, false);
    MPI_Request handle = call->entry.handle;
    abandon(call);
    if (handle != MPI_REQUEST_NULL) PMPI_Request_free(&handle);
    if (failures_recorded()) claim_failure(call->identity);
  } else {
    withdraw(call);
    delete call;
  }
  rc = PMPI_Request_free(request);
  if (freed_before != MPI_COMM_NULL) PMPI_Comm_free(&freed_before);
  return true;
}

}  // namespace shmcoll::mpi

extern "C" int MPI_Start(MPI_Request* request) {
  using namespace shmcoll::mpi;
  PersistentCall* call = request != nullptr ? find(*request) : nullptr;
  return call != nullptr ? start_persistent(*call) : PMPI_Start(request);
}

// Starts the plugin's requests one by one and the MPI's together.
extern "C" int MPI_Startall(int count, MPI_Request requests[]) {
  using namespace shmcoll::mpi;
  if (alive.load(std::memory_order_relaxed) == 0 || count <= 0 || requests == nullptr)
    return PMPI_Startall(count, requests);
  boost::container::small_vector<MPI_Request, 8> others;
  int result = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    PersistentCall* call = find(requests[i]);
    if (call == nullptr) {
      others.push_back(requests[i]);
      continue;
    }
    if (const int rc = start_persistent(*call); rc != MPI_SUCCESS && result == MPI_SUCCESS)
      result = rc;
  }
  if (others.empty()) return result;
  const int rc = PMPI_Startall(static_cast<int>(others.size()), others.data());
  return result != MPI_SUCCESS ? result : rc;
}
