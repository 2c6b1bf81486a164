/* The C API of shmcoll: a team of the ranks a launcher started (shmcoll-run), and its five
 * collectives, blocking and non-blocking, with MPI's semantics and argument order (see the
 * C++ API, shmcoll/team.hpp, which this calls).
 *
 * Every function that can fail returns a shmcoll_status; SHMCOLL_OK is 0. After a failure,
 * shmcoll_last_error() gives the message (it names the argument, the rank and the values), for
 * the calling thread, until its next failing call. As in the C++ API, an error that involves
 * other ranks is raised on every rank, and a team whose call failed stays failed: later calls
 * return the same status. Link with -lshmcoll (pkg-config shmcoll-c). */
#ifndef SHMCOLL_SHMCOLL_H
#define SHMCOLL_SHMCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMCOLL_C_API __attribute__((visibility("default")))

typedef enum shmcoll_status {
  SHMCOLL_OK = 0,
  SHMCOLL_ERR_INVALID_ARGUMENT = 1, /* bad input on this rank, or ranks that disagree */
  SHMCOLL_ERR_PEER_FAILED = 2,      /* a peer process died */
  SHMCOLL_ERR_TIMEOUT = 3,          /* a peer made no progress within SHMCOLL_TIMEOUT */
  SHMCOLL_ERR_SEGMENT = 4,          /* the shared segment could not be created or attached */
  SHMCOLL_ERR_BOOTSTRAP = 5,        /* not started by shmcoll-run, or its exchange failed */
  SHMCOLL_ERR_INTERNAL = 6          /* a broken invariant, or no memory */
} shmcoll_status;

/* Elements of `size` bytes; the name appears in error messages and must outlive the calls. */
typedef struct shmcoll_datatype {
  size_t size;
  const char* name;
} shmcoll_datatype;

#define SHMCOLL_BYTE ((shmcoll_datatype){1, "byte"})
#define SHMCOLL_CHAR ((shmcoll_datatype){1, "char"})
#define SHMCOLL_INT16 ((shmcoll_datatype){2, "int16"})
#define SHMCOLL_INT32 ((shmcoll_datatype){4, "int32"})
#define SHMCOLL_INT64 ((shmcoll_datatype){8, "int64"})
#define SHMCOLL_FLOAT ((shmcoll_datatype){4, "float"})
#define SHMCOLL_DOUBLE ((shmcoll_datatype){8, "double"})

/* MPI_IN_PLACE: at the root, as gather(v)'s sendbuf or scatter(v)'s recvbuf. */
#define SHMCOLL_IN_PLACE ((void*)1)

typedef struct shmcoll_team shmcoll_team;
typedef struct shmcoll_request shmcoll_request;
typedef struct shmcoll_persistent shmcoll_persistent;

/* Collective over the job: every rank that shmcoll-run started calls it. The configuration
 * comes from the environment (SHMCOLL_*, see shmcoll-info). */
SHMCOLL_C_API shmcoll_status shmcoll_team_create(shmcoll_team** team);
/* Collective too: the ranks leave the team; a rank that ran another number of collectives
 * than the others is reported (SHMCOLL_ERR_INVALID_ARGUMENT). The team is freed either way. */
SHMCOLL_C_API shmcoll_status shmcoll_team_free(shmcoll_team* team);
SHMCOLL_C_API int shmcoll_team_rank(const shmcoll_team* team);
SHMCOLL_C_API int shmcoll_team_size(const shmcoll_team* team);

/* Returns once every rank has called it. */
SHMCOLL_C_API shmcoll_status shmcoll_barrier(shmcoll_team* team);

/* Counts and displacements in elements of their datatype; sendcounts, displs (scatterv) and
 * recvcounts, displs (gatherv) hold one entry per rank and are read at the root only. */
SHMCOLL_C_API shmcoll_status shmcoll_bcast(shmcoll_team* team, void* buffer, int64_t count,
                                           shmcoll_datatype type, int root);
SHMCOLL_C_API shmcoll_status shmcoll_scatter(shmcoll_team* team, const void* sendbuf,
                                             int64_t sendcount, shmcoll_datatype sendtype,
                                             void* recvbuf, int64_t recvcount,
                                             shmcoll_datatype recvtype, int root);
SHMCOLL_C_API shmcoll_status shmcoll_scatterv(shmcoll_team* team, const void* sendbuf,
                                              const int64_t* sendcounts, const int64_t* displs,
                                              shmcoll_datatype sendtype, void* recvbuf,
                                              int64_t recvcount, shmcoll_datatype recvtype,
                                              int root);
SHMCOLL_C_API shmcoll_status shmcoll_gather(shmcoll_team* team, const void* sendbuf,
                                            int64_t sendcount, shmcoll_datatype sendtype,
                                            void* recvbuf, int64_t recvcount,
                                            shmcoll_datatype recvtype, int root);
SHMCOLL_C_API shmcoll_status shmcoll_gatherv(shmcoll_team* team, const void* sendbuf,
                                             int64_t sendcount, shmcoll_datatype sendtype,
                                             void* recvbuf, const int64_t* recvcounts,
                                             const int64_t* displs, shmcoll_datatype recvtype,
                                             int root);

