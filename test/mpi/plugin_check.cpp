// Runs under mpirun against either MPI, with the shmcoll plugin linked or preloaded. Every
// collective is called twice with the same inputs: through MPI_* (the plugin) and through PMPI_*
// (the MPI itself); the two results must be identical byte for byte, gaps included. Covers every
// root, several communicators (world, dup, split, reversed, a sub-communicator), MPI_IN_PLACE,
// zero counts, gapped non-monotonic displacements, and a receive datatype with another type map
// than the send side (n MPI_INT against a strided vector, an indexed type or a resized int), and
// a non-contiguous type at the root of the v forms.
// Exit status 0 only if every comparison matched and the plugin served calls.
#include <dlfcn.h>
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace {

int g_rank = 0;
long g_checks = 0, g_failures = 0;

void compare(const std::string& what, const std::vector<int>& a, const std::vector<int>& b) {
  ++g_checks;
  if (a == b) return;
  if (++g_failures <= 10) {
    std::size_t i = 0;
    while (i < a.size() && a[i] == b[i]) ++i;
    std::fprintf(stderr, "[rank %d] MISMATCH %s: element %zu: plugin %d, PMPI %d\n", g_rank,
                 what.c_str(), i, i < a.size() ? a[i] : -1, i < b.size() ? b[i] : -1);
  }
}

int value(int seed, int owner, int i) { return seed * 1000003 + owner * 10007 + i; }
constexpr int kUnset = -77;

using Bcast = int (*)(void*, int, MPI_Datatype, int, MPI_Comm);
using Scatter = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm);
using Scatterv = int (*)(const void*, const int*, const int*, MPI_Datatype, void*, int,
                         MPI_Datatype, int, MPI_Comm);
using Gather = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm);
using Gatherv = int (*)(const void*, int, MPI_Datatype, void*, const int*, const int*, MPI_Datatype,
                        int, MPI_Comm);

// Non-roots may describe their n ints with a derived type of another type map (same signature):
// one element covering n ints spread over 3n ints of memory.
enum class Map { kInts, kVector, kIndexed, kResized };
const char* map_name(Map m) {
  switch (m) {
    case Map::kInts:
      return "int";
    case Map::kVector:
      return "vector";
    case Map::kIndexed:
      return "indexed";
    case Map::kResized:
      return "resized";
  }
  return "?";
}

