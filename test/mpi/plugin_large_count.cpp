// MPI-4's large-count collectives through the plugin with counts and displacements past
// INT_MAX, under mpirun at 2 ranks with the plugin linked in (MPICH 4; skipped where the MPI
// has no large-count forms or the machine has less than 12 GiB available):
//   MPI_Bcast_c of 2^31 + 8 bytes; MPI_Scatter_c of 2^30 + 4 bytes per rank (a root buffer
//   past 2^31); MPI_Gatherv_c whose second block lies past 2^31; MPI_Scatterv_c of
//   2^31 + 16 MPI_BYTE to one rank; each checked at sampled places and counted as served.
// Rank 0 prints "N passed, M failed"; the exit status is 0 when nothing failed, 77 when skipped.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "mpi_checks.hpp"

extern "C" void shmcoll_mpi_stats(unsigned long long* served, unsigned long long* fallback);

namespace {

using mpi_checks::check;
using mpi_checks::g_rank;

#if MPI_VERSION >= 4
// What a byte at `i` of a message holds: a pattern that differs at every sampled place.
unsigned char pattern(std::uint64_t i, int seed) {
  return static_cast<unsigned char>((i * 2654435761u + static_cast<unsigned>(seed)) >> 13);
}

// Whether the bytes of `data` at `offset` + [0, n) match the pattern at `first` + [0, n), at
// 4,099 places spread over them and at both ends.
bool matches(const std::vector<unsigned char>& data, std::uint64_t offset, std::uint64_t first,
             std::uint64_t n, int seed) {
  const std::uint64_t step = n / 4099 + 1;
  for (std::uint64_t i = 0; i < n; i += step) {
    if (data[offset + i] != pattern(first + i, seed)) return false;
  }
  return n == 0 || data[offset + n - 1] == pattern(first + n - 1, seed);
}
void fill(std::vector<unsigned char>& data, std::uint64_t offset, std::uint64_t first,
          std::uint64_t n, int seed) {
  for (std::uint64_t i = 0; i < n; ++i) data[offset + i] = pattern(first + i, seed);
}

std::uint64_t available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(256, '\n');
  }
  return 0;
}

void large_counts() {
  constexpr std::uint64_t kPastInt = (std::uint64_t{1} << 31) + 8;
  unsigned long long served_before = 0, served_after = 0, fallback = 0;
  shmcoll_mpi_stats(&served_before, &fallback);
  {
    std::vector<unsigned char> data(kPastInt, 0);
    if (g_rank == 0) fill(data, 0, 0, kPastInt, 1);
    check(MPI_Bcast_c(data.data(), static_cast<MPI_Count>(kPastInt), MPI_BYTE, 0, MPI_COMM_WORLD) ==
                  MPI_SUCCESS &&
              matches(data, 0, 0, kPastInt, 1),
          "MPI_Bcast_c of 2^31 + 8 bytes");
  }
  {
    constexpr std::uint64_t kBlock = (std::uint64_t{1} << 30) + 4;
    std::vector<unsigned char> all(g_rank == 0 ? 2 * kBlock : 0), mine(kBlock, 0);
    if (g_rank == 0) fill(all, 0, 0, 2 * kBlock, 2);
    check(
        MPI_Scatter_c(all.data(), static_cast<MPI_Count>(kBlock), MPI_BYTE, mine.data(),
                      static_cast<MPI_Count>(kBlock), MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
            matches(mine, 0, g_rank * kBlock, kBlock, 2),
        "MPI_Scatter_c of 2^30 + 4 bytes per rank");
  }
  {
    // Rank 1's block of 4 KiB lands past 2^31 in the root's buffer.
    constexpr std::uint64_t kBlock = 4096;
    const MPI_Count counts[2] = {kBlock, kBlock};
    const MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(kPastInt)};
    std::vector<unsigned char> all(g_rank == 0 ? kPastInt + kBlock : 0), mine(kBlock);
    fill(mine, 0, g_rank * kBlock, kBlock, 3);
    check(MPI_Gatherv_c(mine.data(), static_cast<MPI_Count>(kBlock), MPI_BYTE, all.data(), counts,
                        displs, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
              (g_rank != 0 ||
               (matches(all, 0, 0, kBlock, 3) && matches(all, kPastInt, kBlock, kBlock, 3))),
          "MPI_Gatherv_c with a displacement past 2^31");
  }
  {
    // Rank 1 receives a block of 2^31 + 8 bytes; rank 0 none.
    const MPI_Count counts[2] = {0, static_cast<MPI_Count>(kPastInt)};
    const MPI_Aint displs[2] = {0, 0};
    std::vector<unsigned char> all(g_rank == 0 ? kPastInt : 0), mine(g_rank == 1 ? kPastInt : 0);
    if (g_rank == 0) fill(all, 0, 0, kPastInt, 4);
    check(MPI_Scatterv_c(all.data(), counts, displs, MPI_BYTE, mine.data(), counts[g_rank],
                         MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
              (g_rank != 1 || matches(mine, 0, 0, kPastInt, 4)),
          "MPI_Scatterv_c of a 2^31 + 8 byte block");
  }
  shmcoll_mpi_stats(&served_after, &fallback);
  check(served_after - served_before == 4 && fallback == 0,
        "the four calls served by shmcoll: " + std::to_string(served_after - served_before));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  mpi_checks::start();
  // Every rank's verdict: the same on all (rank 0's reading of the machine).
  int runnable = 0;
#if MPI_VERSION >= 4
  runnable = mpi_checks::g_size == 2 && available_bytes() >= (std::uint64_t{12} << 30) ? 1 : 0;
#endif
  MPI_Bcast(&runnable, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!runnable) {
    if (g_rank == 0) std::printf("skipped: needs MPI-4, 2 ranks and 12 GiB available\n");
    MPI_Finalize();
    return 77;
  }
#if MPI_VERSION >= 4
  large_counts();
#endif
  return mpi_checks::finish();
}
