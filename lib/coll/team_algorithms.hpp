// What the algorithms keep per team, beside the protocol's state (TeamImpl): the registry's
// choices, which depend only on what the team fixed at formation and so are kept per root and
// kind; the plans the tree algorithms reuse from call to call; and what roots learn of the
// cooperative single copy's balance (CopyBalance). One per team member; only the calling
// thread of a blocking call or the progress engine (under its lock) touches it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coll/copy_balance.hpp"
#include "coll/registry.hpp"
#include "protocol/team_impl.hpp"

namespace shmcoll {

// A rank that reads chunks [first, last] of a stream (a relaying writer's children read
// different parts of its stream).
struct ReaderChunks {
  // A constructor, so that emplace_back builds it in place with every compiler (C++20's
  // parenthesized aggregate initialization is not in clang 14).
  ReaderChunks(int reader_, std::uint64_t first_, std::uint64_t last_)
      : reader(reader_), first(first_), last(last_) {}
  int reader;
  std::uint64_t first, last;
};

class TeamAlgorithms {
 public:
  // Reads the team's facts (size, options, probe, measured cross-memory cost); `team` outlives
  // this object.
  explicit TeamAlgorithms(TeamImpl& team);
  TeamAlgorithms(const TeamAlgorithms&) = delete;
  TeamAlgorithms& operator=(const TeamAlgorithms&) = delete;

  TeamImpl& team() const { return team_; }

  // Where this rank, a leaf of the tree rooted at `root`, finds its block in its parent's
  // stream when every block is `block` bytes (uniform scatter): `at` and the stream's length.
  // Kept per root for the last block size, so that repeated calls skip the parent's layout.
  struct LeafPlace {
    std::uint64_t block = UINT64_MAX;  // none yet
    std::uint64_t at = 0;
    std::uint64_t stream_bytes = 0;
  };
  LeafPlace& scatter_leaf_place(int root) {
    if (leaf_places_.empty()) leaf_places_.resize(static_cast<std::size_t>(team_.size()));
    return leaf_places_[static_cast<std::size_t>(root)];
  }
  // The root's side of a uniform scatter along the tree rooted at `root` (TreeScatter): where
  // each block lies in the root's stream, by preorder index (0, the root's own, unused), the
  // stream's length, and which chunks each child reads. Kept per root for the last block size,
  // so that repeated calls skip the layout.
  struct ScatterRootPlan {
    std::uint64_t block = UINT64_MAX;  // none yet
    std::uint64_t stream_bytes = 0;
    std::vector<std::uint64_t> block_at;
    std::vector<ReaderChunks> reads;
  };
  ScatterRootPlan& scatter_root_plan(int root) {
    if (scatter_root_plans_.empty())
      scatter_root_plans_.resize(static_cast<std::size_t>(team_.size()));
    return scatter_root_plans_[static_cast<std::size_t>(root)];
  }
  // The root's side of a gather along the tree rooted at `root` (TreeGather) whose children's
  // streams carry no tables: per child, its stream's length and where each block of it lies
  // (pieces of children before it end where the child's begin). Kept per root, for gather and
  // for gatherv, for the last block sizes, as ScatterRootPlan.
  struct GatherRootPlan {
    struct Child {
      int rank;
      std::uint64_t stream_bytes;
      std::size_t pieces_end;
    };
    struct Piece {
      std::uint64_t begin;  // in the child's stream
      std::uint64_t entry;  // its size, with tree_layout::kDirect for a direct block
      int rank;             // whose block it is
    };
    // What it was planned for: table entries by rank (gather: every one the block size).
    std::vector<std::uint64_t> entries;
    std::vector<Child> children;
    std::vector<Piece> pieces;
  };
  GatherRootPlan& gather_root_plan(int root, bool v_form) {
    if (gather_root_plans_.empty())
      gather_root_plans_.resize(2 * static_cast<std::size_t>(team_.size()));
    return gather_root_plans_[2 * static_cast<std::size_t>(root) + (v_form ? 1 : 0)];
  }
  // What the algorithm registry decides on for a call with this root (coll/registry.hpp): the
  // same on every rank.
  // Computed once per root: nothing it holds changes after formation, and building it on
  // every call (with the tree lookup) was about 60 of a receiver's ~1,300 instructions per
  // 8-byte call.
  const registry::TeamShape& shape(int root) {
    if (shapes_.empty()) shapes_.resize(static_cast<std::size_t>(team_.size()));
    std::optional<registry::TeamShape>& s = shapes_[static_cast<std::size_t>(root)];
    if (!s) s = make_shape(root);
    return *s;
  }
  // How this call of `kind` moves its data (registry::choose): along the tree or flat, and
  // (broadcast, scatter, gather) through the slots or with one copy.
  // The answer depends only on the root's shape (made once), the kind and the size, and loops
  // ask again and again with the same ones: the last answer per kind is kept (registry::choose
  // took about 60 instructions of an 8-byte broadcast receiver's 1047).
  registry::Choice choose(Kind kind, std::uint64_t block_bytes, int root) {
    LastChoice& last = last_choices_[static_cast<std::size_t>(kind)];
    if (last.root == root && last.bytes == block_bytes) [[likely]]
      return last.choice;
    last = {root, block_bytes, registry::choose(shape(root), kind, block_bytes)};
    return last.choice;
  }
  bool uses_tree(Kind kind, std::uint64_t block_bytes, int root) {
    const registry::TeamShape& s = shape(root);
    return !registry::always_flat(s) && registry::choose(s, kind, block_bytes).tree;
  }
  // Scatterv and gatherv choose without the sizes (registry.hpp), so their answer is fixed per
  // root: kept from the first call, as every call asks.
  bool v_form_uses_tree(Kind kind, int root) {
    const std::size_t at = v_form_index(kind, root);
    if (at < v_form_tree_.size() && v_form_tree_[at] >= 0) [[likely]]
      return v_form_tree_[at] == 1;
    return learn_v_form_tree(kind, root);
  }
  // Whether a block of a scatterv or gatherv (`kind`) of `bytes` moves with the single copy
  // (cross-memory attach): the registry's rule. The same answer on every rank for matching
  // arguments: it depends on rank 0's options, the team's size and the team-wide probe at
  // formation, which every root's shape holds alike. For these two kinds the rule is a
  // threshold in the block's size, found once per kind: each call asks for every block (about
  // 40 instructions a block through the rule itself).
  bool single_copy_for(Kind kind, std::uint64_t bytes) {
    const std::uint64_t from_plus_1 = v_form_single_copy_from_[v_form_kind_index(kind)];
    if (from_plus_1 != 0) [[likely]]
      return bytes + 1 >= from_plus_1;
    return bytes >= learn_single_copy_from(kind);
  }
  // Whether a broadcast, scatter or gather block of `bytes` may copy straight between shared
  // buffers where the single copy does not take it (shared_copy.hpp): from
  // Options::shared_copy_min_bytes in a team of 2 ranks with a CPU each, where that was
  // measured; in other teams only where the single copy would take it if the team had
  // cross-memory attach. The two paths wait for the same things, and a memcpy between shared
  // buffers costs no more than a cross-memory copy, so the single copy's measured rules hold
  // for it too. (With 4 ranks on 2 cores, window buffers, the straight copy took 2.5-8x the
  // slots' time at 4-16 KiB: the root must wait for every rank's arrival and copy.)
  // Inline for the first test, which answers every small call (it runs on each one).
  bool shared_copy_for(Kind kind, std::uint64_t bytes, int root) {
    if (!shared_copy_possible(bytes)) return false;
    return shared_copy_beyond_minimum(kind, bytes, root);
  }
  // shared_copy_for's first test: false for a size says no block of that size or smaller may.
  bool shared_copy_possible(std::uint64_t bytes) const {
    return team_.size() >= 2 && bytes >= team_.options().shared_copy_min_bytes;
  }
  // What a byte this rank copies with memcpy as a root costs against a byte of cross-memory
  // copy, per block size: it starts, on every rank, at 1 / rank 0's measured ratio (within
  // [0.25, 1]; 0.8 where it was not measured) and follows each root's own calls (CopyBalance).
  CopyBalance& copy_balance() { return copy_balance_; }
  // The same weight for a v-form root, which alone plans the shares and sends them to its
  // peers, keyed by its largest block of `block_bytes`: 1 where its buffer lies in memory every
  // rank maps (allocate_shared, adopt_shared), since each peer's part of a block is then a
  // memcpy from or into it as well; only otherwise does the call's outcome correct it (learns).
  struct RootWeight {
    double weight = 1.0;
    bool learns = false;
  };
  RootWeight root_copy_weight(Kind kind, const void* root_buffer, std::uint64_t block_bytes) {
    if (team_.shared_buffers().id_of(root_buffer, 0) != 0) return {};
    return {CopyBalance::fraction(copy_balance_.weight(kind, block_bytes)), true};
  }
  // The smallest per-rank block a flat broadcast, scatter or gather moves with the single copy:
  // Options::single_copy_min_bytes, raised where rank 0 measured cross-memory attach as slow
  // (registry::single_copy_min_bytes), alike on every rank.
  std::uint64_t single_copy_min_bytes() const { return single_copy_min_bytes_; }
  // The data paths in words (Team::data_paths, SHMCOLL_VERBOSE).
  std::string data_paths() const;

