// The introspection API (shmcoll/introspection.hpp): the segment listing and layout, the
// topology and its trees, and the registry's choice, asked about a team that does not exist.
#include "shmcoll/introspection.hpp"

#include <dirent.h>
#include <sched.h>

#include <algorithm>

#include "coll/registry.hpp"
#include "copy/cross_process.hpp"
#include "segment/layout.hpp"
#include "segment/parked_segment.hpp"
#include "segment/segment.hpp"
#include "segment/stale_segments.hpp"
#include "shmcoll/error.hpp"
#include "topology/discovery.hpp"
#include "topology/hierarchy.hpp"

namespace shmcoll::introspection {
namespace {

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

}  // namespace

std::vector<SegmentListing> team_segments() {
  std::vector<SegmentListing> out;
  for (const segment::SegmentEntry& e : segment::list_segments())
    out.push_back({e.name, e.bytes, e.stale, e.state});
  return out;
}

void remove_team_segment(const std::string& name) { segment::Segment::remove(name); }

void charge_parked_segment(std::shared_ptr<void> charge) {
  segment::set_parked_charge(std::move(charge));
}

void release_parked_segment() { segment::drop_parked(); }

std::vector<std::string> job_segments(const std::string& job_id) {
  const std::string prefix = segment::segment_name_prefix(job_id);
  std::vector<std::string> out;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name).rfind(prefix, 0) == 0) out.emplace_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

SegmentSize segment_size(int ranks, const Options& options) {
  const segment::Geometry g = segment::Geometry::of(ranks, options);
  return {g.total_bytes(), g.ranks_offset(), g.rank_stride()};
}

TeamPreview preview_team(int ranks, int root, const std::string& topology_spec,
                         const Options& options) {
  if (ranks < 1 || root < 0 || root >= ranks) {
    throw InvalidArgument("root " + std::to_string(root) + " is not a rank of a team of " +
                          std::to_string(ranks));
  }
  const auto t = topology::Topology::load(topology_spec.empty() ? options.topology : topology_spec);
  TeamPreview preview;
  preview.topology = t->summary();
  preview.source = t->source();
  preview.this_machine = t->is_this_machine();
  std::vector<topology::Place> places;
  for (int r = 0; r < ranks; ++r) {
    places.push_back(t->is_this_machine() ? t->place_of_bound_rank(r)
                                          : t->place_of_pu(r % std::max(1, t->counts().pus)));
    preview.places.push_back(
        {places.back().package, places.back().numa, places.back().l3, places.back().core});
  }
  const topology::Tree tree = topology::build_tree(places, root);
  preview.root = root;
  preview.parent = tree.parent;
  preview.children = tree.children;
  preview.depth = tree.depth;
  preview.tree_text = topology::draw_tree(tree, places);

  // As a team would see it with its ranks free to run on this process's CPUs (or on
  // SHMCOLL_TEAM_CPUS of them), and with rank 0's measure of cross-memory attach, which moves
  // the single copy's threshold (registry::single_copy_min_bytes).
  preview.oversubscribed = ranks > (options.team_cpus > 0 ? options.team_cpus : available_cpus());
  preview.single_copy = options.single_copy != SingleCopy::kOff;
  preview.cross_copy_cost =
      preview.single_copy ? copy::measure_cross_copy_cost(Options::kSlowCrossCopyCost) : 0;
  preview.single_copy_min_bytes = registry::single_copy_min_bytes(options, preview.cross_copy_cost);
  const segment::Geometry geometry = segment::Geometry::of(ranks, options);
  const registry::TeamShape shape =
      registry::shape_of(options, ranks, tree, preview.single_copy, preview.oversubscribed,
                         preview.single_copy_min_bytes, geometry.slot_bytes, geometry.slots);
  std::vector<std::uint64_t> sizes = {8,        1024,    8 * 1024, preview.single_copy_min_bytes,
                                      64 << 10, 1 << 20, 16 << 20};
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (Kind kind : {Kind::kBcast, Kind::kScatter, Kind::kGather}) {
    for (std::uint64_t b : sizes) {
      const registry::Choice c = registry::choose(shape, kind, b);
      preview.paths.push_back({kind_name(kind), b, c.tree, c.single_copy, c.why});
    }
  }
  for (Kind kind : {Kind::kScatterv, Kind::kGatherv}) {
    const registry::Choice c = registry::choose(shape, kind, 0);
    preview.paths.push_back({kind_name(kind), 0, c.tree, false, c.why});
  }
  return preview;
}

}  // namespace shmcoll::introspection
