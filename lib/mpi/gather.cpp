// MPI_Gather, MPI_Igather and MPI_Gather_init through shmcoll, and their large-count forms
// where the MPI has them (forms.hpp). Root only: recvbuf, recvcount, recvtype. With
// MPI_IN_PLACE at the root, sendcount and sendtype are not looked at.
#include "mpi/forms.hpp"

namespace shmcoll::mpi {
namespace {

struct Gather : RootedArgs {
  bool operator==(const Gather&) const = default;
  static constexpr Coll kColl = Coll::kGather;
  using RootBuffers = SendRecvBuffers;
  using OtherBuffers = SendBuffer;

  bool check(int rank, int size, LocalError& error) const {
    return check_rooted(false, rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, error);
  }
  bool moves_nothing(int rank) const {
    return uniform_moves_nothing(rank, root, recvcount, sendcount);
  }
  template <class Run>
  int root_part(SendRecvBuffers& b, int ranks, Run&& run) const {
    if (int rc = b.recv.init(recvbuf, recvcount < 0 ? recvcount : recvcount * ranks, recvtype);
        rc != MPI_SUCCESS) {
      return rc;
    }
    const Count per_rank = recvcount < 0 ? recvcount : b.recv.count() / ranks;
    if (sendbuf == MPI_IN_PLACE) {
      b.send.unused();
      // A packed receive buffer must carry the root's block too, or unpacking would overwrite
      // it with nothing.
      if (int rc = b.recv.preload(root * recvcount, recvcount, comm); rc != MPI_SUCCESS) return rc;
      run(in_place, b.recv.data(), per_rank, b.recv.element(), root);
      return MPI_SUCCESS;
    }
    if (int rc = b.send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
    run(b.send.data(), b.send.count(), b.send.element(), b.recv.data(), per_rank, b.recv.element(),
        root);
    return MPI_SUCCESS;
  }
  template <class Run>
  int other_part(SendBuffer& b, Run&& run) const {
    if (int rc = b.send.init(sendbuf, sendcount, sendtype, comm); rc != MPI_SUCCESS) return rc;
    run(b.send.data(), b.send.count(), b.send.element(), nullptr, Count{0}, kByte, root);
    return MPI_SUCCESS;
  }
  // On one node's team, or across nodes (spanning/spanning.hpp).
  static void run(auto& target, auto... args) { target.gather(args...); }
  static auto start(auto& target, auto... args) { return target.igather(args...); }
  static auto init(Team& team, auto... args) { return team.gather_init(args...); }
};

}  // namespace
}  // namespace shmcoll::mpi

using namespace shmcoll::mpi;

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking_form(
      "MPI_Gather",
      Gather{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, [&] {
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

extern "C" int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  return nonblocking_form(
      "MPI_Igather",
      Gather{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request);
      });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Gather_init)(const void* sendbuf, int sendcount,
                                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                                               MPI_Info info, MPI_Request* request) {
  return persistent_form(
      SHMCOLL_PERSISTENT_NAME(Gather_init),
      Gather{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return SHMCOLL_PMPI_PERSISTENT(Gather_init)(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, root, comm, info, request);
      });
}
#endif

#if MPI_VERSION >= 4
extern "C" int MPI_Gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return blocking_form(
      "MPI_Gather_c",
      Gather{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, [&] {
        return PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm);
      });
}

extern "C" int MPI_Igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request) {
  return nonblocking_form(
      "MPI_Igather_c",
      Gather{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, request);
      });
}

extern "C" int MPI_Gather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent_form(
      "MPI_Gather_init_c",
      Gather{{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm}}, request,
      [&] {
        return PMPI_Gather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                  comm, info, request);
      });
}
#endif