 private:
  static std::size_t v_form_kind_index(Kind kind) { return kind == Kind::kGatherv ? 1 : 0; }
  static std::size_t v_form_index(Kind kind, int root) {
    return 2 * static_cast<std::size_t>(root) + v_form_kind_index(kind);
  }
  bool learn_v_form_tree(Kind kind, int root);
  bool shared_copy_beyond_minimum(Kind kind, std::uint64_t bytes, int root);
  std::uint64_t learn_single_copy_from(Kind kind);
  registry::TeamShape make_shape(int root);

  std::vector<std::optional<registry::TeamShape>> shapes_;  // by root
  struct LastChoice {
    int root = -1;  // none yet
    std::uint64_t bytes = 0;
    registry::Choice choice;
  };
  std::array<LastChoice, 8> last_choices_{};  // by kind; see choose
  static_assert(static_cast<std::size_t>(Kind::kGatherv) < 8, "last_choices_ holds every kind");
  std::vector<LeafPlace> leaf_places_;    // by root
  std::vector<std::int8_t> v_form_tree_;  // by root and kind: -1 not asked yet, 0 flat, 1 tree
  // 1 + the smallest scatterv [0] and gatherv [1] block that takes the single copy (0: not
  // known yet; blocks never exceed validate::kMaxBytes, so 1 + that means none does).
  std::uint64_t v_form_single_copy_from_[2] = {0, 0};
  std::vector<ScatterRootPlan> scatter_root_plans_;  // by root
  std::vector<GatherRootPlan> gather_root_plans_;    // by root, then v-form
  TeamImpl& team_;
  std::uint64_t single_copy_min_bytes_ = 0;  // see single_copy_min_bytes
  // Where copy_balance_ starts: the weight of a byte of memcpy against a byte of cross-memory
  // copy that rank 0's measure gives (0.8 where it was not measured).
  double local_copy_weight_ = 0.8;
  CopyBalance copy_balance_;
};

}  // namespace shmcoll
