#include "mpi/node_budget.hpp"

#include <sys/sem.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace shmcoll::mpi {
namespace {

// The semaphores of one ledger set.
enum Sem : unsigned short {
  kGate,       // 1 while the set is being removed: no reservation may start
  kHolders,    // reservations held, by all processes
  kFree,       // units not reserved
  kTotal,      // the budget in units (constant after creation)
  kUnitShift,  // log2 of the unit in bytes (constant; never 0 once initialised)
  kCount
};

constexpr int kMaxSemValue = 32767;  // SEMVMX on Linux
constexpr int kMinUnitShift = 16;    // 64 KiB
constexpr int kProbeKeys = 8;        // keys tried when another program holds ours
constexpr int kAttempts = 1000;      // bounded retries while sets come and go
constexpr auto kRetryPause = std::chrono::milliseconds(1);
constexpr int kInitWaitMs = 2000;  // how long a set may stay uninitialised by its creator

union SemArg {  // the caller defines union semun on Linux
  int val;
  semid_ds* buf;
  unsigned short* array;
};

std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// Keys are derived from the user and the scope, so each user's processes meet at one ledger
// (the set is created 0600: another user's same-named ledger is simply a foreign key).
key_t key_for(std::string_view scope, int probe) {
  std::uint32_t h = 2166136261u;  // FNV-1a
  auto mix = [&h](unsigned char c) { h = (h ^ c) * 16777619u; };
  for (char c : std::string_view("shmcoll node budget")) mix(static_cast<unsigned char>(c));
  const auto uid = static_cast<std::uint32_t>(geteuid());
  for (int i = 0; i < 4; ++i) mix(static_cast<unsigned char>(uid >> (8 * i)));
  for (char c : scope) mix(static_cast<unsigned char>(c));
  // Positive and never IPC_PRIVATE (0).
  return static_cast<key_t>(((h + static_cast<std::uint32_t>(probe)) & 0x7fffffffu) | 1u);
}

int value_of(int id, Sem sem) { return semctl(id, sem, GETVAL); }

bool read_all(int id, unsigned short (&values)[kCount]) {
  SemArg arg{};
  arg.array = values;
  return semctl(id, 0, GETALL, arg) == 0;
}

enum class Found { kLedger, kNone, kForeign, kError };
struct Lookup {
  Found found = Found::kNone;
  int id = -1;
  std::string error;
};

// Opens the set at `key` if it is a ledger of ours. A set its creator never initialised (it
// died between semget and its first semop) is removed after kInitWaitMs.
Lookup find(key_t key) {
  const int id = semget(key, 0, 0);
  if (id < 0) {
    if (errno == ENOENT) return {Found::kNone, -1, {}};
    if (errno == EACCES) return {Found::kForeign, -1, {}};
    return {Found::kError, -1, errno_text("semget")};
  }
  for (int waited_ms = 0;; ++waited_ms) {
    semid_ds ds{};
    SemArg arg{};
    arg.buf = &ds;
    if (semctl(id, 0, IPC_STAT, arg) != 0) {
      if (errno == EIDRM || errno == EINVAL) return {Found::kNone, -1, {}};
      return {Found::kError, -1, errno_text("semctl(IPC_STAT)")};
    }
    if (ds.sem_nsems != kCount || ds.sem_perm.cuid != geteuid()) return {Found::kForeign, -1, {}};
    // sem_otime becomes non-zero with the creator's initialising semop.
    if (ds.sem_otime != 0) break;
    if (waited_ms >= kInitWaitMs) {
      semctl(id, 0, IPC_RMID);
      return {Found::kNone, -1, {}};
    }
    std::this_thread::sleep_for(kRetryPause);
  }
  const int shift = value_of(id, kUnitShift);
  if (shift < 0)
    return {errno == EIDRM || errno == EINVAL ? Found::kNone : Found::kError, -1,
            errno_text("semctl(GETVAL)")};
  if (shift < kMinUnitShift || shift > 62) return {Found::kForeign, -1, {}};
  return {Found::kLedger, id, {}};
}

int unit_shift_for(std::uint64_t budget_bytes) {
  int shift = kMinUnitShift;
  while ((budget_bytes >> shift) > static_cast<std::uint64_t>(kMaxSemValue)) ++shift;
  return shift;
}

// The ledger of this user and scope, created with `budget_bytes` when there is none. Returns
// the set id, or -1 with `error` set.
int open_or_create(std::string_view scope, std::uint64_t budget_bytes, std::string& error) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    bool vanished = false;
    for (int probe = 0; probe < kProbeKeys && !vanished; ++probe) {
      const key_t key = key_for(scope, probe);
      const int id = semget(key, kCount, IPC_CREAT | IPC_EXCL | 0600);
      if (id >= 0) {
        // One semop sets every value at once and stamps sem_otime, which is what find() waits
        // for: nobody sees a half-initialised ledger.
        const int shift = unit_shift_for(budget_bytes);
        const auto units = static_cast<short>(budget_bytes >> shift);
        sembuf init[] = {
            {kUnitShift, static_cast<short>(shift), 0}, {kTotal, units, 0}, {kFree, units, 0}};
        if (semop(id, init, 3) != 0) {
          error = errno_text("semop (initialising the ledger)");
          semctl(id, 0, IPC_RMID);
          return -1;
        }
        return id;
      }
      if (errno != EEXIST) {
        error = errno_text("semget");
        return -1;
      }
      const Lookup found = find(key);
      switch (found.found) {
        case Found::kLedger:
          return found.id;
        case Found::kForeign:
          continue;
        case Found::kNone:
          vanished = true;  // removed between our two calls: start over
          break;
        case Found::kError:
          error = found.error;
          return -1;
      }
    }
    if (!vanished) {
      error = "the " + std::to_string(kProbeKeys) +
              " semaphore keys of the ledger are held by other programs";
      return -1;
    }
  }
  error = "the ledger kept being removed and re-created";
  return -1;
}

