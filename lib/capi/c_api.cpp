// The C API (include/shmcoll/shmcoll.h) over the C++ one: each function catches what the C++
// call throws, keeps its message for shmcoll_last_error, and returns its status. Nothing may
// throw across the extern "C" boundary.
#include <memory>
#include <new>
#include <span>
#include <string>

#include "shmcoll/shmcoll.h"
#include "shmcoll/shmcoll.hpp"

struct shmcoll_team {
  std::unique_ptr<shmcoll::SocketBootstrap> bootstrap;  // outlives the team formed over it
  std::unique_ptr<shmcoll::Team> team;
};

struct shmcoll_request {
  shmcoll::Request request;
};

struct shmcoll_persistent {
  shmcoll::PersistentRequest request;
};

namespace {

thread_local std::string t_last_error;

shmcoll_status status_of(shmcoll::Status status) { return static_cast<shmcoll_status>(status); }

// Runs `call`, turning what it throws into a status (and the thread's last error).
template <class Call>
shmcoll_status guarded(Call&& call) noexcept {
  try {
    call();
    return SHMCOLL_OK;
  } catch (const shmcoll::Error& e) {
    t_last_error = e.what();
    return status_of(e.status());
  } catch (const std::bad_alloc&) {
    t_last_error = "out of memory";
  } catch (const std::exception& e) {
    t_last_error = e.what();
  } catch (...) {
    t_last_error = "unknown failure";
  }
  return SHMCOLL_ERR_INTERNAL;
}

shmcoll::Datatype type_of(shmcoll_datatype t) { return {t.size, t.name}; }

bool in_place(const void* p) { return p == SHMCOLL_IN_PLACE; }

// A root-only array of one entry per rank; empty where this rank is not the root or passed none.
std::span<const shmcoll::Count> per_rank(const shmcoll_team* t, const int64_t* values, int root) {
  if (values == nullptr || t->team->rank() != root) return {};
  return {values, static_cast<std::size_t>(t->team->size())};
}

shmcoll_status no_team() {
  t_last_error = "the team is NULL";
  return SHMCOLL_ERR_INVALID_ARGUMENT;
}

// Hands back in `*handle` a new Handle holding what `make` returns: a non-blocking call's
// request, or a persistent request.
template <class Handle, class Make>
shmcoll_status hand_back(Handle** handle, Make&& make) noexcept {
  if (handle == nullptr) {
    t_last_error = "the request pointer is NULL";
    return SHMCOLL_ERR_INVALID_ARGUMENT;
  }
  *handle = nullptr;
  return guarded([&] { *handle = new Handle{make()}; });
}

shmcoll_status no_request() {
  t_last_error = "the persistent request is NULL";
  return SHMCOLL_ERR_INVALID_ARGUMENT;
}

}  // namespace

