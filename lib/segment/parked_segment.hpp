// A team's segment kept mapped after the team ends, for the next team of the same processes in
// the same order: a communicator duplicated, used once and freed, again and again, would create,
// populate and remove a segment every time, which costs far more than the calls it serves.
//
// Each process keeps at most one, its last team's. A new team takes it out at formation
// (take_parked) and reuses it only if every member offers the same segment for the same
// processes (TeamImpl::form decides from the join exchange, identically on every rank); every
// member then clears its own area's control lines (clear_rank_controls) before anyone uses the
// team. Otherwise each member unmaps its copy, and the segment's memory goes back to the system
// once the last one has.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "segment/segment.hpp"

namespace shmcoll::segment {

struct ParkedSegment {
  Segment segment;
  std::uint64_t nonce = 0;  // the random part of its name: which segment it is
  std::string name;         // the name it had (shared allocations are named after it)
  std::vector<pid_t> pids;  // its team's processes, by rank
  // What the team's formation found about cross-memory attach between those processes, which a
  // team that reuses the segment does not probe again: whether it probed, whether every pair
  // passed, and what failed if not.
  bool probed = false;
  bool single_copy = false;
  std::string single_copy_why;
  // Whatever accounts for the segment's memory while it stays parked (the MPI plugin's node
  // budget reservation, set_parked_charge); released with it.
  std::shared_ptr<void> charge;
};

// Parks `segment`, unmapping (and releasing the charge of) the one parked before. Thread-safe, as
// are the calls below.
void park(ParkedSegment&& segment);
// Takes this process's parked segment out, if there is one.
std::optional<ParkedSegment> take_parked();
// Unmaps the parked segment, if any, releasing its charge.
void drop_parked();
// Makes `charge` live as long as the segment parked now; released at once if none is.
void set_parked_charge(std::shared_ptr<void> charge);

// Zeroes rank r's control lines (status, wake, progress, signature history, inbox, slot
// headers) and, for r == 0, the team's abort record: every tag and flag back to a fresh
// segment's value. Slot payloads keep their bytes, which no tag points to any more.
void clear_rank_controls(const Segment& segment, std::uint32_t r);

}  // namespace shmcoll::segment
