// A /dev/shm too small for a team's segment (containers: docker gives 64 MB) gives every rank
// a clear error before anything is mapped, never a SIGBUS later. The case mounts a 1 MiB tmpfs
// over /dev/shm in a private mount namespace of a child process; where that is not permitted
// (no CAP_SYS_ADMIN) it says it was skipped.
#include <doctest/doctest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include <cstring>

#include "support/child.hpp"
#include "support/collective_checks.hpp"

namespace shmcoll::test {
namespace {

constexpr int kNoNamespace = 77;

// In the calling (child) process only: /dev/shm becomes a fresh tmpfs of `bytes`.
bool mount_small_dev_shm(std::uint64_t bytes) {
  if (unshare(CLONE_NEWNS) != 0) return false;
  // Keep the new mount from propagating back to the machine's namespace.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  const std::string options = "size=" + std::to_string(bytes) + ",mode=1777";
  return mount("tmpfs", "/dev/shm", "tmpfs", 0, options.c_str()) == 0;
}

bool names_the_space(const std::string& m, std::uint64_t needed) {
  return m.find("needs " + std::to_string(needed) + " bytes but /dev/shm has only") !=
             std::string::npos &&
         m.find("SHMCOLL_SLOT_BYTES") != std::string::npos;
}

}  // namespace

TEST_CASE("a /dev/shm too small for the segment is a clear error on every rank, not SIGBUS") {
  constexpr std::uint64_t kTmpfs = 3 << 20;
  // Default options: 4,096 bytes + 1,060,864 per rank (1 MiB of slots up to 8 ranks). Two
  // ranks fit in 3 MiB, four do not.
  constexpr std::uint64_t kTwo = 2125824, kFour = 4247552;
  const int result = run_in_child([&] {
    if (!mount_small_dev_shm(kTmpfs)) {
      std::fprintf(stderr, "cannot mount a tmpfs here: %s\n", std::strerror(errno));
      return kNoNamespace;
    }
    int failed = 0;
    // Four ranks: formation fails on every rank with the space needed in the message.
    std::string job;
    auto four = run_ranks(
        {.nranks = 4},
        [&](RankContext& ctx) {
          try {
            Team team(ctx.bootstrap, Options{});
            ctx.fail("a team of 4 formed in a 3 MiB /dev/shm");
          } catch (const SegmentError& e) {
            if (!names_the_space(e.what(), kFour)) ctx.fail("unclear message: %s", e.what());
          }
        },
        &job);
    if (!four.succeeded()) {
      std::fprintf(stderr, "4 ranks: %s\n", four.summary().c_str());
      ++failed;
    }
    if (!leftover_segments(job).empty()) ++failed;
    // Two ranks fit and work, large messages included. A second team of two does not fit
    // beside the first: a clear error, and the first team goes on working.
    auto two = run_ranks(
        {.nranks = 2},
        [&](RankContext& ctx) {
          Team team(ctx.bootstrap, Options{});
          check_bcast(team, ctx, {.seq = 1, .root = 1, .count = 3 << 20});
          check_gatherv(team, ctx, {.seq = 2, .root = 0, .count = 70000, .type = kInt32});
          try {
            Team second(ctx.bootstrap, Options{});
            ctx.fail("a second team of 2 formed beside the first in a 3 MiB /dev/shm");
          } catch (const SegmentError& e) {
            if (!names_the_space(e.what(), kTwo)) ctx.fail("unclear message: %s", e.what());
          }
          check_scatter(team, ctx, {.seq = 3, .root = 1, .count = 100000});
        },
        &job);
    if (!two.succeeded()) {
      std::fprintf(stderr, "2 ranks: %s\n", two.summary().c_str());
      ++failed;
    }
    if (!leftover_segments(job).empty()) ++failed;
    struct statvfs fs {};
    if (statvfs("/dev/shm", &fs) != 0 || fs.f_blocks * fs.f_frsize != kTmpfs ||
        fs.f_bfree != fs.f_blocks) {
      std::fprintf(stderr, "the small tmpfs was not in place or not left empty\n");
      ++failed;
    }
    return failed;
  });
  if (result == kNoNamespace) {
    MESSAGE("SKIPPED: no permission to mount a tmpfs in a private mount namespace");
    return;
  }
  CHECK(result == 0);
}

}  // namespace shmcoll::test
