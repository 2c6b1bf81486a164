// The segment: exclusive creation with mode 0600, validation on attach, the /dev/shm room check,
// the sweep of segments killed jobs left behind.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "launch/job.hpp"
#include "segment/segment.hpp"
#include "segment/stale_segments.hpp"
#include "shmcoll/error.hpp"
#include "sync/liveness.hpp"

namespace shmcoll::segment {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SegmentError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a segment is created exclusively with mode 0600 and validated on attach") {
  const std::string name = make_segment_name(launch::make_job_id());
  const Geometry g{3, 2, 4096};
  Segment created = Segment::create(name, g);
  struct stat st {};
  REQUIRE(stat(("/dev/shm/" + name).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(created.header().ready.load() == 1);

  // Nobody can create the same name again (so it cannot be pre-created for us either).
  CHECK(message_of([&] { Segment::create(name, g); }).find("cannot create") != std::string::npos);

  Segment attached = Segment::attach(name, g);
  CHECK(attached.size() == g.total_bytes());
  CHECK(message_of([&] {
          Segment::attach(name, Geometry{4, 2, 4096});
        }).find("team size is 3, expected 4") != std::string::npos);
  CHECK(message_of([&] {
          Segment::attach(name, Geometry{3, 2, 8192});
        }).find("slot bytes is 4096, expected 8192") != std::string::npos);

  // A corrupted header is refused, not read.
  created.header().version = 99;
  CHECK(message_of([&] {
          Segment::attach(name, g);
        }).find("version is 99, expected " + std::to_string(kVersion)) != std::string::npos);
  created.header().version = kVersion;
  created.header().magic = 0;
  CHECK(message_of([&] { Segment::attach(name, g); }).find("magic") != std::string::npos);

  Segment::remove(name);
  CHECK(stat(("/dev/shm/" + name).c_str(), &st) != 0);
  CHECK(message_of([&] { Segment::attach(name, g); }).find("cannot open") != std::string::npos);
  // The mappings outlive the name.
  created.rank(2).status().tag.store(42);
  CHECK(attached.rank(2).status().tag.load() == 42);
}

TEST_CASE("the segment's size is bounded: a fixed part plus a fixed amount per rank") {
  // Default slots (4 x 64 KiB): one page plus 274,432 bytes per rank (175 control lines, 4 slot
  // headers and 4 slots, 273,600 bytes, rounded up to whole pages for NUMA placement), whatever
  // the message sizes (large messages move in chunks or with the single copy, never through a
  // larger segment).
  const Geometry two{2, 4, 65536}, sixteen{16, 4, 65536}, big{128, 4, 65536};
  CHECK(two.total_bytes() == 552960);
  CHECK(sixteen.total_bytes() == 4395008);
  CHECK(big.total_bytes() == 35131392);
  CHECK(big.total_bytes() == 4096 + 128 * 67 * 4096);
  // The 128-rank segment can be created (and its pages reserved) here.
  const std::string name = make_segment_name(launch::make_job_id());
  Segment created = Segment::create(name, big);
  CHECK(created.size() == big.total_bytes());
  CHECK(created.header().nranks == 128);
  Segment::remove(name);
}

TEST_CASE("a segment larger than /dev/shm's free space is refused before mapping") {
  const std::string name = make_segment_name(launch::make_job_id());
  const Geometry huge{1024, 64, std::uint64_t{1} << 30};  // 64 TiB
  const std::string m = message_of([&] { Segment::create(name, huge); });
  CHECK(m.find("/dev/shm has only") != std::string::npos);
  struct stat st {};
  CHECK(stat(("/dev/shm/" + name).c_str(), &st) != 0);
}

}  // namespace shmcoll::segment

namespace shmcoll::segment {
namespace {

// A file shaped like a team segment's header in `dir`, as a creator would leave it.
// `complete`: as the creator leaves it at the end; otherwise only stamped with the creator.
void write_header(const std::string& dir, const std::string& name, bool complete, pid_t creator,
                  std::uint64_t start_ticks) {
  SegmentHeader h{};
  h.creator_pid = creator;
  h.creator_start_ticks = start_ticks;
  if (complete) {
    h.magic = kMagic;
    h.version = kVersion;
    h.ready.store(1);
  }
  FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(&h, sizeof h, 1, f);
  std::fclose(f);
}

pid_t ended_process() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

}  // namespace

TEST_CASE("stale segments: those whose creator ended are removed, live ones stay") {
  char dir_template[] = "/tmp/shmcoll-stale-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string prefix = "shmcoll-" + std::to_string(getuid()) + "-test-";
  auto named = [&](const char* what) { return prefix + what + "-00000000000000ab"; };
  const pid_t me = getpid();
  const std::uint64_t my_start = sync::process_start_ticks(me);
  REQUIRE(my_start > 0);
  write_header(dir, named("live"), true, me, my_start);
  write_header(dir, named("live-stamped"), false, me, my_start);  // still reserving its pages
  write_header(dir, named("ended"), true, ended_process(), 1);
  write_header(dir, named("ended-stamped"), false, ended_process(), 1);  // killed while creating
  write_header(dir, named("pid-reused"), true, me, my_start + 1);  // another process, same pid
  write_header(dir, named("unstamped"), false, 0, 0);
  write_header(dir, named("unstamped-old"), false, 0, 0);
  const std::string old = dir + "/" + named("unstamped-old");
  const timeval long_ago[2] = {{std::time(nullptr) - kIncompleteAgeSeconds - 60, 0},
                               {std::time(nullptr) - kIncompleteAgeSeconds - 60, 0}};
  REQUIRE(utimes(old.c_str(), long_ago) == 0);
  // Not team segments: another name, and a shared buffer's region (no header).
  write_header(dir, "shmcoll-other-name", true, ended_process(), 1);
  write_header(dir, named("ended") + "-b1", true, ended_process(), 1);

  const std::vector<std::string> stale_ones = {named("ended"), named("ended-stamped"),
                                               named("pid-reused"), named("unstamped-old")};
  int stale = 0;
  for (const SegmentEntry& e : list_segments(dir)) {
    INFO(e.name << ": " << e.state);
    stale += e.stale ? 1 : 0;
    CHECK(e.stale == (std::find(stale_ones.begin(), stale_ones.end(), e.name) != stale_ones.end()));
  }
  CHECK(stale == 4);
  CHECK(remove_stale_segments(dir) == 4);
  auto exists = [&](const std::string& name) {
    return access((dir + "/" + name).c_str(), F_OK) == 0;
  };
  for (const std::string& name : stale_ones) CHECK_FALSE(exists(name));
  for (const std::string& name : {named("live"), named("live-stamped"), named("unstamped"),
                                  std::string("shmcoll-other-name"), named("ended") + "-b1"})
    CHECK(exists(name));
  std::filesystem::remove_all(dir);
}

TEST_CASE("stale segments: a forming team's segment in /dev/shm survives the sweep") {
  const std::string name = make_segment_name(launch::make_job_id());
  Segment created = Segment::create(name, Geometry{2, 2, 4096});
  remove_stale_segments();
  CHECK(access(("/dev/shm/" + name).c_str(), F_OK) == 0);
  Segment::remove(name);
}

}  // namespace shmcoll::segment
