#include "coll/single_copy.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "base/fault_points.hpp"
#include "base/plan_vector.hpp"
#include "coll/broadcast_split.hpp"
#include "coll/copy_balance.hpp"
#include "copy/copy.hpp"
#include "copy/cross_process.hpp"
#include "protocol/handshake.hpp"
#include "topology/hierarchy.hpp"

namespace shmcoll {
using sync::make_tag;

namespace {
// What this rank published with its arrival in the current operation, as a peer reads it.
// Relaxed: its own stores.
PeerArrival own_arrival(const TeamImpl& team) {
  PeerArrival me;
  me.shared_id = handshake::own_shared_id(team);
  me.huge_pages = handshake::own_huge_pages(team);
  return me;
}
}  // namespace

std::uint64_t SingleCopyExchange::balanced_root_share(std::uint64_t block_bytes, int ranks,
                                                      std::uint64_t root_extra,
                                                      double local_copy_weight) {
  // Root: extra + (ranks - 1) * share; each peer: block - share. Equal when
  // share = (block - extra) / ranks, with the root's own block (a plain memcpy) counted at
  // local_copy_weight of a cross-memory copy per byte: 1 / the ratio rank 0 measured at
  // formation, corrected by each root's own calls (copy_balance.hpp), since no constant suits
  // machines whose cross-memory copies run from 1.2 to 4 times memcpy's cost. Rounded down to a
  // cache line, so both parts of a block start aligned where buffers are.
  const double weighted_extra = local_copy_weight * static_cast<double>(root_extra);
  if (ranks < 2 || weighted_extra >= static_cast<double>(block_bytes)) return 0;
  const auto share = static_cast<std::uint64_t>(
      (static_cast<double>(block_bytes) - weighted_extra) / static_cast<double>(ranks));
  return share / 64 * 64;
}

void SingleCopyExchange::balanced_root_shares(std::span<const std::uint64_t> blocks,
                                              std::uint64_t root_extra, double local_copy_weight,
                                              std::span<std::uint64_t> shares) {
  // Each peer i moves min(b_i, t) bytes, the root w * extra + sum of max(0, b_i - t). The
  // root's side falls as t rises, so the balance point is the one t where both are equal:
  // with the k largest blocks above it, t = (w * extra + their sum) / (k + 1). Trying k from
  // 0 up over the blocks in descending order finds the first t that no further block exceeds.
  PlanVector<std::uint64_t> sorted(blocks.begin(), blocks.end());
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  double above = local_copy_weight * static_cast<double>(root_extra);
  double balance = above;
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    if (static_cast<double>(sorted[k]) <= balance) break;
    above += static_cast<double>(sorted[k]);
    balance = above / static_cast<double>(k + 2);
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const double excess = static_cast<double>(blocks[i]) - balance;
    // Rounded down to a cache line, as balanced_root_share.
    shares[i] = excess > 0 ? static_cast<std::uint64_t>(excess) / 64 * 64 : 0;
  }
}

PeerState SingleCopyExchange::checked_arrival(CollectiveOp& op, TeamImpl& team, int peer,
                                              PeerArrival& arrival, sync::WaitTarget& blocked_on) {
  segment::StatusLine& status = team.area(peer).status();
  const PeerState state = read_peer_arrival(status, op.op(), arrival);
  if (state == PeerState::kNotArrived) blocked_on = awaited_arrival(status, op.op(), peer);
  // Kind, root and size must match before this rank copies into or out of the peer's buffer.
  if (state == PeerState::kRead) op.check_peer_signature(peer, arrival.packed, arrival.bytes);
  return state;
}

bool SingleCopyExchange::arrival_of(CollectiveOp& op, TeamImpl& team, int peer,
                                    PeerArrival& arrival, sync::WaitTarget& blocked_on) {
  const PeerState state = checked_arrival(op, team, peer, arrival, blocked_on);
  if (state != PeerState::kPassed) return state == PeerState::kRead;
  // Without a root share a peer leaves once its own copy is over, having set copied_op (the
  // acquire load of its status tag made that visible). It may since have copied in later
  // operations whose roots were not this one, so copied_op may be larger. A peer that took the
  // slots here (a size mismatch) and a single copy later passes too: deferred checks find it
  // from the peer's history.
  if (plan_.root_share == 0 && handshake::peer_copied(team, peer, op.op())) return true;
  // Otherwise a peer that left without waiting for this rank's share did not take the single
  // copy, which matching arguments would have made it take.
  team.fail(Status::kInvalidArgument,
            std::string("argument mismatch in ") + kind_name(op.signature().kind) + " (root " +
                std::to_string(op.signature().root) + ", operation #" + std::to_string(op.op()) +
                "): rank " + std::to_string(peer) +
                " completed it through the slots, so its collective, root or size differs "
                "from rank " +
                std::to_string(team.rank()) + "'s " + op.signature().describe_bytes(),
            Cause::kSizeMismatch);
}

