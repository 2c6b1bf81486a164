// Broadcast across nodes: the root's node first where the root does not lead it (its leader
// needs the data), then the leaders through the MPI, then every other node from its leader.
// With SHMCOLL_MPI_BCAST_SEGMENTS=1 a large broadcast is cut into segments that flow through the
// levels as a pipeline: while a leader passes segment k on to the next level, it receives
// segment k + 1 from the one before. That pays where the two levels run at once, a network
// beside a node's memory; where they share the CPUs it costs (docs/performance.md), hence off by
// default. A blocking broadcast that is cut runs the started one's steps (started.hpp).
#include <algorithm>
#include <cmath>

#include "mpi/plugin.hpp"
#include "mpi/spanning/byte_types.hpp"
#include "mpi/spanning/spanning.hpp"

namespace shmcoll::mpi {
namespace {

// The pipeline's cost model. Each step of the pipeline moves one segment of s bytes through
// each level at once, and lasts as long as the slower level takes for it, about
// alpha + s / beta: alpha the cost of one step of a level (a team operation's round on a node,
// a message's latency between nodes, both some microseconds), beta the slower level's
// bandwidth (a node's copies, a network link: some GB/s). n bytes in n / s segments take
// n / s + 1 steps (the last level lags one behind), (n / s + 1)(alpha + s / beta) in all,
// which is least at s = sqrt(n * alpha * beta). Segments are no smaller than kMinSegment, where
// the steps' fixed costs would dominate whatever the model's constants.
constexpr double kStepSeconds = 2e-6;
constexpr double kBytesPerSecond = 10e9;
constexpr std::uint64_t kMinSegment = std::uint64_t{256} << 10;

// The bytes of each segment of a broadcast of `bytes` (all of them where it is not worth
// cutting, or not asked for, or where no node has a second rank: one level only): the same on
// every rank, whatever its datatype, as the total and the layout are. A whole number of pages,
// so that segments start aligned where the buffer does.
std::uint64_t segment_bytes(std::uint64_t bytes, bool one_rank_per_node) {
  constexpr std::uint64_t kPage = 4096;
  if (!config().bcast_segments || one_rank_per_node) return bytes;
  const double best =
      std::max(static_cast<double>(kMinSegment),
               std::sqrt(static_cast<double>(bytes) * kStepSeconds * kBytesPerSecond));
  if (static_cast<double>(bytes) < 2 * best) return bytes;
  return static_cast<std::uint64_t>(best) / kPage * kPage;
}

}  // namespace

void Spanning::bcast(void* buffer, Count count, Datatype type, int root) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * type.size;
  if (segment_bytes(bytes, one_rank_per_node()) < bytes)
    return ibcast(buffer, count, type, root)->wait();
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
  const bool in_root_node = node_ == root_node;
  if (in_root_node && root_local != 0) team().bcast(buffer, count, type, root_local);
  if (local_ == 0) {
    const ByteMessage message(static_cast<std::uint64_t>(count) * type.size);
    check_mpi(PMPI_Bcast(buffer, message.count, message.type, root_node, leaders_),
              "PMPI_Bcast between the nodes' leaders");
  }
  if ((!in_root_node || root_local == 0) && !alone()) team().bcast(buffer, count, type, 0);
}

Spanning::Started Spanning::ibcast(void* buffer, Count count, Datatype type, int root) {
  using Waiting = StartedCall::Waiting;
  auto call = std::make_shared<StartedCall>(*this);
  const int root_node = layout_.node_of[static_cast<std::size_t>(root)];
  const int root_local = layout_.local_of[static_cast<std::size_t>(root)];
  const bool in_root_node = node_ == root_node;
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * type.size;
  const std::uint64_t per = segment_bytes(bytes, one_rank_per_node());
  const Count segments = per < bytes ? static_cast<Count>((bytes + per - 1) / per) : 1;
  // Segment k: where it starts, and its bytes.
  auto start_of = [buffer, per](Count k) {
    return static_cast<std::byte*>(buffer) + static_cast<std::uint64_t>(k) * per;
  };
  auto length_of = [bytes, per](Count k) {
    return std::min(per, bytes - static_cast<std::uint64_t>(k) * per);
  };
  // What this rank does with segment k: take it from the level before (`upstream`), then pass
  // it on to the next level (`downstream`); either may be nothing.
  using Part = std::function<void(Waiting&, Count)>;
  // The team's operations: the broadcast whole, in its datatype, or its segments in bytes.
  auto team_part = [=, this](int team_root) -> Part {
    return [=, this](Waiting& waiting, Count k) {
      waiting.team = segments == 1 ? team().ibcast(buffer, count, type, team_root)
                                   : team().ibcast(start_of(k), static_cast<Count>(length_of(k)),
                                                   kByte, team_root);
    };
  };
  const Part leaders_part = [=, this](Waiting& waiting, Count k) {
    // The datatype may be freed before the broadcast ends (MPI: it completes normally).
    const ByteMessage message(length_of(k));
    check_mpi(PMPI_Ibcast(start_of(k), message.count, message.type, root_node, leaders_,
                          &waiting.mpi.emplace_back(MPI_REQUEST_NULL)),
              "PMPI_Ibcast between the nodes' leaders");
  };
  Part upstream, downstream;
  if (in_root_node && root_local != 0) {
    upstream = team_part(root_local);
    if (local_ == 0) downstream = leaders_part;
  } else if (local_ == 0) {
    upstream = leaders_part;
    if (!alone()) downstream = team_part(0);
  } else {
    downstream = team_part(0);
  }
  // Step j takes segment j from upstream while it passes segment j - 1 downstream.
  for (Count j = 0; j <= segments; ++j) {
    const bool up = upstream && j < segments;
    const bool down = downstream && j > 0;
    if (!up && !down) continue;
    call->then([=](Waiting& waiting) {
      if (up) upstream(waiting, j);
      if (down) downstream(waiting, j - 1);
    });
  }
  start_across_nodes(call);
  return call;
}

}  // namespace shmcoll::mpi
