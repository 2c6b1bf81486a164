// Local argument checks. Each raises InvalidArgument with a message that names the collective,
// the rank, the argument and its value; the caller's error path then aborts the team so every
// other rank gets the same error instead of waiting.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/plan_vector.hpp"
#include "core/signature.hpp"
#include "shmcoll/datatype.hpp"

namespace shmcoll::validate {

struct Context {
  Kind kind;
  int rank;
  int size;
  int root;
  std::uint64_t slot_bytes;
  bool is_root() const { return rank == root; }
};

[[noreturn]] void invalid(const Context& ctx, const std::string& what);

void root(const Context& ctx);
// count x type.size, checked for sign, zero-size types and overflow.
std::uint64_t bytes(const Context& ctx, const char* count_name, Count count, Datatype type);
// A buffer that must hold `bytes` bytes.
void buffer(const Context& ctx, const char* name, const void* p, std::uint64_t bytes);
// A stream of `bytes` must fit in the chunk counter.
void stream_length(const Context& ctx, std::uint64_t bytes);

// The start every collective shares: the root is in range, and in_place is used at the root only.
void common(const Context& ctx, bool in_place);

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
// Checks counts and displacements (size() entries, non-negative, no overflow) and returns the
// blocks they describe.
PlanVector<Block> blocks(const Context& ctx, const char* counts_name,
                         std::span<const Count> counts, const char* displs_name,
                          std::span<const Count> displs, Datatype type);
// MPI: no location of the root's buffer may be read twice (scatterv) or written twice
// (gatherv). O(n log n), so only done at CheckLevel::kFull.
void no_overlap(const Context& ctx, std::span<const Block> blocks, const char* counts_name,
                const char* displs_name, const char* verb);

}  // namespace shmcoll::validate
