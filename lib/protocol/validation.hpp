// Local argument checks. Each raises InvalidArgument with a message that names the collective,
// the rank, the argument and its value; the caller's error path then aborts the team so every
// other rank gets the same error instead of waiting.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/plan_vector.hpp"
#include "protocol/signature.hpp"
#include "shmcoll/datatype.hpp"
#include "shmcoll/error.hpp"
#include "sync/tag.hpp"

namespace shmcoll::validate {

struct Context {
  Kind kind;
  int rank;
  int size;
  int root;
  std::uint64_t slot_bytes;
  bool is_root() const { return rank == root; }
};

[[noreturn]] void invalid(const Context& ctx, const std::string& what,
                          Cause cause = Cause::kUnspecified);

// Larger byte counts or offsets are refused: no buffer is that large, and sums stay far from
// overflowing.
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 62;

// The checks below run on every call, so they are inline and only their messages are built out
// of line (the [[noreturn]] functions, which say what is wrong).
[[noreturn]] void root_out_of_range(const Context& ctx);
[[noreturn]] void bad_count(const Context& ctx, const char* count_name, Count count, Datatype type);
[[noreturn]] void null_buffer(const Context& ctx, const char* name, std::uint64_t bytes);
[[noreturn]] void in_place_off_root(const Context& ctx);

inline void root(const Context& ctx) {
  if (ctx.root < 0 || ctx.root >= ctx.size) [[unlikely]]
    root_out_of_range(ctx);
}
// count x type.size, checked for sign, zero-size types and overflow.
inline std::uint64_t bytes(const Context& ctx, const char* count_name, Count count, Datatype type) {
  std::uint64_t b = 0;
  if (count < 0 || type.size == 0 ||
      __builtin_mul_overflow(static_cast<std::uint64_t>(count), type.size, &b) || b > kMaxBytes)
      [[unlikely]]
    bad_count(ctx, count_name, count, type);
  return b;
}
// A buffer that must hold `bytes` bytes.
inline void buffer(const Context& ctx, const char* name, const void* p, std::uint64_t bytes) {
  if (p == nullptr && bytes > 0) [[unlikely]]
    null_buffer(ctx, name, bytes);
}
// A stream of `bytes` must fit in the chunk counter. Slots hold at least a cache line, so
// streams up to kMaxChunks cache lines always fit and skip the division.
void stream_length_counted(const Context& ctx, std::uint64_t bytes);
inline void stream_length(const Context& ctx, std::uint64_t bytes) {
  constexpr std::uint64_t kLine = 64;
  if (bytes <= sync::kMaxChunks * kLine && ctx.slot_bytes >= kLine) return;
  stream_length_counted(ctx, bytes);
}

// The start every collective shares: the root is in range, and in_place is used at the root only.
inline void common(const Context& ctx, bool in_place) {
  root(ctx);
  if (in_place && !ctx.is_root()) [[unlikely]]
    in_place_off_root(ctx);
}

// One side of a scatter or gather call: a count, a datatype and a buffer, with their names.
struct Side {
  const char* count_name;
  Count count;
  Datatype type;
  const char* buffer_name;
  const void* buffer;
};
// scatter/gather: `whole` is the root's buffer of size() blocks (scatter's send side,
// gather's receive side), `own` a rank's single block. The root's `whole` defines the block
// size, and its `own` must match it unless in_place; elsewhere `own` alone counts. Returns the
// bytes of one block.
std::uint64_t uniform_blocks(const Context& ctx, const Side& whole, const Side& own, bool in_place);

// One rank's block of a v-form buffer, in bytes from the buffer's start.
struct Block {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};
// Checks counts and displacements (size() entries, non-negative, no overflow) and fills `out`
// with the blocks they describe.
void blocks(const Context& ctx, const char* counts_name, std::span<const Count> counts,
            const char* displs_name, std::span<const Count> displs, Datatype type,
            PlanVector<Block>& out);
inline PlanVector<Block> blocks(const Context& ctx, const char* counts_name,
                                std::span<const Count> counts, const char* displs_name,
                                std::span<const Count> displs, Datatype type) {
  PlanVector<Block> out;
  blocks(ctx, counts_name, counts, displs_name, displs, type, out);
  return out;
}
// MPI: no location of the root's buffer may be read twice (scatterv) or written twice
// (gatherv).
// Most layouts place the blocks in rank order: one pass, inline, proves those disjoint (a
// v-form root at 4 ranks spent about 100 instructions calling out for it); any other layout
// is sorted by offset (no_overlap_sorted), which names the overlapping pair.
void no_overlap_sorted(const Context& ctx, std::span<const Block> blocks, const char* counts_name,
                       const char* displs_name, const char* verb);
inline void no_overlap(const Context& ctx, std::span<const Block> blocks, const char* counts_name,
                       const char* displs_name, const char* verb) {
  std::uint64_t end = 0;  // of the last non-empty block
  for (const Block& b : blocks) {
    if (b.bytes == 0) continue;
    if (b.offset < end) return no_overlap_sorted(ctx, blocks, counts_name, displs_name, verb);
    end = b.offset + b.bytes;
  }
}

}  // namespace shmcoll::validate