extern "C" {

shmcoll_status shmcoll_team_create(shmcoll_team** team) {
  if (team == nullptr) return no_team();
  *team = nullptr;
  return guarded([&] {
    auto made = std::make_unique<shmcoll_team>();
    made->bootstrap = shmcoll::SocketBootstrap::from_environment();
    made->team = std::make_unique<shmcoll::Team>(*made->bootstrap);
    *team = made.release();
  });
}

shmcoll_status shmcoll_team_free(shmcoll_team* team) {
  if (team == nullptr) return SHMCOLL_OK;
  const shmcoll_status status = guarded([&] { team->team->leave(); });
  delete team;
  return status;
}

int shmcoll_team_rank(const shmcoll_team* team) {
  return team != nullptr ? team->team->rank() : -1;
}
int shmcoll_team_size(const shmcoll_team* team) {
  return team != nullptr ? team->team->size() : -1;
}

shmcoll_status shmcoll_barrier(shmcoll_team* team) {
  if (team == nullptr) return no_team();
  return guarded([&] { team->team->barrier(); });
}

shmcoll_status shmcoll_bcast(shmcoll_team* team, void* buffer, int64_t count, shmcoll_datatype type,
                             int root) {
  if (team == nullptr) return no_team();
  return guarded([&] { team->team->bcast(buffer, count, type_of(type), root); });
}

shmcoll_status shmcoll_scatter(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                               shmcoll_datatype sendtype, void* recvbuf, int64_t recvcount,
                               shmcoll_datatype recvtype, int root) {
  if (team == nullptr) return no_team();
  return guarded([&] {
    if (in_place(recvbuf))
      team->team->scatter(sendbuf, sendcount, type_of(sendtype), shmcoll::in_place, root);
    else
      team->team->scatter(sendbuf, sendcount, type_of(sendtype), recvbuf, recvcount,
                          type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_scatterv(shmcoll_team* team, const void* sendbuf, const int64_t* sendcounts,
                                const int64_t* displs, shmcoll_datatype sendtype, void* recvbuf,
                                int64_t recvcount, shmcoll_datatype recvtype, int root) {
  if (team == nullptr) return no_team();
  return guarded([&] {
    const auto counts = per_rank(team, sendcounts, root), places = per_rank(team, displs, root);
    if (in_place(recvbuf))
      team->team->scatterv(sendbuf, counts, places, type_of(sendtype), shmcoll::in_place, root);
    else
      team->team->scatterv(sendbuf, counts, places, type_of(sendtype), recvbuf, recvcount,
                           type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_gather(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                              shmcoll_datatype sendtype, void* recvbuf, int64_t recvcount,
                              shmcoll_datatype recvtype, int root) {
  if (team == nullptr) return no_team();
  return guarded([&] {
    if (in_place(sendbuf))
      team->team->gather(shmcoll::in_place, recvbuf, recvcount, type_of(recvtype), root);
    else
      team->team->gather(sendbuf, sendcount, type_of(sendtype), recvbuf, recvcount,
                         type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_gatherv(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                               shmcoll_datatype sendtype, void* recvbuf, const int64_t* recvcounts,
                               const int64_t* displs, shmcoll_datatype recvtype, int root) {
  if (team == nullptr) return no_team();
  return guarded([&] {
    const auto counts = per_rank(team, recvcounts, root), places = per_rank(team, displs, root);
    if (in_place(sendbuf))
      team->team->gatherv(shmcoll::in_place, recvbuf, counts, places, type_of(recvtype), root);
    else
      team->team->gatherv(sendbuf, sendcount, type_of(sendtype), recvbuf, counts, places,
                          type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_ibcast(shmcoll_team* team, void* buffer, int64_t count,
                              shmcoll_datatype type, int root, shmcoll_request** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] { return team->team->ibcast(buffer, count, type_of(type), root); });
}

shmcoll_status shmcoll_iscatter(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                                shmcoll_datatype sendtype, void* recvbuf, int64_t recvcount,
                                shmcoll_datatype recvtype, int root, shmcoll_request** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    if (in_place(recvbuf))
      return team->team->iscatter(sendbuf, sendcount, type_of(sendtype), shmcoll::in_place, root);
    return team->team->iscatter(sendbuf, sendcount, type_of(sendtype), recvbuf, recvcount,
                                type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_iscatterv(shmcoll_team* team, const void* sendbuf, const int64_t* sendcounts,
                                 const int64_t* displs, shmcoll_datatype sendtype, void* recvbuf,
                                 int64_t recvcount, shmcoll_datatype recvtype, int root,
                                 shmcoll_request** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    const auto counts = per_rank(team, sendcounts, root), places = per_rank(team, displs, root);
    if (in_place(recvbuf))
      return team->team->iscatterv(sendbuf, counts, places, type_of(sendtype), shmcoll::in_place,
                                   root);
    return team->team->iscatterv(sendbuf, counts, places, type_of(sendtype), recvbuf, recvcount,
                                 type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_igather(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                               shmcoll_datatype sendtype, void* recvbuf, int64_t recvcount,
                               shmcoll_datatype recvtype, int root, shmcoll_request** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    if (in_place(sendbuf))
      return team->team->igather(shmcoll::in_place, recvbuf, recvcount, type_of(recvtype), root);
    return team->team->igather(sendbuf, sendcount, type_of(sendtype), recvbuf, recvcount,
                               type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_igatherv(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                                shmcoll_datatype sendtype, void* recvbuf, const int64_t* recvcounts,
                                const int64_t* displs, shmcoll_datatype recvtype, int root,
                                shmcoll_request** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    const auto counts = per_rank(team, recvcounts, root), places = per_rank(team, displs, root);
    if (in_place(sendbuf))
      return team->team->igatherv(shmcoll::in_place, recvbuf, counts, places, type_of(recvtype),
                                  root);
    return team->team->igatherv(sendbuf, sendcount, type_of(sendtype), recvbuf, counts, places,
                                type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_wait(shmcoll_request* request) {
  if (request == nullptr) return SHMCOLL_OK;
  const shmcoll_status status = guarded([&] { request->request.wait(); });
  delete request;
  return status;
}

shmcoll_status shmcoll_test(shmcoll_request* request, int* done) {
  if (done == nullptr) {
    t_last_error = "done is NULL";
    return SHMCOLL_ERR_INVALID_ARGUMENT;
  }
  *done = 1;
  if (request == nullptr) return SHMCOLL_OK;
  bool complete = false;
  const shmcoll_status status = guarded([&] { complete = request->request.test(); });
  if (status != SHMCOLL_OK || complete) {
    delete request;
    return status;
  }
  *done = 0;
  return SHMCOLL_OK;
}

shmcoll_status shmcoll_bcast_init(shmcoll_team* team, void* buffer, int64_t count,
                                  shmcoll_datatype type, int root, shmcoll_persistent** request) {
  if (team == nullptr) return no_team();
  return hand_back(request,
                   [&] { return team->team->bcast_init(buffer, count, type_of(type), root); });
}

shmcoll_status shmcoll_scatter_init(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                                    shmcoll_datatype sendtype, void* recvbuf, int64_t recvcount,
                                    shmcoll_datatype recvtype, int root,
                                    shmcoll_persistent** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    if (in_place(recvbuf))
      return team->team->scatter_init(sendbuf, sendcount, type_of(sendtype), shmcoll::in_place,
                                      root);
    return team->team->scatter_init(sendbuf, sendcount, type_of(sendtype), recvbuf, recvcount,
                                    type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_scatterv_init(shmcoll_team* team, const void* sendbuf,
                                     const int64_t* sendcounts, const int64_t* displs,
                                     shmcoll_datatype sendtype, void* recvbuf, int64_t recvcount,
                                     shmcoll_datatype recvtype, int root,
                                     shmcoll_persistent** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    const auto counts = per_rank(team, sendcounts, root), places = per_rank(team, displs, root);
    if (in_place(recvbuf))
      return team->team->scatterv_init(sendbuf, counts, places, type_of(sendtype),
                                       shmcoll::in_place, root);
    return team->team->scatterv_init(sendbuf, counts, places, type_of(sendtype), recvbuf, recvcount,
                                     type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_gather_init(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                                   shmcoll_datatype sendtype, void* recvbuf, int64_t recvcount,
                                   shmcoll_datatype recvtype, int root,
                                   shmcoll_persistent** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    if (in_place(sendbuf))
      return team->team->gather_init(shmcoll::in_place, recvbuf, recvcount, type_of(recvtype),
                                     root);
    return team->team->gather_init(sendbuf, sendcount, type_of(sendtype), recvbuf, recvcount,
                                   type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_gatherv_init(shmcoll_team* team, const void* sendbuf, int64_t sendcount,
                                    shmcoll_datatype sendtype, void* recvbuf,
                                    const int64_t* recvcounts, const int64_t* displs,
                                    shmcoll_datatype recvtype, int root,
                                    shmcoll_persistent** request) {
  if (team == nullptr) return no_team();
  return hand_back(request, [&] {
    const auto counts = per_rank(team, recvcounts, root), places = per_rank(team, displs, root);
    if (in_place(sendbuf))
      return team->team->gatherv_init(shmcoll::in_place, recvbuf, counts, places, type_of(recvtype),
                                      root);
    return team->team->gatherv_init(sendbuf, sendcount, type_of(sendtype), recvbuf, counts, places,
                                    type_of(recvtype), root);
  });
}

shmcoll_status shmcoll_start(shmcoll_persistent* request) {
  if (request == nullptr) return no_request();
  return guarded([&] { request->request.start(); });
}

shmcoll_status shmcoll_persistent_wait(shmcoll_persistent* request) {
  if (request == nullptr) return no_request();
  return guarded([&] { request->request.wait(); });
}

shmcoll_status shmcoll_persistent_test(shmcoll_persistent* request, int* done) {
  if (done == nullptr) {
    t_last_error = "done is NULL";
    return SHMCOLL_ERR_INVALID_ARGUMENT;
  }
  *done = 1;
  if (request == nullptr) return no_request();
  bool complete = false;
  const shmcoll_status status = guarded([&] { complete = request->request.test(); });
  if (status == SHMCOLL_OK && !complete) *done = 0;
  return status;
}

shmcoll_status shmcoll_persistent_free(shmcoll_persistent* request) {
  delete request;  // waits for a start not yet complete (PersistentRequest's destructor)
  return SHMCOLL_OK;
}

const char* shmcoll_last_error(void) { return t_last_error.c_str(); }

const char* shmcoll_status_name(shmcoll_status status) {
  return shmcoll::status_name(static_cast<shmcoll::Status>(status));
}

}  // extern "C"
