#include "coll/registry.hpp"

#include <algorithm>

#include "coll/tree_layout.hpp"

namespace shmcoll::registry {

TeamShape shape_of(const Options& options, int ranks, const topology::Tree& tree, bool single_copy,
                   bool oversubscribed, std::uint64_t single_copy_min_bytes,
                   std::uint64_t slot_bytes, std::uint32_t slots) {
  TeamShape shape;
  shape.size = ranks;
  shape.splits = !tree.levels.empty();
  shape.one_level = tree.depth <= 1;
  shape.single_copy = single_copy;
  shape.oversubscribed = oversubscribed;
  shape.single_copy_always = options.single_copy == SingleCopy::kAlways;
  shape.single_copy_min_bytes = single_copy_min_bytes;
  shape.scatter_single_copy_min_team_bytes = options.scatter_single_copy_min_team_bytes;
  shape.gather_single_copy_min_team_bytes = options.gather_single_copy_min_team_bytes;
  shape.slot_bytes = slot_bytes;
  shape.slots = slots;
  shape.bcast = options.bcast_algorithm;
  shape.scatter = options.scatter_algorithm;
  shape.gather = options.gather_algorithm;
  return shape;
}

bool table_fits(int team_size, std::uint64_t slot_bytes, std::uint32_t slots) {
  return tree_layout::max_table_bytes(static_cast<std::size_t>(team_size)) <=
         slot_bytes * std::uint64_t{slots};
}

bool single_copy_block(const TeamShape& shape, Kind kind, std::uint64_t block_bytes) {
  if (shape.size < 2 || !shape.single_copy || block_bytes < shape.single_copy_min_bytes)
    return false;
  if (shape.single_copy_always) return true;
  // In an oversubscribed team every peer of a broadcast copies the whole message from the root
  // in its own time slice; only large messages gain over the slots' cached chunks, and only
  // those the slot ring cannot hold: a message that fits, the root writes without waiting for
  // any reader, and each reader copies it at memcpy speed when its turn comes (docs/tuning.md).
  if (kind == Kind::kBcast && shape.oversubscribed)
    return block_bytes >= shape.oversubscribed_bcast_single_copy_min_bytes &&
           block_bytes > std::uint64_t{shape.slots} * shape.slot_bytes;
  // Gather in an oversubscribed team: without the root's share, the root waits for each
  // sender's copy in that sender's time slice, and the single copy starts paying later
  // (kOversubscribedGatherSingleCopyMinBytes).
  const bool gather = kind == Kind::kGather || kind == Kind::kGatherv;
  if (gather && shape.oversubscribed &&
      block_bytes < shape.oversubscribed_gather_single_copy_min_bytes)
    return false;
  // More than 2 ranks, each with a CPU: every broadcast reader pins and copies the root's same
  // pages, and a scatter's or gather's single copies cost more than the root's memcpys through
  // the slots until the blocks add up to megabytes (Options::scatter_single_copy_min_team_bytes
  // for the measurements).
  if (shape.size > 2 && !shape.oversubscribed) {
    if (kind == Kind::kBcast) return false;
    const bool scatter = kind == Kind::kScatter || kind == Kind::kScatterv;
    const std::uint64_t team_min = scatter ? shape.scatter_single_copy_min_team_bytes
                                           : shape.gather_single_copy_min_team_bytes;
    const auto ranks = static_cast<std::uint64_t>(shape.size);
    return block_bytes >= (team_min + ranks - 1) / ranks;  // ranks x block, without overflow
  }
  return true;
}

std::uint64_t single_copy_min_bytes(const Options& options, double cross_copy_cost) {
  if (options.single_copy != SingleCopy::kAuto || cross_copy_cost < Options::kSlowCrossCopyCost)
    return options.single_copy_min_bytes;
  return std::max<std::uint64_t>(options.single_copy_min_bytes, kSlowCrossCopySingleCopyMinBytes);
}

std::uint64_t v_form_single_copy_from(const TeamShape& shape, Kind kind, std::uint64_t max_bytes) {
  if (single_copy_block(shape, kind, 0)) return 0;
  if (!single_copy_block(shape, kind, max_bytes)) return max_bytes + 1;
  std::uint64_t refused = 0, accepted = max_bytes;
  while (accepted - refused > 1) {
    const std::uint64_t mid = refused + (accepted - refused) / 2;
    (single_copy_block(shape, kind, mid) ? accepted : refused) = mid;
  }
  return accepted;
}

namespace {

Choice choose_path(const TeamShape& shape, Kind kind, std::uint64_t block_bytes) {
  const bool v_form = kind == Kind::kScatterv || kind == Kind::kGatherv;
  const Algorithm forced = kind == Kind::kBcast                                ? shape.bcast
                           : kind == Kind::kScatter || kind == Kind::kScatterv ? shape.scatter
                                                                               : shape.gather;
  if (shape.size < 2) return {false, "one rank"};
  if (v_form && !table_fits(shape.size, shape.slot_bytes, shape.slots))
    return {false, "flat: the size table does not fit in a writer's slots"};
  if (forced == Algorithm::kFlat) return {false, "flat: forced"};
  if (!shape.splits) return {false, "flat: the ranks form one group (a one-level tree)"};
  if (shape.one_level) return {false, "flat: the root's tree has one level"};
  if (forced == Algorithm::kTree) return {true, "tree: forced"};
  if (kind == Kind::kBcast) return {true, "tree: each byte crosses each boundary once"};
  if (v_form) {
    return shape.single_copy ? Choice{false, "flat: blocks from the single-copy size move once"}
                             : Choice{true, "tree: no single copy in this team"};
  }
  if (single_copy_block(shape, kind, block_bytes))
    return {false, "flat: single copy moves each block once"};
  return {true, "tree: the root waits for one leader per group"};
}

}  // namespace

Choice choose(const TeamShape& shape, Kind kind, std::uint64_t block_bytes) {
  Choice c = choose_path(shape, kind, block_bytes);
  const bool v_form = kind == Kind::kScatterv || kind == Kind::kGatherv;
  c.single_copy = !v_form && single_copy_block(shape, kind, block_bytes);
  return c;
}

}  // namespace shmcoll::registry