// The non-blocking forms, each completed at once with the MPI's completion calls in turn:
// alone, or in an array after a receive and before a send of a token between this rank and
// itself (point-to-point requests of the MPI's own, completed in the same calls).
long g_started = 0;  // non-blocking calls made through the plugin
int complete(MPI_Request request, MPI_Comm comm) {
  static int turn = 0;
  const int how = turn++ % 9;
  int flag = 0;
  if (how == 0) return MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (how == 1) {
    int rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    return rc;
  }
  if (how == 2) {
    while (!flag) MPI_Request_get_status(request, &flag, MPI_STATUS_IGNORE);
    return MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  int rank = 0, token = -1;
  MPI_Comm_rank(comm, &rank);
  MPI_Request all[3];
  MPI_Irecv(&token, 1, MPI_INT, rank, 99, comm, &all[0]);
  all[1] = request;
  MPI_Isend(&rank, 1, MPI_INT, rank, 99, comm, &all[2]);
  // Until none is active: a persistent request stays, inactive, where the others become null.
  int index = 0, outcount = 0, indices[3];
  int rc = MPI_SUCCESS;
  switch (how) {
    case 3:
      rc = MPI_Waitall(3, all, MPI_STATUSES_IGNORE);
      break;
    case 4:
      while (!flag && rc == MPI_SUCCESS) rc = MPI_Testall(3, all, &flag, MPI_STATUSES_IGNORE);
      break;
    case 5:
      while (index != MPI_UNDEFINED && rc == MPI_SUCCESS)
        rc = MPI_Waitany(3, all, &index, MPI_STATUS_IGNORE);
      break;
    case 6:
      while (!(flag && index == MPI_UNDEFINED) && rc == MPI_SUCCESS)
        rc = MPI_Testany(3, all, &index, &flag, MPI_STATUS_IGNORE);
      break;
    case 7:
      while (outcount != MPI_UNDEFINED && rc == MPI_SUCCESS)
        rc = MPI_Waitsome(3, all, &outcount, indices, MPI_STATUSES_IGNORE);
      break;
    default:
      while (outcount != MPI_UNDEFINED && rc == MPI_SUCCESS)
        rc = MPI_Testsome(3, all, &outcount, indices, MPI_STATUSES_IGNORE);
      break;
  }
  if (token != rank) {
    std::fprintf(stderr, "[rank %d] point-to-point token %d beside a collective\n", g_rank, token);
    ++g_failures;
  }
  return rc;
}
// Completing<Bcast>::call<MPI_Ibcast> has MPI_Bcast's signature (Start may take wider counts:
// MPI_Ibcast_c).
template <class F>
struct Completing;
template <class... Args>
struct Completing<int (*)(Args...)> {
  template <auto Start>
  static int call(Args... args) {
    MPI_Request request = MPI_REQUEST_NULL;
    ++g_started;
    const int rc = Start(args..., &request);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Comm comm = std::get<sizeof...(Args) - 1>(std::tuple<Args...>(args...));
    return complete(request, comm);
  }
};

// The persistent forms: Persisting<Bcast>::call<MPI_Bcast_init> makes the request, starts it
// and completes it twice (with complete's calls in turn: a restart must give the same data),
// then frees it.
long g_persistent = 0;  // persistent inits and starts made through the plugin
template <class F>
struct Persisting;
template <class... Args>
struct Persisting<int (*)(Args...)> {
  template <auto Init>
  static int call(Args... args) {
    MPI_Request request = MPI_REQUEST_NULL;
    if (const int rc = Init(args..., MPI_INFO_NULL, &request); rc != MPI_SUCCESS) return rc;
    MPI_Comm comm = std::get<sizeof...(Args) - 1>(std::tuple<Args...>(args...));
    for (int start = 0; start < 2; ++start) {
      if (const int rc = MPI_Start(&request); rc != MPI_SUCCESS) return rc;
      if (const int rc = complete(request, comm); rc != MPI_SUCCESS) return rc;
    }
    g_persistent += 3;
    return MPI_Request_free(&request);
  }
};

// One element that holds n ints at ints 0, 3, 6, ... (vector), at 3i+1 (indexed), or n
// elements of an int resized to an extent of 3 ints (resized).
MPI_Datatype make_type(Map m, int n, int& count) {
  MPI_Datatype t = MPI_INT;
  count = n;
  if (m == Map::kVector && n > 0) {
    MPI_Type_vector(n, 1, 3, MPI_INT, &t);
    count = 1;
  } else if (m == Map::kIndexed && n > 0) {
    std::vector<int> lens(static_cast<std::size_t>(n), 1), at(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) at[static_cast<std::size_t>(i)] = 3 * i + 1;
    MPI_Type_indexed(n, lens.data(), at.data(), MPI_INT, &t);
    count = 1;
  } else if (m == Map::kResized) {
    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &t);
  }
  if (t != MPI_INT) MPI_Type_commit(&t);
  return t;
}
void free_type(MPI_Datatype& t) {
  if (t != MPI_INT) MPI_Type_free(&t);
}

struct Case {
  MPI_Comm comm;
  std::string comm_name;
  int rank, size, root, n, seed;
  bool in_place;
  Map map;  // how non-roots describe their data (and the root in the v forms)
  std::string tag() const {
    return comm_name + " root " + std::to_string(root) + " n " + std::to_string(n) +
           (in_place ? " in-place" : "") + " " + map_name(map);
  }
};

