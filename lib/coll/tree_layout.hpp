// Where each rank's block lies when scatter and gather move a whole subtree's blocks as one
// range down or up the topology tree (tree_scatter.hpp, tree_gather.hpp). Pure arithmetic, no
// shared memory.
//
// The image of rank x's subtree holds the blocks of its ranks in the tree's preorder, x's own
// first. A block starts right after the previous one, except that a block of 256 bytes or more,
// and the first block of any subtree with more than one rank, starts on a 64-byte boundary. A
// subtree's image inside its parent's is then an exact shift of its own image, so a rank moves
// a child's whole subtree with one contiguous copy, and small blocks still pack tightly.
//
// The v-forms head their streams with a table of the image's block sizes (8 bytes per rank, in
// preorder, padded to 64 unless the stream travels inline: table_bytes): only the root knows
// every size in scatterv, and in gatherv each sender knows only its own. Uniform forms need no
// table: every size is the common block.
//
// A scatterv block from the single-copy size on is direct: its table entry carries kDirect,
// and its place in the image holds the block's offset in the root's buffer (8 bytes) instead
// of the block, which its owner then copies straight from there.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/plan_vector.hpp"
#include "segment/layout.hpp"
#include "topology/hierarchy.hpp"

namespace shmcoll::tree_layout {

inline constexpr std::uint64_t kAlign = 64;
inline constexpr std::uint64_t kAlignFrom = 256;  // blocks this large start aligned
// Sizes above this in a table are corrupt (no message is that large); it keeps sums of a few
// thousand of them far from overflowing.
inline constexpr std::uint64_t kMaxBlock = std::uint64_t{1} << 48;

inline constexpr std::uint64_t kDirect = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kDirectImageBytes = 8;
inline bool is_direct(std::uint64_t entry) { return (entry & kDirect) != 0; }
// The block's size, and the bytes it takes in the image, from its table entry.
inline std::uint64_t block_bytes(std::uint64_t entry) { return entry & ~kDirect; }
inline std::uint64_t image_bytes(std::uint64_t entry) {
  return is_direct(entry) ? kDirectImageBytes : entry;
}

inline std::uint64_t align_up(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
inline std::uint64_t align_down(std::uint64_t v) { return v / kAlign * kAlign; }
// The table of a stream whose image part is `payload` bytes: padded to 64 so that aligned
// blocks stay aligned in the slots, except where the whole stream fits inline in a slot's flag
// line (SlotHeader::kInlineBytes): alignment cannot matter there, and the padding alone would
// push a small gatherv or scatterv out of the inline path. A reader knows `entries` before it
// reads the table (the first 8 x entries bytes) and `payload` from the sizes in it.
inline std::uint64_t table_bytes(std::size_t entries, std::uint64_t payload) {
  const std::uint64_t packed = 8 * entries;
  return packed + payload <= segment::SlotHeader::kInlineBytes ? packed : align_up(packed);
}
// The largest table_bytes(entries, ...).
inline std::uint64_t max_table_bytes(std::size_t entries) { return align_up(8 * entries); }

// A per-rank field of topology::Tree (position, subtree_size), as an index.
inline std::size_t at(const std::vector<int>& per_rank, int rank) {
  return static_cast<std::size_t>(per_rank[static_cast<std::size_t>(rank)]);
}

struct Image {
  PlanVector<std::uint64_t> offset;  // by preorder index from the subtree's root (0: itself)
  std::uint64_t bytes = 0;           // the image's length
  std::uint64_t children_start = 0;  // where the first child's image starts (bytes if none)
  // The end of the image of the subtree whose root has preorder index `first` (relative to this
  // image) and `count` ranks.
  std::uint64_t end_of(std::size_t first, std::size_t count,
                       std::span<const std::uint64_t> sizes) const {
    const std::size_t last = first + count - 1;
    return offset[last] + image_bytes(sizes[last]);
  }
  // A child's image is the shift of its part of its parent's: the subtree of `count` ranks
  // from preorder index `first` starts at offset[first] here and at 0 in the child's own.
  // Calls block(j, begin) for each of its blocks (j: preorder index here, begin: offset in the
  // child's image); returns the child's image length.
  template <class Block>
  std::uint64_t for_each_in_child(std::size_t first, std::size_t count,
                                  std::span<const std::uint64_t> sizes, Block&& block) const {
    const std::uint64_t origin = offset[first];
    for (std::size_t j = first; j < first + count; ++j) block(j, offset[j] - origin);
    return end_of(first, count, sizes) - origin;
  }
};

// Lays out the image of x's subtree. sizes[i] is the table entry of the block of
// tree.preorder[position[x] + i], for i < subtree_size[x]. False when a size exceeds kMaxBlock
// (a corrupt table).
bool lay_out(const topology::Tree& tree, int x, std::span<const std::uint64_t> sizes, Image& out);

// A scatter stream carries the descendants' part of the sender's image, after the table:
// image offset o (o >= children_start) is at stream offset at(o). It starts at the aligned
// offset below children_start so that aligned blocks stay aligned in the slots; the few bytes
// before children_start are never read.
struct ScatterStream {
  std::uint64_t table = 0;  // table bytes at the head (0 for uniform forms, see table_bytes)
  std::uint64_t skip = 0;   // image offset of stream offset `table`
  std::uint64_t bytes = 0;  // the stream's length
  std::uint64_t at(std::uint64_t image_offset) const { return table + image_offset - skip; }
};
// `table_entries`: the v-forms' table rows (0: no table). Inline, so that callers build the
// result where it lives: a copy of a freshly returned struct waits on the stores that wrote it.
inline ScatterStream scatter_stream(const Image& image, std::size_t table_entries) {
  ScatterStream s;
  s.skip = align_down(image.children_start);
  const std::uint64_t payload = image.bytes > image.children_start ? image.bytes - s.skip : 0;
  s.table = table_entries > 0 ? table_bytes(table_entries, payload) : 0;
  s.bytes = s.table + payload;
  return s;
}

// A gather stream carries the sender's whole image after the table: image offset o is at
// stream offset table + o.
inline std::uint64_t gather_stream_bytes(const Image& image, std::uint64_t table) {
  return table + image.bytes;
}

}  // namespace shmcoll::tree_layout
