// What a tool may ask of shmcoll beyond running collectives: the team segments in /dev/shm, the
// shared memory a team would map, and, for a team that does not exist yet, where its ranks
// would sit, the tree a rooted collective would follow and the path each collective would take
// at each size. shmcoll-info is written against this header and the rest of the public API
// only. Nothing here touches a running team.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shmcoll/export.hpp"
#include "shmcoll/options.hpp"

namespace shmcoll::introspection {

// A team segment of this user in /dev/shm. A team's segment has a name only while the team
// forms, so one that stays is stale once its creator has ended.
struct SegmentListing {
  std::string name;  // in the POSIX shared-memory namespace (/dev/shm/<name>)
  std::uint64_t bytes = 0;
  bool stale = false;
  std::string state;  // why it is or is not stale
};

SHMCOLL_API std::vector<SegmentListing> team_segments();
// Removes a segment's name (its memory goes once no process maps it).
SHMCOLL_API void remove_team_segment(const std::string& name);
// The /dev/shm names of the teams of job `job_id` (the launcher's Bootstrap job id), for a
// launcher's sweep once its ranks have ended. A team removes its name once every rank has
// attached, so this finds something only where a rank died meanwhile.
SHMCOLL_API std::vector<std::string> job_segments(const std::string& job_id);

// A process keeps its last team's segment mapped after the team ends ("parked"), for the next
// team of the same processes in the same order, which then needs no segment of its own. Its
// memory stays taken meanwhile: `charge`, whatever accounts for it (the MPI plugin's node
// budget reservation), lives as long as this process's parked segment does, and is released
// at once if none is parked. Thread-safe.
SHMCOLL_API void charge_parked_segment(std::shared_ptr<void> charge);
// Unmaps this process's parked segment, if any, and releases its charge. Thread-safe.
SHMCOLL_API void release_parked_segment();

// The shared memory a team of `ranks` maps with `options`: a fixed part and one area per rank.
struct SegmentSize {
  std::uint64_t total = 0;
  std::uint64_t fixed = 0;
  std::uint64_t per_rank = 0;
};

SHMCOLL_API SegmentSize segment_size(int ranks, const Options& options);

// Where a rank sits: -1 where the topology does not say.
struct RankPlace {
  int package = -1;
  int numa = -1;
  int l3 = -1;
  int core = -1;
};

// The path a collective takes at one size (for the v-forms, at any size: only their root knows
// the sizes).
struct PathChoice {
  std::string collective;    // "bcast", "scatter", ...
  std::uint64_t bytes = 0;   // per rank; 0 for a v-form's row
  bool tree = false;         // along the topology tree, else flat
  bool single_copy = false;  // one copy between the ranks' buffers, else through the slots
  std::string why;           // the registry's rule
};

// A team of `ranks` as it would form here: on this machine with rank r bound to core r mod
// cores (as shmcoll-run --bind core places them), or on a synthetic or XML topology with rank r
// on PU r mod PUs; the tree of a collective rooted at `root`; and each collective's path,
// assuming the team passes the cross-memory-attach probe unless options.single_copy is off.
struct TeamPreview {
  std::string topology;  // a summary of the machine or topology
  std::string source;    // "this machine", or the description or file it came from
  bool this_machine = true;
  std::vector<RankPlace> places;  // by rank
  int root = 0;
  std::vector<int> parent;                 // by rank, -1 for the root
  std::vector<std::vector<int>> children;  // by rank, in the order the parent serves them
  int depth = 0;                           // edges on the longest root-to-leaf path
  std::string tree_text;                   // the tree drawn in text
  bool oversubscribed = false;             // more ranks than this process's CPUs
  bool single_copy = false;                // the paths assume the probe grants the single copy
  double cross_copy_cost = 0;  // cross-memory attach against memcpy, measured here (0: not)
  std::uint64_t single_copy_min_bytes = 0;  // per rank, after that measure
  std::vector<PathChoice> paths;  // broadcast, scatter, gather at several sizes, then the v-forms
};

// `topology`: empty for options.topology (this machine when that is empty too), else an hwloc
// synthetic description or an XML file. Throws InvalidArgument for a topology hwloc refuses, or
// a root outside the team.
SHMCOLL_API TeamPreview preview_team(int ranks, int root, const std::string& topology,
                                     const Options& options);

}  // namespace shmcoll::introspection
