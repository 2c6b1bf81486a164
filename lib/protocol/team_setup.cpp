// Forming a team, in three bootstrap exchanges:
//   1. join: pids, places, the creator's layout, the random part of the segment's name, so
//      that every rank knows the name before it exists, and the segment each rank has parked;
//   2. rank 0 creates the segment and tells whether it could;
//   3. everyone else attaches and validates it, and tells whether it could.
// Every rank removes the name once all are attached, and on any failure after the first
// exchange: a creator killed at any moment cannot leave its segment behind in /dev/shm while
// another rank of the team lives. Where every rank offers the same parked segment for this
// team (segment/parked_segment.hpp), each clears its own lines instead, and one exchange
// after that ends formation.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "copy/cross_process.hpp"
#include "protocol/team_impl.hpp"
#include "topology/discovery.hpp"

namespace shmcoll {
namespace {

// Cross-memory attach against memcpy on this machine, measured once per process: every team the
// process forms decides its paths from the same figure, and a team's formation costs no copies.
double process_cross_copy_cost() {
  static const double cost = copy::measure_cross_copy_cost(Options::kSlowCrossCopyCost);
  return cost;
}

// Exchanged once at join. Fixed-size and trivially copyable: it travels as bytes.
struct JoinInfo {
  std::int32_t rank = 0;  // as the bootstrap told this rank, checked against its position
  std::int32_t size = 0;
  std::int32_t pid = 0;
  std::uint64_t nonce = 0;  // rank 0: the random part of the segment's name
  std::uint64_t slot_bytes = 0;
  std::uint32_t slots = 0;
  std::uint32_t checks = 0;
  std::uint32_t bcast_algorithm = 0;
  std::uint32_t scatter_algorithm = 0;
  std::uint32_t gather_algorithm = 0;
  std::uint32_t single_copy = 0;
  std::uint32_t verbose = 0;
  std::uint32_t team_cpus = 0;
  std::uint64_t single_copy_min_bytes = 0;
  std::uint64_t shared_copy_min_bytes = 0;
  std::uint64_t scatter_single_copy_min_team_bytes = 0;
  std::uint64_t gather_single_copy_min_team_bytes = 0;
  std::uint64_t probe_word = 0;    // address of this process's copy::ProbeWord
  std::uint64_t parked_nonce = 0;  // the segment this rank offers for reuse, 0 for none
  cpu_set_t cpus{};  // where this rank may run, to tell whether the team is oversubscribed
  topology::Place place;
  char topology_error[192] = {};
};

// The outcome of creating (rank 0) or attaching (the others) the segment.
struct AttachInfo {
  std::int32_t ok = 0;
  char error[320] = {};
  char single_copy_error[160] = {};  // what failed when this rank probed its peers with CMA
  double cross_copy_cost = 0;        // rank 0: process_cross_copy_cost(), 0 if not measured
};

// Whether the team forming reuses `parked`: every rank offers it, for the same processes by
// rank, with the same geometry, and its probe of cross-memory attach answers this team's
// question. Every input is the same on every rank (the parked copies describe one segment, the
// rest comes from the join exchange), so every rank reaches the same answer.
bool reusable(const segment::ParkedSegment& parked, const std::vector<JoinInfo>& all,
              const segment::Geometry& geometry, bool wants_probe) {
  for (const JoinInfo& j : all)
    if (j.parked_nonce != parked.nonce) return false;
  if (parked.pids.size() != all.size()) return false;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (parked.pids[r] != all[r].pid) return false;
  const segment::Geometry& g = parked.segment.geometry();
  if (g.nranks != geometry.nranks || g.slots != geometry.slots ||
      g.slot_bytes != geometry.slot_bytes)
    return false;
  return !wants_probe || parked.probed;
}

template <std::size_t N>
void put(char (&dst)[N], const std::string& s) {
  std::snprintf(dst, N, "%s", s.c_str());
}

}  // namespace

void TeamImpl::form(Bootstrap& bootstrap) {
  // The creator's layout parameters win; the others adopt them from the join exchange.
  segment::Geometry geometry = segment::Geometry::of(size_, options_);

  // This process's parked segment, out of reach of its other threads' teams from now on: reused
  // if every rank offers it for the same processes, else unmapped when formation ends.
  std::optional<segment::ParkedSegment> parked = segment::take_parked();
  JoinInfo mine;
  if (parked && segment::check_header(parked->segment.header(), parked->segment.size(),
                                      parked->segment.geometry())
                    .empty())
    mine.parked_nonce = parked->nonce;
  mine.rank = rank_;
  mine.size = size_;
  mine.pid = static_cast<std::int32_t>(getpid());
  // Before anyone can probe us (after the join exchange).
  copy::allow_peer_access();
  mine.probe_word = reinterpret_cast<std::uintptr_t>(copy::ProbeWord::address());
  if (sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) != 0) CPU_ZERO(&mine.cpus);
  try {
    mine.place = topology::Topology::load(options_.topology)->place_of_rank(rank_, nullptr);
  } catch (const Error& e) {
    // Reported by every rank after the exchange.
    put(mine.topology_error, std::string("SHMCOLL_TOPOLOGY=") + e.what());
  }
  if (rank_ == 0) {
    mine.slot_bytes = geometry.slot_bytes;
    mine.slots = geometry.slots;
    mine.checks = static_cast<std::uint32_t>(options_.checks);
    mine.bcast_algorithm = static_cast<std::uint32_t>(options_.bcast_algorithm);
    mine.scatter_algorithm = static_cast<std::uint32_t>(options_.scatter_algorithm);
    mine.gather_algorithm = static_cast<std::uint32_t>(options_.gather_algorithm);
    mine.single_copy = static_cast<std::uint32_t>(options_.single_copy);
    mine.single_copy_min_bytes = options_.single_copy_min_bytes;
    mine.shared_copy_min_bytes = options_.shared_copy_min_bytes;
    mine.scatter_single_copy_min_team_bytes = options_.scatter_single_copy_min_team_bytes;
    mine.gather_single_copy_min_team_bytes = options_.gather_single_copy_min_team_bytes;
    mine.verbose = options_.verbose ? 1 : 0;
    mine.team_cpus = static_cast<std::uint32_t>(options_.team_cpus);
    mine.nonce = segment::random_nonce();
  }
  std::vector<JoinInfo> all(static_cast<std::size_t>(size_));
  bootstrap.allgather(&mine, all.data(), sizeof(JoinInfo));
  // Every rank must agree on the team size and hold the position it claims: a bootstrap that
  // disagrees would make ranks map different layouts or share a mailbox.
  for (int r = 0; r < size_; ++r) {
    const JoinInfo& j = all[static_cast<std::size_t>(r)];
    std::string problem;
    if (j.size != size_) {
      problem = "team size mismatch at join: rank " + std::to_string(rank_) + " was told " +
                std::to_string(size_) + " ranks, the rank at position " + std::to_string(r) +
                " was told " + std::to_string(j.size);
    } else if (j.rank != r) {
      problem =
          "the rank at position " + std::to_string(r) + " joined as rank " +
          std::to_string(j.rank) +
          (j.rank >= 0 && j.rank < size_ ? ", which another process also claims (rank joined twice)"
                                         : ", outside the team");
    }
    if (!problem.empty()) throw InvalidArgument(problem);
  }
  for (int r = 0; r < size_; ++r) {
    if (all[static_cast<std::size_t>(r)].topology_error[0] != '\0') {
      throw InvalidArgument("rank " + std::to_string(r) + ": " +
                            all[static_cast<std::size_t>(r)].topology_error);
    }
  }
  const JoinInfo& creator = all[0];
  geometry.slot_bytes = creator.slot_bytes;
  geometry.slots = creator.slots;
  options_.slot_bytes = creator.slot_bytes;
  options_.slots = static_cast<int>(creator.slots);
  options_.checks = static_cast<CheckLevel>(creator.checks);
  options_.bcast_algorithm = static_cast<Algorithm>(creator.bcast_algorithm);
  options_.scatter_algorithm = static_cast<Algorithm>(creator.scatter_algorithm);
  options_.gather_algorithm = static_cast<Algorithm>(creator.gather_algorithm);
  options_.single_copy = static_cast<SingleCopy>(creator.single_copy);
  options_.single_copy_min_bytes = creator.single_copy_min_bytes;
  options_.shared_copy_min_bytes = creator.shared_copy_min_bytes;
  options_.scatter_single_copy_min_team_bytes = creator.scatter_single_copy_min_team_bytes;
  options_.gather_single_copy_min_team_bytes = creator.gather_single_copy_min_team_bytes;
  options_.verbose = creator.verbose != 0;
  pids_.resize(static_cast<std::size_t>(size_));
  cpu_set_t team_cpus;
  CPU_ZERO(&team_cpus);
  for (int r = 0; r < size_; ++r) {
    pids_[static_cast<std::size_t>(r)] = all[static_cast<std::size_t>(r)].pid;
    CPU_OR(&team_cpus, &team_cpus, &all[static_cast<std::size_t>(r)].cpus);
    places_.push_back(all[static_cast<std::size_t>(r)].place);
  }
  // More ranks than CPUs the ranks may run on, together (bound ranks each see one CPU, hence
  // the union); without any mask, the CPUs online; SHMCOLL_TEAM_CPUS (rank 0's) overrides.
  options_.team_cpus = static_cast<int>(creator.team_cpus);
  const int cpus = options_.team_cpus > 0 ? options_.team_cpus
                   : CPU_COUNT(&team_cpus) > 0
                       ? CPU_COUNT(&team_cpus)
                       : static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  oversubscribed_ = size_ > cpus;

