// The single-copy data path of flat broadcast, scatter and gather: each block moves once, from
// the sender's own buffer to the receiver's, with cross-memory attach (lib/copy/cross_process).
//
// Every rank publishes its buffer's address on arrival (CollectiveOp::expose). The root and
// each other rank then split each block between them so that both cores copy at once: the
// root moves bytes [0, root_share) of every block, the other rank moves the rest. The root
// checks each peer's signature before it touches that peer's buffer, and a peer checks the
// root's, so a size mismatch is an error before any byte moves.
//
// Completion: a rank publishes (op, step_consumed(0)) on its progress line once its share is
// moved. The root leaves after every peer's, a peer after the root's: neither buffer is
// released while the other side may still copy from or into it.
//
// In an oversubscribed team (more ranks than CPUs) the root takes no share: a rank waiting
// for another's copy only hands its CPU to ranks that copy anyway, so every peer moves its
// whole block and leaves without waiting for the root (under full checks it waits for the
// root's report, which then comes after every peer's: an error in the same call everywhere).
//
// Along the topology tree (Plan::tree, scatter and gather): the root shares the copy of each
// block with its children only; every deeper rank moves its whole block itself, straight from
// or into the root's buffer. Each block still moves once, and crosses each package or NUMA
// boundary once (a block has one destination, so no relay could save a crossing), while
// completion fans in along the tree: a rank reports its step only after its children have
// reported theirs, so the root waits for its children, not for every rank. With one group the
// root's children are all the other ranks and this is the flat exchange above.
//
// Broadcast along the tree (Plan::relay): the root shares the copy into its children's buffers
// as above; every deeper rank reads the whole message from its parent's buffer once its parent
// reports that it holds it. So a message crosses each boundary once, into the group's leader,
// and the members of a group read the leader's NUMA-local copy. A rank reports when its buffer
// holds the message (its children then read it) and leaves after its children's reports (they
// have read it). The levels do not pipeline: a child waits for its parent's whole copy (trees
// are at most three levels deep: package, NUMA node, L3).
//
// Scatterv and gatherv blocks at or above the threshold move with one copy too, mostly by the
// rank that is not the root: the root's record (scatterv) or table entry (gatherv) for that
// rank gives the block's offset in the root's buffer and the root's share of it, which the root
// moves itself (root_shares.hpp); see ScattervOp and GathervOp.
//
// Errors: a rank that leaves early (the team aborted) must not leave a peer writing into its
// buffer, which the caller may free as soon as the error reaches it. Writers announce each
// write in StatusLine::writing_op and re-check the abort record after a fence; a leaving rank
// waits (drain) until no peer announces a write in this operation. Reads from a buffer being
// abandoned cannot harm its owner, so they are not fenced.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "coll/team_algorithms.hpp"
#include "protocol/operation.hpp"

namespace shmcoll {
namespace topology {
struct Tree;
}

// Bounded work per advance: a non-blocking operation's single copy moves in pieces of at most
// kPieceBytes and the operation yields between pieces, so that test() returns, and a progress
// thread lets go of the team's lock, within one piece's time (some 20-50 us) however large the
// message. A blocking call holds the lock and has nothing else to do, so its copy moves in one
// system call: pieces cost it time (docs/tuning.md).
class SteppedTransfer {
 public:
  static constexpr std::uint64_t kPieceBytes = std::uint64_t{512} << 10;

  // Moves the next piece of the transfer SingleCopyExchange::transfer describes. True once all
  // `bytes` have moved (the object is then ready for the next transfer); otherwise false with
  // `blocked_on` set to a target that is already reached: the caller's wait returns at once.
  bool step(const CollectiveOp& op, TeamImpl& team, int peer, std::uint64_t remote,
            std::uint64_t shared_id, std::byte* local, std::uint64_t bytes, bool local_is_source,
            sync::WaitTarget& blocked_on);

 private:
  std::uint64_t moved_ = 0;
  sync::YieldPoint yield_;  // between pieces
};

class SingleCopyExchange {
 public:
  enum class Flow { kFromRoot, kToRoot };  // broadcast and scatter; gather

