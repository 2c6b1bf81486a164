// MPI plugin behaviour under mpirun (the plugin linked in):
//   errors-return     MPI_ERRORS_RETURN: a root mismatch, and a gatherv count mismatch among
//                     counts that differ from rank to rank, return an MPI error code on every rank,
//                     and the communicator works again afterwards
//   error-classes     MPI_ERRORS_RETURN: each argument error gets the class the MPI alone gives
//                     it (count, root, datatype, buffer, truncation), MPI_Error_string gives
//                     shmcoll's message, aliased buffers are reported, a locally wrong call
//                     returns before the communicator's first collective, and zero-size
//                     datatypes move nothing without an error
//   skipped-collective  4 ranks, deferred checks: rank 3 skips a broadcast; the others report it
//                     when the communicator is freed
//   empty-calls       broadcast, scatter and gather with count 0 return at once, without the
//                     others, and so do scatterv and gatherv with every block empty under
//                     deferred checks (SHMCOLL_CHECKS=deferred); a root whose count was 0
//                     while the others' was not is reported to them when it frees the
//                     communicator
//   errors-across-nodes  4 ranks on 2 nodes (SHMCOLL_MPI_FAKE_NODES=2): a scatterv whose root
//                     sends a node more than its ranks' counts take fails on that node's ranks,
//                     a gatherv whose node sends the root more than its counts take fails at
//                     the root; a scatter its root rejects and a gather another node's rank
//                     rejects fail on the nodes concerned; nobody waits, and the communicator
//                     works again afterwards
//   nonblocking-errors-across-nodes  the same through the non-blocking forms and MPI_Wait, and a
//                     broadcast started behind a failing scatterv delivers its data
//   large-bcast       broadcasts large enough to be cut into segments across nodes, from every
//                     root, blocking and non-blocking, of a size no segment divides, and with a
//                     strided datatype at the root
//   errors-fatal      MPI_ERRORS_ARE_FATAL (the default): a root mismatch aborts with a message
//   dup-loop N        N cycles of MPI_Comm_dup / MPI_Bcast / MPI_Comm_free leak no memory, no file
//                     descriptors and no /dev/shm files (numbers printed by rank 0)
//   threads           MPI_THREAD_MULTIPLE: two threads run collectives on two communicators at once
//   budget            the shared-memory budget is per node: of two 2-rank communicators in one
//                     job only one gets a team, and freeing it makes room again (needs 4 ranks)
//   window            buffers in MPI_Win_allocate_shared windows (contiguous, and with parts
//                     padded to pages): the five collectives move their large blocks with
//                     memcpy, and still work once cross-memory attach is forbidden
// Rank 0 prints "N passed, M failed"; the exit status is 0 when nothing failed.
#include <dirent.h>
#include <mpi.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/mapped_segments.hpp"
#include "../support/seccomp.hpp"
#include "mpi_checks.hpp"

extern "C" void shmcoll_mpi_stats(unsigned long long* served, unsigned long long* fallback);

namespace {

using mpi_checks::check;
using mpi_checks::g_rank;
using mpi_checks::g_size;

long resident_kib() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int count_entries(const char* dir, const char* prefix) {
  int n = 0;
  if (DIR* d = opendir(dir)) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.' && std::strncmp(e->d_name, prefix, std::strlen(prefix)) == 0) ++n;
    }
    closedir(d);
  }
  return n;
}

// System V semaphore sets of this user (the node budget's ledgers are such sets).
int semaphore_sets() {
  int n = 0;
  if (FILE* f = std::fopen("/proc/sysvipc/sem", "r")) {
    char line[512];
    if (std::fgets(line, sizeof line, f) == nullptr) n = -1;  // header
    long key = 0, id = 0, nsems = 0, uid = 0;
    unsigned long perms = 0;
    while (std::fscanf(f, "%ld %ld %lo %ld %ld%*[^\n]", &key, &id, &perms, &nsems, &uid) == 5) {
      if (uid == static_cast<long>(geteuid())) ++n;
    }
    std::fclose(f);
  }
  return n;
}

void errors_return() {
  // Full checks, under which every rank gets the error in the failing call. The default defers
  // them in an oversubscribed job (3 ranks on 2 cores), where a rank that returned early gets
  // the error in a later call. Read when the team forms, at the first collective on `comm`.
  setenv("SHMCOLL_CHECKS", "full", 1);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::vector<int> v(64, g_rank);
  // Everyone agrees first, so the team exists; then rank 1 names another root.
  check(MPI_Bcast(v.data(), 64, MPI_INT, 0, comm) == MPI_SUCCESS, "bcast before the error");
  const int rc = MPI_Bcast(v.data(), 64, MPI_INT, g_rank == 1 ? 1 : 0, comm);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  check(rc != MPI_SUCCESS, "a root mismatch returns an error code on this rank");
  check(error_class == MPI_ERR_ARG, "the error class is MPI_ERR_ARG");
  // The code's string is shmcoll's message, which names both roots.
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  const std::string message(text, static_cast<std::size_t>(length));
  check(message.find("root mismatch") != std::string::npos &&
            message.find("root=0") != std::string::npos &&
            message.find("root=1") != std::string::npos,
        "MPI_Error_string of a root mismatch names the roots");
  // A new team forms on the next call.
  for (int i = 0; i < 64; ++i) v[static_cast<std::size_t>(i)] = g_rank == 0 ? i : -1;
  check(MPI_Bcast(v.data(), 64, MPI_INT, 0, comm) == MPI_SUCCESS, "bcast after the error");
  bool ok = true;
  for (int i = 0; i < 64; ++i) ok = ok && v[static_cast<std::size_t>(i)] == i;
  check(ok, "bcast after the error delivers the data");
  // A gatherv whose root expects a different count from every rank, and rank 2 sends one
  // element less: every rank returns the error from this call, rank 1 too, which checks the
  // sizes against the fingerprint the root published and then waits for the root's verdict.
  std::vector<int> counts = {4, 5, 6}, displs = {0, 4, 9}, all(15, -1);
  const int mine = counts[static_cast<std::size_t>(g_rank)] - (g_rank == 2 ? 1 : 0);
  const int rc_v = MPI_Gatherv(v.data(), mine, MPI_INT, all.data(), counts.data(), displs.data(),
                               MPI_INT, 0, comm);
  MPI_Error_class(rc_v, &error_class);
  check(rc_v != MPI_SUCCESS && error_class == MPI_ERR_TRUNCATE,
        "a gatherv size mismatch among different counts returns MPI_ERR_TRUNCATE on this rank");
  // And the same gatherv with the right counts, in a new team.
  const int right = counts[static_cast<std::size_t>(g_rank)];
  check(MPI_Gatherv(v.data(), right, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, 0,
                    comm) == MPI_SUCCESS,
        "gatherv with different counts after the error");
  MPI_Comm_free(&comm);
}

