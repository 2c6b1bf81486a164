#include "coll/tree_layout.hpp"

namespace shmcoll::tree_layout {

bool lay_out(const topology::Tree& tree, int x, std::span<const std::uint64_t> sizes, Image& out) {
  const auto first = static_cast<std::size_t>(tree.position[static_cast<std::size_t>(x)]);
  const auto count = static_cast<std::size_t>(tree.subtree_size[static_cast<std::size_t>(x)]);
  out.offset.resize(count);
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (block_bytes(sizes[i]) > kMaxBlock) return false;
    const std::uint64_t bytes = image_bytes(sizes[i]);
    const int y = tree.preorder[first + i];
    // Preorder puts right before y the last rank of the previous sibling's subtree (or y's
    // parent), so `end` is where the previous image ends: the layout is the recursive one.
    const bool aligned =
        i > 0 && (bytes >= kAlignFrom || tree.subtree_size[static_cast<std::size_t>(y)] > 1);
    const std::uint64_t start = aligned ? align_up(end) : end;
    out.offset[i] = start;
    end = start + bytes;
  }
  out.bytes = end;
  out.children_start = count > 1 ? out.offset[1] : end;
  return true;
}

ScatterStream scatter_stream(const Image& image, std::size_t table_entries) {
  ScatterStream s;
  s.skip = align_down(image.children_start);
  const std::uint64_t payload = image.bytes > image.children_start ? image.bytes - s.skip : 0;
  s.table = table_entries > 0 ? table_bytes(table_entries, payload) : 0;
  s.bytes = s.table + payload;
  return s;
}

}  // namespace shmcoll::tree_layout