  struct Plan {
    Flow flow = Flow::kFromRoot;
    std::uint64_t block_bytes = 0;  // per non-root rank
    // Rank r's block starts at r * block_stride in the root's buffer (0 for broadcast).
    std::uint64_t block_stride = 0;
    std::uint64_t root_share = 0;  // leading bytes of each block moved by the root
    // The root: its whole buffer; the others: their block.
    std::byte* local = nullptr;
    // Along this tree, or flat (nullptr).
    const topology::Tree* tree = nullptr;
    // Broadcast along `tree`: below the root's children a rank reads from its parent.
    bool relay = false;
    // Scatter and gather with shares: root_share follows the weight the root published with
    // its arrival and (flat) whether its buffer lies in memory every rank maps; each rank
    // settles it (settle_root_share) before any use, the root from its own, the others from
    // the root's arrival. `sharers`: the root and the ranks it shares blocks with.
    bool weighted = false;
    int sharers = 0;
    // Settled at the root: the weight decided the share, so the call's outcome corrects it.
    bool learns = false;
    // A flat broadcast pair: root_share and root_at follow the pages of both buffers
    // (broadcast_split.hpp), settled by each rank once it has read the other's arrival.
    bool split_by_pages = false;
    // Where the root's part of each block starts: 0, or (split_by_pages) at either end of
    // what follows the staged head; the peer's part is what the two leave.
    std::uint64_t root_at = 0;
    // split_by_pages: the head the root stages for the peer (broadcast_split.hpp). The root
    // then reports it staged with step_consumed(0), and its share done with step_consumed(1).
    std::uint64_t stage_bytes = 0;
  };

  // The root's share of each block that balances the work: the root moves root_share per peer
  // plus `root_extra` bytes of its own (its local copy, a memcpy whose byte costs
  // `local_copy_weight` of a cross-memory one: TeamImpl::local_copy_weight), each peer moves
  // the rest of its block.
  static std::uint64_t balanced_root_share(std::uint64_t block_bytes, int ranks,
                                           std::uint64_t root_extra, double local_copy_weight);
  // The same balance over blocks of different sizes (scatterv, gatherv): shares[i] is the
  // root's leading part of blocks[i], chosen so that no rank moves more than the root, whose
  // work is its shares plus `root_extra` memcpy'd bytes weighted as above. The largest blocks
  // give up bytes first; a block at or below the balance point keeps all of its copy.
  static void balanced_root_shares(std::span<const std::uint64_t> blocks, std::uint64_t root_extra,
                                   double local_copy_weight, std::span<std::uint64_t> shares);

  // Scatter and gather: rank r's block of `block_bytes` sits at r * block_bytes in the root's
  // buffer. The share counts the root's memcpy of its own block, in place or not: the other
  // ranks cannot see MPI_IN_PLACE, and a root that took a larger share than they leave it would
  // move the difference twice. In place, the root just finishes its part sooner.
  // `tree`: along that tree (its root is the operation's), else flat. Without `cooperative`
  // (an oversubscribed team) the root takes no share: each rank moves its whole block and
  // leaves without waiting for the root, since a rank waiting for another's copy gives its CPU
  // to the ranks that copy anyway.
  // Flat, where the root's buffer lies in memory every rank maps (allocate_shared, adopt_shared),
  // every peer's part is a memcpy too, and the root's own copy weighs a full share byte: at np=2
  // the root then takes no share of the peer's block (it copies its own while the peer copies
  // its block), where the cross-memory weight would give it about 0.37 of each block besides
  // its own. Otherwise the
  // root's own copy weighs what its CopyBalance says for the block size, which it publishes
  // with its arrival (CollectiveOp::offer_copy_weight). Root and peers settle on the same share
  // from the same facts: the root's published shared_id and weight.
  void start_blocks(Flow flow, std::uint64_t block_bytes, int ranks, std::byte* local,
                    const topology::Tree* tree, bool cooperative);

  // Broadcast of `bytes` from the root's buffer into everyone's `buffer`; along `tree`, or flat.
  void start_broadcast(std::uint64_t bytes, int ranks, std::byte* buffer,
                       const topology::Tree* tree, bool cooperative);