// The calls of errors_across_nodes: the blocking form, or (`started`) the non-blocking form and
// MPI_Wait; the code of either.
struct Forms {
  bool started;
  int wait(int rc, MPI_Request& request) const {
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  int scatterv(const void* s, const int* counts, const int* displs, void* r, int rc,
               MPI_Comm comm) const {
    MPI_Request request = MPI_REQUEST_NULL;
    if (!started) return MPI_Scatterv(s, counts, displs, MPI_INT, r, rc, MPI_INT, 0, comm);
    return wait(MPI_Iscatterv(s, counts, displs, MPI_INT, r, rc, MPI_INT, 0, comm, &request),
                request);
  }
  int gatherv(const void* s, int sc, void* r, const int* counts, const int* displs,
              MPI_Comm comm) const {
    MPI_Request request = MPI_REQUEST_NULL;
    if (!started) return MPI_Gatherv(s, sc, MPI_INT, r, counts, displs, MPI_INT, 0, comm);
    return wait(MPI_Igatherv(s, sc, MPI_INT, r, counts, displs, MPI_INT, 0, comm, &request),
                request);
  }
  int scatter(const void* s, int sc, void* r, int rc, MPI_Comm comm) const {
    MPI_Request request = MPI_REQUEST_NULL;
    if (!started) return MPI_Scatter(s, sc, MPI_INT, r, rc, MPI_INT, 0, comm);
    return wait(MPI_Iscatter(s, sc, MPI_INT, r, rc, MPI_INT, 0, comm, &request), request);
  }
  int gather(const void* s, int sc, void* r, int rc, MPI_Comm comm) const {
    MPI_Request request = MPI_REQUEST_NULL;
    if (!started) return MPI_Gather(s, sc, MPI_INT, r, rc, MPI_INT, 0, comm);
    return wait(MPI_Igather(s, sc, MPI_INT, r, rc, MPI_INT, 0, comm, &request), request);
  }
};

// Across nodes, errors travel with the data (spanning.hpp): ranks 0 and 2 on one node, 1 and 3
// on the other, whose leader is rank 1.
void errors_across_nodes(Forms forms) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::vector<int> counts = {1, 2, 3, 4}, displs = {0, 1, 3, 6}, all(10, 0), mine(5, -1);
  for (int i = 0; i < 10; ++i) all[static_cast<std::size_t>(i)] = i;
  auto error_class_of = [](int rc) {
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    return error_class;
  };
  // Rank 3 takes one element less than the root sends it: node 1's leader gets a message
  // longer than its ranks' counts, and both ranks of node 1 return the error.
  const int want = counts[static_cast<std::size_t>(g_rank)] - (g_rank == 3 ? 1 : 0);
  int rc = forms.scatterv(all.data(), counts.data(), displs.data(), mine.data(), want, comm);
  if (g_rank % 2 == 1) {
    check(rc != MPI_SUCCESS, "a scatterv whose root sends this node more fails on its ranks");
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    const std::string message(text, static_cast<std::size_t>(length));
    check(message.find("node 1 (ranks 1, 3)") != std::string::npos &&
              message.find("24 bytes where 20") != std::string::npos,
          "the scatterv error names the node and both sizes: " + message);
    if (g_rank == 1) check(error_class_of(rc) == MPI_ERR_TRUNCATE, "the class is MPI_ERR_TRUNCATE");
  } else {
    check(rc == MPI_SUCCESS, "the scatterv's root node, which sent, returns as usual");
  }
  // The same scatterv, right, in a new team on node 1.
  std::fill(mine.begin(), mine.end(), -1);
  rc = forms.scatterv(all.data(), counts.data(), displs.data(), mine.data(),
                      counts[static_cast<std::size_t>(g_rank)], comm);
  bool ok = rc == MPI_SUCCESS;
  for (int i = 0; i < counts[static_cast<std::size_t>(g_rank)]; ++i)
    ok = ok && mine[static_cast<std::size_t>(i)] == displs[static_cast<std::size_t>(g_rank)] + i;
  check(ok, "scatterv after the error delivers the data");
  // Rank 3 sends one element more than the root's counts take: the root returns the error,
  // the others, which sent, as usual.
  std::fill(all.begin(), all.end(), -1);
  const int give = counts[static_cast<std::size_t>(g_rank)] + (g_rank == 3 ? 1 : 0);
  std::vector<int> send(5, g_rank);
  rc = forms.gatherv(send.data(), give, all.data(), counts.data(), displs.data(), comm);
  if (g_rank == 0) {
    check(rc != MPI_SUCCESS && error_class_of(rc) == MPI_ERR_TRUNCATE,
          "a gatherv whose node sends the root more fails at the root with MPI_ERR_TRUNCATE");
  } else {
    check(rc == MPI_SUCCESS, "the gatherv's senders return as usual");
  }
  rc = forms.gatherv(send.data(), counts[static_cast<std::size_t>(g_rank)], all.data(),
                     counts.data(), displs.data(), comm);
  check(rc == MPI_SUCCESS, "gatherv after the error");
  if (g_rank == 0) {
    const std::vector<int> expected = {0, 1, 1, 2, 2, 2, 3, 3, 3, 3};
    check(all == expected, "gatherv after the error gathers the data");
  }
  // Calls a rank rejects before they begin: the root of a scatter (a negative count), whose
  // word reaches the other node, and rank 3 of a gather (a negative count), whose node tells
  // the root.
  rc = forms.scatter(all.data(), g_rank == 0 ? -1 : 2, mine.data(), 2, comm);
  check(g_rank == 2 || rc != MPI_SUCCESS,
        "a scatter its root rejects fails on the root and on the other node");
  if (g_rank == 0) check(error_class_of(rc) == MPI_ERR_COUNT, "the root's class is MPI_ERR_COUNT");
  rc = forms.gather(send.data(), g_rank == 3 ? -1 : 2, all.data(), 2, comm);
  check(g_rank == 2 || rc != MPI_SUCCESS,
        "a gather rank 3 rejects fails on rank 3's node and at the root");
  if (g_rank == 3) check(error_class_of(rc) == MPI_ERR_COUNT, "rank 3's class is MPI_ERR_COUNT");
  // And the communicator serves again.
  rc = forms.gather(send.data(), 2, all.data(), 2, comm);
  check(rc == MPI_SUCCESS, "gather after the rejected calls");
  if (g_rank == 0) {
    const std::vector<int> expected = {0, 0, 1, 1, 2, 2, 3, 3, 3, 3};
    check(std::equal(expected.begin(), expected.begin() + 8, all.begin()),
          "gather after the rejected calls gathers the data");
  }
  if (forms.started) {
    // A call started behind one that fails runs after it: node 1's team, which the first call
    // aborted, is formed again for it.
    MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Iscatterv(all.data(), counts.data(), displs.data(), MPI_INT, mine.data(), want, MPI_INT, 0,
                  comm, &two[0]);
    int value = g_rank == 0 ? 42 : -1;
    MPI_Ibcast(&value, 1, MPI_INT, 0, comm, &two[1]);
    MPI_Status statuses[2];
    rc = MPI_Waitall(2, two, statuses);
    check(g_rank % 2 == 0 ? rc == MPI_SUCCESS : rc == MPI_ERR_IN_STATUS,
          "a failed call and one started behind it: the failure in MPI_Waitall on node 1");
    check(value == 42, "the call started behind a failed one delivers its data");
  }
  MPI_Comm_free(&comm);
}

