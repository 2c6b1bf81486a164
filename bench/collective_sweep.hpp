// One collective at one size, timed the way every shmcoll-bench table is (OSU-like, safe for
// collectives): iteration counts fixed per size and identical on every rank (time-based counts
// would diverge between ranks and hang); each sample starts after a barrier; the root rotates
// every iteration unless one is fixed; the root's buffer changes every iteration. Each rank
// times its own calls; rank 0 receives them all. Two references come from the same run: a
// memcpy of the same size on rank 0, and the copy floor -- every rank at once copies its share
// of the bytes that must land in other ranks' buffers ((ranks - 1) x size, split evenly), the
// slowest rank's time. After timing, one call is checked byte by byte.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shmcoll/shmcoll.hpp"
#include "sweep_output.hpp"

namespace shmcoll::bench {

enum class Coll { kBcast, kScatter, kScatterv, kGather, kGatherv };
const char* name_of(Coll c);
const std::vector<Coll>& all_collectives();

struct SweepSettings {
  std::vector<Coll> colls = all_collectives();
  std::uint64_t min_bytes = 1, max_bytes = 64ull << 20;
  int iterations = 0;  // 0: by size
  bool quick = false;  // a tenth of the iterations, every other size
  bool validate = true;
};

int iterations_for(const SweepSettings& s, std::uint64_t bytes);
// Powers of two from min_bytes to max_bytes; every other one when quick.
std::vector<std::uint64_t> sizes_of(const SweepSettings& s);
// The expected seconds of one size of a collective, from a memcpy rate (bytes per second):
// each call moves about (ranks - 1) x bytes and costs a barrier (taken as 5 us), and the copy
// floor's rounds follow. A guess, for estimates and progress lines.
double expected_seconds(const SweepSettings& s, std::uint64_t bytes, int ranks, double rate);

// A rank's buffers: send and recv of max_bytes x ranks each, the v-forms' counts and
// displacements, and (rank 0) a destination for the memcpy reference.
struct SweepBuffers {
  std::span<std::byte> send, recv, copy_destination;
  std::vector<Count> counts, displs;
};

// Runs `coll` at `bytes` per rank on every rank of `team`; `root` is a fixed rank, or -1 to
// rotate. Rank 0's result holds the figures and "valid" (other ranks' say "ok" or "-"). `seq`
// numbers the validation patterns across calls.
SweepPoint measure_point(Team& team, Coll coll, SweepBuffers& b, const SweepSettings& s,
                         std::uint64_t bytes, int root, std::uint64_t& seq);

// The table's legend, a collective's header and a point's row, as shmcoll-bench prints them.
const char* table_legend();
std::string table_header(const std::string& collective);
std::string table_row(const SweepPoint& p);

}  // namespace shmcoll::bench
