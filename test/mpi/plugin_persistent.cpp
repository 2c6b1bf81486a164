// Persistent collectives through the plugin beyond the data of one start (plugin_check checks
// every case's data), under mpirun with the plugin linked in:
//   semantics  new data at every start; a start completed beside the MPI's own persistent
//              receive whose sender starts the collective first; several communicators
//              started together and completed in reverse order; inactive requests in every
//              completion call; a request freed while active; MPI_Startall of plugin and MPI
//              requests; the served counts
//   errors     MPI_ERRORS_RETURN: a root mismatch returned by the wait with shmcoll's message,
//              then the request starts again; a start of an active request; a start after the
//              communicator was freed
// Rank 0 prints "N passed, M failed"; the exit status is 0 when nothing failed.
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#include <cstdio>
#include <string>
#include <vector>

#include "mpi_checks.hpp"

#if MPI_VERSION >= 4
#define PERSISTENT(name) MPI_##name
#elif defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PERSISTENT(name) MPIX_##name
#endif

extern "C" void shmcoll_mpi_stats_by_form(unsigned long long* blocking,
                                          unsigned long long* nonblocking,
                                          unsigned long long* persistent);

namespace {

using mpi_checks::check;
using mpi_checks::g_rank;
using mpi_checks::g_size;

#if defined(PERSISTENT)

int error_class(int code) {
  int result = MPI_SUCCESS;
  MPI_Error_class(code, &result);
  return result;
}

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

void semantics() {
  unsigned long long before[3] = {};
  shmcoll_mpi_stats_by_form(&before[0], &before[1], &before[2]);
  const int peer = g_size - 1;

  // 1. New data at every start: the root's buffer, the scatter's source and every rank's
  // gathered block change between starts; so does a broadcast of every other int (a strided
  // type, packed at the root and unpacked elsewhere at every start).
  {
    std::vector<int> data(1000), source(static_cast<std::size_t>(g_size) * 3), part(3);
    std::vector<int> mine(2), all(static_cast<std::size_t>(g_size) * 2), spread(100);
    MPI_Datatype strided = MPI_DATATYPE_NULL;
    MPI_Type_vector(50, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Request requests[4];
    PERSISTENT(Bcast_init)
    (data.data(), 1000, MPI_INT, peer, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[0]);
    PERSISTENT(Scatter_init)
    (source.data(), 3, MPI_INT, part.data(), 3, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
     &requests[1]);
    PERSISTENT(Gather_init)
    (mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, peer, MPI_COMM_WORLD, MPI_INFO_NULL,
     &requests[2]);
    PERSISTENT(Bcast_init)
    (spread.data(), 1, strided, peer, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[3]);
    bool ok = true;
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < 1000; ++i) data[i] = g_rank == peer ? round * 1000 + i : -1;
      for (std::size_t i = 0; i < source.size(); ++i) source[i] = round * 100 + static_cast<int>(i);
      mine = {round * 10 + g_rank, -round};
      for (int i = 0; i < 100; ++i) spread[i] = g_rank == peer ? round * 100 + i : -1;
      MPI_Startall(4, requests);
      ok = MPI_Waitall(4, requests, MPI_STATUSES_IGNORE) == MPI_SUCCESS && ok;
      ok = ok && data[999] == round * 1000 + 999 && part[2] == round * 100 + g_rank * 3 + 2;
      ok = ok && spread[98] == round * 100 + 98 &&
           spread[99] == (g_rank == peer ? spread[98] + 1 : -1);
      if (g_rank == peer) {
        for (int r = 0; r < g_size; ++r) ok = ok && all[2 * r] == round * 10 + r;
      }
      ok = ok && requests[0] != MPI_REQUEST_NULL;  // persistent: the handle stays
    }
    check(ok, "four starts with new data each time");
    for (MPI_Request& r : requests) MPI_Request_free(&r);
    check(requests[0] == MPI_REQUEST_NULL, "MPI_Request_free of an inactive request");
    MPI_Type_free(&strided);
  }

