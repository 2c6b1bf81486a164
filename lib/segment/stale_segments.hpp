// Team segments that killed jobs left in /dev/shm, and their removal.
//
// A team's segment has a name only while the team forms: every rank removes it once all have
// attached, or when formation fails. A name outlives formation only when every rank of the
// team died meanwhile (SIGKILL from a batch scheduler, say). Such a segment is stale when its
// creator no longer runs: without rank 0 the team can never form, and removing the name does
// not touch the mappings of ranks that attached already. The creator is recognized by its pid
// and start time, which it writes into the header before it reserves the segment's pages, so a
// reused pid does not keep a segment alive. A segment without them (its creator died within
// the microseconds between creating and stamping it) is stale once older than
// kIncompleteAgeSeconds. The regions behind shared buffers are not swept: they hold no header.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll::segment {

inline constexpr int kIncompleteAgeSeconds = 600;

struct SegmentEntry {
  std::string name;  // in the POSIX shared-memory namespace (/dev/shm/<name>)
  std::uint64_t bytes = 0;
  pid_t creator_pid = 0;  // 0 when the header does not say
  bool stale = false;
  std::string state;  // why it is or is not stale, for shmcoll-info
};

// This user's team segments (names segment_name() makes) found in `directory`.
std::vector<SegmentEntry> list_segments(const std::string& directory = "/dev/shm");
// Removes this user's stale team segments; returns how many were removed.
int remove_stale_segments(const std::string& directory = "/dev/shm");
// remove_stale_segments() once per process, before its first team segment is created.
void remove_stale_segments_once();

}  // namespace shmcoll::segment