void SingleCopyExchange::transfer(const CollectiveOp& op, TeamImpl& team, int peer,
                                  std::uint64_t remote, std::uint64_t shared_id, std::byte* local,
                                  std::uint64_t bytes, bool local_is_source) {
  if (bytes == 0) return;
  int e = 0;
  std::shared_ptr<detail::SharedMapping> hold;
  std::byte* mapped = team.shared_buffers().resolve(peer, shared_id, remote, bytes, hold);
  if (local_is_source) {
    // Announced, for a peer that leaves after an abort (drain).
    const handshake::AnnouncedWrite announced(team, op.op());
    fault_point(FaultPoint::kSingleCopy);  // killed here, with the write announced
    if (mapped != nullptr) {
      copy::copy_bytes(mapped, local, bytes);
    } else {
      e = copy::write_to(team.pid(peer), reinterpret_cast<void*>(remote), local, bytes);
    }
  } else {
    fault_point(FaultPoint::kSingleCopy);
    if (mapped != nullptr) {
      copy::copy_bytes(local, mapped, bytes);
    } else {
      e = copy::read_from(team.pid(peer), reinterpret_cast<const void*>(remote), local, bytes);
    }
  }
  if (e != 0) {
    team.check_aborted();  // a peer's error comes first: it may be why this transfer failed
    if (e == ESRCH) {
      team.fail(Status::kPeerFailed, "rank " + std::to_string(peer) + " (pid " +
                                         std::to_string(team.pid(peer)) + ") exited during " +
                                         kind_name(op.signature().kind) + " operation #" +
                                         std::to_string(op.op()));
    }
    team.fail(Status::kInvalidArgument,
              std::string(kind_name(op.signature().kind)) + " (root " +
                  std::to_string(op.signature().root) + ", operation #" + std::to_string(op.op()) +
                  "): rank " + std::to_string(team.rank()) + " could not " +
                  (local_is_source ? "write " : "read ") + std::to_string(bytes) + " bytes " +
                  (local_is_source ? "into" : "from") + " the buffer of rank " +
                  std::to_string(peer) + " with cross-memory attach: " + std::strerror(e) +
                  " (is that buffer as large as its count says?)");
  }
}

bool SteppedTransfer::step(const CollectiveOp& op, TeamImpl& team, int peer, std::uint64_t remote,
                           std::uint64_t shared_id, std::byte* local, std::uint64_t bytes,
                           bool local_is_source, sync::WaitTarget& blocked_on) {
  const std::uint64_t piece =
      op.blocking() ? bytes - moved_ : std::min(kPieceBytes, bytes - moved_);
  SingleCopyExchange::transfer(op, team, peer, remote + moved_, shared_id, local + moved_, piece,
                               local_is_source);
  moved_ += piece;
  if (moved_ == bytes) {
    moved_ = 0;
    return true;
  }
  blocked_on = yield_.next(team.rank());
  return false;
}

void SingleCopyExchange::start_blocks(Flow flow, std::uint64_t block_bytes, int ranks,
                                      std::byte* local, const topology::Tree* tree,
                                      bool cooperative) {
  Plan plan{flow, block_bytes, block_bytes, 0, local, tree};
  plan.weighted = cooperative;
  // Along a tree the root splits blocks with its children only.
  plan.sharers =
      tree != nullptr
          ? static_cast<int>(tree->children[static_cast<std::size_t>(tree->root)].size()) + 1
          : ranks;
  start(plan);
}

void SingleCopyExchange::settle_root_share(std::uint64_t root_shared_id,
                                           std::uint64_t root_weight) {
  if (!plan_.weighted) return;
  const bool peers_memcpy = plan_.tree == nullptr && root_shared_id != 0;
  plan_.root_share = balanced_root_share(plan_.block_bytes, plan_.sharers, plan_.block_bytes,
                                         peers_memcpy ? 1.0 : CopyBalance::fraction(root_weight));
  plan_.learns = !peers_memcpy;
}