// Broadcasts that a communicator across nodes cuts into segments (spanning/bcast.cpp).
void large_bcast() {
  const int bytes = (3 << 20) + 7;  // past two segments, and no whole number of them
  std::vector<unsigned char> data(static_cast<std::size_t>(bytes));
  auto expected = [](int i, int root, int form) {
    return static_cast<unsigned char>((i * 7 + root * 3 + form) & 0xff);
  };
  for (int root = 0; root < g_size; ++root) {
    for (int form = 0; form < 2; ++form) {
      for (int i = 0; i < bytes; ++i)
        data[static_cast<std::size_t>(i)] = g_rank == root ? expected(i, root, form) : 0;
      if (form == 0) {
        MPI_Bcast(data.data(), bytes, MPI_BYTE, root, MPI_COMM_WORLD);
      } else {
        MPI_Request request = MPI_REQUEST_NULL;
        MPI_Ibcast(data.data(), bytes, MPI_BYTE, root, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
      }
      bool ok = true;
      for (int i = 0; i < bytes && ok; ++i)
        ok = data[static_cast<std::size_t>(i)] == expected(i, root, form);
      check(ok, std::string(form == 0 ? "MPI_Bcast" : "MPI_Ibcast") + " of " +
                    std::to_string(bytes) + " bytes from rank " + std::to_string(root));
    }
  }
  // The root's elements differ from the others': every other int of its buffer.
  const int ints = 400000;
  const int root = g_size - 1;
  std::vector<int> values(static_cast<std::size_t>(g_rank == root ? 2 * ints : ints), -1);
  if (g_rank == root) {
    MPI_Datatype strided;
    MPI_Type_vector(ints, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int i = 0; i < ints; ++i) values[2 * static_cast<std::size_t>(i)] = i;
    MPI_Bcast(values.data(), 1, strided, root, MPI_COMM_WORLD);
    MPI_Type_free(&strided);
  } else {
    MPI_Bcast(values.data(), ints, MPI_INT, root, MPI_COMM_WORLD);
    bool ok = true;
    for (int i = 0; i < ints && ok; ++i) ok = values[static_cast<std::size_t>(i)] == i;
    check(ok, "a broadcast whose root sends a strided datatype");
  }
}

// Non-blocking broadcasts on `comm` that the plugin serves in the calls it keeps for each
// communicator, collective and role (up to four active at once), and beyond them in new ones.
void kept_calls(MPI_Comm comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int root = size - 1;
  auto fill = [&](std::vector<int>& v, int salt) {
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = rank == root ? static_cast<int>(i) * 3 + salt : -1;
  };
  auto delivered = [](const std::vector<int>& v, int salt) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] != static_cast<int>(i) * 3 + salt) return false;
    }
    return true;
  };
  // The same arguments with new data at every call: the operation is built again each time.
  std::vector<int> same(100);
  for (int round = 0; round < 3; ++round) {
    fill(same, round);
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibcast(same.data(), 100, MPI_INT, root, comm, &request);
    check(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS && request == MPI_REQUEST_NULL,
          "MPI_Wait completes a repeated MPI_Ibcast and nulls its handle");
    check(delivered(same, round), "a repeated MPI_Ibcast delivers each call's data");
  }
  // Six outstanding on other buffers: past the four kept calls.
  std::vector<std::vector<int>> six(6, std::vector<int>(50));
  MPI_Request requests[6];
  for (int k = 0; k < 6; ++k) {
    fill(six[static_cast<std::size_t>(k)], 10 + k);
    MPI_Ibcast(six[static_cast<std::size_t>(k)].data(), 50, MPI_INT, root, comm, &requests[k]);
  }
  bool distinct = true;
  for (int a = 0; a < 6; ++a) {
    for (int b = a + 1; b < 6; ++b) distinct = distinct && requests[a] != requests[b];
  }
  check(distinct, "six outstanding MPI_Ibcast calls have six handles");
  // Completed with -some and -any (the MPI completes them) and MPI_Testall.
  int outcount = 0, indices[6], index = -1;
  MPI_Waitsome(6, requests, &outcount, indices, MPI_STATUSES_IGNORE);
  bool nulled = outcount >= 1;
  for (int k = 0; k < outcount; ++k) nulled = nulled && requests[indices[k]] == MPI_REQUEST_NULL;
  MPI_Waitany(6, requests, &index, MPI_STATUS_IGNORE);
  nulled = nulled && (index == MPI_UNDEFINED ? outcount == 6 : requests[index] == MPI_REQUEST_NULL);
  int all_done = 0;
  while (!all_done) MPI_Testall(6, requests, &all_done, MPI_STATUSES_IGNORE);
  for (MPI_Request r : requests) nulled = nulled && r == MPI_REQUEST_NULL;
  check(nulled, "MPI_Waitsome, MPI_Waitany and MPI_Testall null the completed handles");
  bool all_delivered = true;
  for (int k = 0; k < 6; ++k)
    all_delivered = all_delivered && delivered(six[static_cast<std::size_t>(k)], 10 + k);
  check(all_delivered, "six outstanding MPI_Ibcast calls deliver their data");
  // A derived datatype at the root (every other int), twice: its buffers are converted anew.
  std::vector<int> strided(rank == root ? 80 : 40);
  for (int round = 0; round < 2; ++round) {
    MPI_Request request = MPI_REQUEST_NULL;
    if (rank == root) {
      for (int i = 0; i < 80; ++i) strided[static_cast<std::size_t>(i)] = i % 2 ? -7 : i + round;
      MPI_Datatype every_other;
      MPI_Type_vector(40, 1, 2, MPI_INT, &every_other);
      MPI_Type_commit(&every_other);
      MPI_Ibcast(strided.data(), 1, every_other, root, comm, &request);
      MPI_Type_free(&every_other);
    } else {
      std::fill(strided.begin(), strided.end(), -1);
      MPI_Ibcast(strided.data(), 40, MPI_INT, root, comm, &request);
    }
    int flag = 0;
    while (!flag) MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    bool ok = request == MPI_REQUEST_NULL;
    for (int i = 0; rank != root && i < 40; ++i)
      ok = ok && strided[static_cast<std::size_t>(i)] == 2 * i + round;
    check(ok, "MPI_Ibcast of a strided datatype, repeated, through MPI_Test");
  }
  // A scatter's root that receives its block into a strided type, then in place: the second
  // call has no receive buffer, and the first one's stays as the program left it.
  std::vector<int> source(static_cast<std::size_t>(size) * 2), own(4, -1), mine(2, -1);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<int>(i);
  MPI_Datatype every_other;
  MPI_Type_vector(2, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  for (int round = 0; round < 2; ++round) {
    MPI_Request request = MPI_REQUEST_NULL;
    if (rank != root)
      MPI_Iscatter(nullptr, 0, MPI_INT, mine.data(), 2, MPI_INT, root, comm, &request);
    else if (round == 0)
      MPI_Iscatter(source.data(), 2, MPI_INT, own.data(), 1, every_other, root, comm, &request);
    else
      MPI_Iscatter(source.data(), 2, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    const std::vector<int> expected = rank != root ? std::vector<int>{2 * rank, 2 * rank + 1}
                                      : round == 0
                                          ? std::vector<int>{2 * root, -1, 2 * root + 1, -1}
                                          : std::vector<int>{-5, -5, -5, -5};
    check((rank != root ? mine : own) == expected,
          round == 0 ? "MPI_Iscatter's root receives into a strided type"
                     : "MPI_Iscatter in place after a strided receive leaves that buffer alone");
    std::fill(own.begin(), own.end(), -5);
  }
  MPI_Type_free(&every_other);
  // Active when its communicator is freed: the wait after the free completes it.
  MPI_Comm dup;
  MPI_Comm_dup(comm, &dup);
  fill(same, 99);
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(same.data(), 100, MPI_INT, root, dup, &request);
  MPI_Comm_free(&dup);
  check(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS && request == MPI_REQUEST_NULL &&
            delivered(same, 99),
        "an MPI_Ibcast whose communicator was freed before its wait");
}

// Non-blocking collectives beyond the data (plugin_check checks that): progress while the
// program waits on point-to-point, several outstanding on several communicators completed in
// any order, a freed request, an empty call.
void nonblocking() {
  const int peer = g_size - 1;  // rank 0's partner below (itself with one rank)
  // 1. A collective that rank 0 waits for together with a receive whose sender first starts
  // the same collective, as root, and then sends (4 MiB: past any eager limit, so the send
  // completes only as rank 0's wait progresses the MPI too).
  std::vector<int> data(1 << 18), message(1 << 20, -1);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = g_rank == peer ? static_cast<int>(i) : -1;
  MPI_Request bcast = MPI_REQUEST_NULL;
  MPI_Ibcast(data.data(), static_cast<int>(data.size()), MPI_INT, peer, MPI_COMM_WORLD, &bcast);
  if (g_rank == 0 && peer != 0) {
    MPI_Request both[2] = {bcast, MPI_REQUEST_NULL};
    MPI_Irecv(message.data(), static_cast<int>(message.size()), MPI_INT, peer, 7, MPI_COMM_WORLD,
              &both[1]);
    check(MPI_Waitall(2, both, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall of bcast and recv");
    check(message[12345] == 12345, "the receive beside the bcast");
  } else if (g_rank == peer && peer != 0) {
    std::vector<int> out(message.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int>(i);
    MPI_Send(out.data(), static_cast<int>(out.size()), MPI_INT, 0, 7, MPI_COMM_WORLD);
    MPI_Wait(&bcast, MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(&bcast, MPI_STATUS_IGNORE);
  }
  check(data[54321] == 54321, "the bcast beside the point-to-point");

  // 2. Three communicators, two operations outstanding on each, completed in reverse order.
  MPI_Comm comms[3] = {MPI_COMM_WORLD, MPI_COMM_NULL, MPI_COMM_NULL};
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &comms[2]);  // ranks reversed
  std::vector<std::vector<int>> gathered(3), scattered(3), sources(3), sent(3);
  MPI_Request pending[6];
  for (int c = 0; c < 3; ++c) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comms[c], &rank);
    MPI_Comm_size(comms[c], &size);
    std::vector<int>& all = gathered[static_cast<std::size_t>(c)];
    all.assign(static_cast<std::size_t>(size) * 2, -1);
    std::vector<int>& mine = sent[static_cast<std::size_t>(c)];  // untouched until complete
    mine = {rank * 10 + c, rank * 10 + c + 1};
    MPI_Igather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, 0, comms[c], &pending[2 * c]);
    std::vector<int>& part = scattered[static_cast<std::size_t>(c)];
    part.assign(3, -1);
    std::vector<int>& source = sources[static_cast<std::size_t>(c)];
    source.resize(static_cast<std::size_t>(size) * 3);
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<int>(i) + 100 * c;
    MPI_Iscatter(rank == size - 1 ? source.data() : nullptr, 3, MPI_INT, part.data(), 3, MPI_INT,
                 size - 1, comms[c], &pending[2 * c + 1]);
  }
  for (int i = 5; i >= 0; --i) MPI_Wait(&pending[i], MPI_STATUS_IGNORE);
  bool ok = true;
  for (int c = 0; c < 3; ++c) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comms[c], &rank);
    MPI_Comm_size(comms[c], &size);
    if (rank == 0) {
      for (int r = 0; r < size; ++r) {
        ok = ok &&
             gathered[static_cast<std::size_t>(c)][static_cast<std::size_t>(2 * r)] == r * 10 + c;
      }
    }
    ok = ok && scattered[static_cast<std::size_t>(c)][0] == rank * 3 + 100 * c;
  }
  check(ok, "operations on three communicators completed in reverse order");

  // 3. A freed request: the operation still completes, before the next call on the
  // communicator, and the data arrive.
  std::vector<int> freed(1000, g_rank == 0 ? 5 : -1);
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(freed.data(), 1000, MPI_INT, 0, comms[1], &request);
  check(MPI_Request_free(&request) == MPI_SUCCESS && request == MPI_REQUEST_NULL,
        "MPI_Request_free of an active collective");
  int token = g_rank;
  MPI_Bcast(&token, 1, MPI_INT, 0, comms[1]);
  check(freed[999] == 5 && token == 0, "a freed collective completes before the next one");

  // 4. An empty call: a request complete at once, which MPI_Request_free and MPI_Wait take.
  MPI_Ibcast(nullptr, 0, MPI_INT, 0, comms[1], &request);
  int flag = 0;
  MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
  check(flag == 1 && request == MPI_REQUEST_NULL, "an empty MPI_Ibcast is complete at once");

  // 5. The calls the plugin keeps per communicator for its non-blocking calls (reused_calls.hpp).
  kept_calls(comms[1]);

  MPI_Comm_free(&comms[1]);
  MPI_Comm_free(&comms[2]);
}

