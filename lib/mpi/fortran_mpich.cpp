// MPICH's `use mpi_f08` entry points that would bypass the plugin (fortran.cpp has Open
// MPI's). MPICH's Fortran layer calls MPI_* for the collectives in all three interfaces, so the
// plugin's C functions serve them; but its `use mpi_f08` layer calls PMPI_* for MPI_Finalize,
// MPI_Comm_free, MPI_Start(all) and the completion calls, where the plugin's persistent
// requests must be started and completed (persistent.hpp) and its count line printed. The
// plugin defines those entry points and calls its C functions, with MPICH's own conventions:
// a type(MPI_Status) is a C MPI_Status, a handle its C value, a LOGICAL 1 or 0, and the indices
// of the -any and -some calls are passed on as the C functions return them (as MPICH 4.0's own
// entry points do). Every ierror is optional: null when left out.
#include <mpi.h>

#if defined(MPICH)

#include <dlfcn.h>

#include <mutex>

namespace {

// The addresses `use mpi_f08` passes for MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE: objects of
// MPICH's Fortran library, looked up once.
struct Ignored {
  const void* status = nullptr;
  const void* statuses = nullptr;
};
const Ignored& ignored() {
  static Ignored s;
  static std::once_flag once;
  std::call_once(once, [] {
    s.status = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
    s.statuses = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
  });
  return s;
}
MPI_Status* status(MPI_Status* s) { return s == ignored().status ? MPI_STATUS_IGNORE : s; }
MPI_Status* statuses(MPI_Status* s) { return s == ignored().statuses ? MPI_STATUSES_IGNORE : s; }

void set(MPI_Fint* ierror, int rc) {
  if (ierror != nullptr) *ierror = static_cast<MPI_Fint>(rc);
}
// A LOGICAL from a C flag.
MPI_Fint logical(int flag) { return flag != 0 ? 1 : 0; }

}  // namespace

extern "C" {

void mpi_finalize_f08_(MPI_Fint* ierror) { set(ierror, MPI_Finalize()); }

void mpi_comm_free_f08_(MPI_Comm* comm, MPI_Fint* ierror) { set(ierror, MPI_Comm_free(comm)); }

void mpi_start_f08_(MPI_Request* request, MPI_Fint* ierror) { set(ierror, MPI_Start(request)); }

void mpi_startall_f08_(const MPI_Fint* count, MPI_Request* requests, MPI_Fint* ierror) {
  set(ierror, MPI_Startall(*count, requests));
}

void mpi_request_free_f08_(MPI_Request* request, MPI_Fint* ierror) {
  set(ierror, MPI_Request_free(request));
}

void mpi_request_get_status_f08_(const MPI_Request* request, MPI_Fint* flag, MPI_Status* s,
                                 MPI_Fint* ierror) {
  int c_flag = 0;
  set(ierror, MPI_Request_get_status(*request, &c_flag, status(s)));
  *flag = logical(c_flag);
}

void mpi_wait_f08_(MPI_Request* request, MPI_Status* s, MPI_Fint* ierror) {
  set(ierror, MPI_Wait(request, status(s)));
}

void mpi_waitall_f08_(const MPI_Fint* count, MPI_Request* requests, MPI_Status* s,
                      MPI_Fint* ierror) {
  set(ierror, MPI_Waitall(*count, requests, statuses(s)));
}

void mpi_waitany_f08_(const MPI_Fint* count, MPI_Request* requests, MPI_Fint* index, MPI_Status* s,
                      MPI_Fint* ierror) {
  set(ierror, MPI_Waitany(*count, requests, index, status(s)));
}

void mpi_waitsome_f08_(const MPI_Fint* incount, MPI_Request* requests, MPI_Fint* outcount,
                       MPI_Fint* indices, MPI_Status* s, MPI_Fint* ierror) {
  set(ierror, MPI_Waitsome(*incount, requests, outcount, indices, statuses(s)));
}

void mpi_test_f08_(MPI_Request* request, MPI_Fint* flag, MPI_Status* s, MPI_Fint* ierror) {
  int c_flag = 0;
  set(ierror, MPI_Test(request, &c_flag, status(s)));
  *flag = logical(c_flag);
}

void mpi_testall_f08_(const MPI_Fint* count, MPI_Request* requests, MPI_Fint* flag, MPI_Status* s,
                      MPI_Fint* ierror) {
  int c_flag = 0;
  set(ierror, MPI_Testall(*count, requests, &c_flag, statuses(s)));
  *flag = logical(c_flag);
}

void mpi_testany_f08_(const MPI_Fint* count, MPI_Request* requests, MPI_Fint* index, MPI_Fint* flag,
                      MPI_Status* s, MPI_Fint* ierror) {
  int c_flag = 0;
  set(ierror, MPI_Testany(*count, requests, index, &c_flag, status(s)));
  *flag = logical(c_flag);
}

void mpi_testsome_f08_(const MPI_Fint* incount, MPI_Request* requests, MPI_Fint* outcount,
                       MPI_Fint* indices, MPI_Status* s, MPI_Fint* ierror) {
  set(ierror, MPI_Testsome(*incount, requests, outcount, indices, statuses(s)));
}

}  // extern "C"

#endif  // MPICH
