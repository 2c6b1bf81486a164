#include "coll/scatter/scatter_stream.hpp"

#include <algorithm>

#include "copy/copy.hpp"

namespace shmcoll {

void ScatterRootStream::fill(std::byte* dst, std::uint64_t offset, std::uint64_t length) {
  const std::uint64_t end = offset + length;
  if (uniform_.nranks > 0) {
    for (std::uint64_t i = offset / uniform_.stride; i * uniform_.stride < end; ++i) {
      const std::uint64_t at = i * uniform_.stride;
      const std::uint64_t lo = std::max(offset, at), hi = std::min(end, at + uniform_.bytes);
      const std::byte* src =
          uniform_.base + static_cast<std::uint64_t>(rank_at(i)) * uniform_.bytes;
      if (lo < hi) copy::copy_bytes(dst + (lo - offset), src + (lo - at), hi - lo);
    }
    return;
  }
  // Chunks are filled in increasing order, so a cursor finds the first overlapping piece.
  while (fill_cursor_ < pieces_.size() &&
         pieces_[fill_cursor_].offset + pieces_[fill_cursor_].bytes <= offset) {
    ++fill_cursor_;
  }
  for (std::size_t i = fill_cursor_; i < pieces_.size() && pieces_[i].offset < end; ++i) {
    const Piece& p = pieces_[i];
    const std::uint64_t lo = std::max(offset, p.offset);
    const std::uint64_t hi = std::min(end, p.offset + p.bytes);
    if (lo < hi) copy::copy_bytes(dst + (lo - offset), p.src + (lo - p.offset), hi - lo);
  }
}

void ScatterRootStream::readers(const StreamShape& shape, std::uint64_t chunk,
                                std::vector<int>& out) const {
  const std::uint64_t lo = shape.chunk_begin(chunk), hi = shape.chunk_end(chunk);
  if (uniform_.nranks > 0) {
    for (std::uint64_t i = lo / uniform_.stride; i * uniform_.stride < hi; ++i) {
      if (lo < i * uniform_.stride + uniform_.bytes) out.push_back(rank_at(i));  // not padding only
    }
    return;
  }
  auto first =
      std::lower_bound(pieces_.begin(), pieces_.end(), lo,
                       [](const Piece& p, std::uint64_t v) { return p.offset + p.bytes <= v; });
  for (auto it = first; it != pieces_.end() && it->offset < hi; ++it) {
    if (it->bytes > 0) out.push_back(it->rank);
  }
}

}  // namespace shmcoll
