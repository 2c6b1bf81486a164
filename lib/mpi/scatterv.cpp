// MPI_Scatterv, MPI_Iscatterv and MPI_Scatterv_init through shmcoll, and their large-count forms
// where the MPI has them (forms.hpp). Root only: sendbuf, sendcounts, displs, sendtype.
#include "mpi/forms.hpp"

namespace shmcoll::mpi {
namespace {

// C and D: the counts' and displacements' types (int; MPI_Count and MPI_Aint).
template <class C, class D>
struct Scatterv {
  static constexpr Coll kColl = Coll::kScatterv;
  using RootBuffers = ScattervRootBuffers;
  using OtherBuffers = RecvBuffer;
  const void* sendbuf;
  const C* sendcounts;
  const D* displs;
  MPI_Datatype sendtype;
  void* recvbuf;
  MPI_Count recvcount;
  MPI_Datatype recvtype;
  int root;
  MPI_Comm comm;

  bool check(int rank, int size, LocalError& error) const {
    return check_scatterv(rank, size, sendbuf, sendcounts, sendtype, recvbuf, recvcount, recvtype,
                          root, error);
  }
  bool moves_nothing(int) const { return false; }  // see uniform_moves_nothing (serve.hpp)
  template <class Run>
  int root_part(ScattervRootBuffers& b, int ranks, Run&& run) const {
    if (int rc = b.blocks.init_send(sendbuf, sendcounts, displs, sendtype, ranks, comm);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (recvbuf == MPI_IN_PLACE) {
      b.recv.unused();
      run(b.blocks.data(), b.blocks.counts(), b.blocks.displs(), b.blocks.element(), in_place,
          root);
      return MPI_SUCCESS;
    }
    if (int rc = b.recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
    run(b.blocks.data(), b.blocks.counts(), b.blocks.displs(), b.blocks.element(), b.recv.data(),
        b.recv.count(), b.recv.element(), root);
    return MPI_SUCCESS;
  }
  template <class Run>
  int other_part(RecvBuffer& b, Run&& run) const {
    if (int rc = b.recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
    run(nullptr, std::span<const Count>{}, std::span<const Count>{}, kByte, b.recv.data(),
        b.recv.count(), b.recv.element(), root);
    return MPI_SUCCESS;
  }
  // On one node's team, or across nodes (spanning/spanning.hpp).
  static void run(auto& target, auto... args) { target.scatterv(args...); }
  static auto start(auto& target, auto... args) { return target.iscatterv(args...); }
  static auto init(Team& team, auto... args) { return team.scatterv_init(args...); }
};

}  // namespace
}  // namespace shmcoll::mpi

using namespace shmcoll::mpi;

extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking_form("MPI_Scatterv",
                       Scatterv<int, int>{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                          recvtype, root, comm},
                       [&] {
                         return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                              recvcount, recvtype, root, comm);
                       });
}

extern "C" int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_form("MPI_Iscatterv",
                          Scatterv<int, int>{sendbuf, sendcounts, displs, sendtype, recvbuf,
                                             recvcount, recvtype, root, comm},
                          request, [&] {
                            return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                                  recvcount, recvtype, root, comm, request);
                          });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Scatterv_init)(const void* sendbuf, const int sendcounts[],
                                                 const int displs[], MPI_Datatype sendtype,
                                                 void* recvbuf, int recvcount,
                                                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                                                 MPI_Info info, MPI_Request* request) {
  return persistent_form(SHMCOLL_PERSISTENT_NAME(Scatterv_init),
                         Scatterv<int, int>{sendbuf, sendcounts, displs, sendtype, recvbuf,
                                            recvcount, recvtype, root, comm},
                         request, [&] {
                           return SHMCOLL_PMPI_PERSISTENT(Scatterv_init)(
                               sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                               root, comm, info, request);
                         });
}
#endif

#if MPI_VERSION >= 4
using LargeScatterv = Scatterv<MPI_Count, MPI_Aint>;

extern "C" int MPI_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking_form("MPI_Scatterv_c",
                       LargeScatterv{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                     recvtype, root, comm},
                       [&] {
                         return PMPI_Scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                                recvcount, recvtype, root, comm);
                       });
}

extern "C" int MPI_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request* request) {
  return nonblocking_form("MPI_Iscatterv_c",
                          LargeScatterv{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                        recvtype, root, comm},
                          request, [&] {
                            return PMPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                                    recvcount, recvtype, root, comm, request);
                          });
}

extern "C" int MPI_Scatterv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent_form("MPI_Scatterv_init_c",
                         LargeScatterv{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                       recvtype, root, comm},
                         request, [&] {
                           return PMPI_Scatterv_init_c(sendbuf, sendcounts, displs, sendtype,
                                                       recvbuf, recvcount, recvtype, root, comm,
                                                       info, request);
                         });
}
#endif
