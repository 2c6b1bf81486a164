// The root's side of scatter and scatterv: one stream holding every other rank's block, in
// rank order. Scatterv's receivers, who cannot compute where their block is, learn it from the
// root's record in their inbox (scatterv_inbox.hpp); its smallest blocks travel there and not
// in the stream. Blocks of 256 bytes and more start on a cache line so both sides of their
// copies are aligned; smaller ones are packed so that small scatters still fit inline.
#pragma once

#include <cstdint>
#include <vector>

#include "base/plan_vector.hpp"
#include "protocol/stream.hpp"

namespace shmcoll {

// Where a block of `bytes` may start after stream offset `end` of the previous one.
inline std::uint64_t place_block(std::uint64_t end, std::uint64_t bytes) {
  return bytes >= 256 ? (end + 63) / 64 * 64 : end;
}

// The same rule for equal blocks (scatter): block i of `bytes` starts at i * stride, and a
// stream of `blocks` of them is this long.
inline std::uint64_t uniform_stride(std::uint64_t bytes) { return place_block(bytes, bytes); }
inline std::uint64_t uniform_stream_bytes(std::uint64_t blocks, std::uint64_t bytes) {
  return blocks == 0 ? 0 : (blocks - 1) * uniform_stride(bytes) + bytes;
}

class ScatterRootStream {
 public:
  struct Piece {
    int rank;
    const std::byte* src;
    std::uint64_t offset;  // in the stream
    std::uint64_t bytes;
  };
  // `block_of(r)` gives rank r's data in the root's buffer as (pointer, bytes), (nullptr, 0)
  // for a rank whose block is not streamed; the root's own block is not asked for.
  template <class BlockOf>
  void plan(int root, int nranks, BlockOf&& block_of) {
    root_ = root;
    uniform_.nranks = 0;
    pieces_.clear();
    pieces_.reserve(static_cast<std::size_t>(nranks));
    std::uint64_t end = 0;
    for (int r = 0; r < nranks; ++r) {
      if (r == root) continue;
      const auto [src, b] = block_of(r);
      const std::uint64_t at = place_block(end, b);
      pieces_.push_back({r, src, at, b});
      end = at + b;
    }
    total_ = end;
    fill_cursor_ = 0;
  }
  // Where plan() put rank r's block in the stream (r is not the root).
  std::uint64_t offset_of(int r) const {
    return pieces_[static_cast<std::size_t>(r - (r > root_ ? 1 : 0))].offset;
  }
  // Equal blocks of `bytes`, rank r's at base + r * bytes: positions follow arithmetically, so
  // nothing is allocated per call.
  void plan_uniform(int root, int nranks, const std::byte* base, std::uint64_t bytes) {
    root_ = root;
    uniform_ = {base, bytes, uniform_stride(bytes), nranks};
    pieces_.clear();
    total_ = uniform_stream_bytes(static_cast<std::uint64_t>(nranks - 1), bytes);
  }
  std::uint64_t bytes() const { return total_; }
  void fill(std::byte* dst, std::uint64_t offset, std::uint64_t length);
  void readers(const StreamShape& shape, std::uint64_t chunk, std::vector<int>& out) const;

 private:
  struct Uniform {
    const std::byte* base = nullptr;
    std::uint64_t bytes = 0, stride = 0;
    int nranks = 0;  // 0: the plan is not uniform
  };
  // Stream position i holds rank i, or i + 1 from the root on (the root sends itself nothing).
  int rank_at(std::uint64_t i) const {
    return static_cast<int>(i) + (static_cast<int>(i) >= root_);
  }

  int root_ = 0;
  Uniform uniform_;
  PlanVector<Piece> pieces_;
  std::uint64_t total_ = 0;
  std::size_t fill_cursor_ = 0;
};

}  // namespace shmcoll
