// MPI_Gatherv, MPI_Igatherv and MPI_Gatherv_init through shmcoll, and their large-count forms
// where the MPI has them (forms.hpp). Root only: recvbuf, recvcounts, displs, recvtype.
#include "mpi/forms.hpp"

namespace shmcoll::mpi {
namespace {

// C and D: the counts' and displacements' types (int; MPI_Count and MPI_Aint).
template <class C, class D>
struct Gatherv {
  static constexpr Coll kColl = Coll::kGatherv;
  using RootBuffers = GathervRootBuffers;
  using OtherBuffers = SendBuffer;
  const void* sendbuf;
  MPI_Count sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  const C* recvcounts;
  const D* displs;
  MPI_Datatype recvtype;
  int root;
  MPI_Comm comm;

  bool check(int rank, int size, LocalError& error) const {
    return check_gatherv(rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcounts, recvtype,
                         root, error);
  }
  bool moves_nothing(int) const { return false; }  // see uniform_moves_nothing (serve.hpp)
  template <class Run>
  int root_part(GathervRootBuffers& b, int ranks, Run&& run) const {
    if (int rc = b.blocks.init_recv(recvbuf, recvcounts, displs, recvtype, ranks);
        rc != MPI_SUCCESS) {
      return rc;
    }
    if (sendbuf == MPI_IN_PLACE) {
      b.send.unused();
      if (int rc = b.blocks.preload(root, comm); rc != MPI_SUCCESS) return rc;
      run(in_place, b.blocks.data(), b.blocks.counts(), b.blocks.displs(), b.blocks.element(),
          root);
      return MPI_SUCCESS;
    }
    if (int rc = b.send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
    run(b.send.data(), b.send.count(), b.send.element(), b.blocks.data(), b.blocks.counts(),
        b.blocks.displs(), b.blocks.element(), root);
    return MPI_SUCCESS;
  }
  template <class Run>
  int other_part(SendBuffer& b, Run&& run) const {
    if (int rc = b.send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
    run(b.send.data(), b.send.count(), b.send.element(), nullptr, std::span<const Count>{},
        std::span<const Count>{}, kByte, root);
    return MPI_SUCCESS;
  }
  // On one node's team, or across nodes (spanning/spanning.hpp).
  static void run(auto& target, auto... args) { target.gatherv(args...); }
  static auto start(auto& target, auto... args) { return target.igatherv(args...); }
  static auto init(Team& team, auto... args) { return team.gatherv_init(args...); }
};

}  // namespace
}  // namespace shmcoll::mpi

using namespace shmcoll::mpi;

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm) {
  return blocking_form("MPI_Gatherv",
                       Gatherv<int, int>{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                         recvtype, root, comm},
                       [&] {
                         return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                             displs, recvtype, root, comm);
                       });
}

extern "C" int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking_form("MPI_Igatherv",
                          Gatherv<int, int>{sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                            displs, recvtype, root, comm},
                          request, [&] {
                            return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                                 displs, recvtype, root, comm, request);
                          });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Gatherv_init)(const void* sendbuf, int sendcount,
                                                MPI_Datatype sendtype, void* recvbuf,
                                                const int recvcounts[], const int displs[],
                                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                                MPI_Info info, MPI_Request* request) {
  return persistent_form(SHMCOLL_PERSISTENT_NAME(Gatherv_init),
                         Gatherv<int, int>{sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, root, comm},
                         request, [&] {
                           return SHMCOLL_PMPI_PERSISTENT(Gatherv_init)(
                               sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               root, comm, info, request);
                         });
}
#endif

#if MPI_VERSION >= 4
using LargeGatherv = Gatherv<MPI_Count, MPI_Aint>;

extern "C" int MPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking_form(
      "MPI_Gatherv_c",
      LargeGatherv{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm},
      [&] {
        return PMPI_Gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                              root, comm);
      });
}

extern "C" int MPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  return nonblocking_form(
      "MPI_Igatherv_c",
      LargeGatherv{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm},
      request, [&] {
        return PMPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               root, comm, request);
      });
}

extern "C" int MPI_Gatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent_form(
      "MPI_Gatherv_init_c",
      LargeGatherv{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm},
      request, [&] {
        return PMPI_Gatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, root, comm, info, request);
      });
}
#endif
