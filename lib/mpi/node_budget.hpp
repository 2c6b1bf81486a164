// The per-node budget for shared segments: one ledger that every process of a user on this node
// consults before it creates a team's segment, so that all teams of all jobs together stay under
// one limit.
//
// The ledger is a System V semaphore set, not a file. Two properties decide it:
//  - a reservation is taken with SEM_UNDO, so the kernel gives it back when the process dies,
//    however it dies (SIGKILL included); no pid bookkeeping, no stale entries;
//  - whoever releases the last reservation removes the set, so an idle node holds nothing:
//    nothing in /dev/shm and nothing in `ipcs`. (When the last holder dies instead, the empty
//    set stays until the next reservation on the node is released.)
// Semaphore values are at most SEMVMX (32767), so the ledger counts in units of a power of two
// bytes (64 KiB or more) chosen by its creator; a reservation is rounded up to whole units.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shmcoll::mpi {

class NodeBudget {
 public:
  // Bytes held against the ledger until destroyed (or until the process dies).
  class Reservation {
   public:
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation();
    std::uint64_t bytes() const { return bytes_; }  // as charged: rounded up to whole units

   private:
    friend class NodeBudget;
    Reservation(int set_id, int units, std::uint64_t bytes)
        : set_id_(set_id), units_(units), bytes_(bytes) {}
    void release() noexcept;
    int set_id_ = -1;
    int units_ = 0;
    std::uint64_t bytes_ = 0;
  };

  struct Outcome {
    std::optional<Reservation> reservation;
    std::string refusal;  // why not, when reservation is empty
  };

  // Reserves `bytes` in the ledger of this user and `scope` (processes that name the same scope
  // share one ledger; the plugin's default is the empty scope). When no ledger exists yet this
  // call creates it with a total of `budget_bytes`; otherwise the existing total applies and
  // `budget_bytes` is ignored (the ledger says which, see usage()).
  static Outcome reserve(std::uint64_t bytes, std::uint64_t budget_bytes, std::string_view scope);

  struct Usage {
    bool exists = false;  // no ledger: nothing reserved by anyone
    std::uint64_t budget_bytes = 0;
    std::uint64_t reserved_bytes = 0;
    int reservations = 0;
  };
  static Usage usage(std::string_view scope);
};

}  // namespace shmcoll::mpi
