// The Fortran entry points the MPIs' Fortran layers would not route to the plugin's C
// functions.
// - Open MPI's Fortran layer calls PMPI_* directly, so without these a Fortran program never
//   reaches the plugin: `mpif.h` and `use mpi` call mpi_bcast_ (or another of the compilers'
//   manglings), `use mpi_f08` calls mpi_bcast_f08_, which calls ompi_bcast_f. The plugin
//   defines both for the five collectives, their non-blocking and persistent (MPIX_*_INIT)
//   forms, MPI_START(ALL), MPI_REQUEST_FREE, the completion calls (in which the plugin's
//   requests progress), MPI_COMM_FREE and MPI_FINALIZE, converts Fortran's
//   handles, statuses and its MPI_IN_PLACE and MPI_BOTTOM sentinels (the addresses of common
//   blocks), and calls its own C functions, which serve and count the call.
// MPICH's Fortran layer calls MPI_* for the collectives; what its `use mpi_f08` layer calls
// directly is in fortran_mpich.cpp.
#include <mpi.h>

#if defined(OPEN_MPI)

#include <dlfcn.h>
#include <mpi-ext.h>

#include <boost/container/small_vector.hpp>
#include <cstddef>
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

// The non-blocking forms: the request goes back as Fortran's handle of the C request.
namespace {
void started(int rc, MPI_Request c_request, MPI_Fint* request, MPI_Fint* ierr) {
  if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(c_request);
  set(ierr, rc);
}
}  // namespace

