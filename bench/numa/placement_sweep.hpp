// shmcoll-bench --placements: the collectives under every placement of placement_plan.hpp, one
// table each, then what placement costs. Every rank binds itself to its planned core before the
// team of a mapping forms (so the team's tree sees the ranks where they run), and places its
// buffers on the planned node with libnuma (checked with move_pages).
#pragma once

#include <string>

#include "collective_sweep.hpp"
#include "shmcoll/bootstrap.hpp"

namespace shmcoll::bench {

struct PlacementCommand {
  SweepSettings sweep;
  std::string json_path, png_path;  // rank 0 writes them; empty: not written
};

// Run by every rank of the job. Returns the exit status: 0, or 1 (validation failed, or a
// rank could not be bound or its memory placed: said on stderr).
int run_placements(Bootstrap& bootstrap, const PlacementCommand& command);

}  // namespace shmcoll::bench
