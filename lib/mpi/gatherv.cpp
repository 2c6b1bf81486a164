// MPI_Gatherv, MPI_Igatherv and MPI_Gatherv_init through shmcoll. Root only: recvbuf, recvcounts,
// displs, recvtype.
#include "mpi/call_buffers.hpp"
#include "mpi/persistent.hpp"
#include "mpi/requests.hpp"
#include "mpi/serve.hpp"

namespace shmcoll::mpi {
namespace {

struct Args {
  const void* sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* displs;
  MPI_Datatype recvtype;
  int root;
  MPI_Comm comm;
};

// The root's and the others' parts: each converts the buffers and calls `run(...)` with
// Team::gatherv's (or igatherv's) arguments.
template <class Run>
int gatherv_root(GathervRootBuffers& b, int ranks, const Args& a, Run&& run) {
  if (int rc = b.blocks.init_recv(a.recvbuf, a.recvcounts, a.displs, a.recvtype, ranks);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (a.sendbuf == MPI_IN_PLACE) {
    if (int rc = b.blocks.preload(a.root, a.comm); rc != MPI_SUCCESS) return rc;
    run(in_place, b.blocks.data(), b.blocks.counts(), b.blocks.displs(), b.blocks.element(),
        a.root);
    return MPI_SUCCESS;
  }
  if (int rc = b.send.init(a.sendbuf, a.sendcount, a.sendtype, a.comm); rc != MPI_SUCCESS)
    return rc;
  run(b.send.data(), b.send.count(), b.send.element(), b.blocks.data(), b.blocks.counts(),
      b.blocks.displs(), b.blocks.element(), a.root);
  return MPI_SUCCESS;
}
template <class Run>
int gatherv_other(SendBuffer& b, const Args& a, Run&& run) {
  if (int rc = b.send.init(a.sendbuf, a.sendcount, a.sendtype, a.comm); rc != MPI_SUCCESS)
    return rc;
  run(b.send.data(), b.send.count(), b.send.element(), nullptr, std::span<const Count>{},
      std::span<const Count>{}, kByte, a.root);
  return MPI_SUCCESS;
}

// The blocking root's part, out of line: its views of the blocks (VBlocks) made the frame that
// every sender's call entered too, and a sender's call through the plugin spent 37
// instructions entering it.
[[gnu::noinline]] int gatherv_at_root(Team& team, const Args& a) {
  return run_call<GathervRootBuffers>(a.comm, [&](GathervRootBuffers& b) {
    return gatherv_root(b, team.size(), a, [&](auto... args) { team.gatherv(args...); });
  });
}

auto check_args(const Args& a) {
  return [&a](int rank, int size, LocalError& error) {
    return check_gatherv(rank, size, a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts,
                         a.recvtype, a.root, error);
  };
}

}  // namespace
}  // namespace shmcoll::mpi

extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm};
  return serve(
      "MPI_Gatherv", Coll::kGatherv, comm, check_args(a), never_empty,
      [&](shmcoll::Team& team) {
        if (team.rank() == root) return gatherv_at_root(team, a);
        return run_call<SendBuffer>(comm, [&](SendBuffer& b) {
          return gatherv_other(b, a, [&](auto... args) { team.gatherv(args...); });
        });
      },
      [&] {
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            root, comm);
      });
}

extern "C" int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm};
  return serve(
      "MPI_Igatherv", Coll::kGatherv, comm, check_args(a), never_empty,
      [&](shmcoll::Team& team) {
        return start_collective<GathervRootBuffers, SendBuffer>(
            "MPI_Igatherv", Coll::kGatherv, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.igatherv(args...); },
            [&](GathervRootBuffers& b, auto run) { return gatherv_root(b, team.size(), a, run); },
            [&](SendBuffer& b, auto run) { return gatherv_other(b, a, run); });
      },
      [&] {
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             root, comm, request);
      });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Gatherv_init)(const void* sendbuf, int sendcount,
                                                MPI_Datatype sendtype, void* recvbuf,
                                                const int recvcounts[], const int displs[],
                                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                                MPI_Info info, MPI_Request* request) {
  using namespace shmcoll::mpi;
  constexpr const char* kFunction = SHMCOLL_PERSISTENT_NAME(Gatherv_init);
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm};
  return serve(
      kFunction, Coll::kGatherv, comm, check_args(a), never_empty,
      [&](shmcoll::Team& team) {
        const int ranks = team.size();
        return init_collective<GathervRootBuffers, SendBuffer>(
            kFunction, Coll::kGatherv, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.igatherv(args...); },
            [=](GathervRootBuffers& b, auto run) { return gatherv_root(b, ranks, a, run); },
            [=](SendBuffer& b, auto run) { return gatherv_other(b, a, run); });
      },
      [&] {
        return SHMCOLL_PMPI_PERSISTENT(Gatherv_init)(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcounts, displs, recvtype, root, comm, info,
                                                     request);
      });
}
#endif
