// MPI-3 shared windows. Every rank of a window's communicator maps the memory of
// MPI_Win_allocate_shared, so the communicator's team adopts it (Team::adopt_shared): the
// blocks of the five collectives on that communicator whose buffers lie in the window then move
// with memcpy between the ranks' mappings, where private buffers need cross-memory attach (a
// system call that pins every page, several times slower than memcpy on some machines).
// MPI_Win_free forgets the window before the MPI frees it.
//
// Only a window whose parts follow one another in every process qualifies (as Open MPI and
// MPICH lay them out, padded to pages with alloc_shared_noncontig): adopt_shared compares the
// ranks' layouts and refuses otherwise, and the window then works as before, its buffers taken
// for private memory.
#include <unistd.h>

#include <algorithm>
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

// Whether the non-empty parts follow one another with gaps under a page: then every byte from
// the first to the end of the last lies in the pages of the parts' own mappings, which are the
// same memory in every process. A private mapping could sit in a larger gap, and a buffer there
// would be taken for window memory.
bool tiles(std::vector<std::span<std::byte>> parts) {
  std::erase_if(parts, [](std::span<std::byte> p) { return p.empty(); });
  std::sort(parts.begin(), parts.end(),
            [](std::span<std::byte> a, std::span<std::byte> b) { return a.data() < b.data(); });
  const auto page = static_cast<std::ptrdiff_t>(sysconf(_SC_PAGESIZE));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::byte* end = parts[i - 1].data() + parts[i - 1].size();
    if (parts[i].data() < end || parts[i].data() - end >= page) return false;
  }
  return true;
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
  std::span<std::byte> range{low, static_cast<std::size_t>(high - low)};
  if (!tiles(parts)) {
    // Every rank must still call adopt_shared: an empty range makes it refuse on all of them.
    log_window(comm, "its parts leave gaps of a page or more: not adopted");
    range = {};
  }
  SharedBuffer adopted = team->adopt_shared(range, parts);
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
  shmcoll::mpi::config();  // first: it checks which MPI runs
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
