// MPI_Scatter, MPI_Iscatter and MPI_Scatter_init through shmcoll, and their large-count forms
// where the MPI has them (forms.hpp). Root only: sendbuf, sendcount, sendtype. With
// MPI_IN_PLACE at the root, recvcount and recvtype are not looked at.
#include "mpi/forms.hpp"

namespace shmcoll::mpi {
namespace {

struct Scatter : RootedArgs {
  bool operator==(const Scatter&) const = default;
  static constexpr Coll kColl = Coll::kScatter;
  using RootBuffers = SendRecvBuffers;
  using OtherBuffers = RecvBuffer;

  bool check(int rank, int size, LocalError& error) const {
    return check_rooted(true, rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, error);
  }
  bool moves_nothing(int rank) const {
    return uniform_moves_nothing(rank, root, sendcount, recvcount);
  }
  template <class Run>
  int root_part(SendRecvBuffers& b, int ranks, Run&& run) const {
    // The root's buffer holds `ranks` blocks; packed, block r is the r-th run of bytes.
    if (int rc =
            b.send.init(sendbuf, sendcount < 0 ? sendcount : sendcount * ranks, sendtype, comm);
        rc != MPI_SUCCESS) {
      return rc;
    }
    const Count per_rank = sendcount < 0 ? sendcount : b.send.count() / ranks;
    if (recvbuf == MPI_IN_PLACE) {
      b.recv.unused();
      run(b.send.data(), per_rank, b.send.element(), in_place, root);
      return MPI_SUCCESS;
    }
    if (int rc = b.recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
    run(b.send.data(), per_rank, b.send.element(), b.recv.data(), b.recv.count(), b.recv.element(),
        root);
    return MPI_SUCCESS;
  }
  template <class Run>
  int other_part(RecvBuffer& b, Run&& run) const {
    if (int rc = b.recv.init(recvbuf, recvcount, recvtype); rc != MPI_SUCCESS) return rc;
    run(nullptr, Count{0}, kByte, b.recv.data(), b.recv.count(), b.recv.element(), root);
    return MPI_SUCCESS;
  }
  // On one node's team, or across nodes (spanning/spanning.hpp).
  static void run(auto& target, auto... args) { target.scatter(args...); }
  static auto start(auto& target, auto... args) { return target.iscatter(args...); }
  static auto init(Team& team, auto... args) { return team.scatter_init(args...); }
};

}  // namespace
}  // namespace shmcoll::mpi

using namespace shmcoll::mpi;

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking_form(
      "MPI_Scatter",
      Scatter{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, [&] {
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

extern "C" int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request* request) {
  return nonblocking_form(
      "MPI_Iscatter",
      Scatter{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                             request);
      });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Scatter_init)(const void* sendbuf, int sendcount,
                                                MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                                MPI_Info info, MPI_Request* request) {
  return persistent_form(
      SHMCOLL_PERSISTENT_NAME(Scatter_init),
      Scatter{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return SHMCOLL_PMPI_PERSISTENT(Scatter_init)(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
      });
}
#endif

#if MPI_VERSION >= 4
extern "C" int MPI_Scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm) {
  return blocking_form(
      "MPI_Scatter_c",
      Scatter{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, [&] {
        return PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm);
      });
}

extern "C" int MPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Request* request) {
  return nonblocking_form(
      "MPI_Iscatter_c",
      Scatter{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, request);
      });
}

extern "C" int MPI_Scatter_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent_form(
      "MPI_Scatter_init_c",
      Scatter{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return PMPI_Scatter_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                   comm, info, request);
      });
}
#endif
