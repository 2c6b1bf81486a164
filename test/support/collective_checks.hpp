// One verified call of each collective, shared by the matrix, mixed-sequence and non-blocking
// tests. Each function fills the inputs from the pattern for `seq`, runs the call, and records a
// failure in `ctx` for every wrong byte, touched guard or written gap.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>

#include "support/ranks.hpp"

namespace shmcoll::test {

struct CallSpec {
  std::uint64_t seq = 0;  // selects the data pattern and the v-form layout
  int root = 0;
  std::uint64_t count = 0;  // elements per rank (bcast: of the message; v forms: the unit)
  Datatype type = kByte;
  bool in_place = false;
  std::size_t misalign = 0;  // user buffers start this many bytes past a cache line
  bool nonblocking = false;  // start the non-blocking form (ibcast, ...) instead
};

// A started call: the request (empty for a blocking call) and the check of its results, which
// holds the buffers and may run once the request is complete.
struct PendingCheck {
  Request request;
  std::function<void()> verify;
};
PendingCheck start_bcast(Team& team, RankContext& ctx, const CallSpec& spec);
PendingCheck start_scatter(Team& team, RankContext& ctx, const CallSpec& spec);
PendingCheck start_gather(Team& team, RankContext& ctx, const CallSpec& spec);
PendingCheck start_scatterv(Team& team, RankContext& ctx, const CallSpec& spec);
PendingCheck start_gatherv(Team& team, RankContext& ctx, const CallSpec& spec);
using StartCall = PendingCheck (*)(Team&, RankContext&, const CallSpec&);
// By index, in the order of kCheckCalls.
inline constexpr StartCall kStartCalls[] = {start_bcast, start_scatter, start_gather,
                                            start_scatterv, start_gatherv};

void check_bcast(Team& team, RankContext& ctx, const CallSpec& spec);
void check_scatter(Team& team, RankContext& ctx, const CallSpec& spec);
void check_gather(Team& team, RankContext& ctx, const CallSpec& spec);
void check_scatterv(Team& team, RankContext& ctx, const CallSpec& spec);
void check_gatherv(Team& team, RankContext& ctx, const CallSpec& spec);

// The five checks by index, for tests that pick collectives at random:
// 0 bcast, 1 scatter, 2 gather, 3 scatterv, 4 gatherv (3 and 4 are the v forms).
using CheckCall = void (*)(Team&, RankContext&, const CallSpec&);
inline constexpr CheckCall kCheckCalls[] = {check_bcast, check_scatter, check_gather,
                                            check_scatterv, check_gatherv};

// A random call, the same on every rank when their generators are seeded alike: which of the
// five (index into kCheckCalls / kStartCalls), root, in-place, misalignment, datatype, and a
// size from `sizes` in bytes (per block; the v forms' unit is a quarter of it).
struct RandomCall {
  int which = 0;
  CallSpec spec;
};
RandomCall random_call(std::mt19937_64& rng, int team_size, std::uint64_t seq,
                       std::span<const std::uint64_t> sizes);

// The v-form layout used by the checks: uneven counts (some zero) and displacements laid out
// in a non-monotonic rank order with gaps.
struct VLayout {
  std::vector<Count> counts, displs;
  Count extent = 0;  // elements the root's buffer spans
};
VLayout v_layout(int size, std::uint64_t seq, std::uint64_t unit);

}  // namespace shmcoll::test
