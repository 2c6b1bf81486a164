// MPI-3 shared windows. Every rank of a window's communicator maps the memory of
// MPI_Win_allocate_shared, so the communicator's team adopts it (Team::adopt_shared): the
// blocks of the five collectives on that communicator whose buffers lie in the window then move
// with memcpy between the ranks' mappings, where private buffers need cross-memory attach (a
// system call that pins every page, several times slower than memcpy on some machines).
// MPI_Win_free forgets the window before the MPI frees it.
//
// Only a window that every rank maps as one range qualifies (the default of Open MPI and MPICH;
// not alloc_shared_noncontig): adopt_shared compares the layouts and refuses otherwise, and the
// window then works as before, its buffers taken for private memory.
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "mpi/plugin.hpp"

namespace shmcoll::mpi {
namespace {

std::mutex windows_mutex;
// The adopted windows; the SharedBuffer keeps the team's record of the memory alive.
std::map<MPI_Win, SharedBuffer>& adopted_windows() {
  static std::map<MPI_Win, SharedBuffer> windows;
  return windows;
}

void log_window(MPI_Comm comm, const std::string& what) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  if (config().verbose && rank == 0)
    std::fprintf(stderr, "shmcoll-mpi: MPI_Win_allocate_shared: %s\n", what.c_str());
}

// Collective over `comm`, as MPI_Win_allocate_shared. Every rank takes the same branch: the
// team's existence is collective, the parts' sizes are the same on every rank, and
// adopt_shared throws on every rank or none.
void adopt(MPI_Comm comm, MPI_Win win) {
  Team* team = team_of(comm);
  if (team == nullptr) return;
  const auto n = static_cast<std::size_t>(team->size());
  std::vector<std::span<std::byte>> parts(n);
  std::byte* low = nullptr;
  std::byte* high = nullptr;
  for (std::size_t r = 0; r < n; ++r) {
    MPI_Aint bytes = 0;
    int disp_unit = 0;
    void* base = nullptr;
    if (PMPI_Win_shared_query(win, static_cast<int>(r), &bytes, &disp_unit, &base) != MPI_SUCCESS)
      bytes = 0;
    if (bytes <= 0 || base == nullptr) continue;  // an empty part: no place in the range
    auto* at = static_cast<std::byte*>(base);
    parts[r] = {at, static_cast<std::size_t>(bytes)};
    if (low == nullptr || at < low) low = at;
    if (high == nullptr || at + bytes > high) high = at + bytes;
  }
  if (low == nullptr) return;  // an empty window on every rank
  SharedBuffer adopted = team->adopt_shared({low, static_cast<std::size_t>(high - low)}, parts);
  {
    const std::lock_guard lock(windows_mutex);
    adopted_windows()[win] = std::move(adopted);
  }
  log_window(comm, "its memory moves the collectives' blocks on its communicator with memcpy");
}

}  // namespace

void forget_windows() {
  const std::lock_guard lock(windows_mutex);
  adopted_windows().clear();
}

}  // namespace shmcoll::mpi

extern "C" int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                       void* baseptr, MPI_Win* win) {
  const int rc = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
  if (rc != MPI_SUCCESS) return rc;
  try {
    shmcoll::mpi::adopt(comm, *win);
  } catch (const std::exception& e) {
    // The window works without it: its buffers are then taken for private memory.
    shmcoll::mpi::log_window(comm, std::string("not adopted: ") + e.what());
  } catch (...) {
  }
  return rc;
}

extern "C" int MPI_Win_free(MPI_Win* win) {
  if (win != nullptr) {
    try {
      const std::lock_guard lock(shmcoll::mpi::windows_mutex);
      shmcoll::mpi::adopted_windows().erase(*win);
    } catch (...) {
    }
  }
  return PMPI_Win_free(win);
}
