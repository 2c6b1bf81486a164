// Another user can neither attach to a team's segment nor make a team use a name it created
// first. Needs root (to become another user); elsewhere the case says it was skipped.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "launch/job.hpp"
#include "segment/segment.hpp"
#include "shmcoll/error.hpp"
#include "support/child.hpp"

namespace shmcoll::segment {
namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

bool become_nobody() {
  return setgroups(0, nullptr) == 0 && setgid(kNogroup) == 0 && setuid(kNobody) == 0 &&
         getuid() == kNobody;
}

}  // namespace

TEST_CASE("another user cannot attach to a segment or pre-create a team's name") {
  if (geteuid() != 0) {
    MESSAGE("SKIPPED: becoming another user needs root");
    return;
  }
  const Geometry g{2, 2, 4096};
  const std::string name = make_segment_name(launch::make_job_id());
  Segment created = Segment::create(name, g);

  // 1. Attaching as nobody is refused by the kernel (mode 0600), with a clear error.
  const int attach = test::run_in_child([&] {
    if (!become_nobody()) return 3;
    try {
      Segment::attach(name, g);
    } catch (const SegmentError& e) {
      const std::string m = e.what();
      if (m.find("cannot open shared segment '" + name + "'") == std::string::npos ||
          m.find("ermission denied") == std::string::npos) {
        std::fprintf(stderr, "unexpected message: %s\n", m.c_str());
        return 2;
      }
      return 0;
    }
    return 1;  // attached
  });
  CHECK_MESSAGE(attach == 0, "attach as nobody: 1 attached, 2 wrong message, 3 setuid failed");
  // Nor can it open the file directly, for reading or writing.
  const int open_raw = test::run_in_child([&] {
    if (!become_nobody()) return 3;
    return open(("/dev/shm/" + name).c_str(), O_RDONLY) < 0 ? 0 : 1;
  });
  CHECK(open_raw == 0);
  Segment::remove(name);

  // 2. A name another user created first is never used: creation fails and the file stays
  //    theirs (names carry 64 random bits from getrandom, so guessing one is not practical,
  //    but even a correct guess gets no team to use the attacker's file).
  const std::string taken = make_segment_name(launch::make_job_id());
  const int planted = test::run_in_child([&] {
    if (!become_nobody()) return 3;
    const int fd = open(("/dev/shm/" + taken).c_str(), O_CREAT | O_EXCL | O_RDWR, 0666);
    return fd >= 0 ? 0 : 1;
  });
  REQUIRE(planted == 0);
  std::string message;
  try {
    Segment::create(taken, g);
  } catch (const SegmentError& e) {
    message = e.what();
  }
  CHECK(message.find("cannot create shared segment '" + taken + "'") != std::string::npos);
  struct stat st {};
  REQUIRE(stat(("/dev/shm/" + taken).c_str(), &st) == 0);
  CHECK(st.st_uid == kNobody);
  CHECK(st.st_size == 0);  // nothing of ours went into it
  unlink(("/dev/shm/" + taken).c_str());
}

}  // namespace shmcoll::segment
