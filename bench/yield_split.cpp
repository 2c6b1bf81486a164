// yield-split: where the calls of an oversubscribed run spend their time, around the CPU they
// give up. Preloaded before the MPI (or before the shmcoll plugin, which it then wraps):
//
//   LD_PRELOAD=libyield-split-openmpi.so[:libshmcoll_mpi_openmpi.so] YIELD_SPLIT_OUT=DIR mpirun ...
//
// Each rank records, for every call of the five collectives, the clock at its entry and exit and
// around the first sched_yield() it makes from its entry on (inside the call, or after it, in
// whatever the program does next, such as the MPI's barrier). At MPI_Finalize it writes them to
// DIR/rank<N>.txt, one call per line: collective entry exit yield_start yield_end (microseconds
// of CLOCK_MONOTONIC, the same clock in every process of the machine; 0 where it did not
// yield). bench/yield_split.py lines up the ranks' calls and prints, per collective, medians of
// the root's work before its first yield, inside it and after it, and of each other rank's call,
// start and first yield after its call. Both the MPI's own collectives and the plugin's yield
// through the C library's sched_yield, which this library interposes.
//
// The clock reads cost every rank some 20-40 ns per call: compare runs that both have it.
#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

struct CallRecord {
  const char* collective;
  double entry, exit, yield_start, yield_end;
};

std::vector<CallRecord> records;
bool armed = false;  // the last call has not yet seen its first yield

// The next definition of `name` after this library: the plugin's, or the MPI's.
template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// Records one call around `call()`.
template <class Call>
int timed(const char* collective, Call&& call) {
  armed = false;
  records.push_back({collective, now_us(), 0, 0, 0});
  armed = true;
  const int rc = call();
  records.back().exit = now_us();
  return rc;
}

}  // namespace

extern "C" int sched_yield() {
  static const auto real = next<int (*)()>("sched_yield");
  if (!armed) return real();
  armed = false;
  const double start = now_us();
  const int rc = real();
  records.back().yield_start = start;
  records.back().yield_end = now_us();
  return rc;
}

extern "C" int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  static const auto real = next<int (*)(void*, int, MPI_Datatype, int, MPI_Comm)>("MPI_Bcast");
  return timed("bcast", [&] { return real(buf, count, type, root, comm); });
}

extern "C" int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                           MPI_Datatype rtype, int root, MPI_Comm comm) {
  static const auto real =
      next<int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm)>(
          "MPI_Scatter");
  return timed("scatter",
               [&] { return real(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

extern "C" int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[],
                            MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                            int root, MPI_Comm comm) {
  static const auto real = next<int (*)(const void*, const int*, const int*, MPI_Datatype, void*,
                                        int, MPI_Datatype, int, MPI_Comm)>("MPI_Scatterv");
  return timed("scatterv",
               [&] { return real(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm); });
}

extern "C" int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                          MPI_Datatype rtype, int root, MPI_Comm comm) {
  static const auto real =
      next<int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm)>(
          "MPI_Gather");
  return timed("gather", [&] { return real(sbuf, scount, stype, rbuf, rcount, rtype, root, comm); });
}

extern "C" int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                           const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                           MPI_Comm comm) {
  static const auto real = next<int (*)(const void*, int, MPI_Datatype, void*, const int*,
                                        const int*, MPI_Datatype, int, MPI_Comm)>("MPI_Gatherv");
  return timed("gatherv",
               [&] { return real(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm); });
}

extern "C" int MPI_Finalize() {
  static const auto real = next<int (*)()>("MPI_Finalize");
  armed = false;
  const char* dir = std::getenv("YIELD_SPLIT_OUT");
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (dir != nullptr) {
    char path[4096];
    std::snprintf(path, sizeof path, "%s/rank%d.txt", dir, rank);
    if (FILE* f = std::fopen(path, "w")) {
      for (const CallRecord& r : records)
        std::fprintf(f, "%s %.3f %.3f %.3f %.3f\n", r.collective, r.entry, r.exit, r.yield_start,
                     r.yield_end);
      std::fclose(f);
    } else {
      std::fprintf(stderr, "yield-split: cannot write %s\n", path);
    }
  }
  return real();
}