  if (parked && reusable(*parked, all, geometry, wants_probe())) {
    reuse(std::move(*parked), bootstrap);
    return;
  }
  parked.reset();  // unmapped: the segment's memory goes once every member's copy has

  // From here on every rank knows the name, and removes it however formation ends.
  const std::string name = segment::segment_name(bootstrap.job_id(), creator.nonce);
  segment_name_ = name;
  nonce_ = creator.nonce;
  struct RemoveName {
    const std::string& name;
    ~RemoveName() { segment::Segment::remove(name); }
  } remove_name{name};

  AttachInfo created;
  if (rank_ == 0) {
    try {
      segment_ = segment::Segment::create(name, geometry, rank_nodes());
      created.ok = 1;
    } catch (const Error& e) {
      put(created.error, e.what());  // still exchange, so that every rank fails instead of hanging
    }
  }
  std::vector<AttachInfo> outcomes(static_cast<std::size_t>(size_));
  bootstrap.allgather(&created, outcomes.data(), sizeof(AttachInfo));
  if (!outcomes[0].ok)
    throw SegmentError("rank 0 could not create the team's segment: " +
                       std::string(outcomes[0].error));

  AttachInfo attached;
  if (wants_probe()) {
    // Every rank probes every peer, since any rank may be a root; the verdicts travel with the
    // attach outcome, so the probe costs no exchange of its own.
    for (int r = 0; r < size_ && attached.single_copy_error[0] == '\0'; ++r) {
      if (r == rank_) continue;
      const JoinInfo& peer = all[static_cast<std::size_t>(r)];
      if (const std::string why = copy::probe(peer.pid, peer.probe_word); !why.empty()) {
        put(attached.single_copy_error,
            "rank " + std::to_string(rank_) + " to rank " + std::to_string(r) + ": " + why);
      }
    }
  }
  // Rank 0's measure is the team's, so that every rank computes the same split of each block.
  if (rank_ == 0 && wants_probe() && attached.single_copy_error[0] == '\0')
    attached.cross_copy_cost = process_cross_copy_cost();
  if (rank_ != 0) {
    try {
      segment_ = segment::Segment::attach(name, geometry);
      attached.ok = 1;
    } catch (const Error& e) {
      put(attached.error, e.what());
    }
  } else {
    attached.ok = 1;
  }
  if (attached.ok) segment_.header().attached.fetch_add(1, std::memory_order_relaxed);
  std::vector<AttachInfo> verdicts(static_cast<std::size_t>(size_));
  bootstrap.allgather(&attached, verdicts.data(), sizeof(AttachInfo));
  // (RemoveName takes the name away now: everyone that could attach has.)
  for (int r = 0; r < size_; ++r) {
    if (!verdicts[static_cast<std::size_t>(r)].ok) {
      throw SegmentError("rank " + std::to_string(r) + " could not attach the team's segment: " +
                         verdicts[static_cast<std::size_t>(r)].error);
    }
  }
  cross_copy_cost_ = verdicts[0].cross_copy_cost;
  std::string failure;  // the first pair that failed the probe, as a rank reported it
  for (const AttachInfo& v : verdicts) {
    if (failure.empty() && v.single_copy_error[0] != '\0')
      failure = std::string("cross-memory attach fails from ") + v.single_copy_error;
  }
  settle_single_copy(failure);
  probed_ = wants_probe();
}