void SingleCopyExchange::start_broadcast(std::uint64_t bytes, int ranks, std::byte* buffer,
                                         const topology::Tree* tree, bool cooperative) {
  const int sharers =
      tree != nullptr
          ? static_cast<int>(tree->children[static_cast<std::size_t>(tree->root)].size()) + 1
          : ranks;
  // No local copy at the root, so the weight does not enter.
  const std::uint64_t root_share = cooperative ? balanced_root_share(bytes, sharers, 0, 1.0) : 0;
  start({.flow = Flow::kFromRoot,
         .block_bytes = bytes,
         .root_share = root_share,
         .local = buffer,
         .tree = tree,
         .relay = tree != nullptr,
         .split_by_pages = tree == nullptr && ranks == 2 && root_share > 0});
}

void SingleCopyExchange::settle_pair_split(const TeamImpl& team, const PeerArrival& root,
                                           const PeerArrival& peer) {
  if (!plan_.split_by_pages || pages_settled_) return;
  pages_settled_ = true;
  // Between buffers of a shared allocation the peer copies with memcpy: no pages are pinned.
  if (root.shared_id != 0 || peer.shared_id != 0) return;
  const broadcast_split::Split split =
      broadcast_split::choose(plan_.block_bytes, copy::unpack_offsets(root.huge_pages),
                              copy::unpack_offsets(peer.huge_pages), team.cross_copy_cost(),
                              (root.huge_pages & copy::kStagesBit) != 0);
  plan_.root_share = split.root_bytes;
  plan_.root_at = split.root_at;
  plan_.stage_bytes = split.stage_bytes;
}

bool SingleCopyExchange::compared_with(const TeamImpl& team, int root, int peer) const {
  const int me = team.rank();
  // Flat: the root compares every peer before it reports, and every other rank compares the
  // root and (when it waits for the root) that report.
  if (plan_.tree == nullptr) return me == root || peer == root || waits_for_root(team, root);
  const topology::Tree& tree = *plan_.tree;
  const bool my_child = tree.parent[static_cast<std::size_t>(peer)] == me;
  if (plan_.relay) {
    // A rank reports once it holds the message and leaves after its children's reports, which
    // say nothing of their own children.
    return my_child || (me != root && peer == source(team, root));
  }
  // A rank reports after its children's reports, so a report covers the whole subtree: the
  // root's children cover everyone. Below, a rank knows the root, its own subtree, and (a
  // child of the root, which waits for the root's report) the root's other children.
  if (me == root) return true;
  // Without shares the root reports after the whole team: a rank that waits for that knows all.
  if (plan_.root_share == 0 && waits_for_root(team, root)) return true;
  const auto pos = [&](int r) { return tree.position[static_cast<std::size_t>(r)]; };
  const bool in_my_subtree =
      pos(peer) >= pos(me) && pos(peer) < pos(me) + tree.subtree_size[static_cast<std::size_t>(me)];
  const bool root_child = tree.parent[static_cast<std::size_t>(peer)] == root;
  return peer == root || in_my_subtree || (shares_with_root(team, root) && root_child);
}

int SingleCopyExchange::source(const TeamImpl& team, int root) const {
  if (!plan_.relay || shares_with_root(team, root)) return root;
  return plan_.tree->parent[static_cast<std::size_t>(team.rank())];
}

int SingleCopyExchange::waited_peer(const TeamImpl& team, int root, int i) const {
  const int me = team.rank();
  if (plan_.tree != nullptr) {
    const std::vector<int>& children = plan_.tree->children[static_cast<std::size_t>(me)];
    return static_cast<std::size_t>(i) < children.size() ? children[static_cast<std::size_t>(i)]
                                                         : -1;
  }
  if (me != root || i >= team.size() - 1) return -1;
  return i < me ? i : i + 1;  // every rank but the root
}

bool SingleCopyExchange::shares_with_root(const TeamImpl& team, int root) const {
  const int me = team.rank();
  return me != root && plan_.root_share > 0 &&
         (plan_.tree == nullptr || plan_.tree->parent[static_cast<std::size_t>(me)] == root);
}

bool SingleCopyExchange::move_root_share(CollectiveOp& op, TeamImpl& team,
                                         sync::WaitTarget& blocked_on) {
  const bool from_root = plan_.flow == Flow::kFromRoot;
  const int root = op.signature().root;
  // relaxed: this rank's own store, published with its arrival before this operation's data.
  settle_root_share(handshake::own_shared_id(team), op.offered_copy_weight());
  for (int peer; (peer = waited_peer(team, root, next_peer_)) >= 0; ++next_peer_) {
    PeerArrival arrival;
    if (!arrival_of(op, team, peer, arrival, blocked_on)) return false;
    settle_pair_split(team, own_arrival(team), arrival);
    if (plan_.stage_bytes > 0 && !staged_) stage_head(op, team);
    std::byte* mine =
        plan_.local + static_cast<std::uint64_t>(peer) * plan_.block_stride + plan_.root_at;
    if (!piece_.step(op, team, peer, arrival.address + plan_.root_at, arrival.shared_id, mine,
                     plan_.root_share, from_root, blocked_on))
      return false;
  }
  return true;
}

