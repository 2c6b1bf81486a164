// Exhaustive tests of the pure hierarchy code: team sizes 1..64, every root, several layouts.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>

#include "topology/hierarchy.hpp"

namespace shmcoll::topology {
namespace {

using Layout = std::function<Place(int rank, int nranks)>;

// 2 packages x 2 NUMA x 2 L3 x 4 cores, ranks filling cores in order (wrapping).
Place uniform(int r, int) {
  const int core = r % 32;
  return {core / 16, core / 8, core / 4, core};
}
// NUMA nodes of 1, 3, 5 and 7 cores (uneven), one L3 each, one package.
Place uneven(int r, int) {
  const int core = r % 16;
  const int numa = core < 1 ? 0 : core < 4 ? 1 : core < 9 ? 2 : 3;
  return {0, numa, numa, core};
}
// Ranks dealt round-robin over 4 NUMA nodes in 2 packages (--map-by numa).
Place interleaved(int r, int) {
  const int numa = r % 4;
  return {numa / 2, numa, numa, r};
}
// 1 package x 8 L3, no NUMA split.
Place l3_only(int r, int) { return {0, 0, (r / 2) % 8, r}; }
// Unbound ranks: nothing known.
Place unbound(int, int) { return {}; }
// Half bound, half unbound.
Place mixed(int r, int n) { return r < n / 2 ? uniform(r, n) : Place{}; }

const std::map<std::string, Layout> kLayouts = {
    {"uniform", uniform}, {"uneven", uneven},   {"interleaved", interleaved},
    {"l3 only", l3_only}, {"unbound", unbound}, {"mixed", mixed},
};

int key(const Place& p, Level l) {
  return l == Level::kPackage ? p.package : l == Level::kNuma ? p.numa : p.l3;
}

}  // namespace

// "heavy": single-threaded, and long under the sanitizers: run.sh runs it optimized only. (No
// commas in the name: the label lookup of doctest's ctest discovery splits names at them.)
TEST_CASE("hierarchy: every rank is reached exactly once for all sizes and roots of each layout" *
          doctest::test_suite("heavy")) {
  for (const auto& [name, layout] : kLayouts) {
    const auto& layout_name = name;  // CAPTURE's lambda may not capture a structured binding
    for (int n = 1; n <= 64; ++n) {
      std::vector<Place> places(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) places[static_cast<std::size_t>(r)] = layout(r, n);
      const std::vector<Level> levels = splitting_levels(places);
      for (int root = 0; root < n; ++root) {
        CAPTURE(layout_name);
        CAPTURE(n);
        CAPTURE(root);
        const Tree t = build_tree(places, root);
        REQUIRE(t.parent.size() == static_cast<std::size_t>(n));
        CHECK(t.parent[static_cast<std::size_t>(root)] == -1);
        // Walk from the root: each rank reached once; parent and children agree.
        std::vector<int> seen(static_cast<std::size_t>(n), 0);
        std::vector<int> depth(static_cast<std::size_t>(n), 0);
        std::vector<int> stack{root};
        int max_depth = 0;
        while (!stack.empty()) {
          const int r = stack.back();
          stack.pop_back();
          ++seen[static_cast<std::size_t>(r)];
          for (int c : t.children[static_cast<std::size_t>(r)]) {
            CHECK(t.parent[static_cast<std::size_t>(c)] == r);
            depth[static_cast<std::size_t>(c)] = depth[static_cast<std::size_t>(r)] + 1;
            max_depth = std::max(max_depth, depth[static_cast<std::size_t>(c)]);
            stack.push_back(c);
          }
        }
        for (int r = 0; r < n; ++r) CHECK(seen[static_cast<std::size_t>(r)] == 1);
        // Preorder: a permutation from the root in which every subtree is a contiguous run
        // starting at its own rank.
        REQUIRE(t.preorder.size() == static_cast<std::size_t>(n));
        CHECK(t.preorder.front() == root);
        for (int r = 0; r < n; ++r) {
          const int at = t.position[static_cast<std::size_t>(r)];
          REQUIRE(at >= 0);
          CHECK(t.preorder[static_cast<std::size_t>(at)] == r);
          const int end = at + t.subtree_size[static_cast<std::size_t>(r)];
          REQUIRE(end <= n);
          for (int i = at + 1; i < end; ++i) {
            int a = t.preorder[static_cast<std::size_t>(i)];
            while (a != -1 && a != r) a = t.parent[static_cast<std::size_t>(a)];
            CHECK(a == r);  // inside the run: a descendant of r
          }
          int descendants = 0;
          for (int c : t.children[static_cast<std::size_t>(r)])
            descendants += t.subtree_size[static_cast<std::size_t>(c)];
          CHECK(t.subtree_size[static_cast<std::size_t>(r)] == descendants + 1);
        }
        CHECK(t.depth == max_depth);
        CHECK(t.depth <= static_cast<int>(levels.size()) + 1);
        CHECK(t.levels == levels);
        // The root leads every group it belongs to; every other group at a kept level is
        // entered by exactly one edge (its leader's), so data crosses each boundary once.
        for (std::size_t li = 0; li < levels.size(); ++li) {
          std::map<std::vector<int>, int> entries;  // group (keys up to li) -> edges entering it
          auto group_of = [&](int r) {
            std::vector<int> g;
            for (std::size_t k = 0; k <= li; ++k)
              g.push_back(key(places[static_cast<std::size_t>(r)], levels[k]));
            return g;
          };
          for (int r = 0; r < n; ++r) {
            const int p = t.parent[static_cast<std::size_t>(r)];
            if (p >= 0 && group_of(p) != group_of(r)) ++entries[group_of(r)];
          }
          for (int r = 0; r < n; ++r) {
            const auto g = group_of(r);
            CHECK(entries[g] == (g == group_of(root) ? 0 : 1));
          }
        }
        // Fan-out: the root serves at most one leader per group at each level plus its last group.
        std::size_t bound = 0;
        for (std::size_t li = 0; li < levels.size(); ++li) {
          std::set<int> keys;
          for (const Place& p : places) keys.insert(key(p, levels[li]));
          bound += keys.size() - 1;
        }
        std::size_t last_group = 0;
        for (int r = 0; r < n; ++r) {
          bool same = true;
          for (Level l : levels)
            same = same && key(places[static_cast<std::size_t>(r)], l) ==
                               key(places[static_cast<std::size_t>(root)], l);
          last_group += same ? 1 : 0;
        }
        CHECK(t.children[static_cast<std::size_t>(root)].size() <= bound + last_group - 1);
      }
    }
  }
}

TEST_CASE("hierarchy: levels that do not split the ranks are dropped") {
  std::vector<Place> one_numa(8, Place{0, 0, 0, 0});
  CHECK(splitting_levels(one_numa).empty());
  std::vector<Place> numa_only{{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 0, 0, 2}, {0, 1, 1, 3}};
  CHECK(splitting_levels(numa_only) == std::vector<Level>{Level::kNuma});  // L3 = NUMA here
  std::vector<Place> full{{0, 0, 0, 0}, {0, 1, 2, 1}, {1, 2, 4, 2}, {1, 3, 6, 3}, {1, 3, 7, 4}};
  CHECK(splitting_levels(full) == std::vector<Level>{Level::kPackage, Level::kNuma, Level::kL3});
  const Tree flat = build_tree(one_numa, 3);
  CHECK(flat.children[3].size() == 7);
  CHECK(flat.depth == 1);
}

TEST_CASE("hierarchy: 2 packages x 2 NUMA, 16 ranks, root 5") {
  std::vector<Place> places;
  for (int r = 0; r < 16; ++r) places.push_back({r / 8, r / 4, r / 4, r});
  const Tree t = build_tree(places, 5);
  // Root 5 (package 0, NUMA 1) serves the other package's leader (8) first, then its sibling
  // NUMA node's leader (0), then its own NUMA node's members (4, 6, 7); 8 serves 12 first.
  CHECK(t.children[5] == std::vector<int>{8, 0, 4, 6, 7});
  CHECK(t.children[8] == std::vector<int>{12, 9, 10, 11});
  CHECK(t.children[0] == std::vector<int>{1, 2, 3});
  CHECK(t.depth == 3);
  MESSAGE(draw_tree(t, places));
}

}  // namespace shmcoll::topology

