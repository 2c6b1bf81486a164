// Which algorithm a collective call takes: flat, or along the topology tree. One small table of
// rules by collective, size and team shape, overridden per collective by the *_ALGORITHM
// options. The answer is the same on every rank of a correct program: it depends only on rank
// 0's options, the places exchanged at team formation, the single-copy probe, and (uniform
// forms) the common block size.
//
// Why these rules:
// - A team in one group (one package, NUMA node and L3, or places unknown) has no boundary to
//   save: flat, whose root reaches everyone in one step.
// - A tree of one level (every rank a child of the root: one group, or a split team whose other
//   groups are single ranks) moves data as the flat algorithm does, root to each rank, so it
//   runs the flat code even where the tree is forced: the tree code's per-root plans and
//   general readers cost small calls time (docs/tuning.md) on a path no boundary justifies.
// - Broadcast: the tree at every size. Flat, every rank reads the whole message across the
//   boundary; down the tree each byte crosses each boundary once.
// - Scatter and gather: each block crosses a boundary once either way, so the tree only saves
//   synchronization (the root waits for one leader per group, not for every rank). Below the
//   single-copy size that matters. From it both move every block once (the tree's single copy
//   only shapes the completion, single_copy.hpp); the flat one stays the default there until
//   a machine with several NUMA nodes shows which is faster.
// - Scatterv and gatherv: only the root knows the sizes, so the choice cannot depend on them:
//   the tree when the team has no single copy (the flat path then streams every block too).
//   With it, blocks from the single-copy size move once either way (along the tree as direct
//   entries, tree_layout.hpp); flat stays the default until several NUMA nodes are measured.
// - The v-forms' size tables must fit in a writer's slots (table_fits); otherwise flat.
//
// Single copy (Choice::single_copy, broadcast, scatter and gather; the v-forms decide block by
// block): from the single-copy size, where the team passed the probe, except in teams of more
// than 2 ranks with a CPU each
// (broadcast through the slots; scatter(v) and gather(v) blocks from a total size, Options::
// scatter_single_copy_min_team_bytes), and except a broadcast in an
// oversubscribed team (more ranks than CPUs). There every reader copies the same message, which
// the slots hold hot in the shared cache, while each cross-memory read pins the root's pages
// again and the root's shares wait for descheduled peers (docs/tuning.md).
#pragma once

#include <cstdint>

#include "protocol/signature.hpp"
#include "shmcoll/options.hpp"
#include "topology/hierarchy.hpp"