bool SingleCopyExchange::move_peer_share(CollectiveOp& op, TeamImpl& team,
                                         sync::WaitTarget& blocked_on) {
  const int root = op.signature().root;
  const int from = source(team, root);
  if (from != root) {
    // Relay: the whole message from the parent, once the parent reports that it holds it.
    PeerArrival arrival;
    if (!arrival_of(op, team, from, arrival, blocked_on)) return false;
    const std::uint64_t holds = make_tag(op.op(), sync::step_consumed(0));
    if (!team.progress_reached(from, holds)) {
      blocked_on = {&team.area(from).progress().tag, holds, from};
      return false;
    }
    return piece_.step(op, team, from, arrival.address, arrival.shared_id, plan_.local,
                       plan_.block_bytes, /*local_is_source=*/false, blocked_on);
  }
  PeerArrival arrival;
  if (!arrival_of(op, team, root, arrival, blocked_on)) return false;
  settle_root_share(arrival.shared_id, arrival.copy_weight);
  settle_pair_split(team, arrival, own_arrival(team));
  if (!own_part_moved_) {
    // Below the root's children, a rank moves its whole block. Beside the root, what the
    // root's part (and a staged head) leave: the block's tail, or (split_by_pages) the part
    // between them.
    const std::uint64_t share = shares_with_root(team, root) ? plan_.root_share : 0;
    const broadcast_split::Split split{plan_.root_at, share, plan_.stage_bytes};
    const std::uint64_t at = share == 0 ? 0 : split.peer_at();
    const std::uint64_t remote =
        arrival.address + static_cast<std::uint64_t>(team.rank()) * plan_.block_stride + at;
    if (!piece_.step(op, team, root, remote, arrival.shared_id, plan_.local + at,
                     split.peer_bytes(plan_.block_bytes), plan_.flow == Flow::kToRoot, blocked_on))
      return false;
    own_part_moved_ = true;
  }
  if (plan_.stage_bytes == 0) return true;
  // The staged head, once the root reports it staged.
  const std::uint64_t staged = make_tag(op.op(), sync::step_consumed(0));
  if (!team.progress_reached(root, staged)) {
    blocked_on = {&team.area(root).progress().tag, staged, root};
    return false;
  }
  // progress_reached's acquire load of the report made the root's address visible.
  const std::uint64_t address = handshake::staged_address(team, root);
  return piece_.step(op, team, root, address, 0, plan_.local, plan_.stage_bytes,
                     /*local_is_source=*/false, blocked_on);
}

void SingleCopyExchange::stage_head(const CollectiveOp& op, TeamImpl& team) {
  // One memcpy of at most 2 MiB (copy::StagingBuffer::kBytes), some 40 us: within the bounded
  // work of one advance (SteppedTransfer).
  std::byte* staging = team.staging_buffer().data();
  copy::copy_bytes(staging, plan_.local, plan_.stage_bytes);
  // The report below publishes it, and the staged bytes.
  handshake::publish_staged_address(team, staging);
  team.publish_step(op.op(), sync::step_consumed(0));
  // The peer may have finished its part and gone to sleep on this report; this rank does not
  // wait (which wakes sleepers) before its own part is over.
  team.wake_sleepers();
  staged_ = true;
}

std::uint64_t SingleCopyExchange::root_report_step() const {
  return sync::step_consumed(plan_.stage_bytes > 0 ? 1 : 0);
}

void SingleCopyExchange::drain(const CollectiveOp& op, TeamImpl& team) {
  handshake::wait_for_writers(team, op.op());
}

namespace {
// Whether `peer` has reported this operation's copies (`done`); else the wait for it.
bool reported(TeamImpl& team, int peer, std::uint64_t done, sync::WaitTarget& blocked_on) {
  if (team.progress_reached(peer, done)) return true;
  blocked_on = {&team.area(peer).progress().tag, done, peer};
  return false;
}
}  // namespace

