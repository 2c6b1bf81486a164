#include "coll/team_algorithms.hpp"

#include <algorithm>
#include <cstdio>

#include "protocol/validation.hpp"

namespace shmcoll {

TeamAlgorithms::TeamAlgorithms(TeamImpl& team) : team_(team) {
  // A cooperative single copy weighs the root's memcpy of its own block against its
  // cross-memory share by this machine's ratio (SingleCopyExchange::balanced_root_share),
  // bounded so that one noisy measure cannot hand the root most of a block or none of it.
  const double cost = team.cross_copy_cost();
  if (cost > 0) local_copy_weight_ = std::clamp(1.0 / cost, 0.25, 1.0);
  copy_balance_.reset(local_copy_weight_);
  // Where cross-memory attach is slow, the single copy starts later; every rank raises the
  // minimum alike, from rank 0's measure.
  single_copy_min_bytes_ = registry::single_copy_min_bytes(team.options(), cost);
}

bool TeamAlgorithms::learn_v_form_tree(Kind kind, int root) {
  if (v_form_tree_.empty()) v_form_tree_.assign(2 * static_cast<std::size_t>(team_.size()), -1);
  const bool tree = uses_tree(kind, 0, root);
  v_form_tree_[v_form_index(kind, root)] = tree ? 1 : 0;
  return tree;
}

std::uint64_t TeamAlgorithms::learn_single_copy_from(Kind kind) {
  const std::uint64_t from = registry::v_form_single_copy_from(shape(0), kind, validate::kMaxBytes);
  v_form_single_copy_from_[v_form_kind_index(kind)] = from + 1;
  return from;
}

registry::TeamShape TeamAlgorithms::make_shape(int root) {
  return registry::shape_of(team_.options(), team_.size(), team_.tree(root),
                            team_.single_copy_available(), team_.oversubscribed(),
                            single_copy_min_bytes_, team_.slot_bytes(), team_.slots());
}

bool TeamAlgorithms::shared_copy_beyond_minimum(Kind kind, std::uint64_t bytes, int root) {
  if (team_.size() == 2 && !team_.oversubscribed()) return true;
  registry::TeamShape with_single_copy = shape(root);
  with_single_copy.single_copy = true;
  return registry::single_copy_block(with_single_copy, kind, bytes);
}

std::string TeamAlgorithms::data_paths() const {
  const Options& options = team_.options();
  // The same rules as registry::single_copy_block and SharedCopyChoice, in words.
  const bool deep_ring = registry::deep_ring(team_.slots(), team_.slot_bytes());
  const std::string shared_copy =
      "; broadcast, scatter and gather blocks from " +
      std::to_string(options.shared_copy_min_bytes) +
      " bytes whose buffers all lie in one shared allocation copy straight between them (the "
      "v-forms' blocks: the root's and that rank's)";
  if (!team_.single_copy_available()) {
    // A deeper ring moves large messages faster through the slots (docs/tuning.md).
    return "slots only: single copy off (" + team_.single_copy_why() + ")" + shared_copy +
           (deep_ring ? std::string()
                      : std::string("; large messages move faster with 1 MiB of slots per rank "
                                    "(SHMCOLL_SLOTS x SHMCOLL_SLOT_BYTES)"));
  }
  std::string text = "slots below " + std::to_string(single_copy_min_bytes_) +
                     " bytes per rank, single copy (cross-memory attach) from there";
  if (team_.cross_copy_cost() > 0) {
    char cost[128];
    std::snprintf(cost, sizeof cost,
                  " (measured at %.1fx memcpy per byte; root's memcpy weight %.2f to start with, "
                  "then learned per root and block size)",
                  team_.cross_copy_cost(), local_copy_weight_);
    text += cost;
    if (single_copy_min_bytes_ != options.single_copy_min_bytes)
      text += "; from " + std::to_string(single_copy_min_bytes_) + " instead of " +
              std::to_string(options.single_copy_min_bytes) +
              " bytes: cross-memory attach is slow here";
  }
  if (options.single_copy == SingleCopy::kAlways) return text + shared_copy;
  if (team_.oversubscribed()) {
    // registry::single_copy_block: from the larger minimum, and past the slot ring.
    const std::uint64_t ring = std::uint64_t{team_.slots()} * team_.slot_bytes();
    const std::uint64_t from = std::max<std::uint64_t>(
        {single_copy_min_bytes_, registry::kOversubscribedBcastSingleCopyMinBytes, ring + 1});
    const std::uint64_t gather_from = std::max<std::uint64_t>(
        single_copy_min_bytes_, registry::kOversubscribedGatherSingleCopyMinBytes);
    return text + ", for gather(v) blocks from " + std::to_string(gather_from) +
           " bytes and for broadcast from " + std::to_string(from) +
           " bytes (the team is oversubscribed; a message its slot ring holds keeps the slots)" +
           shared_copy;
  }
  if (team_.size() > 2) {
    // registry::single_copy_block: teams of more than 2 ranks, each with a CPU.
    text +=
        "; broadcast through the slots, scatter(v) and gather(v) blocks with one copy only "
        "when ranks x block reaches " +
        std::to_string(options.scatter_single_copy_min_team_bytes) + " and " +
        std::to_string(options.gather_single_copy_min_team_bytes) + " bytes";
  }
  return text + shared_copy;
}

}  // namespace shmcoll