  // 2. A start waited for beside the MPI's own persistent receive, whose sender starts the
  // same collective as root first and then sends 4 MiB (past any eager limit: the send
  // completes only as rank 0's wait progresses the MPI too).
  {
    std::vector<int> data(1 << 18), message(1 << 20, -1);
    MPI_Request both[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    PERSISTENT(Bcast_init)
    (data.data(), static_cast<int>(data.size()), MPI_INT, peer, MPI_COMM_WORLD, MPI_INFO_NULL,
     &both[0]);
    if (g_rank == 0 && peer != 0) {
      MPI_Recv_init(message.data(), static_cast<int>(message.size()), MPI_INT, peer, 7,
                    MPI_COMM_WORLD, &both[1]);
    }
    bool ok = true;
    for (int round = 0; round < 2; ++round) {
      for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = g_rank == peer ? static_cast<int>(i) + round : -1;
      if (g_rank == 0 && peer != 0) {
        MPI_Startall(2, both);
        ok = MPI_Waitall(2, both, MPI_STATUSES_IGNORE) == MPI_SUCCESS && ok;
        ok = ok && message[12345] == 12345 + round;
      } else if (g_rank == peer && peer != 0) {
        MPI_Start(&both[0]);
        std::vector<int> out(message.size());
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int>(i) + round;
        MPI_Send(out.data(), static_cast<int>(out.size()), MPI_INT, 0, 7, MPI_COMM_WORLD);
        ok = MPI_Wait(&both[0], MPI_STATUS_IGNORE) == MPI_SUCCESS && ok;
      } else {
        MPI_Start(&both[0]);
        ok = MPI_Wait(&both[0], MPI_STATUS_IGNORE) == MPI_SUCCESS && ok;
      }
      ok = ok && data[54321] == 54321 + round;
    }
    check(ok, "a start completed beside the MPI's own persistent receive (twice)");
    for (MPI_Request& r : both) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
  }

  // 3. Three communicators, started together, completed in reverse order one by one.
  {
    MPI_Comm comms[3] = {MPI_COMM_WORLD, MPI_COMM_NULL, MPI_COMM_NULL};
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &comms[2]);  // ranks reversed
    std::vector<std::vector<int>> data(3, std::vector<int>(64));
    MPI_Request requests[3];
    for (int c = 0; c < 3; ++c) {
      PERSISTENT(Bcast_init)(data[c].data(), 64, MPI_INT, 0, comms[c], MPI_INFO_NULL, &requests[c]);
    }
    bool ok = true;
    for (int round = 0; round < 3; ++round) {
      for (int c = 0; c < 3; ++c) {
        int rank = 0;
        MPI_Comm_rank(comms[c], &rank);
        for (int& x : data[c]) x = rank == 0 ? round + 10 * c : -1;
      }
      MPI_Startall(3, requests);
      for (int c = 2; c >= 0; --c)
        ok = MPI_Wait(&requests[c], MPI_STATUS_IGNORE) == MPI_SUCCESS && ok;
      for (int c = 0; c < 3; ++c) ok = ok && data[c][63] == round + 10 * c;
    }
    check(ok, "starts on three communicators completed in reverse order");
    for (MPI_Request& r : requests) MPI_Request_free(&r);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
  }

