// MPI_Bcast, MPI_Ibcast and MPI_Bcast_init through shmcoll.
#include "mpi/call_buffers.hpp"
#include "mpi/persistent.hpp"
#include "mpi/requests.hpp"
#include "mpi/serve.hpp"

namespace shmcoll::mpi {
namespace {

// The root's and the others' parts: each converts the buffer and calls `run(buffer, count,
// element, root)`, which is Team::bcast or Team::ibcast.
template <class Run>
int bcast_root(SendBuffer& b, void* buffer, int count, MPI_Datatype datatype, int root,
               MPI_Comm comm, Run&& run) {
  if (int rc = b.send.init(buffer, count, datatype, comm); rc != MPI_SUCCESS) return rc;
  run(const_cast<void*>(b.send.data()), b.send.count(), b.send.element(), root);
  return MPI_SUCCESS;
}
template <class Run>
int bcast_other(RecvBuffer& b, void* buffer, int count, MPI_Datatype datatype, int root,
                Run&& run) {
  if (int rc = b.recv.init(buffer, count, datatype); rc != MPI_SUCCESS) return rc;
  run(b.recv.data(), b.recv.count(), b.recv.element(), root);
  return MPI_SUCCESS;
}

auto check_args(void* buffer, int count, MPI_Datatype datatype, int root) {
  return [=](int rank, int size, LocalError& error) {
    return check_bcast(rank, size, buffer, count, datatype, root, error);
  };
}

}  // namespace
}  // namespace shmcoll::mpi

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  using namespace shmcoll::mpi;
  return serve(
      "MPI_Bcast", Coll::kBcast, comm, check_args(buffer, count, datatype, root),
      [&](int) { return count == 0; },
      [&](shmcoll::Team& team) {
        auto run = [&](auto... args) { team.bcast(args...); };
        if (team.rank() == root) {
          return run_call<SendBuffer>(comm, [&](SendBuffer& b) {
            return bcast_root(b, buffer, count, datatype, root, comm, run);
          });
        }
        return run_call<RecvBuffer>(comm, [&](RecvBuffer& b) {
          return bcast_other(b, buffer, count, datatype, root, run);
        });
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

extern "C" int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          MPI_Request* request) {
  using namespace shmcoll::mpi;
  return serve(
      "MPI_Ibcast", Coll::kBcast, comm, check_args(buffer, count, datatype, root),
      [&](int) { return count == 0; },
      [&](shmcoll::Team& team) {
        return start_collective<SendBuffer, RecvBuffer>(
            "MPI_Ibcast", Coll::kBcast, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.ibcast(args...); },
            [&](SendBuffer& b, auto run) {
              return bcast_root(b, buffer, count, datatype, root, comm, run);
            },
            [&](RecvBuffer& b, auto run) {
              return bcast_other(b, buffer, count, datatype, root, run);
            });
      },
      [&] { return PMPI_Ibcast(buffer, count, datatype, root, comm, request); },
      [&] { return completed_request(request); });
}

#if defined(SHMCOLL_PERSISTENT)
extern "C" int SHMCOLL_PERSISTENT(Bcast_init)(void* buffer, int count, MPI_Datatype datatype,
                                              int root, MPI_Comm comm, MPI_Info info,
                                              MPI_Request* request) {
  using namespace shmcoll::mpi;
  constexpr const char* kFunction = SHMCOLL_PERSISTENT_NAME(Bcast_init);
  return serve(
      kFunction, Coll::kBcast, comm, check_args(buffer, count, datatype, root),
      [&](int) { return count == 0; },
      [&](shmcoll::Team& team) {
        return init_collective<SendBuffer, RecvBuffer>(
            kFunction, Coll::kBcast, comm, request, team, root,
            [](shmcoll::Team& t, auto... args) { return t.ibcast(args...); },
            [=](SendBuffer& b, auto run) {
              return bcast_root(b, buffer, count, datatype, root, comm, run);
            },
            [=](RecvBuffer& b, auto run) {
              return bcast_other(b, buffer, count, datatype, root, run);
            });
      },
      [&] {
        return SHMCOLL_PMPI_PERSISTENT(Bcast_init)(buffer, count, datatype, root, comm, info,
                                                   request);
      },
      [&] { return empty_persistent(kFunction, Coll::kBcast, comm, request); });
}
#endif