// Removes the set if nobody holds a reservation in it. Closing the gate happens atomically with
// seeing no holders, so no reservation can slip in; it is closed with SEM_UNDO, so should this
// process die before IPC_RMID the kernel reopens it and the set simply stays usable.
void remove_if_unheld(int id) {
  sembuf close[] = {{kHolders, 0, IPC_NOWAIT}, {kGate, 1, SEM_UNDO | IPC_NOWAIT}};
  if (semop(id, close, 2) == 0) semctl(id, 0, IPC_RMID);
}

}  // namespace

NodeBudget::Outcome NodeBudget::reserve(std::uint64_t bytes, std::uint64_t budget_bytes,
                                        std::string_view scope) {
  Outcome out;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::string error;
    const int id = open_or_create(scope, budget_bytes, error);
    if (id < 0) {
      out.refusal = "cannot use the node's shared-memory ledger: " + error;
      return out;
    }
    unsigned short v[kCount] = {};
    if (!read_all(id, v)) continue;  // removed meanwhile
    const int shift = v[kUnitShift];
    const std::uint64_t unit = std::uint64_t{1} << shift;
    const std::uint64_t units = bytes == 0 ? 1 : (bytes + unit - 1) >> shift;
    if (units > v[kTotal]) {
      out.refusal = "needs " + std::to_string(bytes) + " bytes but the node's budget is " +
                    std::to_string(std::uint64_t{v[kTotal]} << shift) + " bytes";
      remove_if_unheld(id);  // this call may have created it
      return out;
    }
    // One atomic step: the gate must be open, and both the holder count and the units are
    // taken with SEM_UNDO, so the kernel returns them if this process dies holding them.
    sembuf take[] = {{kGate, 0, IPC_NOWAIT},
                     {kHolders, 1, SEM_UNDO | IPC_NOWAIT},
                     {kFree, static_cast<short>(-static_cast<int>(units)), SEM_UNDO | IPC_NOWAIT}};
    if (semop(id, take, 3) == 0) {
      out.reservation.emplace(Reservation(id, static_cast<int>(units), units << shift));
      return out;
    }
    if (errno == EIDRM || errno == EINVAL || errno == EINTR) continue;
    if (errno != EAGAIN) {
      out.refusal = "cannot reserve in the node's shared-memory ledger: " + errno_text("semop");
      return out;
    }
    if (!read_all(id, v)) continue;
    if (v[kGate] != 0) {  // being removed; the next round finds it gone and creates a new one
      std::this_thread::sleep_for(kRetryPause);
      continue;
    }
    if (v[kFree] < units) {
      const auto held = static_cast<std::uint64_t>(v[kTotal] - v[kFree]) << shift;
      out.refusal = "needs " + std::to_string(units << shift) + " bytes but " +
                    std::to_string(held) + " of the node's " +
                    std::to_string(std::uint64_t{v[kTotal]} << shift) + " bytes are held by " +
                    std::to_string(v[kHolders]) + " team(s)";
      return out;
    }
  }
  out.refusal = "the node's shared-memory ledger stayed busy";
  return out;
}

NodeBudget::Usage NodeBudget::usage(std::string_view scope) {
  Usage usage;
  for (int probe = 0; probe < kProbeKeys; ++probe) {
    const Lookup found = find(key_for(scope, probe));
    if (found.found == Found::kForeign) continue;
    if (found.found != Found::kLedger) break;
    unsigned short v[kCount] = {};
    if (!read_all(found.id, v)) break;
    usage.exists = true;
    usage.budget_bytes = std::uint64_t{v[kTotal]} << v[kUnitShift];
    usage.reserved_bytes = std::uint64_t{static_cast<unsigned>(v[kTotal] - v[kFree])}
                           << v[kUnitShift];
    usage.reservations = v[kHolders];
    break;
  }
  return usage;
}

NodeBudget::Reservation::Reservation(Reservation&& other) noexcept
    : set_id_(other.set_id_), units_(other.units_), bytes_(other.bytes_) {
  other.set_id_ = -1;
}

NodeBudget::Reservation& NodeBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    release();
    set_id_ = other.set_id_;
    units_ = other.units_;
    bytes_ = other.bytes_;
    other.set_id_ = -1;
  }
  return *this;
}

NodeBudget::Reservation::~Reservation() { release(); }

void NodeBudget::Reservation::release() noexcept {
  if (set_id_ < 0) return;
  // Given back with SEM_UNDO as well, which cancels the undo entries the reservation made.
  sembuf give[] = {{kHolders, -1, SEM_UNDO}, {kFree, static_cast<short>(units_), SEM_UNDO}};
  while (semop(set_id_, give, 2) != 0 && errno == EINTR) {
  }
  remove_if_unheld(set_id_);  // the last holder removes the set
  set_id_ = -1;
}

}  // namespace shmcoll::mpi
