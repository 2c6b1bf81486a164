// The Fortran entry points the MPIs' Fortran layers would not route to the plugin's C
// functions.
// - Open MPI's Fortran layer calls PMPI_* directly, so without these a Fortran program never
//   reaches the plugin: `mpif.h` and `use mpi` call mpi_bcast_ (or another of the compilers'
//   manglings), `use mpi_f08` calls mpi_bcast_f08_, which calls ompi_bcast_f. The plugin
//   defines both for the five collectives and MPI_FINALIZE, converts Fortran's handles and its
//   MPI_IN_PLACE and MPI_BOTTOM sentinels (the addresses of common blocks), and calls its own C
//   functions, which serve and count the call.
// - MPICH's Fortran layer calls MPI_* for the collectives in all three interfaces, but
//   PMPI_Finalize from `use mpi_f08`: the plugin defines that one entry point.
#include <mpi.h>

#if defined(MPICH)

// MPI_Finalize(ierror) of `use mpi_f08`: its optional ierror is null when left out.
extern "C" void mpi_finalize_f08_(MPI_Fint* ierror) {
  const int rc = MPI_Finalize();
  if (ierror != nullptr) *ierror = static_cast<MPI_Fint>(rc);
}

#endif  // MPICH

#if defined(OPEN_MPI)

#include <dlfcn.h>

#include <mutex>

namespace {

// Fortran's MPI_IN_PLACE and MPI_BOTTOM: common blocks, under whichever mangling the compiler
// that built the MPI's Fortran layer used. Looked up once.
struct Sentinels {
  const void* in_place[4] = {};
  const void* bottom[4] = {};
};
const Sentinels& sentinels() {
  static Sentinels s;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* in_place[] = {"mpi_fortran_in_place", "mpi_fortran_in_place_",
                              "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    const char* bottom[] = {"mpi_fortran_bottom", "mpi_fortran_bottom_", "mpi_fortran_bottom__",
                            "MPI_FORTRAN_BOTTOM"};
    for (int i = 0; i < 4; ++i) {
      s.in_place[i] = dlsym(RTLD_DEFAULT, in_place[i]);
      s.bottom[i] = dlsym(RTLD_DEFAULT, bottom[i]);
    }
  });
  return s;
}

// A Fortran buffer argument as C sees it: MPI_IN_PLACE (where `in_place_allowed`), MPI_BOTTOM,
// or the address itself.
void* buffer(void* address, bool in_place_allowed) {
  const Sentinels& s = sentinels();
  for (const void* sentinel : s.bottom) {
    if (sentinel != nullptr && address == sentinel) return MPI_BOTTOM;
  }
  if (in_place_allowed) {
    for (const void* sentinel : s.in_place) {
      if (sentinel != nullptr && address == sentinel) return MPI_IN_PLACE;
    }
  }
  return address;
}

void set(MPI_Fint* ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<MPI_Fint>(rc);
}

MPI_Datatype type(const MPI_Fint* handle) { return PMPI_Type_f2c(*handle); }
MPI_Comm comm(const MPI_Fint* handle) { return PMPI_Comm_f2c(*handle); }

}  // namespace

// Each function under Open MPI's internal name (what mpi_f08 calls) and the four manglings
// Fortran compilers give external names (what mpif.h and `use mpi` call).
#define SHMCOLL_FORTRAN_NAMES(lower, upper, target)                      \
  extern "C" decltype(target) lower __attribute__((alias(#target)));     \
  extern "C" decltype(target) lower##_ __attribute__((alias(#target)));  \
  extern "C" decltype(target) lower##__ __attribute__((alias(#target))); \
  extern "C" decltype(target) upper __attribute__((alias(#target)))

extern "C" void ompi_bcast_f(char* buf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* root,
                             MPI_Fint* comm_handle, MPI_Fint* ierr) {
  set(ierr, MPI_Bcast(buffer(buf, false), *count, type(datatype), *root, comm(comm_handle)));
}

extern "C" void ompi_scatter_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                               char* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype,
                               MPI_Fint* root, MPI_Fint* comm_handle, MPI_Fint* ierr) {
  set(ierr, MPI_Scatter(buffer(sendbuf, false), *sendcount, type(sendtype), buffer(recvbuf, true),
                        *recvcount, type(recvtype), *root, comm(comm_handle)));
}

extern "C" void ompi_scatterv_f(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* displs,
                                MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                                MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm_handle,
                                MPI_Fint* ierr) {
  set(ierr,
      MPI_Scatterv(buffer(sendbuf, false), sendcounts, displs, type(sendtype),
                   buffer(recvbuf, true), *recvcount, type(recvtype), *root, comm(comm_handle)));
}

extern "C" void ompi_gather_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype, char* recvbuf,
                              MPI_Fint* recvcount, MPI_Fint* recvtype, MPI_Fint* root,
                              MPI_Fint* comm_handle, MPI_Fint* ierr) {
  set(ierr, MPI_Gather(buffer(sendbuf, true), *sendcount, type(sendtype), buffer(recvbuf, false),
                       *recvcount, type(recvtype), *root, comm(comm_handle)));
}

extern "C" void ompi_gatherv_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                               char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* displs,
                               MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm_handle,
                               MPI_Fint* ierr) {
  set(ierr, MPI_Gatherv(buffer(sendbuf, true), *sendcount, type(sendtype), buffer(recvbuf, false),
                        recvcounts, displs, type(recvtype), *root, comm(comm_handle)));
}

extern "C" void ompi_finalize_f(MPI_Fint* ierr) { set(ierr, MPI_Finalize()); }

SHMCOLL_FORTRAN_NAMES(mpi_bcast, MPI_BCAST, ompi_bcast_f);
SHMCOLL_FORTRAN_NAMES(mpi_scatter, MPI_SCATTER, ompi_scatter_f);
SHMCOLL_FORTRAN_NAMES(mpi_scatterv, MPI_SCATTERV, ompi_scatterv_f);
SHMCOLL_FORTRAN_NAMES(mpi_gather, MPI_GATHER, ompi_gather_f);
SHMCOLL_FORTRAN_NAMES(mpi_gatherv, MPI_GATHERV, ompi_gatherv_f);
SHMCOLL_FORTRAN_NAMES(mpi_finalize, MPI_FINALIZE, ompi_finalize_f);

#endif  // OPEN_MPI