// Buffers for a derived view of n ints spread over 3n ints.
std::vector<int> spread_buffer(int n) {
  return std::vector<int>(static_cast<std::size_t>(3 * n + 2), kUnset);
}
int spread_index(Map m, int i) { return m == Map::kIndexed ? 3 * i + 1 : 3 * i; }

std::vector<int> run_bcast(Bcast f, const Case& c) {
  const Map m = c.rank == c.root ? Map::kInts : c.map;
  int count = 0;
  MPI_Datatype t = make_type(m, c.n, count);
  std::vector<int> buf = m == Map::kInts ? std::vector<int>(static_cast<std::size_t>(c.n), kUnset)
                                         : spread_buffer(c.n);
  if (c.rank == c.root) {
    for (int i = 0; i < c.n; ++i) buf[static_cast<std::size_t>(i)] = value(c.seed, c.root, i);
  }
  f(buf.data(), count, t, c.root, c.comm);
  free_type(t);
  return buf;
}

std::vector<int> run_scatter(Scatter f, const Case& c) {
  std::vector<int> send, recv;
  const Map m = c.rank == c.root ? Map::kInts : c.map;
  int count = 0;
  MPI_Datatype t = make_type(m, c.n, count);
  recv = m == Map::kInts ? std::vector<int>(static_cast<std::size_t>(c.n), kUnset)
                         : spread_buffer(c.n);
  if (c.rank == c.root) {
    send.resize(static_cast<std::size_t>(c.n * c.size));
    for (int r = 0; r < c.size; ++r)
      for (int i = 0; i < c.n; ++i)
        send[static_cast<std::size_t>(r * c.n + i)] = value(c.seed, r, i);
  }
  if (c.rank == c.root && c.in_place) {
    // Garbage recvcount and recvtype: they must not be looked at.
    f(send.data(), c.n, MPI_INT, MPI_IN_PLACE, -5, MPI_DATATYPE_NULL, c.root, c.comm);
    return send;
  }
  if (c.rank == c.root)
    f(send.data(), c.n, MPI_INT, recv.data(), count, t, c.root, c.comm);
  else
    f(nullptr, -3, MPI_DATATYPE_NULL, recv.data(), count, t, c.root, c.comm);  // root-only garbage
  free_type(t);
  if (c.rank == c.root) recv.insert(recv.end(), send.begin(), send.end());
  return recv;
}

std::vector<int> run_gather(Gather f, const Case& c) {
  const Map m = c.rank == c.root ? Map::kInts : c.map;
  int count = 0;
  MPI_Datatype t = make_type(m, c.n, count);
  std::vector<int> send =
      m == Map::kInts ? std::vector<int>(static_cast<std::size_t>(c.n)) : spread_buffer(c.n);
  for (int i = 0; i < c.n; ++i) {
    send[static_cast<std::size_t>(m == Map::kInts ? i : spread_index(m, i))] =
        value(c.seed, c.rank, i);
  }
  std::vector<int> recv(c.rank == c.root ? static_cast<std::size_t>(c.n * c.size) : 0, kUnset);
  if (c.rank == c.root) {
    if (c.in_place) {
      for (int i = 0; i < c.n; ++i)
        recv[static_cast<std::size_t>(c.root * c.n + i)] = value(c.seed, c.root, i);
      f(MPI_IN_PLACE, -9, MPI_DATATYPE_NULL, recv.data(), c.n, MPI_INT, c.root, c.comm);
    } else {
      f(send.data(), c.n, MPI_INT, recv.data(), c.n, MPI_INT, c.root, c.comm);
    }
  } else {
    f(send.data(), count, t, nullptr, -1, MPI_DATATYPE_NULL, c.root, c.comm);
  }
  free_type(t);
  return recv;
}

