// MPI_Scatterv, MPI_Iscatterv and MPI_Scatterv_init through shmcoll. Root only: sendbuf,
// sendcounts, displs, sendtype.
#include "mpi/call_buffers.hpp"
#include "mpi/persistent.hpp"
#include "mpi/requests.hpp"
#include "mpi/serve.hpp"

namespace shmcoll::mpi {
namespace {

struct Args {
  const void* sendbuf;
  const int* sendcounts;
  const int* displs;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  MPI_Datatype recvtype;
  int root;
  MPI_Comm comm;
};

// The root's and the others' parts: each converts the buffers and calls `run(...)` with
// Team::scatterv's (or iscatterv's) arguments.
template <class Run>
int scatterv_root(ScattervRootBuffers& b, int ranks, const Args& a, Run&& run) {
  if (int rc = b.blocks.init_send(a.sendbuf, a.sendcounts, a.displs, a.sendtype, ranks, a.comm);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (a.recvbuf == MPI_IN_PLACE) {
    run(b.blocks.data(), b.blocks.counts(), b.blocks.displs(), b.blocks.element(), in_place,
        a.root);
    return MPI_SUCCESS;
  }
  if (int rc = b.recv.init(a.recvbuf, a.recvcount, a.recvtype); rc != MPI_SUCCESS) return rc;
  run(b.blocks.data(), b.blocks.counts(), b.blocks.displs(), b.blocks.element(), b.recv.data(),
      b.recv.count(), b.recv.element(), a.root);
  return MPI_SUCCESS;
}
template <class Run>
int scatterv_other(RecvBuffer& b, const Args& a, Run&& run) {
  if (int rc = b.recv.init(a.recvbuf, a.recvcount, a.recvtype); rc != MPI_SUCCESS) return rc;
  run(nullptr, std::span<const Count>{}, std::span<const Count>{}, kByte, b.recv.data(),
      b.recv.count(), b.recv.element(), a.root);
  return MPI_SUCCESS;
}

// The blocking root's part, out of line, as in MPI_Gatherv: its frame is not the receivers'.
[[gnu::noinline]] int scatterv_from_root(Team& team, const Args& a) {
  return run_call<ScattervRootBuffers>(a.comm, [&](ScattervRootBuffers& b) {
    return scatterv_root(b, team.size(), a, [&](auto... args) { team.scatterv(args...); });
  });
}

auto check_args(const Args& a) {
  return [&a](int rank, int size, LocalError& error) {
    return check_scatterv(rank, size, a.sendbuf, a.sendcounts, a.sendtype, a.recvbuf, a.recvcount,
                          a.recvtype, a.root, error);
  };
}

}  // namespace
}  // namespace shmcoll::mpi

extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      "MPI_Scatterv", Coll::kScatterv, comm, check_args(a), never_empty,
      [&](shmcoll::Team& team) {
        if (team.rank() == root) return scatterv_from_root(team, a);
        return run_call<RecvBuffer>(comm, [&](RecvBuffer& b) {
          return scatterv_other(b, a, [&](auto... args) { team.scatterv(args...); });
        });
      },
      [&] {
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                             root, comm);
      });
}

extern "C" int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      "MPI_Iscatterv", Coll::kScatterv, comm, check_args(a), never_empty,
      [&](shmcoll::Team& team) {
        return start_collective<ScattervRootBuffers, RecvBuffer>(
            "MPI_Iscatterv", Coll::kScatterv, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.iscatterv(args...); },
            [&](ScattervRootBuffers& b, auto run) { return scatterv_root(b, team.size(), a, run); },
            [&](RecvBuffer& b, auto run) { return scatterv_other(b, a, run); });
      },
      [&] {
        return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                              root, comm, request);
      });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Scatterv_init)(const void* sendbuf, const int sendcounts[],
                                                 const int displs[], MPI_Datatype sendtype,
                                                 void* recvbuf, int recvcount,
                                                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                                                 MPI_Info info, MPI_Request* request) {
  using namespace shmcoll::mpi;
  constexpr const char* kFunction = SHMCOLL_PERSISTENT_NAME(Scatterv_init);
  const Args a{sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      kFunction, Coll::kScatterv, comm, check_args(a), never_empty,
      [&](shmcoll::Team& team) {
        const int ranks = team.size();
        return init_collective<ScattervRootBuffers, RecvBuffer>(
            kFunction, Coll::kScatterv, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.iscatterv(args...); },
            [=](ScattervRootBuffers& b, auto run) { return scatterv_root(b, ranks, a, run); },
            [=](RecvBuffer& b, auto run) { return scatterv_other(b, a, run); });
      },
      [&] {
        return SHMCOLL_PMPI_PERSISTENT(Scatterv_init)(sendbuf, sendcounts, displs, sendtype,
                                                      recvbuf, recvcount, recvtype, root, comm,
                                                      info, request);
      });
}
#endif
