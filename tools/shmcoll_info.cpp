// shmcoll-info: prints the configuration parameters (name, default, current value, meaning),
// the segment size a team of a given size would map, and the topology with the tree a
// collective would use for a given number of ranks and root.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "segment/layout.hpp"
#include "shmcoll/shmcoll.hpp"
#include "topology/discovery.hpp"

namespace {

const char* kUsage =
    "usage: shmcoll-info [--segment-size RANKS] [--ranks N [--root R]] [--topology SPEC]\n"
    "\n"
    "Prints every SHMCOLL_* parameter with its default and its value in this environment.\n"
    "  --segment-size RANKS  also the bytes of shared memory a team of RANKS maps\n"
    "  --ranks N             the topology, where N ranks would sit, and the tree from --root\n"
    "                        (default 0): on this machine as shmcoll-run --bind core places\n"
    "                        them (rank r on core r mod cores); with a synthetic or XML\n"
    "                        topology on PU r mod PUs\n"
    "  --topology SPEC       an hwloc synthetic description (\"package:2 numa:2 core:4 pu:1\")\n"
    "                        or an XML file, instead of SHMCOLL_TOPOLOGY / this machine\n";

}  // namespace

int main(int argc, char** argv) {
  int segment_ranks = 0, ranks = 0, root = 0;
  std::string topology_spec;
  bool topology_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "shmcoll-info: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--segment-size") {
      segment_ranks = std::atoi(value().c_str());
    } else if (a == "--ranks") {
      ranks = std::atoi(value().c_str());
    } else if (a == "--root") {
      root = std::atoi(value().c_str());
    } else if (a == "--topology") {
      topology_spec = value();
      topology_given = true;
    } else {
      std::fprintf(stderr, "shmcoll-info: unknown argument %s (try --help)\n", a.c_str());
      return 2;
    }
  }
  try {
    const shmcoll::Options options = shmcoll::Options::from_env();
    std::printf("%-22s %-10s %-10s %s\n", "parameter", "default", "value", "meaning");
    for (const shmcoll::ParameterInfo& p : shmcoll::parameters(options)) {
      std::printf("%-22s %-10s %-10s %s\n", p.name.c_str(), p.default_value.c_str(),
                  p.value.empty() ? "(empty)" : p.value.c_str(), p.doc.c_str());
    }
    if (segment_ranks > 0) {
      shmcoll::segment::Geometry g;
      g.nranks = static_cast<std::uint32_t>(segment_ranks);
      g.slots = static_cast<std::uint32_t>(options.slots);
      g.slot_bytes = (options.slot_bytes + 63) / 64 * 64;
      std::printf("\nsegment for %d ranks: %llu bytes (%llu fixed + %llu per rank)\n", segment_ranks,
                  static_cast<unsigned long long>(g.total_bytes()), static_cast<unsigned long long>(g.ranks_offset()),
                  static_cast<unsigned long long>(g.rank_stride()));
    }
    if (ranks > 0) {
      if (root < 0 || root >= ranks) {
        std::fprintf(stderr, "shmcoll-info: --root %d is outside [0, %d)\n", root, ranks);
        return 2;
      }
      namespace topo = shmcoll::topology;
      const auto t = topo::Topology::load(topology_given ? topology_spec : options.topology);
      std::printf("\ntopology: %s\n", t->summary().c_str());
      std::vector<topo::Place> places;
      for (int r = 0; r < ranks; ++r) {
        places.push_back(t->is_this_machine() ? t->place_of_bound_rank(r) : t->place_of_pu(r % std::max(1, t->counts().pus)));
      }
      std::printf("ranks: %s\n", t->is_this_machine() ? "placed as shmcoll-run --bind core would (rank r on core r mod cores)"
                                                       : "rank r on PU r mod PUs");
      const topo::Tree tree = topo::build_tree(places, root);
      std::printf("tree for a broadcast, scatter or gather rooted at %d (depth %d):\n%s", root, tree.depth,
                  topo::draw_tree(tree, places).c_str());
    }
  } catch (const shmcoll::Error& e) {
    std::fprintf(stderr, "shmcoll-info: %s\n", e.what());
    return 1;
  }
  return 0;
}
