#include "coll/tree_layout.hpp"

namespace shmcoll::tree_layout {

bool lay_out(const topology::Tree& tree, int x, std::span<const std::uint64_t> sizes, Image& out) {
  const auto first = static_cast<std::size_t>(tree.position[static_cast<std::size_t>(x)]);
  const auto count = static_cast<std::size_t>(tree.subtree_size[static_cast<std::size_t>(x)]);
  out.offset.resize(count);
  // Plain pointers: stores through `offset` could alias the vectors' own fields, which the
  // compiler would otherwise reload on every iteration.
  std::uint64_t* const offset = out.offset.data();
  const int* const preorder = tree.preorder.data() + first;
  const int* const subtree_size = tree.subtree_size.data();
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (block_bytes(sizes[i]) > kMaxBlock) return false;
    const std::uint64_t bytes = image_bytes(sizes[i]);
    // Preorder puts right before y the last rank of the previous sibling's subtree (or y's
    // parent), so `end` is where the previous image ends: the layout is the recursive one.
    const int y = preorder[i];
    const bool aligned = i > 0 && (bytes >= kAlignFrom || subtree_size[y] > 1);
    const std::uint64_t start = aligned ? align_up(end) : end;
    offset[i] = start;
    end = start + bytes;
  }
  out.bytes = end;
  out.children_start = count > 1 ? out.offset[1] : end;
  return true;
}

}  // namespace shmcoll::tree_layout
