// The segment: exclusive creation with mode 0600, validation on attach, the /dev/shm room check.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include "launch/job.hpp"
#include "segment/segment.hpp"
#include "shmcoll/error.hpp"

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