// A root mismatch in MPI_Ibcast, returned by the wait on a communicator with MPI_ERRORS_RETURN
// as shmcoll's message; the communicator works again after it.
void nonblocking_errors() {
  setenv("SHMCOLL_CHECKS", "full", 1);  // as errors_return: every rank fails in the call
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::vector<int> v(64, g_rank);
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(v.data(), 64, MPI_INT, 0, comm, &request);
  check(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS, "ibcast before the error");
  MPI_Ibcast(v.data(), 64, MPI_INT, g_rank == 1 ? 1 : 0, comm, &request);
  MPI_Status status;
  const int rc = MPI_Wait(&request, &status);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  check(rc != MPI_SUCCESS && error_class == MPI_ERR_ARG && status.MPI_ERROR == rc,
        "a root mismatch in MPI_Ibcast: MPI_Wait returns an error of class MPI_ERR_ARG");
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  const std::string message(text, static_cast<std::size_t>(length));
  check(message.find("MPI_Ibcast: root mismatch") != std::string::npos,
        "MPI_Error_string of the wait's code is shmcoll's message");
  // In an array: MPI_ERR_IN_STATUS, the code in the request's status.
  MPI_Request both[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Ibcast(v.data(), 64, MPI_INT, 0, comm, &both[0]);  // a new team
  MPI_Ibcast(v.data(), 64, MPI_INT, g_rank == 1 ? 1 : 0, comm, &both[1]);
  MPI_Status statuses[2];
  const int rc_all = MPI_Waitall(2, both, statuses);
  check(rc_all == MPI_ERR_IN_STATUS && statuses[1].MPI_ERROR != MPI_SUCCESS,
        "a root mismatch in MPI_Waitall: MPI_ERR_IN_STATUS, the error in the status");
  for (int i = 0; i < 64; ++i) v[static_cast<std::size_t>(i)] = g_rank == 0 ? i : -1;
  MPI_Ibcast(v.data(), 64, MPI_INT, 0, comm, &request);
  check(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS && v[63] == 63,
        "ibcast after the error");
  MPI_Comm_free(&comm);
}

// One erroneous call, made through the plugin and (where the MPI survives it) through PMPI:
// the plugin's error class must be `expected`, and so must the MPI's where the MPI reports one.
// Then a correct broadcast on the same communicator must work.
template <class Call>
void expect_class(MPI_Comm comm, const char* what, int expected, bool run_native, Call&& call) {
  std::string label = std::string(what) + ": ";
  if (run_native) {
    const int native = call(/*native=*/true);
    int native_class = MPI_SUCCESS;
    MPI_Error_class(native, &native_class);
    check(native == MPI_SUCCESS || native_class == expected,
          (label + "the MPI alone reports the expected class").c_str());
  }
  const int rc = call(/*native=*/false);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  if (error_class != expected)
    std::fprintf(stderr, "[rank %d] %s: class %d, expected %d\n", g_rank, what, error_class,
                 expected);
  check(error_class == expected, (label + "the plugin returns the MPI's class").c_str());
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  if (std::strstr(text, "shmcoll") == nullptr)
    std::fprintf(stderr, "[rank %d] %s: code %d says '%s'\n", g_rank, what, rc, text);
  check(std::strstr(text, "shmcoll") != nullptr && std::strstr(text, "rank") != nullptr,
        (label + "MPI_Error_string gives shmcoll's message").c_str());
  int v = g_rank == 0 ? 7 : 0;
  const int after = MPI_Bcast(&v, 1, MPI_INT, 0, comm);
  if (after != MPI_SUCCESS || v != 7) {
    MPI_Error_string(after, text, &length);
    std::fprintf(stderr, "[rank %d] %s: then bcast gave %d (%s), value %d\n", g_rank, what, after,
                 after == MPI_SUCCESS ? "" : text, v);
  }
  check(after == MPI_SUCCESS && v == 7, (label + "the communicator works afterwards").c_str());
}

void error_classes() {
  // Full checks, as in errors_return: a rank whose call fails on its own ends the team, and
  // under deferred checks a peer still finishing the call before could get that error there.
  setenv("SHMCOLL_CHECKS", "full", 1);
  const bool open_mpi = [] {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    return std::strstr(version, "Open MPI") != nullptr;
  }();
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::vector<int> buf(64, 0), all(64 * static_cast<std::size_t>(g_size), 0);
  std::vector<int> ones(static_cast<std::size_t>(g_size), 1), negative(ones.size(), -1),
      displs(ones.size());
  for (int r = 0; r < g_size; ++r) displs[static_cast<std::size_t>(r)] = r;
  int* b = buf.data();
  int* a = all.data();
  auto bcast = [&](bool native, void* p, int count, MPI_Datatype type, int root) {
    return native ? PMPI_Bcast(p, count, type, root, comm) : MPI_Bcast(p, count, type, root, comm);
  };
  auto gather = [&](bool native, const void* s, int sc, void* r, int rc, int root) {
    return native ? PMPI_Gather(s, sc, MPI_INT, r, rc, MPI_INT, root, comm)
                  : MPI_Gather(s, sc, MPI_INT, r, rc, MPI_INT, root, comm);
  };
  auto scatter = [&](bool native, const void* s, int sc, void* r, int rc, int root) {
    return native ? PMPI_Scatter(s, sc, MPI_INT, r, rc, MPI_INT, root, comm)
                  : MPI_Scatter(s, sc, MPI_INT, r, rc, MPI_INT, root, comm);
  };
  // The first case on a communicator no call has used yet: the plugin reports it before the
  // communicator's first collective step. Every rank makes the same mistake.
  expect_class(comm, "bcast count -1", MPI_ERR_COUNT, true,
               [&](bool n) { return bcast(n, b, -1, MPI_INT, 0); });
  expect_class(comm, "bcast root = size", MPI_ERR_ROOT, true,
               [&](bool n) { return bcast(n, b, 1, MPI_INT, g_size); });
  expect_class(comm, "bcast root -1", MPI_ERR_ROOT, true,
               [&](bool n) { return bcast(n, b, 1, MPI_INT, -1); });
  expect_class(comm, "bcast MPI_DATATYPE_NULL", MPI_ERR_TYPE, true,
               [&](bool n) { return bcast(n, b, 1, MPI_DATATYPE_NULL, 0); });
  // Open MPI dereferences the null buffer (SIGSEGV); MPICH reports MPI_ERR_BUFFER.
  expect_class(comm, "bcast NULL buffer", MPI_ERR_BUFFER, !open_mpi,
               [&](bool n) { return bcast(n, nullptr, 4, MPI_INT, 0); });
  expect_class(comm, "gather sendcount -1", MPI_ERR_COUNT, true,
               [&](bool n) { return gather(n, b, -1, a, 1, 0); });
  expect_class(comm, "scatter recvcount -1", MPI_ERR_COUNT, true,
               [&](bool n) { return scatter(n, a, 1, b, -1, 0); });
  // Only the root uses the counts of a v-form: natively the others would wait for it.
  expect_class(comm, "scatterv sendcounts -1", MPI_ERR_COUNT, false, [&](bool n) {
    return n ? PMPI_Scatterv(a, negative.data(), displs.data(), MPI_INT, b, 1, MPI_INT, 0, comm)
             : MPI_Scatterv(a, negative.data(), displs.data(), MPI_INT, b, 1, MPI_INT, 0, comm);
  });
  expect_class(comm, "gatherv recvcounts -1", MPI_ERR_COUNT, false, [&](bool n) {
    return n ? PMPI_Gatherv(b, 1, MPI_INT, a, negative.data(), displs.data(), MPI_INT, 0, comm)
             : MPI_Gatherv(b, 1, MPI_INT, a, negative.data(), displs.data(), MPI_INT, 0, comm);
  });
  // A non-root that passes MPI_IN_PLACE: both MPIs read from the sentinel's address (SIGSEGV).
  expect_class(comm, "gather MPI_IN_PLACE off the root", MPI_ERR_BUFFER, false,
               [&](bool n) { return gather(n, MPI_IN_PLACE, 1, a, 1, 0); });
  // Truncation: the root sends 4 elements, the others receive 2. The MPIs report it on the
  // receivers; the plugin on every rank, in that class. (Natively the MPIs' trees route the
  // data of 3 or more ranks through receivers, which then stop: there only the plugin runs.)
  expect_class(comm, "bcast truncated", MPI_ERR_TRUNCATE, g_size == 2,
               [&](bool n) { return bcast(n, b, g_rank == 0 ? 4 : 2, MPI_INT, 0); });
  expect_class(comm, "scatter truncated", MPI_ERR_TRUNCATE, g_size == 2,
               [&](bool n) { return scatter(n, a, 4, b, g_rank == 0 ? 4 : 2, 0); });
  // Aliased buffers at the root, where MPI asks for MPI_IN_PLACE: MPICH reports them, Open
  // MPI copies. Only the root is wrong; the others hear of it from the team its error ends,
  // and a correct call then forms a new one.
  if (g_size > 1) {
    for (const bool is_gather : {true, false}) {
      const int rc = is_gather ? gather(false, a, 1, a, 1, 0) : scatter(false, a, 1, a, 1, 0);
      int aliased_class = MPI_SUCCESS;
      MPI_Error_class(rc, &aliased_class);
      check(g_rank == 0 ? aliased_class == MPI_ERR_BUFFER : aliased_class != MPI_SUCCESS,
            is_gather ? "gather with sendbuf == recvbuf: MPI_ERR_BUFFER at the root, an error "
                        "elsewhere"
                      : "scatter with sendbuf == recvbuf: MPI_ERR_BUFFER at the root, an error "
                        "elsewhere");
      int v = g_rank == 0 ? 9 : 0;
      check(MPI_Bcast(&v, 1, MPI_INT, 0, comm) == MPI_SUCCESS && v == 9,
            "the communicator works after an aliased call");
    }
  }
  MPI_Comm_free(&comm);

  // A locally wrong call on a communicator no call has used: only rank 0 calls, and it must
  // return at once instead of waiting for the others in the communicator's first collective.
  MPI_Comm fresh;
  MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
  MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
  if (g_rank == 0) {
    int alone_class = MPI_SUCCESS;
    MPI_Error_class(MPI_Gather(a, 1, MPI_INT, a, 1, MPI_INT, 0, fresh), &alone_class);
    check(alone_class == MPI_ERR_BUFFER || g_size == 1,
          "an aliased gather that only rank 0 calls returns MPI_ERR_BUFFER at once");
  }
  MPI_Comm_free(&fresh);

  // Zero-size datatypes move nothing, leave the buffers untouched, and are no error.
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  std::vector<int> untouched(64 * static_cast<std::size_t>(g_size), -5);
  std::vector<int> counts(static_cast<std::size_t>(g_size), 10);
  std::vector<int> zero_displs(static_cast<std::size_t>(g_size), 0);
  int* u = untouched.data();
  check(MPI_Bcast(u, 10, empty, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast of a zero-size type");
  check(MPI_Scatter(u, 10, empty, u + 1, 10, empty, 0, MPI_COMM_WORLD) == MPI_SUCCESS,
        "scatter of a zero-size type");
  check(MPI_Gather(u + 1, 10, empty, u, 10, empty, 0, MPI_COMM_WORLD) == MPI_SUCCESS,
        "gather of a zero-size type");
  check(MPI_Scatterv(u, counts.data(), zero_displs.data(), empty, u + 1, 10, empty, 0,
                     MPI_COMM_WORLD) == MPI_SUCCESS,
        "scatterv of a zero-size type");
  check(MPI_Gatherv(u + 1, 10, empty, u, counts.data(), zero_displs.data(), empty, 0,
                    MPI_COMM_WORLD) == MPI_SUCCESS,
        "gatherv of a zero-size type");
  bool intact = true;
  for (int x : untouched) intact = intact && x == -5;
  check(intact, "zero-size types leave the buffers untouched");
  MPI_Type_free(&empty);
}

// Deferred checks, 4 ranks: rank 3 skips the second of two broadcasts on a communicator. The
// others find it when they free the communicator, after rank 3 has: each prints one line
// naming the ranks and their counts (the test's regular expression counts them).
void skipped_collective() {
  setenv("SHMCOLL_CHECKS", "deferred", 1);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int v = g_rank == 0 ? 5 : 0;
  check(MPI_Bcast(&v, 1, MPI_INT, 0, comm) == MPI_SUCCESS && v == 5, "the first broadcast");
  if (g_rank != 3) MPI_Bcast(&v, 1, MPI_INT, 0, comm);
  if (g_rank != 3) usleep(300'000);  // rank 3 frees it first
  MPI_Comm_free(&comm);
}

// Broadcast, scatter and gather with count 0 move nothing and return at once, without the
// others: rank 1 makes its calls a second late. A root that then broadcasts 0 elements to ranks
// expecting 1 returns at once too; the others learn of it when it frees the communicator.
void empty_calls() {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int v = 0, all[64] = {};
  check(MPI_Bcast(&v, 1, MPI_INT, 0, comm) == MPI_SUCCESS, "a broadcast that forms the team");
  unsigned long long served0 = 0, fallback0 = 0, served1 = 0, fallback1 = 0;
  shmcoll_mpi_stats(&served0, &fallback0);
  if (g_rank == 1) sleep(1);
  const double t0 = MPI_Wtime();
  bool ok = true;
  for (int i = 0; i < 100; ++i) {
    ok = ok && MPI_Bcast(&v, 0, MPI_INT, i % g_size, comm) == MPI_SUCCESS;
    ok = ok && MPI_Scatter(all, 0, MPI_INT, &v, 0, MPI_INT, 0, comm) == MPI_SUCCESS;
    ok = ok && MPI_Gather(&v, 0, MPI_INT, all, 0, MPI_INT, 0, comm) == MPI_SUCCESS;
  }
  const double elapsed = MPI_Wtime() - t0;
  shmcoll_mpi_stats(&served1, &fallback1);
  check(ok, "300 calls with count 0 succeed");
  check(g_rank == 1 || elapsed < 0.5, "calls with count 0 do not wait for a rank a second late");
  check(served1 - served0 == 300 && fallback1 == fallback0, "they count as served by shmcoll");
  MPI_Barrier(MPI_COMM_WORLD);
  // Scatterv and gatherv in which every block is empty: no rank can tell from its own
  // arguments, but under deferred checks (the test sets them) none waits for a late one, for
  // as many calls as the ranks may run ahead of each other (the signature history's 32).
  std::vector<int> zeros(static_cast<std::size_t>(g_size), 0);
  if (g_rank == 0) sleep(1);
  const double v0 = MPI_Wtime();
  bool v_ok = true;
  for (int i = 0; i < 10; ++i) {
    v_ok = v_ok && MPI_Scatterv(all, zeros.data(), zeros.data(), MPI_INT, &v, 0, MPI_INT, 0,
                                comm) == MPI_SUCCESS;
    v_ok = v_ok && MPI_Gatherv(&v, 0, MPI_INT, all, zeros.data(), zeros.data(), MPI_INT, 0, comm) ==
                       MPI_SUCCESS;
  }
  const double v_elapsed = MPI_Wtime() - v0;
  check(v_ok, "20 scattervs and gathervs with every block empty succeed");
  check(g_rank == 0 || v_elapsed < 0.5,
        "scatterv and gatherv with every block empty do not wait for a root a second late");
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_size > 1) {
    if (g_rank == 0) {
      check(MPI_Bcast(&v, 0, MPI_INT, 0, comm) == MPI_SUCCESS, "a root broadcasting nothing");
    } else {
      const int rc = MPI_Bcast(&v, 1, MPI_INT, 0, comm);
      char text[MPI_MAX_ERROR_STRING] = {};
      int length = 0;
      MPI_Error_string(rc, text, &length);
      check(rc != MPI_SUCCESS && std::strstr(text, "rank 0 left the team after 21 collectives"),
            "a receiver of a root that broadcast nothing learns of it when the root leaves");
    }
  }
  MPI_Comm_free(&comm);
}

void errors_fatal() {
  std::vector<int> v(64, g_rank);
  MPI_Bcast(v.data(), 64, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(v.data(), 64, MPI_INT, g_rank == 1 ? 1 : 0, MPI_COMM_WORLD);  // aborts
  check(false, "the job should have been aborted");
}

void dup_loop(int cycles) {
  auto cycle = [] {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    std::vector<int> v(8, g_rank);
    MPI_Bcast(v.data(), 8, MPI_INT, 0, comm);
    MPI_Comm_free(&comm);
  };
  for (int i = 0; i < 100; ++i) cycle();  // warm up allocators and MPI's own pools
  MPI_Barrier(MPI_COMM_WORLD);
  // The freed communicator's segment stays mapped for the next one (parked_segment.hpp).
  const std::set<std::string> parked = shmcoll::test::mapped_segments();
  const int sems0 = semaphore_sets();
  const long rss0 = resident_kib();
  const int fds0 = count_entries("/proc/self/fd", "");
  for (int i = 0; i < cycles; ++i) cycle();
  const long rss1 = resident_kib();
  const int fds1 = count_entries("/proc/self/fd", "");
  MPI_Barrier(MPI_COMM_WORLD);
  const int shm = count_entries("/dev/shm", "shmcoll-");
  const int sems1 = semaphore_sets();
  check(parked.size() == 1 && shmcoll::test::mapped_segments() == parked,
        "every cycle's communicator reused the segment the previous one left mapped");
  if (g_rank == 0) {
    std::printf(
        "dup-loop: %d cycles: resident %ld -> %ld KiB, open fds %d -> %d, shmcoll files in "
        "/dev/shm %d, semaphore sets %d -> %d\n",
        cycles, rss0, rss1, fds0, fds1, shm, sems0, sems1);
  }
  check(sems1 == sems0, "no semaphore set left behind (the node budget's ledger is removed)");
  check(fds1 == fds0, "no file descriptor leaks");
  check(rss1 - rss0 < 2048, "resident memory grows by less than 2 MiB");
  check(shm == 0, "nothing left in /dev/shm");
  unsigned long long served = 0, fallback = 0;
  shmcoll_mpi_stats(&served, &fallback);
  check(served >= static_cast<unsigned long long>(cycles) && fallback == 0,
        "shmcoll served every cycle's bcast");
}

void threads() {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (g_rank == 0) std::printf("threads: MPI_THREAD_MULTIPLE not provided; skipped\n");
    return;
  }
  MPI_Comm comms[2];
  for (MPI_Comm& c : comms) MPI_Comm_dup(MPI_COMM_WORLD, &c);
  int bad[2] = {0, 0};
  auto work = [&](int t) {
    for (int it = 0; it < 300; ++it) {
      const int root = it % g_size;
      std::vector<int> v(100 + t, g_rank == root ? it * 7 + t : -1);
      MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_INT, root, comms[t]);
      for (int x : v) bad[t] += x != it * 7 + t;
      int mine = g_rank * 1000 + it + t;
      std::vector<int> all(static_cast<std::size_t>(g_size));
      MPI_Gather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, root, comms[t]);
      if (g_rank == root) {
        for (int r = 0; r < g_size; ++r)
          bad[t] += all[static_cast<std::size_t>(r)] != r * 1000 + it + t;
      }
    }
  };
  std::thread other(work, 1);
  work(0);
  other.join();
  check(bad[0] == 0 && bad[1] == 0,
        "concurrent collectives on two communicators deliver the right data");
  // One thread starts broadcasts on comms[0] (several outstanding, and a blocking one among
  // them) while the other waits on point-to-point requests: every wait advances comms[0]'s
  // requests too, from the second thread, while the first calls into that team.
  int bad_collectives = 0, bad_messages = 0;
  std::atomic<bool> collectives_done{false};
  auto collectives = [&] {
    for (int it = 0; it < 300; ++it) {
      std::vector<std::vector<int>> v(4, std::vector<int>(64 * 1024, g_rank == 0 ? it : -1));
      std::vector<int> w(8, g_rank == 0 ? -it : 0);
      MPI_Request requests[4];
      for (int k = 0; k < 4; ++k) {
        MPI_Ibcast(v[static_cast<std::size_t>(k)].data(), 64 * 1024, MPI_INT, 0, comms[0],
                   &requests[k]);
        if (k == 1) MPI_Bcast(w.data(), 8, MPI_INT, 0, comms[0]);
      }
      MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
      for (const std::vector<int>& x : v) bad_collectives += x.back() != it;
      bad_collectives += w[7] != -it;
    }
    collectives_done = true;
  };
  auto messages = [&] {
    while (!collectives_done) {
      const int it = 7;
      int in = -1, out = it;
      MPI_Request pair[2];
      MPI_Irecv(&in, 1, MPI_INT, g_rank, 3, comms[1], &pair[0]);
      MPI_Isend(&out, 1, MPI_INT, g_rank, 3, comms[1], &pair[1]);
      MPI_Wait(&pair[0], MPI_STATUS_IGNORE);
      MPI_Wait(&pair[1], MPI_STATUS_IGNORE);
      bad_messages += in != it;
    }
  };
  std::thread waiter(messages);
  collectives();
  waiter.join();
  check(bad_collectives == 0 && bad_messages == 0,
        "non-blocking collectives advanced from a thread that waits on other requests");
  for (MPI_Comm& c : comms) MPI_Comm_free(&c);
}

unsigned long long served_calls() {
  unsigned long long served = 0, fallback = 0;
  shmcoll_mpi_stats(&served, &fallback);
  return served;
}

// Bcasts on `comm` and checks the data; returns how many ranks of the job shmcoll served
// (collective over MPI_COMM_WORLD).
int bcast_and_count_served(MPI_Comm comm, const char* what) {
  const unsigned long long before = served_calls();
  if (comm != MPI_COMM_NULL) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::vector<int> v(1000, rank == 0 ? 7 : -1);
    MPI_Bcast(v.data(), 1000, MPI_INT, 0, comm);
    bool ok = true;
    for (int x : v) ok = ok && x == 7;
    check(ok, what);
  }
  int mine = static_cast<int>(served_calls() - before), total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

void budget() {
  if (g_size != 4) {
    check(false, "the budget test needs 4 ranks");
    return;
  }
  // A ledger of this job's own (the scope), so other jobs on the node don't count. With 3.9 MB
  // (59 units of 64 KiB) one 2-rank team (2,125,824 B with the default 1 MiB of slots per rank:
  // 33 units) fits, two don't, and neither does a 4-rank one (4,247,552 B: 65 units); a 3-rank
  // team (3,186,688 B: 49 units) fits alone.
  int pid = static_cast<int>(getpid()) * (g_rank == 0), job = 0;
  MPI_Allreduce(&pid, &job, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  setenv("SHMCOLL_MPI_BUDGET_SCOPE", ("budget-test-" + std::to_string(job)).c_str(), 1);
  setenv("SHMCOLL_MPI_BUDGET", "3900000", 1);

  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &pair);
  const int served = bcast_and_count_served(pair, "bcast on a 2-rank communicator");
  if (g_rank == 0) std::printf("budget: two 2-rank communicators: %d ranks served\n", served);
  // Per process, both would fit; per node, only one team's segment does.
  check(served == 2, "one of the two 2-rank communicators is served, the other falls back");
  MPI_Comm_free(&pair);
  MPI_Barrier(MPI_COMM_WORLD);  // every reservation is released before the next split

  MPI_Comm three;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank < 3 ? 0 : MPI_UNDEFINED, g_rank, &three);
  const int served3 = bcast_and_count_served(three, "bcast on a 3-rank communicator");
  check(served3 == 3, "after the release, a 3-rank team fits the budget");
  if (three != MPI_COMM_NULL) MPI_Comm_free(&three);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Comm all;
  MPI_Comm_dup(MPI_COMM_WORLD, &all);
  check(bcast_and_count_served(all, "bcast on a 4-rank communicator") == 0,
        "a 4-rank team is over the budget and falls back");
  MPI_Comm_free(&all);
}