  void start(const Plan& plan) {
    plan_ = plan;
    next_peer_ = 0;
    stage_ = Stage::kMove;
    learning_ = false;
    pages_settled_ = false;
    staged_ = false;
    own_part_moved_ = false;
  }
  bool advance(CollectiveOp& op, TeamAlgorithms& algorithms, sync::WaitTarget& blocked_on);
  // Whether `peer`'s signature is known to match this rank's by the time the exchange is over,
  // so that the agree stage of CheckLevel::kFull may skip it: each rank compares itself with
  // the rank it copies from or into before it reports, and a mismatch raises on that rank.
  bool compared_with(const TeamImpl& team, int root, int peer) const;
  // On the way out after an error: returns once no live peer writes into this rank's buffers.
  static void drain(const CollectiveOp& op, TeamImpl& team);
  // Moves `bytes` between `local` and address `remote` of `peer`: a write into the peer when
  // `local_is_source` (fenced against the peer's drain), else a read. With memcpy where this
  // rank maps the peer's buffer (allocation `shared_id` of Team::allocate_shared), else with
  // cross-memory attach. Raises the team's error if the kernel refuses (a buffer shorter than
  // its count, a peer that exited).
  static void transfer(const CollectiveOp& op, TeamImpl& team, int peer, std::uint64_t remote,
                       std::uint64_t shared_id, std::byte* local, std::uint64_t bytes,
                       bool local_is_source);
  // Reads `peer`'s arrival in `op`. kNotArrived sets `blocked_on`; kRead has checked the
  // peer's kind, root and size against this rank's (before any byte moves into or out of its
  // buffer); kPassed (the peer is beyond `op`) is the caller's to judge.
  static PeerState checked_arrival(CollectiveOp& op, TeamImpl& team, int peer, PeerArrival& arrival,
                                   sync::WaitTarget& blocked_on);

 private:
  bool move_root_share(CollectiveOp& op, TeamImpl& team, sync::WaitTarget& blocked_on);
  bool move_peer_share(CollectiveOp& op, TeamImpl& team, sync::WaitTarget& blocked_on);
  bool move_own_part(CollectiveOp& op, TeamImpl& team, sync::WaitTarget& blocked_on);
  // Whether every rank waited_peer names from next_peer_ on has reported `done`.
  bool children_reported(TeamImpl& team, int root, std::uint64_t done,
                         sync::WaitTarget& blocked_on);
  // The ranks this rank waits for before it leaves, and (the root) shares blocks with: along a
  // tree its children, flat the root every other rank and the others none. -1 past the end.
  int waited_peer(const TeamImpl& team, int root, int i) const;
  // Whether this rank (not the root) leaves only after the root's report: when the root moves
  // a share of its block, or (without shares) under full checks.
  bool waits_for_root(const TeamImpl& team, int root) const;
  // Sets plan_.root_share where it follows the root (Plan::weighted): the root calls it with its
  // own published shared_id and weight, a peer with those it read in the root's arrival,
  // before either uses the share; every later use comes after.
  void settle_root_share(std::uint64_t root_shared_id, std::uint64_t root_weight);
  // Plan::split_by_pages: sets root_share and root_at from the root's and the peer's arrivals
  // (their shared allocations and the parts of their buffers on huge pages), once.
  void settle_pair_split(const TeamImpl& team, const PeerArrival& root, const PeerArrival& peer);
  // The root, Plan::stage_bytes: copies the head into the team's staging buffer and reports it.
  void stage_head(const CollectiveOp& op, TeamImpl& team);
  // The step with which the root reports its share moved.
  std::uint64_t root_report_step() const;
  // Whether this rank and the root split its block (flat, or a child of the root; never when
  // the root takes no share).
  bool shares_with_root(const TeamImpl& team, int root) const;
  // Whose buffer this rank (not the root) copies from or into: the root, or (relay) its parent.
  int source(const TeamImpl& team, int root) const;
  // Without a root share, before this rank (not the root) reports: records in copied_op that
  // it leaves after its copy, for a root that finds it past the operation.
  void note_copy_without_root(const CollectiveOp& op, TeamImpl& team) const;
  // The relay's order of the same stages (see Plan::relay).
  bool advance_relay(CollectiveOp& op, TeamImpl& team, sync::WaitTarget& blocked_on);
  // Reads `peer`'s arrival and checks it against this operation; false while it has not come.
  bool arrival_of(CollectiveOp& op, TeamImpl& team, int peer, PeerArrival& arrival,
                  sync::WaitTarget& blocked_on);

  // kMove: this rank's copies. kChildren: its children's reports (the root's come after its
  // own report, a deeper rank's before: they complete its subtree). kRoot: the root's share
  // into or out of this rank's buffer.
  enum class Stage { kMove, kChildren, kRoot };
  Plan plan_;
  Stage stage_ = Stage::kMove;
  bool learning_ = false;        // the root, between its own part and its first look at its peers
  bool pages_settled_ = false;   // settle_pair_split has run
  bool staged_ = false;          // the root: stage_head has run
  bool own_part_moved_ = false;  // a peer: its part is moved (the staged head may follow)
  int next_peer_ = 0;
  SteppedTransfer piece_;
};

}  // namespace shmcoll