void SingleCopyExchange::note_copy_without_root(const CollectiveOp& op, TeamImpl& team) const {
  if (plan_.root_share > 0) return;
  // This rank will not wait for the root, which may then find it past the operation: the note
  // tells the root it left after its copy (not through the slots, which arguments that differ
  // from the root's would have made it take).
  handshake::note_copied(team, op.op());
}

bool SingleCopyExchange::move_own_part(CollectiveOp& op, TeamImpl& team,
                                       sync::WaitTarget& blocked_on) {
  return team.rank() == op.signature().root ? move_root_share(op, team, blocked_on)
                                            : move_peer_share(op, team, blocked_on);
}

bool SingleCopyExchange::children_reported(TeamImpl& team, int root, std::uint64_t done,
                                           sync::WaitTarget& blocked_on) {
  for (int peer; (peer = waited_peer(team, root, next_peer_)) >= 0; ++next_peer_) {
    if (!reported(team, peer, done, blocked_on)) return false;
  }
  return true;
}

bool SingleCopyExchange::advance_relay(CollectiveOp& op, TeamImpl& team,
                                       sync::WaitTarget& blocked_on) {
  const int root = op.signature().root;
  const std::uint64_t done = make_tag(op.op(), sync::step_consumed(0));
  if (stage_ == Stage::kMove) {
    if (!move_own_part(op, team, blocked_on)) return false;
    stage_ = Stage::kRoot;
  }
  if (stage_ == Stage::kRoot) {
    // A child of the root holds the message once the root's share has landed too.
    if (shares_with_root(team, root) && !reported(team, root, done, blocked_on)) return false;
    if (team.rank() != root) note_copy_without_root(op, team);
    // release (inside publish): the message in this rank's buffer, moved by system calls on
    // this CPU and (acquired just above) the root's, is visible to the children that acquire
    // this report before they read it.
    team.publish_step(op.op(), sync::step_consumed(0));
    stage_ = Stage::kChildren;
    next_peer_ = 0;
  }
  // This rank's buffer may be released only after its children have read it.
  return children_reported(team, root, done, blocked_on);
}

bool SingleCopyExchange::advance(CollectiveOp& op, TeamAlgorithms& algorithms,
                                 sync::WaitTarget& blocked_on) {
  TeamImpl& team = algorithms.team();
  if (plan_.relay) return advance_relay(op, team, blocked_on);
  const int root = op.signature().root;
  const bool is_root = team.rank() == root;
  const std::uint64_t done = make_tag(op.op(), sync::step_consumed(0));
  if (stage_ == Stage::kMove) {
    if (!move_own_part(op, team, blocked_on)) return false;
    // With shares the root reports at once: its children wait for its shares, not for its
    // subtree. release (inside publish): the bytes this rank moved, by a system call on its
    // CPU, are visible to whoever acquires this step.
    if (is_root && plan_.root_share > 0) team.publish_step(op.op(), root_report_step());
    stage_ = Stage::kChildren;
    next_peer_ = 0;
    learning_ = is_root && plan_.learns;
  }
  if (stage_ == Stage::kChildren) {
    // Neither the root's buffer nor (gather) what landed in it may be released or read before
    // every rank below has finished with it.
    const bool all_reported = children_reported(team, root, done, blocked_on);
    if (learning_) {
      // The root's first look once its own part is over: peers already done had less to do.
      algorithms.copy_balance().observe(op.signature().kind, plan_.block_bytes, all_reported);
      learning_ = false;
    }
    if (!all_reported) return false;
    if (!is_root) note_copy_without_root(op, team);
    // release: this rank's own copy, and (acquired just above, so ordered before this store)
    // its children's reports of their subtrees: whoever acquires this report sees the whole
    // subtree's copies over. Without shares the root's report is that of the whole team, for
    // the ranks that wait for it under full checks.
    if (!is_root || plan_.root_share == 0) team.publish_step(op.op(), sync::step_consumed(0));
    stage_ = Stage::kRoot;
  }
  return !waits_for_root(team, root) ||
         reported(team, root, make_tag(op.op(), root_report_step()), blocked_on);
}

bool SingleCopyExchange::waits_for_root(const TeamImpl& team, int root) const {
  if (team.rank() == root) return false;
  // The root's share moves into or out of this rank's buffer: wait until it is over.
  if (plan_.root_share > 0) return shares_with_root(team, root);
  // Full checks promise an error in the same call on every rank: a rank whose copy fails (a
  // buffer shorter than its count) ends the team before the root's report.
  return team.options().checks == CheckLevel::kFull;
}

}  // namespace shmcoll
