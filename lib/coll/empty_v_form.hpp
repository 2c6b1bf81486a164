// A scatterv or gatherv call in which this rank moves nothing: its own block is empty and, at
// the root, so is every other rank's. Under CheckLevel::kDeferred along the flat layout such a
// rank only arrives, leaves its signature for the deferred comparisons (deferred_checks.hpp)
// and departs, as the MPIs return from such a call at once. The general classes reach the same
// result (their quiet_ path), but validate and plan every block first.
//
// What goes through shared memory is what those classes publish for the same call: a root's
// word says that every other rank's block has 0 bytes (root_word::kUniform), a gatherv rank
// exposes its buffer with 0 bytes. So each rank picks this class alone, whatever its peers
// picked; a peer whose size disagrees is reported by the deferred comparisons.
#pragma once

#include <span>
#include <string>

#include "coll/algorithm_op.hpp"

namespace shmcoll {

class EmptyVFormOp final : public AlgorithmOp {
 public:
  // Whether this rank's call can take this path. `own` and `own_type` are the rank's own
  // block (a scatterv's recvcount and recvtype, a gatherv's sendcount and sendtype), ignored at
  // an in-place root; `counts`, `displs` and `type` the root's. Arguments that fail validation
  // do not fit: the general classes report them.
  static bool fits(TeamAlgorithms& algorithms, Kind kind, Count own, Datatype own_type,
                   std::span<const Count> counts, std::span<const Count> displs, Datatype type,
                   bool in_place, int root) {
    // Inline, the test that rejects most calls: every small v-form call asks.
    if (!in_place && (own != 0 || own_type.size == 0)) return false;
    return fits_empty(algorithms, kind, own, own_type, counts, displs, type, in_place, root);
  }

  // ScattervOp's arguments.
  EmptyVFormOp(TeamAlgorithms& algorithms, const void* sendbuf, std::span<const Count> sendcounts,
               std::span<const Count> displs, Datatype sendtype, void* recvbuf, Count recvcount,
               Datatype recvtype, bool in_place, int root);
  // GathervOp's arguments.
  EmptyVFormOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount, Datatype sendtype,
               void* recvbuf, std::span<const Count> recvcounts, std::span<const Count> displs,
               Datatype recvtype, bool in_place, int root);

 private:
  bool advance_data(sync::WaitTarget&) override { return true; }
  // Every block this rank checks has 0 bytes: the root's each peer's, a peer's the root's
  // block for it (as the root's word gives it). Peers other than the root are not compared.
  std::int64_t expected_peer_bytes(int peer) const override {
    return team_.rank() == sig_.root || peer == sig_.root ? 0 : -1;
  }
  std::string expected_bytes_text(int peer) const override;
  static bool fits_empty(TeamAlgorithms& algorithms, Kind kind, Count own, Datatype own_type,
                         std::span<const Count> counts, std::span<const Count> displs,
                         Datatype type, bool in_place, int root);
};

}  // namespace shmcoll