// v-form layout: counts 0..3 x n (some zero), blocks in reversed rank order with gaps.
void v_layout(const Case& c, std::vector<int>& counts, std::vector<int>& displs, int& extent) {
  counts.assign(static_cast<std::size_t>(c.size), 0);
  displs.assign(static_cast<std::size_t>(c.size), 0);
  int at = 1;
  for (int r = c.size - 1; r >= 0; --r) {
    counts[static_cast<std::size_t>(r)] = ((r + c.seed) % 4) * c.n / 2 + (r % 3 == 0 ? 1 : 0);
    displs[static_cast<std::size_t>(r)] = at;
    at += counts[static_cast<std::size_t>(r)] + 2;
  }
  extent = at;
}

// The root's v-form type: a plain int, or with Map::kResized an int with an extent of 3 ints
// (each element then occupies 3 ints of the root's buffer: a non-contiguous type to pack).
int root_stride(const Case& c) { return c.map == Map::kResized ? 3 : 1; }

std::vector<int> run_scatterv(Scatterv f, const Case& c) {
  std::vector<int> counts, displs;
  int extent = 0;
  v_layout(c, counts, displs, extent);
  const int mine = counts[static_cast<std::size_t>(c.rank)];
  std::vector<int> send, recv(static_cast<std::size_t>(mine), kUnset);
  if (c.rank == c.root) {
    int unused = 0;
    MPI_Datatype t = make_type(c.map == Map::kResized ? Map::kResized : Map::kInts, 0, unused);
    const int k = root_stride(c);
    send.assign(static_cast<std::size_t>(extent * k), kUnset);
    for (int r = 0; r < c.size; ++r)
      for (int i = 0; i < counts[static_cast<std::size_t>(r)]; ++i)
        send[static_cast<std::size_t>((displs[static_cast<std::size_t>(r)] + i) * k)] =
            value(c.seed, r, i);
    if (c.in_place) {
      f(send.data(), counts.data(), displs.data(), t, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, c.root,
        c.comm);
      free_type(t);
      return send;
    }
    f(send.data(), counts.data(), displs.data(), t, recv.data(), mine, MPI_INT, c.root, c.comm);
    free_type(t);
  } else {
    f(nullptr, nullptr, nullptr, MPI_DATATYPE_NULL, recv.data(), mine, MPI_INT, c.root, c.comm);
  }
  return recv;
}

std::vector<int> run_gatherv(Gatherv f, const Case& c) {
  std::vector<int> counts, displs;
  int extent = 0;
  v_layout(c, counts, displs, extent);
  const int mine = counts[static_cast<std::size_t>(c.rank)];
  std::vector<int> send(static_cast<std::size_t>(mine));
  for (int i = 0; i < mine; ++i) send[static_cast<std::size_t>(i)] = value(c.seed, c.rank, i);
  const int k = root_stride(c);
  std::vector<int> recv(c.rank == c.root ? static_cast<std::size_t>(extent * k) : 0, kUnset);
  if (c.rank == c.root) {
    int unused = 0;
    MPI_Datatype t = make_type(c.map == Map::kResized ? Map::kResized : Map::kInts, 0, unused);
    if (c.in_place) {
      for (int i = 0; i < mine; ++i) {
        recv[static_cast<std::size_t>((displs[static_cast<std::size_t>(c.root)] + i) * k)] =
            send[static_cast<std::size_t>(i)];
      }
      f(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, recv.data(), counts.data(), displs.data(), t, c.root,
        c.comm);
    } else {
      f(send.data(), mine, MPI_INT, recv.data(), counts.data(), displs.data(), t, c.root, c.comm);
    }
    free_type(t);
  } else {
    f(send.data(), mine, MPI_INT, nullptr, nullptr, nullptr, MPI_DATATYPE_NULL, c.root, c.comm);
  }
  return recv;
}

