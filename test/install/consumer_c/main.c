/* Started by shmcoll-run: every rank broadcasts, scatters (v) and gathers (v, in place at the
 * root) through the C API, blocking, non-blocking and persistent, and checks what arrived; then
 * a root out of range must come back as SHMCOLL_ERR_INVALID_ARGUMENT with a message. Exit 0
 * when all matched. */
#include <shmcoll/shmcoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char* what, int rank) {
  if (!ok) {
    fprintf(stderr, "consumer_c: rank %d: %s\n", rank, what);
    ++failures;
  }
}

int main(void) {
  shmcoll_team* team = NULL;
  if (shmcoll_team_create(&team) != SHMCOLL_OK) {
    fprintf(stderr, "consumer_c: %s\n", shmcoll_last_error());
    return 1;
  }
  const int rank = shmcoll_team_rank(team), size = shmcoll_team_size(team);
  int64_t counts[64], displs[64];
  int all[64], mine = -1, value = rank == 0 ? 42 : 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = 1;
    displs[r] = r;
    all[r] = rank == 0 ? 100 + r : -1;
  }
  check(shmcoll_bcast(team, &value, 1, SHMCOLL_INT32, 0) == SHMCOLL_OK && value == 42, "bcast",
        rank);
  check(shmcoll_scatterv(team, all, counts, displs, SHMCOLL_INT32, &mine, 1, SHMCOLL_INT32, 0) ==
                SHMCOLL_OK &&
            mine == 100 + rank,
        "scatterv", rank);
  mine = 200 + rank;
  if (rank == 0) all[0] = mine;
  check(shmcoll_gatherv(team, rank == 0 ? SHMCOLL_IN_PLACE : &mine, 1, SHMCOLL_INT32, all, counts,
                        displs, SHMCOLL_INT32, 0) == SHMCOLL_OK,
        "gatherv in place", rank);
  for (int r = 0; rank == 0 && r < size; ++r) check(all[r] == 200 + r, "gathered block", rank);
  shmcoll_request* request = NULL;
  value = rank == 1 ? 7 : 0;
  check(shmcoll_ibcast(team, &value, 1, SHMCOLL_INT32, 1, &request) == SHMCOLL_OK, "ibcast", rank);
  check(shmcoll_wait(request) == SHMCOLL_OK && value == 7, "wait", rank);
  /* A persistent gather, started three times with new data. */
  shmcoll_persistent* gathering = NULL;
  check(shmcoll_gather_init(team, &mine, 1, SHMCOLL_INT32, all, 1, SHMCOLL_INT32, 0, &gathering) ==
            SHMCOLL_OK,
        "gather_init", rank);
  for (int round = 1; round <= 3; ++round) {
    mine = round * 1000 + rank;
    check(shmcoll_start(gathering) == SHMCOLL_OK, "start", rank);
    check(shmcoll_persistent_wait(gathering) == SHMCOLL_OK, "persistent wait", rank);
    for (int r = 0; rank == 0 && r < size; ++r)
      check(all[r] == round * 1000 + r, "a persistent start's gathered block", rank);
  }
  check(shmcoll_persistent_free(gathering) == SHMCOLL_OK, "persistent free", rank);
  /* Every rank past the calls above before one fails: a failure ends the team for all. */
  check(shmcoll_barrier(team) == SHMCOLL_OK, "barrier", rank);
  check(shmcoll_gather(team, &value, 1, SHMCOLL_INT32, all, 1, SHMCOLL_INT32, size) ==
                SHMCOLL_ERR_INVALID_ARGUMENT &&
            strstr(shmcoll_last_error(), "root") != NULL,
        "a root out of range is an invalid argument that says so", rank);
  shmcoll_team_free(team);
  if (rank == 0) printf("consumer_c: %d ranks, %s\n", size, failures == 0 ? "ok" : "wrong");
  return failures == 0 ? 0 : 1;
}
