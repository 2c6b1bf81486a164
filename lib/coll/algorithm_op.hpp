// The base of every collective's operation: the protocol's stage machine (CollectiveOp) with the
// team's algorithm state (TeamAlgorithms) beside it, where an algorithm finds the registry's
// choices and the plans it keeps between calls.
#pragma once

#include "coll/team_algorithms.hpp"
#include "copy/huge_pages.hpp"
#include "protocol/operation.hpp"

namespace shmcoll {

class AlgorithmOp : public CollectiveOp {
 protected:
  AlgorithmOp(TeamAlgorithms& algorithms, const OpSignature& sig)
      : CollectiveOp(algorithms.team(), sig), algorithms_(algorithms) {}

  // CollectiveOp::expose with the registry's answer to whether peers copy from or into the
  // buffer with cross-memory attach: the choice every rank makes from the same signature (a
  // v-form's blocks each for itself: this rank's own block here). Asked only of buffers large
  // enough to move onto huge pages, which small calls never are.
  void expose_buffer(const void* buffer, std::uint64_t bytes) {
    expose(buffer, bytes, bytes >= copy::HugePageCollapser::kMinBufferBytes && peers_copy());
  }

  TeamAlgorithms& algorithms_;

 private:
  // The registry's answer for this call, out of line: small calls never ask, and the
  // constructors that call expose_buffer stay small enough to be inlined into their callers.
  bool peers_copy();
};

}  // namespace shmcoll
