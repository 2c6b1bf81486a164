// The per-call plans of the collectives (block sizes and offsets, stream pieces, children) are
// vectors with room for a small team inside the operation object, so a call in such a team
// allocates nothing for them. At 8 bytes a call costs a few hundred nanoseconds, and the heap
// allocations of its plans were a good part of that: perf showed a quarter of the tree
// gatherv's cycles in building its plan, malloc and free among them. Larger teams spill to the
// heap, where the work per call is larger too.
#pragma once

// GCC's -Wstringop-overflow misreads small_vector's growth from inline to heap storage (a
// known false positive of its flow analysis): silenced for Boost's own code only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <boost/container/small_vector.hpp>
#pragma GCC diagnostic pop
#else
#include <boost/container/small_vector.hpp>
#endif
#include <cstddef>
#include <span>

namespace shmcoll {

// Ranks of a team whose per-rank plans stay inline.
inline constexpr std::size_t kInlineRanks = 16;

template <class T, std::size_t N = kInlineRanks>
using PlanVector = boost::container::small_vector<T, N>;

// Its elements as a span (its iterators are not pointers, so it does not convert by itself).
template <class T, std::size_t N>
std::span<const T> as_span(const PlanVector<T, N>& v) {
  return {v.data(), v.size()};
}

}  // namespace shmcoll