enum class Form {
  kBlocking,
  kNonblocking,
  kPersistent,
  kLarge,  // MPI-4's large-count forms: MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c, ...
  kLargeNonblocking,
  kLargePersistent
};
// The persistent forms where the MPI has them: MPI-4's, or Open MPI 4's extension's.
#if MPI_VERSION >= 4
#define PERSISTENT(name) MPI_##name
#elif defined(OPEN_MPI) && defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PERSISTENT(name) MPIX_##name
#else
#define PERSISTENT(name) nullptr
#endif

#if MPI_VERSION >= 4
// The large-count forms called with this program's int arguments: Widened<Bcast>::call<
// MPI_Bcast_c> has MPI_Bcast's signature. The v-forms' counts and displacements are widened
// into arrays that live until the same form's next call (past this call's completion).
long g_large = 0;  // blocking large-count calls made through the plugin
template <class F>
struct Widened;
template <class... Args>
struct Widened<int (*)(Args...)> {
  template <auto Large>
  static int call(Args... args) {
    ++g_large;
    return Large(args...);
  }
};
struct WideArrays {
  std::vector<MPI_Count> counts;
  std::vector<MPI_Aint> displs;
  bool has_counts = false, has_displs = false;  // the rank passed them (root-only elsewhere)
  void set(const int* c, const int* d, MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    has_counts = c != nullptr;
    has_displs = d != nullptr;
    counts.assign(static_cast<std::size_t>(size), 0);
    displs.assign(static_cast<std::size_t>(size), 0);
    for (int r = 0; r < size; ++r) {
      if (has_counts) counts[static_cast<std::size_t>(r)] = c[r];
      if (has_displs) displs[static_cast<std::size_t>(r)] = d[r];
    }
  }
  const MPI_Count* c() const { return has_counts ? counts.data() : nullptr; }
  const MPI_Aint* d() const { return has_displs ? displs.data() : nullptr; }
};
template <auto Large, class... Rest>
int scatterv_c(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
               Rest... rest) {
  static WideArrays wide;
  wide.set(sendcounts, displs, comm);
  return Large(sendbuf, wide.c(), wide.d(), sendtype, recvbuf, recvcount, recvtype, root, comm,
               rest...);
}
template <auto Large, class... Rest>
int gatherv_c(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
              MPI_Comm comm, Rest... rest) {
  static WideArrays wide;
  wide.set(recvcounts, displs, comm);
  return Large(sendbuf, sendcount, sendtype, recvbuf, wide.c(), wide.d(), recvtype, root, comm,
               rest...);
}
#define LARGE(name) MPI_##name
#define LARGE_V(wrapper, name, ...) wrapper<MPI_##name __VA_OPT__(, ) __VA_ARGS__>
#else
#define LARGE(name) nullptr
#define LARGE_V(wrapper, name, ...) nullptr
#endif

// The plugin's side of a collective in the given form: the blocking call, or Completing's,
// Persisting's or Widened's around the other forms. main runs only the forms the MPI has.
template <class F, F Blocking, auto Nonblocking, auto Persistent, auto Large, auto LargeNonblocking,
          auto LargePersistent>
F pick(Form form) {
  switch (form) {
    case Form::kNonblocking:
      return Completing<F>::template call<Nonblocking>;
#if MPI_VERSION >= 4 || defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
    case Form::kPersistent:
      return Persisting<F>::template call<Persistent>;
#endif
#if MPI_VERSION >= 4
    case Form::kLarge:
      return Widened<F>::template call<Large>;
    case Form::kLargeNonblocking:
      return Completing<F>::template call<LargeNonblocking>;
    case Form::kLargePersistent:
      return Persisting<F>::template call<LargePersistent>;
#endif
    default:
      return Blocking;
  }
}

// `seed` is the same on every rank of `comm` (the layouts of the v forms derive from it).
// Runs `run` through the plugin, then through PMPI (in this order on every rank: as arguments of
// one call their order would be unspecified), and compares.
template <class Run, class F>
void both(const std::string& what, Run run, F plugin, F pmpi, const Case& c) {
  const std::vector<int> via_plugin = run(plugin, c);
  const std::vector<int> via_pmpi = run(pmpi, c);
  compare(what + " " + c.tag(), via_plugin, via_pmpi);
}