// The subtree images of coll/tree_layout.hpp: a child's image inside its parent's is an exact
// shift of its own (what lets a rank move a whole subtree with one copy), blocks do not
// overlap, and large blocks and multi-rank subtrees start aligned.
#include <random>

#include "coll/tree_layout.hpp"

namespace shmcoll::topology {

TEST_CASE("tree layout: a child's image is a shift of its own, for every size, root and layout") {
  std::mt19937_64 rng(7);
  const std::uint64_t kSizes[] = {0, 1, 8, 63, 64, 255, 256, 1000, 4096};
  for (const auto& [name, layout] : kLayouts) {
    const auto& layout_name = name;  // CAPTURE's lambda may not capture a structured binding
    for (int n : {1, 2, 5, 8, 11, 16, 33, 64}) {
      std::vector<Place> places(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) places[static_cast<std::size_t>(r)] = layout(r, n);
      for (int root = 0; root < n; root += 3) {
        CAPTURE(layout_name);
        CAPTURE(n);
        CAPTURE(root);
        const Tree t = build_tree(places, root);
        std::vector<std::uint64_t> sizes(static_cast<std::size_t>(n));
        for (auto& s : sizes) s = kSizes[rng() % std::size(kSizes)];
        tree_layout::Image whole;
        REQUIRE(tree_layout::lay_out(t, root, sizes, whole));
        std::uint64_t end = 0;
        for (int i = 0; i < n; ++i) {
          const auto u = static_cast<std::size_t>(i);
          CHECK(whole.offset[u] >= end);  // in order, no overlap
          end = whole.offset[u] + sizes[u];
          const int r = t.preorder[u];
          if (i > 0 && (sizes[u] >= 256 || t.subtree_size[static_cast<std::size_t>(r)] > 1))
            CHECK(whole.offset[u] % 64 == 0);
        }
        CHECK(whole.bytes == end);
        for (int x = 0; x < n; ++x) {
          const auto first = static_cast<std::size_t>(t.position[static_cast<std::size_t>(x)]);
          const auto count = static_cast<std::size_t>(t.subtree_size[static_cast<std::size_t>(x)]);
          tree_layout::Image own;
          REQUIRE(tree_layout::lay_out(t, x, std::span(sizes).subspan(first, count), own));
          for (std::size_t j = 0; j < count; ++j)
            CHECK(whole.offset[first + j] - whole.offset[first] == own.offset[j]);
          CHECK(own.bytes == whole.end_of(first, count, sizes) - whole.offset[first]);
        }
      }
    }
  }
}

TEST_CASE("tree layout: sizes beyond any message are refused (a corrupt table)") {
  std::vector<Place> places(4, Place{0, 0, 0, 0});
  const Tree t = build_tree(places, 0);
  std::vector<std::uint64_t> sizes{8, tree_layout::kMaxBlock + 1, 8, 8};
  tree_layout::Image image;
  CHECK_FALSE(tree_layout::lay_out(t, 0, sizes, image));
}

}  // namespace shmcoll::topology
