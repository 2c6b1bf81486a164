// The MPI's completion calls, interposed so that shmcoll's non-blocking collectives progress in
// them (requests.hpp). Without an outstanding shmcoll request each goes straight to PMPI. With
// one, a test advances shmcoll's operations and then asks the MPI; a wait does that in a loop
// (the MPI's test advances the MPI's own requests), yielding the CPU once it has looked for a
// while, for ranks that share one.
#include <sched.h>

#include "mpi/requests.hpp"

namespace {

using shmcoll::mpi::progress_requests;
using shmcoll::mpi::requests_outstanding;

// A wait: `test(flag)` until it sets the flag or fails; once no shmcoll request is
// outstanding, `wait()` ends it in the MPI alone.
template <class Test, class Wait>
int wait_with_progress(Test&& test, Wait&& wait) {
  constexpr int kSpinsBeforeYield = 64;
  for (int spins = 0;; ++spins) {
    if (!requests_outstanding()) return wait();
    progress_requests();
    int flag = 0;
    if (const int rc = test(flag); rc != MPI_SUCCESS || flag) return rc;
    if (spins >= kSpinsBeforeYield) sched_yield();
  }
}

}  // namespace

extern "C" int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (requests_outstanding()) progress_requests();
  return PMPI_Test(request, flag, status);
}

extern "C" int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (requests_outstanding()) progress_requests();
  return PMPI_Testall(count, requests, flag, statuses);
}

extern "C" int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                           MPI_Status* status) {
  if (requests_outstanding()) progress_requests();
  return PMPI_Testany(count, requests, index, flag, status);
}

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  if (requests_outstanding()) progress_requests();
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

extern "C" int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (requests_outstanding()) progress_requests();
  return PMPI_Request_get_status(request, flag, status);
}

extern "C" int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return wait_with_progress([&](int& flag) { return PMPI_Test(request, &flag, status); },
                            [&] { return PMPI_Wait(request, status); });
}

extern "C" int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return wait_with_progress(
      [&](int& flag) { return PMPI_Testall(count, requests, &flag, statuses); },
      [&] { return PMPI_Waitall(count, requests, statuses); });
}

extern "C" int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return wait_with_progress(
      [&](int& flag) { return PMPI_Testany(count, requests, index, &flag, status); },
      [&] { return PMPI_Waitany(count, requests, index, status); });
}

extern "C" int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  return wait_with_progress(
      [&](int& flag) {
        const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        // None complete yet: 0. None active: MPI_UNDEFINED, which ends the wait as it is.
        flag = *outcount != 0;
        return rc;
      },
      [&] { return PMPI_Waitsome(incount, requests, outcount, indices, statuses); });
}

// A communicator may be freed with collectives outstanding (MPI lets them complete): they are
// completed here, before its team ends with it. The program's later wait finds them complete.
extern "C" int MPI_Comm_free(MPI_Comm* comm) {
  if (comm != nullptr && requests_outstanding()) shmcoll::mpi::finish_requests_of(*comm);
  return PMPI_Comm_free(comm);
}
