#include "coll/algorithm_op.hpp"

namespace shmcoll {

bool AlgorithmOp::peers_copy() {
  const Kind kind = sig_.kind;
  return kind == Kind::kScatterv || kind == Kind::kGatherv
             ? algorithms_.single_copy_for(kind, sig_.bytes)
             : algorithms_.choose(kind, sig_.bytes, sig_.root).single_copy;
}

}  // namespace shmcoll