/* Non-blocking forms: the same arguments, and *request to complete with shmcoll_wait or
 * shmcoll_test; the buffers must stay untouched until then (counts and displacements may be
 * reused at once). */
SHMCOLL_C_API shmcoll_status shmcoll_ibcast(shmcoll_team* team, void* buffer, int64_t count,
                                            shmcoll_datatype type, int root,
                                            shmcoll_request** request);
SHMCOLL_C_API shmcoll_status shmcoll_iscatter(shmcoll_team* team, const void* sendbuf,
                                              int64_t sendcount, shmcoll_datatype sendtype,
                                              void* recvbuf, int64_t recvcount,
                                              shmcoll_datatype recvtype, int root,
                                              shmcoll_request** request);
SHMCOLL_C_API shmcoll_status shmcoll_iscatterv(shmcoll_team* team, const void* sendbuf,
                                               const int64_t* sendcounts, const int64_t* displs,
                                               shmcoll_datatype sendtype, void* recvbuf,
                                               int64_t recvcount, shmcoll_datatype recvtype,
                                               int root, shmcoll_request** request);
SHMCOLL_C_API shmcoll_status shmcoll_igather(shmcoll_team* team, const void* sendbuf,
                                             int64_t sendcount, shmcoll_datatype sendtype,
                                             void* recvbuf, int64_t recvcount,
                                             shmcoll_datatype recvtype, int root,
                                             shmcoll_request** request);
SHMCOLL_C_API shmcoll_status shmcoll_igatherv(shmcoll_team* team, const void* sendbuf,
                                              int64_t sendcount, shmcoll_datatype sendtype,
                                              void* recvbuf, const int64_t* recvcounts,
                                              const int64_t* displs, shmcoll_datatype recvtype,
                                              int root, shmcoll_request** request);
/* Until the operation is complete; frees the request. */
SHMCOLL_C_API shmcoll_status shmcoll_wait(shmcoll_request* request);
/* Progress without waiting: *done becomes 1 once complete (or failed), and the request is then
 * freed. */
SHMCOLL_C_API shmcoll_status shmcoll_test(shmcoll_request* request, int* done);

/* Persistent forms (MPI_Bcast_init, ...): the same arguments; *request is started with
 * shmcoll_start as often as needed, every rank where it would call the collective, each start
 * completed with shmcoll_persistent_wait or shmcoll_persistent_test before the next. The
 * buffers must stay valid until shmcoll_persistent_free (counts and displacements are copied);
 * errors come as the non-blocking calls' do. */
SHMCOLL_C_API shmcoll_status shmcoll_bcast_init(shmcoll_team* team, void* buffer, int64_t count,
                                                shmcoll_datatype type, int root,
                                                shmcoll_persistent** request);
SHMCOLL_C_API shmcoll_status shmcoll_scatter_init(shmcoll_team* team, const void* sendbuf,
                                                  int64_t sendcount, shmcoll_datatype sendtype,
                                                  void* recvbuf, int64_t recvcount,
                                                  shmcoll_datatype recvtype, int root,
                                                  shmcoll_persistent** request);
SHMCOLL_C_API shmcoll_status shmcoll_scatterv_init(shmcoll_team* team, const void* sendbuf,
                                                   const int64_t* sendcounts, const int64_t* displs,
                                                   shmcoll_datatype sendtype, void* recvbuf,
                                                   int64_t recvcount, shmcoll_datatype recvtype,
                                                   int root, shmcoll_persistent** request);
SHMCOLL_C_API shmcoll_status shmcoll_gather_init(shmcoll_team* team, const void* sendbuf,
                                                 int64_t sendcount, shmcoll_datatype sendtype,
                                                 void* recvbuf, int64_t recvcount,
                                                 shmcoll_datatype recvtype, int root,
                                                 shmcoll_persistent** request);
SHMCOLL_C_API shmcoll_status shmcoll_gatherv_init(shmcoll_team* team, const void* sendbuf,
                                                  int64_t sendcount, shmcoll_datatype sendtype,
                                                  void* recvbuf, const int64_t* recvcounts,
                                                  const int64_t* displs, shmcoll_datatype recvtype,
                                                  int root, shmcoll_persistent** request);
/* SHMCOLL_ERR_INVALID_ARGUMENT if the last start is not complete yet. */
SHMCOLL_C_API shmcoll_status shmcoll_start(shmcoll_persistent* request);
/* Until the last start is complete (at once for a request not started). */
SHMCOLL_C_API shmcoll_status shmcoll_persistent_wait(shmcoll_persistent* request);
/* Progress without waiting: *done becomes 1 once the last start is complete (or failed). */
SHMCOLL_C_API shmcoll_status shmcoll_persistent_test(shmcoll_persistent* request, int* done);
/* Waits for a start not yet complete, then frees the request. */
SHMCOLL_C_API shmcoll_status shmcoll_persistent_free(shmcoll_persistent* request);

/* The message of this thread's last failure ("" if none). */
SHMCOLL_C_API const char* shmcoll_last_error(void);
/* "ok", "invalid argument", ... */
SHMCOLL_C_API const char* shmcoll_status_name(shmcoll_status status);

#ifdef __cplusplus
}
#endif

#endif /* SHMCOLL_SHMCOLL_H */
