// The kept calls of each communicator (reused_calls.hpp).
#include "mpi/reused_calls.hpp"

#include <algorithm>

namespace shmcoll::mpi {

ReusedCalls::~ReusedCalls() {
  for (Slot& slot : slots_) {
    for (PersistentCall* call : slot) {
      if (call->active)
        call->detached = true;  // after_completion deletes it
      else
        delete_call(call);
    }
  }
}

void ReusedCalls::forget(const PersistentCall& call) {
  for (Slot& slot : slots_) {
    const auto it = std::find(slot.begin(), slot.end(), &call);
    if (it != slot.end()) slot.erase(it);
  }
}

bool ReusedCalls::adopt(PersistentCall& call, Coll coll, MPI_Comm comm) {
  call.serves_nonblocking = true;
  call.start_function = "MPI_Start";  // what a start of its handle is refused as
  call.entry.coll = coll;
  call.entry.comm = comm;
  return register_call(call) == MPI_SUCCESS;
}

ReusedCalls* reused_calls_of(MPI_Comm comm) {
  if (concurrent_mpi_calls.load(std::memory_order_relaxed)) return nullptr;
  CommState& state = *state_of(comm);
  if (!state.reused) state.reused = std::make_unique<ReusedCalls>();
  return state.reused.get();
}

ReusedCalls* repeatable_calls_of(MPI_Comm comm, int* rank) {
  if (comm == MPI_COMM_NULL || concurrent_mpi_calls.load(std::memory_order_relaxed) ||
      config().verbose) {
    return nullptr;
  }
  const CommState& state = *state_of(comm);
  if (state.mode != CommState::Mode::kShmcoll || !state.team || !state.reused) return nullptr;
  *rank = state.team->rank();
  return state.reused.get();
}

void forget_reused_call(const PersistentCall& call) {
  if (ReusedCalls* calls = state_of(call.entry.comm)->reused.get()) calls->forget(call);
}

}  // namespace shmcoll::mpi
