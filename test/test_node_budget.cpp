// The per-node shared-memory budget (mpi/node_budget): what one ledger counts, that a dead
// process's reservation comes back, and that concurrent processes never hold more than the
// budget while ledgers are created and removed under them.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <random>
#include <string>
#include <vector>

#include "mpi/node_budget.hpp"
#include "support/child.hpp"

using shmcoll::mpi::NodeBudget;

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kBudget = 1024 * kKiB;  // 16 units of 64 KiB

// Each test case uses a scope of its own, so runs beside other users of the ledger don't meet.
std::string fresh_scope(const char* name) {
  return std::string("test-") + name + "-" + std::to_string(getpid()) + "-" +
         std::to_string(std::random_device{}());
}

}  // namespace

TEST_CASE("node budget: one ledger counts every reservation; the last release removes it") {
  const std::string scope = fresh_scope("count");
  CHECK_FALSE(NodeBudget::usage(scope).exists);
  {
    NodeBudget::Outcome first = NodeBudget::reserve(600'000, kBudget, scope);
    REQUIRE(first.reservation);
    CHECK(first.reservation->bytes() == 10 * 64 * kKiB);  // rounded up to whole 64 KiB units
    NodeBudget::Usage u = NodeBudget::usage(scope);
    CHECK(u.exists);
    CHECK(u.budget_bytes == kBudget);
    CHECK(u.reserved_bytes == 10 * 64 * kKiB);
    CHECK(u.reservations == 1);

    // The ledger exists, so a caller asking for a bigger budget gets the existing one.
    NodeBudget::Outcome second = NodeBudget::reserve(600'000, 100 * kBudget, scope);
    CHECK_FALSE(second.reservation);
    CHECK(second.refusal ==
          "needs 655360 bytes but 655360 of the node's 1048576 bytes are held by 1 team(s)");

    NodeBudget::Outcome third = NodeBudget::reserve(300'000, kBudget, scope);
    REQUIRE(third.reservation);
    CHECK(NodeBudget::usage(scope).reserved_bytes == 15 * 64 * kKiB);
    CHECK(NodeBudget::usage(scope).reservations == 2);

    // Moving a reservation moves the ownership; releasing one leaves the other counted.
    NodeBudget::Reservation moved = std::move(*third.reservation);
    third.reservation.reset();
    CHECK(NodeBudget::usage(scope).reservations == 2);
    first.reservation.reset();
    CHECK(NodeBudget::usage(scope).reserved_bytes == 5 * 64 * kKiB);
    CHECK(NodeBudget::usage(scope).reservations == 1);
  }
  CHECK_FALSE(NodeBudget::usage(scope).exists);

  const NodeBudget::Outcome too_big = NodeBudget::reserve(2 * kBudget, kBudget, scope);
  CHECK_FALSE(too_big.reservation);
  CHECK(too_big.refusal == "needs 2097152 bytes but the node's budget is 1048576 bytes");
  CHECK_FALSE(NodeBudget::usage(scope).exists);  // the refused first caller left no ledger
}

TEST_CASE("node budget: the kernel returns a killed process's reservation") {
  const std::string scope = fresh_scope("kill");
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  std::fflush(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    NodeBudget::Outcome held = NodeBudget::reserve(900 * kKiB, kBudget, scope);
    const char byte = held.reservation ? 'y' : 'n';
    if (write(ready[1], &byte, 1) != 1) _exit(3);
    pause();  // until SIGKILL: the reservation's destructor never runs
    _exit(2);
  }
  close(ready[1]);
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  close(ready[0]);
  REQUIRE(byte == 'y');
  CHECK(NodeBudget::usage(scope).reserved_bytes == 15 * 64 * kKiB);  // 900 KiB, rounded up
  CHECK_FALSE(NodeBudget::reserve(600'000, kBudget, scope).reservation);

  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));
  {
    // The kernel undid the child's units and its holder count.
    NodeBudget::Usage u = NodeBudget::usage(scope);
    CHECK(u.reserved_bytes == 0);
    CHECK(u.reservations == 0);
    const NodeBudget::Outcome now = NodeBudget::reserve(kBudget, kBudget, scope);
    CHECK(now.reservation);
  }
  // A ledger whose last holder died stays (empty) until the next release removes it.
  CHECK_FALSE(NodeBudget::usage(scope).exists);
}

TEST_CASE("node budget: concurrent processes never hold more than the budget") {
  const std::string scope = fresh_scope("race");
  // Bytes the children say they hold, in a shared page: added after a reservation succeeds and
  // taken off before it is released, so it never exceeds what the ledger has granted.
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  auto* held = new (page) std::atomic<std::uint64_t>(0);
  auto* over = new (static_cast<char*>(page) + 64) std::atomic<int>(0);
  auto* granted = new (static_cast<char*>(page) + 128) std::atomic<int>(0);
  auto* refused = new (static_cast<char*>(page) + 192) std::atomic<int>(0);

  constexpr int kChildren = 4;
  constexpr int kRounds = 300;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      std::mt19937 rng(static_cast<unsigned>(getpid()));
      for (int round = 0; round < kRounds; ++round) {
        const std::uint64_t want = 64 * kKiB * (1 + rng() % 6);
        NodeBudget::Outcome got = NodeBudget::reserve(want, kBudget, scope);
        if (!got.reservation) {
          if (got.refusal.find("are held by") == std::string::npos) _exit(4);  // not "full"
          refused->fetch_add(1);
          continue;
        }
        granted->fetch_add(1);
        if (held->fetch_add(got.reservation->bytes()) + got.reservation->bytes() > kBudget)
          over->fetch_add(1);
        if (rng() % 4 == 0) usleep(50);
        held->fetch_sub(got.reservation->bytes());
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  MESSAGE("granted " << granted->load() << ", refused " << refused->load());
  CHECK(over->load() == 0);
  CHECK(granted->load() > 0);
  CHECK(granted->load() + refused->load() == kChildren * kRounds);
  CHECK_FALSE(NodeBudget::usage(scope).exists);
  munmap(page, 4096);
}
