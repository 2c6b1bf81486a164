// MPI plugin behaviour under mpirun (the plugin linked in):
//   errors-return     MPI_ERRORS_RETURN: a root mismatch, and a gatherv count mismatch among
//                     counts that differ from rank to rank, return an MPI error code on every rank,
//                     and the communicator works again afterwards
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

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/seccomp.hpp"

extern "C" void shmcoll_mpi_stats(unsigned long long* served, unsigned long long* fallback);

namespace {

int g_rank = 0, g_size = 0;
int g_passed = 0, g_failed = 0;

void check(bool ok, const char* what) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    std::fprintf(stderr, "[rank %d] FAILED: %s\n", g_rank, what);
  }
}

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
  check(rc_v != MPI_SUCCESS && error_class == MPI_ERR_ARG,
        "a gatherv size mismatch among different counts returns MPI_ERR_ARG on this rank");
  // And the same gatherv with the right counts, in a new team.
  const int right = counts[static_cast<std::size_t>(g_rank)];
  check(MPI_Gatherv(v.data(), right, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, 0,
                    comm) == MPI_SUCCESS,
        "gatherv with different counts after the error");
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
  const int sems0 = semaphore_sets();
  const long rss0 = resident_kib();
  const int fds0 = count_entries("/proc/self/fd", "");
  for (int i = 0; i < cycles; ++i) cycle();
  const long rss1 = resident_kib();
  const int fds1 = count_entries("/proc/self/fd", "");
  MPI_Barrier(MPI_COMM_WORLD);
  const int shm = count_entries("/dev/shm", "shmcoll-");
  const int sems1 = semaphore_sets();
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
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (mode == "errors-return")
    errors_return();
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
  int counts[2] = {g_passed, g_failed}, sums[2] = {0, 0};
  MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) std::printf("%d passed, %d failed\n", sums[0], sums[1]);
  MPI_Finalize();
  return g_failed > 0 ? 1 : 0;
}
