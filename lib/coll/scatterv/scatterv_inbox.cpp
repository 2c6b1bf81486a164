#include "coll/scatterv/scatterv_inbox.hpp"

#include <string>

namespace shmcoll::scatterv_inbox {

void fail_unusable(const CollectiveOp& op, TeamImpl& team, RecordUse use, const Record& rec) {
  const OpSignature& sig = op.signature();
  // Built only here: at small sizes the string would cost more than the call.
  const std::string where = "scatterv (root " + std::to_string(sig.root) + ", operation #" +
                            std::to_string(op.op()) + ") on rank " + std::to_string(team.rank());
  if (use == RecordUse::kOtherCall) {
    // Throws for another collective or root; what is left is a garbled signature.
    op.check_peer_signature(sig.root, rec.signature, rec.bytes);
    team.fail(Status::kInternal, "corrupt scatterv record in " + where + ": signature " +
                                     std::to_string(rec.signature));
  }
  if (use == RecordUse::kMismatch) {
    team.fail(Status::kInvalidArgument,
              "type signature mismatch in " + where + ": the root sends " +
                  std::to_string(rec.bytes) + " bytes (its sendcounts[" +
                  std::to_string(team.rank()) + "]), this rank receives " + sig.describe_bytes(),
              Cause::kSizeMismatch);
  }
  team.fail(Status::kInternal,
            "corrupt scatterv record in " + where + ": block at " + std::to_string(rec.where));
}

}  // namespace shmcoll::scatterv_inbox