namespace shmcoll::registry {

// The single copy's minimum block where cross-memory attach is slow: where rank 0 measured it
// at Options::kSlowCrossCopyCost times memcpy's cost per byte or more when the team formed, the
// single copy starts from this size instead, if it is larger (SHMCOLL_SINGLE_COPY=auto). There
// each system call pins the peer's 4 KiB pages one by one, and a cooperative copy, each core
// moving its part at a third of memcpy's speed or less, loses to the slots' copy-in and
// copy-out until the buffers are on huge pages and the blocks are large.
inline constexpr std::uint64_t kSlowCrossCopySingleCopyMinBytes = 256 * 1024;
// In a team with more ranks than CPUs (SHMCOLL_SINGLE_COPY=auto), where no rank waits for
// another's copy: gather(v) blocks take the single copy from this size (if also the general
// minimum or more), since the root takes no share and waits for each sender's copy in that
// sender's time slice; a broadcast from the larger size (and past the slot ring), since each
// peer copies the whole message straight from the root's buffer in its own time slice while
// the slots' chunks stay hot in cache. docs/tuning.md has the measurements.
inline constexpr std::uint64_t kOversubscribedGatherSingleCopyMinBytes = 32 * 1024;
inline constexpr std::uint64_t kOversubscribedBcastSingleCopyMinBytes = 1024 * 1024;

// What the choice depends on, the same on every rank (TeamImpl::shape(root)).
struct TeamShape {
  int size = 1;
  bool splits = false;              // the places split into more than one group at some level
  bool one_level = false;           // the call's root's tree has one level (depth 1, or one rank)
  bool single_copy = false;         // the team passed the single-copy probe
  bool oversubscribed = false;      // more ranks than the CPUs they may run on, together
  bool single_copy_always = false;  // SHMCOLL_SINGLE_COPY=always: no exception for broadcast
  std::uint64_t single_copy_min_bytes = 0;
  std::uint64_t oversubscribed_bcast_single_copy_min_bytes = kOversubscribedBcastSingleCopyMinBytes;
  std::uint64_t oversubscribed_gather_single_copy_min_bytes =
      kOversubscribedGatherSingleCopyMinBytes;
  std::uint64_t scatter_single_copy_min_team_bytes = 0;  // see Options
  std::uint64_t gather_single_copy_min_team_bytes = 0;
  std::uint64_t slot_bytes = 0;
  std::uint32_t slots = 0;
  Algorithm bcast = Algorithm::kAuto, scatter = Algorithm::kAuto, gather = Algorithm::kAuto;
};

// The shape of a team of `ranks` whose tree from the call's root is `tree`, with rank 0's
// `options` and what formation settled: whether the team has the single copy, whether it is
// oversubscribed, the single copy's minimum and the slot ring.
TeamShape shape_of(const Options& options, int ranks, const topology::Tree& tree, bool single_copy,
                   bool oversubscribed, std::uint64_t single_copy_min_bytes,
                   std::uint64_t slot_bytes, std::uint32_t slots);

struct Choice {
  bool tree = false;
  const char* why = "";      // the rule that decided, for shmcoll-info
  bool single_copy = false;  // bcast, scatter, gather: the blocks move with one copy
};

// `block_bytes`: bcast the message, scatter/gather the block per rank; unused for the v-forms.
Choice choose(const TeamShape& shape, Kind kind, std::uint64_t block_bytes);

// Whether a block of `block_bytes` (the message of a broadcast, a rank's block otherwise) moves
// with the single copy rather than through the slots. The v-forms ask it block by block.
bool single_copy_block(const TeamShape& shape, Kind kind, std::uint64_t block_bytes);

// For scatterv and gatherv, where single_copy_block is a threshold in the block's size (a
// minimum, raised in some team shapes, never a range): the smallest block up to `max_bytes`
// that it accepts, found by bisection; max_bytes + 1 where it accepts none.
std::uint64_t v_form_single_copy_from(const TeamShape& shape, Kind kind, std::uint64_t max_bytes);

// The block size from which the single copy starts in a team whose rank 0 measured cross-memory
// attach at `cross_copy_cost` times memcpy's cost (0: not measured): Options::
// single_copy_min_bytes, raised to kSlowCrossCopySingleCopyMinBytes where the cost is
// Options::kSlowCrossCopyCost or more and SHMCOLL_SINGLE_COPY is auto.
std::uint64_t single_copy_min_bytes(const Options& options, double cross_copy_cost);

// Whether a ring of `slots` x `slot_bytes` per rank is deep enough for a writer to run ahead of
// its reader at memcpy speed (Options::kPipelineRingBytes).
inline bool deep_ring(std::uint32_t slots, std::uint64_t slot_bytes) {
  return std::uint64_t{slots} * slot_bytes >= Options::kPipelineRingBytes;
}

// Whether every call with this shape runs flat, whatever its kind and size: the rules that say
// so (one rank, one group, a one-level tree) come before any rule that picks the tree, and no
// option overrides them. A shortcut for the calls' hot path; choose() agrees (unit test).
inline bool always_flat(const TeamShape& shape) {
  return shape.size < 2 || !shape.splits || shape.one_level;
}

// Whether a v-form's size table (8 bytes per rank) fits in the chunks a writer may have
// outstanding, which its readers' first pass needs.
bool table_fits(int team_size, std::uint64_t slot_bytes, std::uint32_t slots);

}  // namespace shmcoll::registry
