// MPI_Scatter, MPI_Iscatter and MPI_Scatter_init through shmcoll. Root only: sendbuf, sendcount,
// sendtype. With MPI_IN_PLACE at the root, recvcount and recvtype are not looked at.
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
// Team::scatter's (or iscatter's) arguments.
template <class Run>
int scatter_root(SendRecvBuffers& b, int ranks, const Args& a, Run&& run) {
  // The root's buffer holds `ranks` blocks; packed, block r is the r-th run of bytes.
  const long long all = static_cast<long long>(a.sendcount) * ranks;
  if (int rc = b.send.init(a.sendbuf,
                           all > INT_MAX || a.sendcount < 0 ? a.sendcount : static_cast<int>(all),
                           a.sendtype, a.comm);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const Count per_rank = a.sendcount < 0 ? a.sendcount : b.send.count() / ranks;
  if (a.recvbuf == MPI_IN_PLACE) {
    run(b.send.data(), per_rank, b.send.element(), in_place, a.root);
    return MPI_SUCCESS;
  }
  if (int rc = b.recv.init(a.recvbuf, a.recvcount, a.recvtype); rc != MPI_SUCCESS) return rc;
  run(b.send.data(), per_rank, b.send.element(), b.recv.data(), b.recv.count(), b.recv.element(),
      a.root);
  return MPI_SUCCESS;
}
template <class Run>
int scatter_other(RecvBuffer& b, const Args& a, Run&& run) {
  if (int rc = b.recv.init(a.recvbuf, a.recvcount, a.recvtype); rc != MPI_SUCCESS) return rc;
  run(nullptr, Count{0}, kByte, b.recv.data(), b.recv.count(), b.recv.element(), a.root);
  return MPI_SUCCESS;
}

auto check_args(const Args& a) {
  return [&a](int rank, int size, LocalError& error) {
    return check_rooted(true, rank, size, a.sendbuf, a.sendcount, a.sendtype, a.recvbuf,
                        a.recvcount, a.recvtype, a.root, error);
  };
}
auto moves_nothing(const Args& a) {
  return [&a](int rank) { return uniform_moves_nothing(rank, a.root, a.sendcount, a.recvcount); };
}

}  // namespace
}  // namespace shmcoll::mpi

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      "MPI_Scatter", Coll::kScatter, comm, check_args(a), moves_nothing(a),
      [&](shmcoll::Team& team) {
        auto run = [&](auto... args) { team.scatter(args...); };
        if (team.rank() == root) {
          return run_call<SendRecvBuffers>(
              comm, [&](SendRecvBuffers& b) { return scatter_root(b, team.size(), a, run); });
        }
        return run_call<RecvBuffer>(comm, [&](RecvBuffer& b) { return scatter_other(b, a, run); });
      },
      [&] {
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

extern "C" int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request* request) {
  using namespace shmcoll::mpi;
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      "MPI_Iscatter", Coll::kScatter, comm, check_args(a), moves_nothing(a),
      [&](shmcoll::Team& team) {
        return start_collective<SendRecvBuffers, RecvBuffer>(
            "MPI_Iscatter", Coll::kScatter, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.iscatter(args...); },
            [&](SendRecvBuffers& b, auto run) { return scatter_root(b, team.size(), a, run); },
            [&](RecvBuffer& b, auto run) { return scatter_other(b, a, run); });
      },
      [&] {
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                             request);
      },
      [&] { return completed_request(request); });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Scatter_init)(const void* sendbuf, int sendcount,
                                                MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                                MPI_Info info, MPI_Request* request) {
  using namespace shmcoll::mpi;
  constexpr const char* kFunction = SHMCOLL_PERSISTENT_NAME(Scatter_init);
  const Args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm};
  return serve(
      kFunction, Coll::kScatter, comm, check_args(a), moves_nothing(a),
      [&](shmcoll::Team& team) {
        const int ranks = team.size();
        return init_collective<SendRecvBuffers, RecvBuffer>(
            kFunction, Coll::kScatter, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.iscatter(args...); },
            [=](SendRecvBuffers& b, auto run) { return scatter_root(b, ranks, a, run); },
            [=](RecvBuffer& b, auto run) { return scatter_other(b, a, run); });
      },
      [&] {
        return SHMCOLL_PMPI_PERSISTENT(Scatter_init)(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
      },
      [&] { return empty_persistent(kFunction, Coll::kScatter, comm, request); });
}
#endif
