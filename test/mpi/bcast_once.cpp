// One MPI_Bcast of an int from rank 0, checked on every rank: the smallest program the plugin
// serves, for the tests of what the plugin says about its setting-up (bad settings, the wrong
// plugin for the MPI). Prints "bcast_once: ok" at rank 0; exits 1 if a rank got a wrong value.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int value = rank == 0 ? 42 : 0;
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (value != 42) {
    std::fprintf(stderr, "bcast_once: rank %d got %d\n", rank, value);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) std::printf("bcast_once: ok\n");
  MPI_Finalize();
  return 0;
}
