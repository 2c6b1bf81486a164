// Topology-aware trees as pure functions of the ranks' places: no hwloc, no shared memory, so
// they can be tested exhaustively (test/test_hierarchy.cpp). hwloc only fills the places
// (discovery.hpp).
//
// Levels, outermost first: package, NUMA node, shared L3. A level is kept only if it splits
// some group of the level above it. The tree for a root: at each kept level, the group's
// leader sends to the leader of every subgroup it is not in; the last level is flat. The root
// leads every group it belongs to; in other groups the lowest rank leads. So each message
// crosses each package or NUMA boundary once, and the root's fan-out is the number of groups
// at each level plus its own last group, not the team size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll::topology {

// Where a rank runs. -1: unknown at that level (an unbound rank, or a binding wider than one
// object of that level).
struct Place {
  int package = -1;
  int numa = -1;
  int l3 = -1;
  int core = -1;
  // False when the rank is not bound and the fields say where it ran when asked (a hint).
  bool bound = true;
  bool operator==(const Place&) const = default;
};

enum class Level : std::uint8_t { kPackage, kNuma, kL3 };
const char* level_name(Level level);

struct Tree {
  int root = 0;
  std::vector<int> parent;                 // -1 for the root
  std::vector<std::vector<int>> children;  // in the order the parent serves them
  std::vector<Level> levels;               // the kept levels, outermost first
  int depth = 0;                           // edges on the longest root-to-leaf path
  // Depth-first order from the root, children in serving order: every subtree is a contiguous
  // run of it, which is what lets scatter and gather move a whole subtree's blocks as one
  // range (coll/tree_layout.hpp).
  std::vector<int> preorder;
  std::vector<int> position;      // position[r]: where rank r stands in preorder
  std::vector<int> subtree_size;  // subtree_size[r]: ranks in r's subtree, r included
};

// The levels that split the ranks, outermost first.
std::vector<Level> splitting_levels(const std::vector<Place>& places);

// The tree rooted at `root` (0 <= root < places.size()).
Tree build_tree(const std::vector<Place>& places, int root);

// A readable drawing: one line per rank, indented by depth, with its place.
std::string draw_tree(const Tree& tree, const std::vector<Place>& places);

}  // namespace shmcoll::topology
