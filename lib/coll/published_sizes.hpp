// What a v-form root publishes of the other ranks' sizes, so that they can check them without
// waiting for it. Only the root of a scatterv or gatherv knows every rank's size (sendcounts,
// recvcounts), so under CheckLevel::kFull its other ranks would wait for its verdict, its
// departure, before they return: with a CPU per rank that wait made a small gatherv sender
// take the whole of the root's call. Under full checks every other
// rank reads every peer's arrival anyway, and with it the size that peer published; so the
// root publishes, with its arrival (its status line's `bytes`), what those sizes must be:
//
// - one size, where every other rank has the same (kUniform | size): each rank compares every
//   peer with it in its agree stage, so every pair (root, r) is compared by every rank;
// - otherwise, under full checks, a fingerprint of every other rank's size (kUniform |
//   kFingerprint | 61 bits): the sum over those ranks r of term(r, size of r), which each rank
//   recomputes from what the peers published. Equal sums: every size matches, but for a
//   coincidence of about 2^-61 per wrong call (the root still compares every rank exactly and
//   fails the team, so such a call is reported too, in the next call of the ranks that had
//   returned). Different sums, or a peer that published something else: the rank waits for
//   the verdict, as before, and reports the root's error, which names the rank and the count.
//
// Sizes are at most validate::kMaxBytes (2^62), so bit 63 is free, and bit 62 is set in a
// size only for 2^62 itself, whose low bits are 0; a fingerprint always has bit 0 set. Along
// the tree the root publishes 0 and the verdict stays. No other reader compares a v-form
// root's published size (they expect none from it).
#pragma once

#include <cstdint>
#include <span>

#include "protocol/operation.hpp"
#include "protocol/validation.hpp"

namespace shmcoll::published_sizes {

using root_word::is_fingerprint;
using root_word::kFingerprint;
using root_word::kUniform;

// One rank's share of a fingerprint. For a fixed rank it is a bijection of the size (a
// multiply-xorshift mix, as splitmix64's), so a single wrong size always changes the sum.
inline std::uint64_t term(int rank, std::uint64_t bytes) {
  std::uint64_t z = bytes ^ (0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(rank) + 1));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The published word of a fingerprint from the sum of the terms.
inline std::uint64_t fingerprint_word(std::uint64_t sum) {
  return kUniform | kFingerprint | (sum & (kFingerprint - 1)) | 1;
}

// Root: what it publishes as its size, from every rank's block (its own, at `root`, does not
// count): 0 along the tree, or where the sizes differ and no fingerprint is asked for
// (`fingerprint`: the team checks at CheckLevel::kFull, the only level that reads it).
inline std::uint64_t published(bool flat, bool fingerprint, std::span<const validate::Block> blocks,
                               int root) {
  if (!flat) return 0;
  std::int64_t size = -1;
  bool same = true;
  for (std::size_t r = 0; r < blocks.size() && same; ++r) {
    if (static_cast<int>(r) == root) continue;
    const auto bytes = static_cast<std::int64_t>(blocks[r].bytes);
    same = size < 0 || bytes == size;
    size = bytes;
  }
  if (same) return size < 0 ? 0 : kUniform | static_cast<std::uint64_t>(size);
  if (!fingerprint) return 0;
  std::uint64_t sum = 0;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    if (static_cast<int>(r) != root) sum += term(static_cast<int>(r), blocks[r].bytes);
  }
  return fingerprint_word(sum);
}

// What another rank learned from the root's word, and how far its fingerprint check got.
struct RootSizes {
  std::int64_t uniform = -1;  // the root's one size for every other rank, -1 if none known
  bool verified = false;      // every other rank's size agrees with the root's fingerprint
  // While learning:
  bool root_read = false;
  std::uint64_t fingerprint = 0;  // the root's word while it is being checked, then 0
  std::uint64_t sum = 0;          // the terms of the ranks before `next`
  int next = 0;

  // Whether this rank must wait for the root's verdict before it returns.
  bool needs_verdict() const { return uniform < 0 && !verified; }
};

// Another rank of `op`, after its data: under full checks (the only level that waits for the
// verdict) reads the root's arrival and compares its collective and root with `op`'s, then
// learns its one size or checks every rank's size against its fingerprint (see above). False,
// with `blocked_on` set, while the root or a peer it reads has not arrived. Under other checks,
// or where the root has left already (its verdict is then in), it learns nothing.
inline bool learn(const CollectiveOp& op, TeamImpl& team, RootSizes& sizes,
                  sync::WaitTarget& blocked_on) {
  if (team.options().checks != CheckLevel::kFull) return true;
  const int root = op.signature().root;
  std::uint64_t packed = 0, bytes = 0;
  if (!sizes.root_read) {
    segment::StatusLine& status = team.area(root).status();
    switch (read_peer_signature(status, op.op(), packed, bytes)) {
      case PeerState::kNotArrived:
        blocked_on = awaited_arrival(status, op.op(), root);
        return false;
      case PeerState::kPassed:
        break;
      case PeerState::kRead:
        op.check_peer_signature(root, packed, bytes);  // collective and root (no size expected)
        if (is_fingerprint(bytes))
          sizes.fingerprint = bytes;
        else if ((bytes & kUniform) != 0)
          sizes.uniform = static_cast<std::int64_t>(bytes & ~kUniform);
        break;
    }
    sizes.root_read = true;
  }
  if (sizes.fingerprint == 0) return true;
  // Every other rank's size, as it published it with its arrival (this rank's own: its
  // signature's). The agree stage reads the same arrivals next, from this core's cache.
  for (; sizes.next < team.size(); ++sizes.next) {
    const int r = sizes.next;
    if (r == root) continue;
    if (r == team.rank()) {
      sizes.sum += term(r, op.signature().bytes);
      continue;
    }
    segment::StatusLine& status = team.area(r).status();
    switch (read_peer_signature(status, op.op(), packed, bytes)) {
      case PeerState::kNotArrived:
        blocked_on = awaited_arrival(status, op.op(), r);
        return false;
      case PeerState::kPassed:
        // Under full checks r left only after every rank had arrived and it had checked every
        // size itself, or had the root's verdict: either way the sizes agree.
        sizes.verified = true;
        sizes.fingerprint = 0;  // done
        return true;
      case PeerState::kRead:
        // Another collective or root: the agree stage reports it; the sum could not match.
        if (packed != op.signature().packed()) {
          sizes.fingerprint = 0;
          return true;
        }
        sizes.sum += term(r, bytes);
        break;
    }
  }
  sizes.verified = fingerprint_word(sizes.sum) == sizes.fingerprint;
  sizes.fingerprint = 0;
  return true;
}

}  // namespace shmcoll::published_sizes