extern "C" void ompi_ibcast_f(char* buf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* root,
                              MPI_Fint* comm_handle, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc =
      MPI_Ibcast(buffer(buf, false), *count, type(datatype), *root, comm(comm_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompi_iscatter_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                                char* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype,
                                MPI_Fint* root, MPI_Fint* comm_handle, MPI_Fint* request,
                                MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc =
      MPI_Iscatter(buffer(sendbuf, false), *sendcount, type(sendtype), buffer(recvbuf, true),
                   *recvcount, type(recvtype), *root, comm(comm_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompi_iscatterv_f(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* displs,
                                 MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                                 MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm_handle,
                                 MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPI_Iscatterv(buffer(sendbuf, false), sendcounts, displs, type(sendtype),
                               buffer(recvbuf, true), *recvcount, type(recvtype), *root,
                               comm(comm_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompi_igather_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                               char* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype,
                               MPI_Fint* root, MPI_Fint* comm_handle, MPI_Fint* request,
                               MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc =
      MPI_Igather(buffer(sendbuf, true), *sendcount, type(sendtype), buffer(recvbuf, false),
                  *recvcount, type(recvtype), *root, comm(comm_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompi_igatherv_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                                char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* displs,
                                MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm_handle,
                                MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc =
      MPI_Igatherv(buffer(sendbuf, true), *sendcount, type(sendtype), buffer(recvbuf, false),
                   recvcounts, displs, type(recvtype), *root, comm(comm_handle), &c_request);
  started(rc, c_request, request, ierr);
}

// The completion calls, so that Fortran's waits progress the plugin's requests as C's do
// (completion.cpp): Fortran's requests and statuses converted to C's and back, its indices
// from 1, its logicals as the compiler's .true. (1).
namespace {

constexpr MPI_Fint kTrue = 1;
constexpr std::size_t kStatusFints = sizeof(MPI_Status) / sizeof(MPI_Fint);

// Fortran's requests as C's, written back (as Fortran handles) once the C call is done: a
// completed request becomes MPI_REQUEST_NULL there too.
class Requests {
 public:
  Requests(MPI_Fint* handles, int count)
      : handles_(handles), c_(static_cast<std::size_t>(count > 0 ? count : 0)) {
    for (std::size_t i = 0; i < c_.size(); ++i) c_[i] = PMPI_Request_f2c(handles_[i]);
  }
  ~Requests() {
    for (std::size_t i = 0; i < c_.size(); ++i) handles_[i] = PMPI_Request_c2f(c_[i]);
  }
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  MPI_Request* data() { return c_.data(); }

 private:
  MPI_Fint* handles_;
  boost::container::small_vector<MPI_Request, 8> c_;
};

// Fortran's statuses (MPI_F_STATUSES_IGNORE or `count` of them) as C's, written back after.
class Statuses {
 public:
  Statuses(MPI_Fint* f, int count)
      : f_(f == MPI_F_STATUSES_IGNORE ? nullptr : f),
        c_(f_ != nullptr && count > 0 ? static_cast<std::size_t>(count) : 0) {}
  MPI_Status* data() { return f_ != nullptr ? c_.data() : MPI_STATUSES_IGNORE; }
  // The first `count` back to Fortran.
  void write_back(int count) {
    for (int i = 0; f_ != nullptr && i < count; ++i)
      PMPI_Status_c2f(&c_[static_cast<std::size_t>(i)],
                      f_ + static_cast<std::size_t>(i) * kStatusFints);
  }

 private:
  MPI_Fint* f_;
  boost::container::small_vector<MPI_Status, 8> c_;
};

// One Fortran status (MPI_F_STATUS_IGNORE or one).
class Status {
 public:
  explicit Status(MPI_Fint* f) : f_(f == MPI_F_STATUS_IGNORE ? nullptr : f) {}
  MPI_Status* data() { return f_ != nullptr ? &c_ : MPI_STATUS_IGNORE; }
  void write_back() {
    if (f_ != nullptr) PMPI_Status_c2f(&c_, f_);
  }

 private:
  MPI_Fint* f_;
  MPI_Status c_{};
};

MPI_Fint logical(int flag) { return flag ? kTrue : 0; }
MPI_Fint fortran_index(int index) { return index == MPI_UNDEFINED ? index : index + 1; }

}  // namespace

extern "C" void ompi_wait_f(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierr) {
  Status c_status(status);
  int rc;
  {
    Requests c_request(request, 1);
    rc = MPI_Wait(c_request.data(), c_status.data());
  }
  c_status.write_back();
  set(ierr, rc);
}

extern "C" void ompi_test_f(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status, MPI_Fint* ierr) {
  Status c_status(status);
  int c_flag = 0, rc;
  {
    Requests c_request(request, 1);
    rc = MPI_Test(c_request.data(), &c_flag, c_status.data());
  }
  *flag = logical(c_flag);
  if (c_flag) c_status.write_back();
  set(ierr, rc);
}

extern "C" void ompi_request_get_status_f(MPI_Fint* request, MPI_Fint* flag, MPI_Fint* status,
                                          MPI_Fint* ierr) {
  Status c_status(status);
  int c_flag = 0;
  const int rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &c_flag, c_status.data());
  *flag = logical(c_flag);
  if (c_flag) c_status.write_back();
  set(ierr, rc);
}

extern "C" void ompi_waitall_f(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses,
                               MPI_Fint* ierr) {
  Statuses c_statuses(statuses, *count);
  int rc;
  {
    Requests c_requests(requests, *count);
    rc = MPI_Waitall(*count, c_requests.data(), c_statuses.data());
  }
  c_statuses.write_back(*count);
  set(ierr, rc);
}

extern "C" void ompi_testall_f(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* flag,
                               MPI_Fint* statuses, MPI_Fint* ierr) {
  Statuses c_statuses(statuses, *count);
  int c_flag = 0, rc;
  {
    Requests c_requests(requests, *count);
    rc = MPI_Testall(*count, c_requests.data(), &c_flag, c_statuses.data());
  }
  *flag = logical(c_flag);
  if (c_flag) c_statuses.write_back(*count);
  set(ierr, rc);
}

extern "C" void ompi_waitany_f(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index,
                               MPI_Fint* status, MPI_Fint* ierr) {
  Status c_status(status);
  int c_index = MPI_UNDEFINED, rc;
  {
    Requests c_requests(requests, *count);
    rc = MPI_Waitany(*count, c_requests.data(), &c_index, c_status.data());
  }
  *index = fortran_index(c_index);
  c_status.write_back();
  set(ierr, rc);
}

extern "C" void ompi_testany_f(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* flag,
                               MPI_Fint* status, MPI_Fint* ierr) {
  Status c_status(status);
  int c_index = MPI_UNDEFINED, c_flag = 0, rc;
  {
    Requests c_requests(requests, *count);
    rc = MPI_Testany(*count, c_requests.data(), &c_index, &c_flag, c_status.data());
  }
  *index = fortran_index(c_index);
  *flag = logical(c_flag);
  if (c_flag) c_status.write_back();
  set(ierr, rc);
}

extern "C" void ompi_waitsome_f(MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount,
                                MPI_Fint* indices, MPI_Fint* statuses, MPI_Fint* ierr) {
  Statuses c_statuses(statuses, *incount);
  boost::container::small_vector<int, 8> c_indices(
      static_cast<std::size_t>(*incount > 0 ? *incount : 0));
  int c_outcount = 0, rc;
  {
    Requests c_requests(requests, *incount);
    rc =
        MPI_Waitsome(*incount, c_requests.data(), &c_outcount, c_indices.data(), c_statuses.data());
  }
  *outcount = c_outcount;
  for (int i = 0; i < c_outcount && c_outcount != MPI_UNDEFINED; ++i)
    indices[i] = fortran_index(c_indices[static_cast<std::size_t>(i)]);
  if (c_outcount != MPI_UNDEFINED) c_statuses.write_back(c_outcount);
  set(ierr, rc);
}

extern "C" void ompi_testsome_f(MPI_Fint* incount, MPI_Fint* requests, MPI_Fint* outcount,
                                MPI_Fint* indices, MPI_Fint* statuses, MPI_Fint* ierr) {
  Statuses c_statuses(statuses, *incount);
  boost::container::small_vector<int, 8> c_indices(
      static_cast<std::size_t>(*incount > 0 ? *incount : 0));
  int c_outcount = 0, rc;
  {
    Requests c_requests(requests, *incount);
    rc =
        MPI_Testsome(*incount, c_requests.data(), &c_outcount, c_indices.data(), c_statuses.data());
  }
  *outcount = c_outcount;
  for (int i = 0; i < c_outcount && c_outcount != MPI_UNDEFINED; ++i)
    indices[i] = fortran_index(c_indices[static_cast<std::size_t>(i)]);
  if (c_outcount != MPI_UNDEFINED) c_statuses.write_back(c_outcount);
  set(ierr, rc);
}

// The persistent forms, which Open MPI 4 has as its MPIX_*_INIT extension (`use mpi_ext`,
// `use mpi_f08_ext`, mpif-ext.h), and the calls that start and free a persistent request:
// Open MPI's Fortran layer would start the plugin's placeholder request itself, and free it
// without the plugin forgetting its call (persistent.cpp).
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
namespace {
MPI_Info info(const MPI_Fint* handle) { return PMPI_Info_f2c(*handle); }
}  // namespace

extern "C" void ompix_bcast_init_f(char* buf, MPI_Fint* count, MPI_Fint* datatype, MPI_Fint* root,
                                   MPI_Fint* comm_handle, MPI_Fint* info_handle, MPI_Fint* request,
                                   MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPIX_Bcast_init(buffer(buf, false), *count, type(datatype), *root,
                                 comm(comm_handle), info(info_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompix_scatter_init_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                                     char* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype,
                                     MPI_Fint* root, MPI_Fint* comm_handle, MPI_Fint* info_handle,
                                     MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPIX_Scatter_init(buffer(sendbuf, false), *sendcount, type(sendtype),
                                   buffer(recvbuf, true), *recvcount, type(recvtype), *root,
                                   comm(comm_handle), info(info_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompix_scatterv_init_f(char* sendbuf, MPI_Fint* sendcounts, MPI_Fint* displs,
                                      MPI_Fint* sendtype, char* recvbuf, MPI_Fint* recvcount,
                                      MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm_handle,
                                      MPI_Fint* info_handle, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPIX_Scatterv_init(buffer(sendbuf, false), sendcounts, displs, type(sendtype),
                                    buffer(recvbuf, true), *recvcount, type(recvtype), *root,
                                    comm(comm_handle), info(info_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompix_gather_init_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                                    char* recvbuf, MPI_Fint* recvcount, MPI_Fint* recvtype,
                                    MPI_Fint* root, MPI_Fint* comm_handle, MPI_Fint* info_handle,
                                    MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPIX_Gather_init(buffer(sendbuf, true), *sendcount, type(sendtype),
                                  buffer(recvbuf, false), *recvcount, type(recvtype), *root,
                                  comm(comm_handle), info(info_handle), &c_request);
  started(rc, c_request, request, ierr);
}

extern "C" void ompix_gatherv_init_f(char* sendbuf, MPI_Fint* sendcount, MPI_Fint* sendtype,
                                     char* recvbuf, MPI_Fint* recvcounts, MPI_Fint* displs,
                                     MPI_Fint* recvtype, MPI_Fint* root, MPI_Fint* comm_handle,
                                     MPI_Fint* info_handle, MPI_Fint* request, MPI_Fint* ierr) {
  MPI_Request c_request = MPI_REQUEST_NULL;
  const int rc = MPIX_Gatherv_init(buffer(sendbuf, true), *sendcount, type(sendtype),
                                   buffer(recvbuf, false), recvcounts, displs, type(recvtype),
                                   *root, comm(comm_handle), info(info_handle), &c_request);
  started(rc, c_request, request, ierr);
}
#endif  // OMPI_HAVE_MPI_EXT_PCOLLREQ

extern "C" void ompi_start_f(MPI_Fint* request, MPI_Fint* ierr) {
  int rc;
  {
    Requests c_request(request, 1);
    rc = MPI_Start(c_request.data());
  }
  set(ierr, rc);
}

extern "C" void ompi_startall_f(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* ierr) {
  int rc;
  {
    Requests c_requests(requests, *count);
    rc = MPI_Startall(*count, c_requests.data());
  }
  set(ierr, rc);
}

extern "C" void ompi_request_free_f(MPI_Fint* request, MPI_Fint* ierr) {
  int rc;
  {
    Requests c_request(request, 1);
    rc = MPI_Request_free(c_request.data());
  }
  set(ierr, rc);
}

// A communicator freed with collectives outstanding completes them first (completion.cpp).
extern "C" void ompi_comm_free_f(MPI_Fint* comm_handle, MPI_Fint* ierr) {
  MPI_Comm c_comm = comm(comm_handle);
  const int rc = MPI_Comm_free(&c_comm);
  if (rc == MPI_SUCCESS) *comm_handle = PMPI_Comm_c2f(c_comm);
  set(ierr, rc);
}

SHMCOLL_FORTRAN_NAMES(mpi_bcast, MPI_BCAST, ompi_bcast_f);
SHMCOLL_FORTRAN_NAMES(mpi_scatter, MPI_SCATTER, ompi_scatter_f);
SHMCOLL_FORTRAN_NAMES(mpi_scatterv, MPI_SCATTERV, ompi_scatterv_f);
SHMCOLL_FORTRAN_NAMES(mpi_gather, MPI_GATHER, ompi_gather_f);
SHMCOLL_FORTRAN_NAMES(mpi_gatherv, MPI_GATHERV, ompi_gatherv_f);
SHMCOLL_FORTRAN_NAMES(mpi_finalize, MPI_FINALIZE, ompi_finalize_f);
SHMCOLL_FORTRAN_NAMES(mpi_ibcast, MPI_IBCAST, ompi_ibcast_f);
SHMCOLL_FORTRAN_NAMES(mpi_iscatter, MPI_ISCATTER, ompi_iscatter_f);
SHMCOLL_FORTRAN_NAMES(mpi_iscatterv, MPI_ISCATTERV, ompi_iscatterv_f);
SHMCOLL_FORTRAN_NAMES(mpi_igather, MPI_IGATHER, ompi_igather_f);
SHMCOLL_FORTRAN_NAMES(mpi_igatherv, MPI_IGATHERV, ompi_igatherv_f);
SHMCOLL_FORTRAN_NAMES(mpi_wait, MPI_WAIT, ompi_wait_f);
SHMCOLL_FORTRAN_NAMES(mpi_test, MPI_TEST, ompi_test_f);
SHMCOLL_FORTRAN_NAMES(mpi_request_get_status, MPI_REQUEST_GET_STATUS, ompi_request_get_status_f);
SHMCOLL_FORTRAN_NAMES(mpi_waitall, MPI_WAITALL, ompi_waitall_f);
SHMCOLL_FORTRAN_NAMES(mpi_testall, MPI_TESTALL, ompi_testall_f);
SHMCOLL_FORTRAN_NAMES(mpi_waitany, MPI_WAITANY, ompi_waitany_f);
SHMCOLL_FORTRAN_NAMES(mpi_testany, MPI_TESTANY, ompi_testany_f);
SHMCOLL_FORTRAN_NAMES(mpi_waitsome, MPI_WAITSOME, ompi_waitsome_f);
SHMCOLL_FORTRAN_NAMES(mpi_testsome, MPI_TESTSOME, ompi_testsome_f);
SHMCOLL_FORTRAN_NAMES(mpi_comm_free, MPI_COMM_FREE, ompi_comm_free_f);
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
SHMCOLL_FORTRAN_NAMES(mpix_bcast_init, MPIX_BCAST_INIT, ompix_bcast_init_f);
SHMCOLL_FORTRAN_NAMES(mpix_scatter_init, MPIX_SCATTER_INIT, ompix_scatter_init_f);
SHMCOLL_FORTRAN_NAMES(mpix_scatterv_init, MPIX_SCATTERV_INIT, ompix_scatterv_init_f);
SHMCOLL_FORTRAN_NAMES(mpix_gather_init, MPIX_GATHER_INIT, ompix_gather_init_f);
SHMCOLL_FORTRAN_NAMES(mpix_gatherv_init, MPIX_GATHERV_INIT, ompix_gatherv_init_f);
#endif
SHMCOLL_FORTRAN_NAMES(mpi_start, MPI_START, ompi_start_f);
SHMCOLL_FORTRAN_NAMES(mpi_startall, MPI_STARTALL, ompi_startall_f);
SHMCOLL_FORTRAN_NAMES(mpi_request_free, MPI_REQUEST_FREE, ompi_request_free_f);

// Open MPI's `use mpi_f08` tests call the Fortran profiling names of its `mpif.h` layer
// (pmpi_test_, ...), not ompi_test_f: those become the plugin's too, or a loop of MPI_Test
// on one of its requests would never see it complete. They call the plugin's MPI_Test, which
// adds the progress pass and calls PMPI_Test: to a profiling tool of its own the difference
// is that pass alone.
extern "C" decltype(ompi_test_f) pmpi_test_ __attribute__((alias("ompi_test_f")));
extern "C" decltype(ompi_testall_f) pmpi_testall_ __attribute__((alias("ompi_testall_f")));
extern "C" decltype(ompi_testany_f) pmpi_testany_ __attribute__((alias("ompi_testany_f")));
extern "C" decltype(ompi_testsome_f) pmpi_testsome_ __attribute__((alias("ompi_testsome_f")));
extern "C" decltype(ompi_request_get_status_f) pmpi_request_get_status_
    __attribute__((alias("ompi_request_get_status_f")));

#endif  // OPEN_MPI
