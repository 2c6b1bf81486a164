#include "protocol/validation.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "protocol/stream.hpp"
#include "shmcoll/error.hpp"

namespace shmcoll::validate {
void invalid(const Context& ctx, const std::string& what, Cause cause) {
  std::string where = std::string(kind_name(ctx.kind)) + " on rank " + std::to_string(ctx.rank);
  if (ctx.kind != Kind::kBarrier) {
    where += ctx.is_root() ? " (the root)" : " (root " + std::to_string(ctx.root) + ")";
  }
  throw InvalidArgument(where + ": " + what, cause);
}

void root_out_of_range(const Context& ctx) {
  invalid(ctx,
          "root = " + std::to_string(ctx.root) + " is outside the team [0, " +
              std::to_string(ctx.size) + ")",
          Cause::kRoot);
}

void bad_count(const Context& ctx, const char* count_name, Count count, Datatype type) {
  if (count < 0)
    invalid(ctx, std::string(count_name) + " = " + std::to_string(count) + " is negative",
            Cause::kCount);
  if (type.size == 0)
    invalid(ctx, std::string("the datatype of ") + count_name + " has size 0", Cause::kDatatype);
  invalid(ctx,
          std::string(count_name) + " = " + std::to_string(count) + " of " +
              std::to_string(type.size) + "-byte " + type.name + " overflows the byte count",
          Cause::kCount);
}

void null_buffer(const Context& ctx, const char* name, std::uint64_t bytes) {
  invalid(ctx, std::string(name) + " is null but must hold " + std::to_string(bytes) + " bytes",
          Cause::kBuffer);
}

void in_place_off_root(const Context& ctx) {
  invalid(ctx, "in_place is only allowed at the root", Cause::kBuffer);
}

void stream_length_counted(const Context& ctx, std::uint64_t bytes) {
  const StreamShape shape{bytes, ctx.slot_bytes};
  if (shape.chunks() <= sync::kMaxChunks) return;
  invalid(ctx, "a message of " + std::to_string(bytes) + " bytes needs " +
                   std::to_string(shape.chunks()) + " chunks of " + std::to_string(ctx.slot_bytes) +
                   " bytes, more than the " + std::to_string(sync::kMaxChunks) +
                   " an operation can number; raise SHMCOLL_SLOT_BYTES");
}

std::uint64_t uniform_blocks(const Context& ctx, const Side& whole, const Side& own,
                             bool in_place) {
  if (!ctx.is_root()) {
    const std::uint64_t b = bytes(ctx, own.count_name, own.count, own.type);
    buffer(ctx, own.buffer_name, own.buffer, b);
    return b;
  }
  const std::uint64_t b = bytes(ctx, whole.count_name, whole.count, whole.type);
  std::uint64_t total = 0;
  if (__builtin_mul_overflow(b, static_cast<std::uint64_t>(ctx.size), &total) ||
      total > kMaxBytes) {
    invalid(ctx, concat(whole.count_name, " x team size overflows"), Cause::kCount);
  }
  buffer(ctx, whole.buffer_name, whole.buffer, total);
  if (!in_place) {
    const std::uint64_t mine = bytes(ctx, own.count_name, own.count, own.type);
    if (mine != b) {
      invalid(ctx,
              concat(own.count_name, " x datatype = ", mine, " bytes but ", whole.count_name,
                     " x datatype = ", b, " bytes"),
              Cause::kSizeMismatch);
    }
    buffer(ctx, own.buffer_name, own.buffer, mine);
  }
  return b;
}

namespace {

// Rank r's entries of counts and displs, found wrong by blocks(): says how.
[[noreturn]] void bad_block(const Context& ctx, const char* counts_name, Count c,
                            const char* displs_name, Count d, Datatype type, std::size_t r) {
  auto at = [&](const char* name) { return concat(name, '[', r, ']'); };
  if (c < 0) invalid(ctx, concat(at(counts_name), " = ", c, " is negative"), Cause::kCount);
  std::uint64_t b = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(c), type.size, &b) || b > kMaxBytes) {
    invalid(ctx,
            concat(at(counts_name), " = ", c, " of ", type.size, "-byte ", type.name,
                   " overflows the byte count"),
            Cause::kCount);
  }
  if (d < 0) invalid(ctx, concat(at(displs_name), " = ", d, " is negative"));
  invalid(ctx, concat(at(displs_name), " = ", d, " with ", at(counts_name), " = ", c,
                      " overflows the buffer offset"));
}

}  // namespace

void blocks(const Context& ctx, const char* counts_name, std::span<const Count> counts,
            const char* displs_name, std::span<const Count> displs, Datatype type,
            PlanVector<Block>& out) {
  const auto n = static_cast<std::size_t>(ctx.size);
  if (counts.size() < n) {
    invalid(ctx, std::string(counts_name) + " has " + std::to_string(counts.size()) +
                     " entries, the team has " + std::to_string(n) + " ranks");
  }
  if (displs.size() < n) {
    invalid(ctx, std::string(displs_name) + " has " + std::to_string(displs.size()) +
                     " entries, the team has " + std::to_string(n) + " ranks");
  }
  if (type.size == 0)
    invalid(ctx, concat("the datatype of ", counts_name, " has size 0"), Cause::kDatatype);
  out.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const Count c = counts[r], d = displs[r];
    std::uint64_t b = 0, off = 0, end = 0;
    // One test for everything (negative values wrap to more than kMaxBytes); bad_block says
    // which part failed.
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(c), type.size, &b) ||
        __builtin_mul_overflow(static_cast<std::uint64_t>(d), type.size, &off) ||
        __builtin_add_overflow(off, b, &end) || b > kMaxBytes || end > kMaxBytes) [[unlikely]]
      bad_block(ctx, counts_name, c, displs_name, d, type, r);
    out[r] = {off, b};
  }
}

void no_overlap_sorted(const Context& ctx, std::span<const Block> blocks, const char* counts_name,
                       const char* displs_name, const char* verb) {
  PlanVector<std::size_t> order;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    if (blocks[r].bytes > 0) order.push_back(r);
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return blocks[a].offset < blocks[b].offset; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    const Block& prev = blocks[order[i - 1]];
    const Block& cur = blocks[order[i]];
    if (cur.offset < prev.offset + prev.bytes) {
      const auto a = std::to_string(order[i - 1]), b = std::to_string(order[i]);
      invalid(ctx, "the blocks of ranks " + a + " and " + b + " overlap (bytes [" +
                       std::to_string(prev.offset) + ", " +
                       std::to_string(prev.offset + prev.bytes) + ") and [" +
                       std::to_string(cur.offset) + ", " + std::to_string(cur.offset + cur.bytes) +
                       ") from " + counts_name + "/" + displs_name + "), so a location would be " +
                       verb + " twice");
    }
  }
}

}  // namespace shmcoll::validate
