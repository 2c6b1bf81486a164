// Creating, attaching and removing a team's shared segment (Boost.Interprocess
// shared_memory_object + mapped_region, i.e. a POSIX shm object under /dev/shm).
#pragma once

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cstddef>
#include <string>

#include "segment/layout.hpp"
#include "segment/numa_placement.hpp"

namespace shmcoll::segment {

class Segment {
 public:
  Segment() = default;
  // Creates `name` exclusively (fails if it exists, so nobody can pre-create it for us) with
  // mode 0600, reserves its pages (a full /dev/shm is an error now, not a SIGBUS later),
  // writes the header and publishes it.
  // `nodes`: each rank's area is allocated on that OS NUMA node where given (numa_placement.hpp).
  static Segment create(const std::string& name, const Geometry& geometry,
                        const RankNodes& nodes = {});
  // Opens and maps `name`; validates magic, version, layout hash, sizes and team size against
  // `expected` before returning.
  static Segment attach(const std::string& name, const Geometry& expected);
  // Removes the name from /dev/shm; mappings stay valid. A missing name is not an error.
  static void remove(const std::string& name);

  std::byte* base() const { return static_cast<std::byte*>(region_.get_address()); }
  std::size_t size() const { return region_.get_size(); }
  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(base()); }
  AbortRecord& abort_record() const {
    return *reinterpret_cast<AbortRecord*>(base() + sizeof(SegmentHeader));
  }
  RankArea rank(std::uint32_t r) const {
    return RankArea(ranks_base_ + r * rank_stride_, geometry_.slots, geometry_.slot_bytes);
  }
  const Geometry& geometry() const { return geometry_; }
  // The creator: how many rank areas got their node's policy, and why the rest did not.
  const PlacementOutcome& placement() const { return placement_; }

 private:
  // Maps and records the geometry; the rank areas' place is computed here once (every access to
  // a peer's line goes through rank(), several times per operation).
  void map(const boost::interprocess::shared_memory_object& shm, const Geometry& geometry);
  // Fills this process's page tables for the whole segment, its pages being allocated already
  // (create_reserved_object), so that no collective takes a page fault on a line it touches for
  // the first time. Best effort: kernels before Linux 5.14 refuse it, and then the faults come
  // one page at a time as before.
  void populate_page_tables();

  boost::interprocess::mapped_region region_;
  Geometry geometry_;
  std::byte* ranks_base_ = nullptr;
  std::uint64_t rank_stride_ = 0;
  PlacementOutcome placement_;
};

// What attach checks of a header it did not write (it may be garbage, or hostile): every field
// against what this process computes for `expected`, and the object's size. Returns the first
// problem as "<field> is <value>, expected <value>", or an empty string when all agree.
std::string check_header(const SegmentHeader& header, std::uint64_t object_bytes,
                         const Geometry& expected);

// "shmcoll-<uid>-<job>-<nonce>": unique per user, job and team, and not guessable when the
// nonce is random (random_nonce()); every rank can compute it from the job id and the nonce.
std::string segment_name(const std::string& job_id, std::uint64_t nonce);
std::uint64_t random_nonce();
// segment_name(job_id, random_nonce()).
std::string make_segment_name(const std::string& job_id);
// The prefix every segment of `job_id` starts with (for a launcher's last-resort sweep).
std::string segment_name_prefix(const std::string& job_id);

}  // namespace shmcoll::segment