// The plugin's side calls the blocking, the non-blocking or the persistent forms (pick).
void check_comm(MPI_Comm comm, const std::string& name, int seed, Form form = Form::kBlocking) {
  Case c{};
  c.comm = comm;
  c.comm_name = name;
  MPI_Comm_rank(comm, &c.rank);
  MPI_Comm_size(comm, &c.size);
  for (int root = 0; root < c.size; ++root) {
    for (int n : {0, 1, 7, 1000, 40000}) {
      for (int variant = 0; variant < 5; ++variant) {
        c.root = root;
        c.n = n;
        c.seed = ++seed;
        c.in_place = variant == 1 || variant == 4;
        c.map = variant == 2   ? Map::kVector
                : variant == 3 ? Map::kIndexed
                : variant == 4 ? Map::kResized
                               : Map::kInts;
        both("bcast", run_bcast,
             pick<Bcast, MPI_Bcast, MPI_Ibcast, PERSISTENT(Bcast_init), LARGE(Bcast_c),
                  LARGE(Ibcast_c), LARGE(Bcast_init_c)>(form),
             Bcast{PMPI_Bcast}, c);
        both("scatter", run_scatter,
             pick<Scatter, MPI_Scatter, MPI_Iscatter, PERSISTENT(Scatter_init), LARGE(Scatter_c),
                  LARGE(Iscatter_c), LARGE(Scatter_init_c)>(form),
             Scatter{PMPI_Scatter}, c);
        both("gather", run_gather,
             pick<Gather, MPI_Gather, MPI_Igather, PERSISTENT(Gather_init), LARGE(Gather_c),
                  LARGE(Igather_c), LARGE(Gather_init_c)>(form),
             Gather{PMPI_Gather}, c);
        // v forms: ints, or a resized int at the root (variant 4, in place) and plain ints
        // elsewhere.
        if (c.map == Map::kInts || c.map == Map::kResized) {
          both("scatterv", run_scatterv,
               pick<Scatterv, MPI_Scatterv, MPI_Iscatterv, PERSISTENT(Scatterv_init),
                    LARGE_V(scatterv_c, Scatterv_c), LARGE_V(scatterv_c, Iscatterv_c, MPI_Request*),
                    LARGE_V(scatterv_c, Scatterv_init_c, MPI_Info, MPI_Request*)>(form),
               Scatterv{PMPI_Scatterv}, c);
          both("gatherv", run_gatherv,
               pick<Gatherv, MPI_Gatherv, MPI_Igatherv, PERSISTENT(Gatherv_init),
                    LARGE_V(gatherv_c, Gatherv_c), LARGE_V(gatherv_c, Igatherv_c, MPI_Request*),
                    LARGE_V(gatherv_c, Gatherv_init_c, MPI_Info, MPI_Request*)>(form),
               Gatherv{PMPI_Gatherv}, c);
        }
      }
    }
  }
}

using CountsByForm = void (*)(unsigned long long*, unsigned long long*, unsigned long long*);

// The large-count forms, where the MPI has them, each call counted as served in its form.
void check_large_count_forms(CountsByForm by_form) {
#if MPI_VERSION >= 4
  unsigned long long before[3] = {};
  if (by_form != nullptr) by_form(&before[0], &before[1], &before[2]);
  check_comm(MPI_COMM_WORLD, "world, large-count", 10000, Form::kLarge);
  if (by_form != nullptr) {
    unsigned long long after[3] = {};
    by_form(&after[0], &after[1], &after[2]);
    if (after[0] - before[0] != static_cast<unsigned long long>(g_large)) {
      std::fprintf(stderr, "[rank %d] %ld large-count calls: served %llu\n", g_rank, g_large,
                   after[0] - before[0]);
      ++g_failures;
    }
  }
#else
  (void)by_form;
#endif
}