char byte_of(long seq, int owner, long i) { return static_cast<char>(seq * 131 + owner * 31 + i); }

bool holds(const char* data, long bytes, long seq, int owner) {
  for (long i = 0; i < bytes; ++i)
    if (data[i] != byte_of(seq, owner, i)) return false;
  return true;
}

void put(char* data, long bytes, long seq, int owner) {
  for (long i = 0; i < bytes; ++i) data[i] = byte_of(seq, owner, i);
}

// The five collectives from every root, blocks of `b` bytes, on `send` and `recv`.
void all_five(MPI_Comm comm, char* send, char* recv, int b, long& seq) {
  std::vector<int> counts(static_cast<std::size_t>(g_size), b), displs;
  for (int r = 0; r < g_size; ++r) displs.push_back(b * (g_size - 1 - r));  // reversed
  for (int root = 0; root < g_size; ++root) {
    const bool is_root = g_rank == root;
    ++seq;
    if (is_root) put(send, b, seq, root);
    MPI_Bcast(send, b, MPI_CHAR, root, comm);
    check(holds(send, b, seq, root), "window: bcast");
    ++seq;
    if (is_root)
      for (int r = 0; r < g_size; ++r) put(send + static_cast<long>(b) * r, b, seq, r);
    MPI_Scatter(send, b, MPI_CHAR, recv, b, MPI_CHAR, root, comm);
    check(holds(recv, b, seq, g_rank), "window: scatter");
    ++seq;
    if (is_root)
      for (int r = 0; r < g_size; ++r) put(send + displs[static_cast<std::size_t>(r)], b, seq, r);
    MPI_Scatterv(send, counts.data(), displs.data(), MPI_CHAR, recv, b, MPI_CHAR, root, comm);
    check(holds(recv, b, seq, g_rank), "window: scatterv");
    ++seq;
    put(send, b, seq, g_rank);
    MPI_Gather(send, b, MPI_CHAR, recv, b, MPI_CHAR, root, comm);
    if (is_root)
      for (int r = 0; r < g_size; ++r)
        check(holds(recv + static_cast<long>(b) * r, b, seq, r), "window: gather");
    ++seq;
    put(send, b, seq, g_rank);
    MPI_Gatherv(send, b, MPI_CHAR, recv, counts.data(), displs.data(), MPI_CHAR, root, comm);
    if (is_root)
      for (int r = 0; r < g_size; ++r)
        check(holds(recv + displs[static_cast<std::size_t>(r)], b, seq, r), "window: gatherv");
  }
}