  // 4. An inactive request in every completion call: complete at once (an empty status), left
  // as it is, and ignored where MPI ignores inactive requests.
  {
    int value = g_rank;
    MPI_Request request = MPI_REQUEST_NULL;
    PERSISTENT(Bcast_init)(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    MPI_Status status;
    status.MPI_TAG = 12345;
    const MPI_Request handle = request;
    int flag = 0, index = 0, outcount = 0, indices[2];
    MPI_Request pair[2] = {request, MPI_REQUEST_NULL};
    check(MPI_Wait(&request, &status) == MPI_SUCCESS && request == handle &&
              status.MPI_TAG == MPI_ANY_TAG,
          "MPI_Wait of an inactive request: at once, an empty status");
    check(MPI_Test(&request, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag == 1,
          "MPI_Test of an inactive request");
    check(MPI_Request_get_status(request, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag == 1,
          "MPI_Request_get_status of an inactive request");
    check(MPI_Waitany(2, pair, &index, MPI_STATUS_IGNORE) == MPI_SUCCESS && index == MPI_UNDEFINED,
          "MPI_Waitany of an inactive request: MPI_UNDEFINED");
    check(MPI_Testsome(2, pair, &outcount, indices, MPI_STATUSES_IGNORE) == MPI_SUCCESS &&
              outcount == MPI_UNDEFINED,
          "MPI_Testsome of an inactive request: MPI_UNDEFINED");
    // Active: Waitany finds it (index 0), then it is inactive again.
    value = g_rank == 0 ? 77 : -1;
    MPI_Start(&request);
    pair[0] = request;
    check(MPI_Waitany(2, pair, &index, MPI_STATUS_IGNORE) == MPI_SUCCESS && index == 0 &&
              pair[0] == handle && value == 77,
          "MPI_Waitany of an active request: its index, the handle kept");
    check(MPI_Waitany(2, pair, &index, MPI_STATUS_IGNORE) == MPI_SUCCESS && index == MPI_UNDEFINED,
          "MPI_Waitany once it completed: MPI_UNDEFINED");
    value = g_rank == 0 ? 78 : -1;
    MPI_Start(&request);
    for (flag = 0; !flag;) MPI_Request_get_status(request, &flag, MPI_STATUS_IGNORE);
    check(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS && value == 78,
          "MPI_Request_get_status until done, then MPI_Wait");
    MPI_Request_free(&request);
  }

  // 5. A request freed while active: the operation still completes before the next call on
  // the communicator.
  {
    std::vector<int> data(1000, g_rank == 0 ? 5 : -1);
    MPI_Request request = MPI_REQUEST_NULL;
    PERSISTENT(Bcast_init)(data.data(), 1000, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    MPI_Start(&request);
    check(MPI_Request_free(&request) == MPI_SUCCESS && request == MPI_REQUEST_NULL,
          "MPI_Request_free of an active request");
    int token = g_rank;
    MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
    check(data[999] == 5 && token == 0, "a freed request completes before the next collective");
  }

  // 6. Every init and start above was served as persistent (inits + starts: 4 + 16, 1 + 2,
  // 3 + 9, 1 + 2, 1 + 1).
  unsigned long long after[3] = {};
  shmcoll_mpi_stats_by_form(&after[0], &after[1], &after[2]);
  const unsigned long long expected = 20 + 3 + 12 + 3 + 2;
  check(after[2] - before[2] == expected,
        "inits and starts served as persistent: " + std::to_string(after[2] - before[2]) + " of " +
            std::to_string(expected));
}

void errors() {
  setenv("SHMCOLL_CHECKS", "full", 1);  // every rank fails in the operation
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  std::vector<int> v(64);
  MPI_Request good = MPI_REQUEST_NULL, bad = MPI_REQUEST_NULL;
  PERSISTENT(Bcast_init)(v.data(), 64, MPI_INT, 0, comm, MPI_INFO_NULL, &good);
  PERSISTENT(Bcast_init)(v.data(), 64, MPI_INT, g_rank == 1 ? 1 : 0, comm, MPI_INFO_NULL, &bad);
  MPI_Start(&good);
  check(MPI_Wait(&good, MPI_STATUS_IGNORE) == MPI_SUCCESS, "a start before the error");
  MPI_Start(&bad);
  const int rc = MPI_Wait(&bad, MPI_STATUS_IGNORE);
  check(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_ARG,
        "a root mismatch: MPI_Wait returns an error of class MPI_ERR_ARG");
  check(error_string(rc).find("root mismatch") != std::string::npos,
        "MPI_Error_string of the wait's code is shmcoll's message: " + error_string(rc));
  MPI_Request_free(&bad);
  for (int i = 0; i < 64; ++i) v[i] = g_rank == 0 ? i : -1;
  MPI_Start(&good);
  check(MPI_Wait(&good, MPI_STATUS_IGNORE) == MPI_SUCCESS && v[63] == 63,
        "the good request starts again after the error");

  // A start of an active request, on a communicator of this rank alone.
  MPI_Comm self;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  MPI_Request alone = MPI_REQUEST_NULL;
  PERSISTENT(Bcast_init)(v.data(), 64, MPI_INT, 0, self, MPI_INFO_NULL, &alone);
  MPI_Start(&alone);
  const int twice = MPI_Start(&alone);
  check(error_class(twice) == MPI_ERR_REQUEST &&
            error_string(twice).find("active") != std::string::npos,
        "a start of an active request: MPI_ERR_REQUEST, " + error_string(twice));
  MPI_Wait(&alone, MPI_STATUS_IGNORE);
  MPI_Request_free(&alone);

  // The request keeps its communicator, as the MPI's own do: it starts after MPI_Comm_free,
  // whose handle is MPI_COMM_NULL at once, and the communicator ends with the request.
  MPI_Comm_free(&comm);
  check(comm == MPI_COMM_NULL, "MPI_Comm_free sets the handle to MPI_COMM_NULL");
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 64; ++i) v[i] = g_rank == 0 ? 100 * round + i : -1;
    const int started = MPI_Start(&good);
    const int waited = MPI_Wait(&good, MPI_STATUS_IGNORE);
    check(started == MPI_SUCCESS && waited == MPI_SUCCESS && v[0] == 100 * round &&
              v[63] == 100 * round + 63,
          "a start after MPI_Comm_free runs (" + error_string(started) + ")");
  }
  check(MPI_Request_free(&good) == MPI_SUCCESS, "MPI_Request_free after MPI_Comm_free");
  MPI_Comm_free(&self);
}

#endif

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  mpi_checks::start();
  const std::string mode = argc > 1 ? argv[1] : "";
#if defined(PERSISTENT)
  if (mode == "semantics")
    semantics();
  else if (mode == "errors")
    errors();
  else
    check(false, "unknown mode " + mode);
#else
  if (g_rank == 0) std::printf("the MPI has no persistent collectives\n");
#endif
  return mpi_checks::finish();
}