// The non-blocking and persistent forms, where the MPI has them, each call counted as served
// in its form.
void check_started_forms(MPI_Comm split, MPI_Comm reversed, CountsByForm by_form) {
  unsigned long long before[3] = {};
  if (by_form != nullptr) by_form(&before[0], &before[1], &before[2]);
  check_comm(MPI_COMM_WORLD, "world, non-blocking", 6000, Form::kNonblocking);
  check_comm(split, "split odd/even, non-blocking", 7000, Form::kNonblocking);
#if MPI_VERSION >= 4 || defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
  check_comm(MPI_COMM_WORLD, "world, persistent", 8000, Form::kPersistent);
  check_comm(reversed, "reversed, persistent", 9000, Form::kPersistent);
#endif
#if MPI_VERSION >= 4
  check_comm(split, "split odd/even, large-count non-blocking", 11000, Form::kLargeNonblocking);
  check_comm(MPI_COMM_WORLD, "world, large-count persistent", 12000, Form::kLargePersistent);
#endif
  if (by_form != nullptr) {
    unsigned long long after[3] = {};
    by_form(&after[0], &after[1], &after[2]);
    if (after[1] - before[1] != static_cast<unsigned long long>(g_started) ||
        after[2] - before[2] != static_cast<unsigned long long>(g_persistent) ||
        after[0] != before[0]) {
      std::fprintf(stderr,
                   "[rank %d] %ld non-blocking and %ld persistent calls: served %llu as "
                   "non-blocking, %llu as persistent, %llu as blocking\n",
                   g_rank, g_started, g_persistent, after[1] - before[1], after[2] - before[2],
                   after[0] - before[0]);
      ++g_failures;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check_comm(MPI_COMM_WORLD, "world", 1000);
  MPI_Comm dup, split, reversed, sub;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  check_comm(dup, "dup", 2000);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &split);
  check_comm(split, "split odd/even", 3000);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - g_rank, &reversed);
  check_comm(reversed, "reversed", 4000);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank < (size + 1) / 2 ? 0 : MPI_UNDEFINED, g_rank, &sub);
  if (sub != MPI_COMM_NULL) check_comm(sub, "first half", 5000);
  // The non-blocking forms on two communicators; every call must reach the plugin, and be
  // counted as non-blocking.
  // The persistent and the large-count forms likewise, where the MPI has them.
  using Counts = void (*)(unsigned long long*, unsigned long long*);
  auto stats = reinterpret_cast<Counts>(dlsym(RTLD_DEFAULT, "shmcoll_mpi_stats"));
  auto by_form = reinterpret_cast<CountsByForm>(dlsym(RTLD_DEFAULT, "shmcoll_mpi_stats_by_form"));
  unsigned long long fallback = 0;
  check_large_count_forms(by_form);
  check_started_forms(split, reversed, by_form);
  for (MPI_Comm* c : {&dup, &split, &reversed, &sub}) {
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  }

  // The plugin must have served the calls: through the library linked in, or preloaded.
  unsigned long long served = 0;
  if (stats == nullptr) {
    std::fprintf(stderr, "[rank %d] the shmcoll plugin is not loaded\n", g_rank);
    ++g_failures;
  } else {
    stats(&served, &fallback);
    if (served == 0 || fallback != 0) {
      std::fprintf(stderr, "[rank %d] plugin served %llu calls, %llu fell back\n", g_rank, served,
                   fallback);
      ++g_failures;
    }
  }
  long totals[2] = {g_checks, g_failures}, sums[2] = {0, 0};
  PMPI_Reduce(totals, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    std::printf("plugin_check: %d ranks, %llu calls served by shmcoll on rank 0\n", size, served);
    std::printf("%ld passed, %ld failed\n", sums[0] - sums[1], sums[1]);
  }
  const int failed = sums[1] > 0;
  int any = 0;
  PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
