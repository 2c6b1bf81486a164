// A small standalone shmcoll program for the launcher tests:
//   rank_program ok            a bcast, a gather and a barrier; exit 0
//   rank_program die RANK      RANK kills itself with SIGKILL after joining; the rest wait in a
//                              bcast
//   rank_program exit RANK N   RANK exits with status N before joining
//   rank_program sleep         every rank sleeps for a minute
//   rank_program hang          every rank joins and prints "rank R pid P waiting"; rank 0 then
//                              sleeps for a minute while the others wait for it in a bcast
#include <sched.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "shmcoll/shmcoll.hpp"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ok";
  const int target = argc > 2 ? std::atoi(argv[2]) : -1;
  const int rank = std::atoi(std::getenv("SHMCOLL_RANK") ? std::getenv("SHMCOLL_RANK") : "-1");
  if (std::strcmp(mode, "affinity") == 0) {  // how many CPUs this rank may run on
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    std::printf("rank %d cpus %d\n", rank, CPU_COUNT(&set));
    return 0;
  }
  if (std::strcmp(mode, "sleep") == 0) {
    sleep(60);
    return 0;
  }
  if (std::strcmp(mode, "exit") == 0 && rank == target) return argc > 3 ? std::atoi(argv[3]) : 1;
  try {
    auto bootstrap = shmcoll::SocketBootstrap::from_environment(10);
    shmcoll::Team team(*bootstrap);
    if (std::strcmp(mode, "die") == 0 && rank == target) raise(SIGKILL);
    if (std::strcmp(mode, "hang") == 0) {
      std::printf("rank %d pid %d waiting\n", rank, static_cast<int>(getpid()));
      std::fflush(stdout);
      if (rank == 0) sleep(60);
    }
    std::vector<int> v(1000, rank);
    team.bcast(v.data(), 1000, shmcoll::kInt32, 0);
    std::vector<int> all(static_cast<std::size_t>(team.size()));
    team.gather(&rank, 1, shmcoll::kInt32, all.data(), 1, shmcoll::kInt32, 0);
    team.barrier();
    if (rank == 0) {
      for (int r = 0; r < team.size(); ++r) {
        if (all[static_cast<std::size_t>(r)] != r) return 5;
      }
      std::printf("rank_program: %d ranks ok\n", team.size());
    }
  } catch (const shmcoll::Error& e) {
    std::fprintf(stderr, "rank_program rank %d: %s\n", rank, e.what());
    return 4;
  }
  return 0;
}
