// MPI_Gather, MPI_Igather and MPI_Gather_init through shmcoll. Root only: recvbuf, recvcount,
// recvtype. With MPI_IN_PLACE at the root, sendcount and sendtype are not looked at.
#include <climits>

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
  int recvcount;
  MPI_Datatype recvtype;
  int root;
  MPI_Comm comm;
};

// The root's and the others' parts: each converts the buffers and calls `run(...)` with
// Team::gather's (or igather's) arguments.
template <class Run>
int gather_root(SendRecvBuffers& b, int ranks, const Args& a, Run&& run) {
  const long long all = static_cast<long long>(a.recvcount) * ranks;
  if (int rc = b.recv.init(a.recvbuf,
                           all > INT_MAX || a.recvcount < 0 ? a.recvcount : static_cast<int>(all),
                           a.recvtype);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const Count per_rank = a.recvcount < 0 ? a.recvcount : b.recv.count() / ranks;
  if (a.sendbuf == MPI_IN_PLACE) {
    // A packed receive buffer must carry the root's block too, or unpacking would overwrite it
    // with nothing.
    if (int rc = b.recv.preload(a.root * a.recvcount, a.recvcount, a.comm); rc != MPI_SUCCESS)
      return rc;
    run(in_place, b.recv.data(), per_rank, b.recv.element(), a.root);
    return MPI_SUCCESS;
  }
  if (int rc = b.send.init(a.sendbuf, a.sendcount, a.sendtype, a.comm); rc != MPI_SUCCESS)
    return rc;
  run(b.send.data(), b.send.count(), b.send.element(), b.recv.data(), per_rank, b.recv.element(),
      a.root);
  return MPI_SUCCESS;
}
template <class Run>
int gather_other(SendBuffer& b, const Args& a, Run&& run) {
  if (int rc = b.send.init(a.sendbuf, a.sendcount, a.sendtype, a.comm); rc != MPI_SUCCESS)
    return rc;
  run(b.send.data(), b.send.count(), b.send.element(), nullptr, Count{0}, kByte, a.root);
  return MPI_SUCCESS;
}

auto check_args(const Args& a) {
  return [&a](int rank, int size, LocalError& error) {
    return check_rooted(false, rank, size, a.sendbuf, a.sendcount, a.sendtype, a.recvbuf,
                        a.recvcount, a.recvtype, a.root, error);
  };
}
auto moves_nothing(const Args& a) {
  return [&a](int rank) { return uniform_moves_nothing(rank, a.root, a.recvcount, a.sendcount); };
}

}  // namespace
}  // namespace shmcoll::mpi

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      "MPI_Gather", Coll::kGather, comm, check_args(a), moves_nothing(a),
      [&](shmcoll::Team& team) {
        auto run = [&](auto... args) { team.gather(args...); };
        if (team.rank() == root) {
          return run_call<SendRecvBuffers>(
              comm, [&](SendRecvBuffers& b) { return gather_root(b, team.size(), a, run); });
        }
        return run_call<SendBuffer>(comm, [&](SendBuffer& b) { return gather_other(b, a, run); });
      },
      [&] {
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

extern "C" int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      "MPI_Igather", Coll::kGather, comm, check_args(a), moves_nothing(a),
      [&](shmcoll::Team& team) {
        return start_collective<SendRecvBuffers, SendBuffer>(
            "MPI_Igather", Coll::kGather, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.igather(args...); },
            [&](SendRecvBuffers& b, auto run) { return gather_root(b, team.size(), a, run); },
            [&](SendBuffer& b, auto run) { return gather_other(b, a, run); });
      },
      [&] {
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                            request);
      },
      [&] { return completed_request(request); });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Gather_init)(const void* sendbuf, int sendcount,
                                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                                               MPI_Info info, MPI_Request* request) {
  using namespace shmcoll::mpi;
  constexpr const char* kFunction = SHMCOLL_PERSISTENT_NAME(Gather_init);
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      kFunction, Coll::kGather, comm, check_args(a), moves_nothing(a),
      [&](shmcoll::Team& team) {
        const int ranks = team.size();
        return init_collective<SendRecvBuffers, SendBuffer>(
            kFunction, Coll::kGather, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.igather(args...); },
            [=](SendRecvBuffers& b, auto run) { return gather_root(b, ranks, a, run); },
            [=](SendBuffer& b, auto run) { return gather_other(b, a, run); });
      },
      [&] {
        return SHMCOLL_PMPI_PERSISTENT(Gather_init)(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, root, comm, info, request);
      },
      [&] { return empty_persistent(kFunction, Coll::kGather, comm, request); });
}
#endif