void shared_window() {
  // Every block takes the single copy (the test runs more ranks than CPUs, where a broadcast
  // would otherwise keep to the slots), which on private buffers is cross-memory attach.
  setenv("SHMCOLL_SINGLE_COPY", "always", 1);
  const int b = 300000;
  const long area = static_cast<long>(b) * g_size;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  char* mine = nullptr;
  MPI_Win win;
  MPI_Win_allocate_shared(2 * area, 1, MPI_INFO_NULL, comm, &mine, &win);
  // A second window whose parts the MPI pads to pages: they still follow one another.
  MPI_Info noncontig;
  MPI_Info_create(&noncontig);
  MPI_Info_set(noncontig, "alloc_shared_noncontig", "true");
  char* padded = nullptr;
  MPI_Win padded_win;
  MPI_Win_allocate_shared(2 * area + 100 * g_rank, 1, noncontig, comm, &padded, &padded_win);
  MPI_Info_free(&noncontig);
  long seq = 0;
  unsigned long long served = 0, fallback = 0, served_after = 0;
  shmcoll_mpi_stats(&served, &fallback);
  all_five(comm, mine, mine + area, b, seq);
  all_five(comm, padded, padded + area, b, seq);
  // Without cross-memory attach, only memcpy between the window's parts can move the blocks.
  check(shmcoll::test::forbid_cross_memory_attach(), "seccomp filter installed");
  char probe = 0;
  iovec here{&probe, 1}, there{&probe, 1};
  check(process_vm_readv(getpid(), &here, 1, &there, 1, 0) < 0 && errno == EPERM,
        "cross-memory attach is forbidden");
  all_five(comm, mine, mine + area, b, seq);
  all_five(comm, padded, padded + area, b, seq);
  shmcoll_mpi_stats(&served_after, &fallback);
  check(served_after - served == 20ull * static_cast<unsigned long long>(g_size),
        "every call was served by shmcoll");
  MPI_Win_free(&padded_win);
  MPI_Win_free(&win);
  MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  int provided = 0;
  MPI_Init_thread(&argc, &argv, mode == "threads" ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                  &provided);
  mpi_checks::start();
  if (mode == "errors-return")
    errors_return();
  else if (mode == "error-classes")
    error_classes();
  else if (mode == "skipped-collective")
    skipped_collective();
  else if (mode == "empty-calls")
    empty_calls();
  else if (mode == "nonblocking")
    nonblocking();
  else if (mode == "nonblocking-errors")
    nonblocking_errors();
  else if (mode == "errors-across-nodes")
    errors_across_nodes(Forms{false});
  else if (mode == "nonblocking-errors-across-nodes")
    errors_across_nodes(Forms{true});
  else if (mode == "large-bcast")
    large_bcast();
  else if (mode == "errors-fatal")
    errors_fatal();
  else if (mode == "dup-loop")
    dup_loop(argc > 2 ? std::atoi(argv[2]) : 1000);
  else if (mode == "threads")
    threads();
  else if (mode == "budget")
    budget();
  else if (mode == "window")
    shared_window();
  else
    check(false, "unknown mode");
  return mpi_checks::finish();
}
