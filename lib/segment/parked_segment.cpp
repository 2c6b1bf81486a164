#include "segment/parked_segment.hpp"

#include <cstring>
#include <mutex>
#include <utility>

namespace shmcoll::segment {
namespace {

struct Slot {
  std::mutex mutex;
  std::optional<ParkedSegment> parked;
};

Slot& slot() {
  static Slot s;
  return s;
}

}  // namespace

void park(ParkedSegment&& segment) {
  std::optional<ParkedSegment> previous;  // unmapped after the lock is released
  std::lock_guard<std::mutex> lock(slot().mutex);
  previous = std::exchange(slot().parked, std::move(segment));
}

std::optional<ParkedSegment> take_parked() {
  std::lock_guard<std::mutex> lock(slot().mutex);
  return std::exchange(slot().parked, std::nullopt);
}

void drop_parked() { std::optional<ParkedSegment> dropped = take_parked(); }

void set_parked_charge(std::shared_ptr<void> charge) {
  std::lock_guard<std::mutex> lock(slot().mutex);
  if (slot().parked) slot().parked->charge = std::move(charge);
}

void clear_rank_controls(const Segment& segment, std::uint32_t r) {
  const Geometry& g = segment.geometry();
  // The control lines and slot headers lie together at the start of the area (RankArea).
  std::memset(static_cast<void*>(&segment.rank(r).status()), 0,
              (RankArea::kControlLines + g.slots) * kCacheLine);
  if (r == 0) std::memset(static_cast<void*>(&segment.abort_record()), 0, sizeof(AbortRecord));
}

}  // namespace shmcoll::segment
