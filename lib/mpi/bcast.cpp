// MPI_Bcast, MPI_Ibcast and MPI_Bcast_init through shmcoll, and their large-count forms
// (MPI_Bcast_c, ...) where the MPI has them (forms.hpp).
#include "mpi/forms.hpp"

namespace shmcoll::mpi {
namespace {

struct Bcast {
  static constexpr Coll kColl = Coll::kBcast;
  using RootBuffers = SendBuffer;
  using OtherBuffers = RecvBuffer;
  bool operator==(const Bcast&) const = default;
  void* buffer;
  MPI_Count count;
  MPI_Datatype datatype;
  int root;
  MPI_Comm comm;

  bool check(int rank, int size, LocalError& error) const {
    return check_bcast(rank, size, buffer, count, datatype, root, error);
  }
  bool moves_nothing(int) const { return count == 0; }
  template <class Run>
  int root_part(SendBuffer& b, int, Run&& run) const {
    if (int rc = b.send.init(buffer, count, datatype, comm); rc != MPI_SUCCESS) return rc;
    run(const_cast<void*>(b.send.data()), b.send.count(), b.send.element(), root);
    return MPI_SUCCESS;
  }
  template <class Run>
  int other_part(RecvBuffer& b, Run&& run) const {
    if (int rc = b.recv.init(buffer, count, datatype); rc != MPI_SUCCESS) return rc;
    run(b.recv.data(), b.recv.count(), b.recv.element(), root);
    return MPI_SUCCESS;
  }
  // On one node's team, or across nodes (spanning/spanning.hpp).
  static void run(auto& target, auto... args) { target.bcast(args...); }
  static auto start(auto& target, auto... args) { return target.ibcast(args...); }
  static auto init(Team& team, auto... args) { return team.bcast_init(args...); }
};

}  // namespace
}  // namespace shmcoll::mpi

using namespace shmcoll::mpi;

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return blocking_form("MPI_Bcast", Bcast{buffer, count, datatype, root, comm},
                       [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

extern "C" int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          MPI_Request* request) {
  return nonblocking_form("MPI_Ibcast", Bcast{buffer, count, datatype, root, comm}, request, [&] {
    return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
  });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Bcast_init)(void* buffer, int count, MPI_Datatype datatype,
                                              int root, MPI_Comm comm, MPI_Info info,
                                              MPI_Request* request) {
  return persistent_form(SHMCOLL_PERSISTENT_NAME(Bcast_init),
                         Bcast{buffer, count, datatype, root, comm}, request, [&] {
                           return SHMCOLL_PMPI_PERSISTENT(Bcast_init)(buffer, count, datatype, root,
                                                                      comm, info, request);
                         });
}
#endif

#if MPI_VERSION >= 4
extern "C" int MPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                           MPI_Comm comm) {
  return blocking_form("MPI_Bcast_c", Bcast{buffer, count, datatype, root, comm},
                       [&] { return PMPI_Bcast_c(buffer, count, datatype, root, comm); });
}

extern "C" int MPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                            MPI_Comm comm, MPI_Request* request) {
  return nonblocking_form("MPI_Ibcast_c", Bcast{buffer, count, datatype, root, comm}, request, [&] {
    return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
  });
}

extern "C" int MPI_Bcast_init_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                                MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent_form(
      "MPI_Bcast_init_c", Bcast{buffer, count, datatype, root, comm}, request,
      [&] { return PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request); });
}
#endif