void TeamImpl::settle_single_copy(const std::string& failure) {
  if (!wants_probe()) {
    single_copy_ = false;
    single_copy_why_ =
        options_.single_copy == SingleCopy::kOff ? "SHMCOLL_SINGLE_COPY=off" : "a team of one";
    return;
  }
  single_copy_ = failure.empty();
  single_copy_why_ = failure;
}

void TeamImpl::reuse(segment::ParkedSegment&& parked, Bootstrap& bootstrap) {
  segment_ = std::move(parked.segment);
  segment_name_ = std::move(parked.name);
  nonce_ = parked.nonce;
  // Nobody uses the segment now: every member left the team that parked it before offering it.
  segment::clear_rank_controls(segment_, static_cast<std::uint32_t>(rank_));
  settle_single_copy(parked.single_copy ? std::string() : parked.single_copy_why);
  probed_ = parked.probed;
  // The second exchange: no rank may use the team before every rank has cleared its lines.
  AttachInfo cleared;
  cleared.ok = 1;
  if (rank_ == 0 && single_copy_) cleared.cross_copy_cost = process_cross_copy_cost();
  std::vector<AttachInfo> verdicts(static_cast<std::size_t>(size_));
  bootstrap.allgather(&cleared, verdicts.data(), sizeof(AttachInfo));
  cross_copy_cost_ = verdicts[0].cross_copy_cost;
}

std::string TeamImpl::formation_summary() const {
  const segment::PlacementOutcome& placed = segment_.placement();
  char text[512];
  std::snprintf(text, sizeof text,
                "team of %d ranks%s, %s checks, segment of %zu bytes, %d rank area(s) on their "
                "NUMA node%s%s",
                size_, oversubscribed_ ? " (oversubscribed)" : "",
                check_level_name(options_.checks), segment_.size(), placed.placed,
                placed.error.empty() ? "" : ": ", placed.error.c_str());
  return text;
}

segment::RankNodes TeamImpl::rank_nodes() const {
  // Only this machine's nodes exist to place memory on; a synthetic or XML topology's do not.
  const auto topology = topology::Topology::load(options_.topology);
  if (!topology->is_this_machine()) return {};
  segment::RankNodes nodes;
  for (const topology::Place& place : places_) nodes.push_back(topology->numa_os_index(place.numa));
  return nodes;
}

}  // namespace shmcoll
