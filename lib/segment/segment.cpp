#include "segment/segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>

#include "segment/shared_region.hpp"
#include "segment/stale_segments.hpp"
#include "shmcoll/error.hpp"
#include "sync/liveness.hpp"

namespace shmcoll::segment {
namespace bip = boost::interprocess;

namespace {

std::string describe(const std::string& name) { return "shared segment '" + name + "'"; }

template <class F>
auto boost_call(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const bip::interprocess_exception& e) {
    throw SegmentError(what + ": " + e.what());
  }
}

// This process's start time, read once: a creator stamps it before anything else.
std::uint64_t own_start_ticks() {
  static const std::uint64_t ticks = sync::process_start_ticks(getpid());
  return ticks;
}

}  // namespace

Segment Segment::create(const std::string& name, const Geometry& geometry, const RankNodes& nodes) {
  remove_stale_segments_once();
  own_start_ticks();  // read before the name exists
  const std::uint64_t total = geometry.total_bytes();
  PlacementOutcome placement;
  bip::shared_memory_object shm = create_reserved_object(
      name, total, describe(name),
      "; enlarge /dev/shm (docker: --shm-size) or lower SHMCOLL_SLOT_BYTES / SHMCOLL_SLOTS",
      [&](int fd) {
        if (!nodes.empty()) placement = prefer_rank_nodes(fd, geometry, nodes);
      },
      [&](int fd) {
        // Who creates it, first of all (the pages are reserved later, which takes longest): a
        // creator killed from here on is recognized by remove_stale_segments. The header's
        // other fields stay zero until the header is complete.
        SegmentHeader stamp{};
        stamp.creator_pid = static_cast<std::int32_t>(getpid());
        stamp.creator_start_ticks = own_start_ticks();
        if (pwrite(fd, &stamp, sizeof stamp, 0) != static_cast<ssize_t>(sizeof stamp)) {
          // Only the sweep of stale segments loses: it then waits kIncompleteAgeSeconds.
        }
      });
  try {
    Segment seg;
    seg.placement_ = placement;
    seg.map(shm, geometry);
    // Fresh tmpfs pages are zero, which is the initial value of every flag and tag.
    SegmentHeader& h = seg.header();
    h.magic = kMagic;
    h.version = kVersion;
    h.nranks = geometry.nranks;
    h.layout_hash = layout_hash();
    h.total_bytes = total;
    h.slot_bytes = geometry.slot_bytes;
    h.slots = geometry.slots;
    // creator_pid and creator_start_ticks: stamped when the object was created (on_created).
    h.ranks_offset = geometry.ranks_offset();
    h.rank_stride = geometry.rank_stride();
    // release: every header field above becomes visible to an attacher that acquires `ready`.
    h.ready.store(1, std::memory_order_release);
    seg.populate_page_tables();
    return seg;
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    throw SegmentError("cannot size or map " + describe(name) + ": " + e.what());
  } catch (...) {
    bip::shared_memory_object::remove(name.c_str());
    throw;
  }
}

void Segment::populate_page_tables() {
#ifdef MADV_POPULATE_WRITE
  // Within the geometry only: attach calls this after the header and the object's size checked
  // out, and populating a hole of a larger object would allocate pages there.
  madvise(base(), geometry_.total_bytes(), MADV_POPULATE_WRITE);
#endif
}

void Segment::map(const bip::shared_memory_object& shm, const Geometry& geometry) {
  region_ = bip::mapped_region(shm, bip::read_write);
  geometry_ = geometry;
  ranks_base_ = base() + geometry.ranks_offset();
  rank_stride_ = geometry.rank_stride();
}

Segment Segment::attach(const std::string& name, const Geometry& expected) {
  bip::shared_memory_object shm = boost_call("cannot open " + describe(name), [&] {
    return bip::shared_memory_object(bip::open_only, name.c_str(), bip::read_write);
  });
  bip::offset_t actual = 0;
  shm.get_size(actual);
  if (actual < static_cast<bip::offset_t>(sizeof(SegmentHeader))) {
    throw SegmentError(describe(name) + " is " + std::to_string(actual) +
                       " bytes, too small to hold a header");
  }
  Segment seg;
  boost_call("cannot map " + describe(name), [&] { seg.map(shm, expected); });
  const SegmentHeader& h = seg.header();
  // acquire: pairs with the creator's release of `ready`; the other fields are read after it.
  const std::uint32_t ready = h.ready.load(std::memory_order_acquire);
  const std::string problem = ready != 1
                                  ? "ready flag is " + std::to_string(ready) + ", expected 1"
                                  : check_header(h, static_cast<std::uint64_t>(actual), expected);
  if (!problem.empty()) throw SegmentError(describe(name) + ": " + problem);
  seg.populate_page_tables();
  return seg;
}

std::string check_header(const SegmentHeader& h, std::uint64_t object_bytes,
                         const Geometry& expected) {
  auto mismatch = [](const char* field, std::uint64_t got, std::uint64_t want) {
    return std::string(field) + " is " + std::to_string(got) + ", expected " + std::to_string(want);
  };
  if (h.magic != kMagic) return mismatch("magic", h.magic, kMagic);
  if (h.version != kVersion) return mismatch("version", h.version, kVersion);
  if (h.layout_hash != layout_hash()) return mismatch("layout hash", h.layout_hash, layout_hash());
  if (h.nranks != expected.nranks) return mismatch("team size", h.nranks, expected.nranks);
  if (h.slots != expected.slots) return mismatch("slot count", h.slots, expected.slots);
  if (h.slot_bytes != expected.slot_bytes) {
    return mismatch("slot bytes", h.slot_bytes, expected.slot_bytes);
  }
  if (h.ranks_offset != expected.ranks_offset()) {
    return mismatch("rank area offset", h.ranks_offset, expected.ranks_offset());
  }
  if (h.rank_stride != expected.rank_stride()) {
    return mismatch("rank area stride", h.rank_stride, expected.rank_stride());
  }
  const std::uint64_t want = expected.total_bytes();
  if (h.total_bytes != want) return mismatch("size in header", h.total_bytes, want);
  if (object_bytes != want) return mismatch("size of the object", object_bytes, want);
  return {};
}

void Segment::remove(const std::string& name) { bip::shared_memory_object::remove(name.c_str()); }

std::string segment_name_prefix(const std::string& job_id) {
  std::string safe;
  for (char c : job_id.substr(0, 64)) {
    safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  }
  return "shmcoll-" + std::to_string(getuid()) + "-" + safe + "-";
}

std::uint64_t random_nonce() {
  std::uint64_t nonce = 0;
  if (getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce)) {
    throw SegmentError(std::string("getrandom failed: ") + std::strerror(errno));
  }
  return nonce;
}

std::string segment_name(const std::string& job_id, std::uint64_t nonce) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(nonce));
  return segment_name_prefix(job_id) + hex;
}

std::string make_segment_name(const std::string& job_id) {
  return segment_name(job_id, random_nonce());
}

}  // namespace shmcoll::segment
