#include "coll/gatherv/gatherv_sender.hpp"

#include "coll/gatherv/gatherv.hpp"
#include "protocol/pieces.hpp"
#include "protocol/validation.hpp"

namespace shmcoll {

bool GathervSenderOp::fits(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                           Datatype sendtype, int root) {
  TeamImpl& team = algorithms.team();
  if (team.size() < 2 || root < 0 || root >= team.size() || team.rank() == root) return false;
  std::uint64_t bytes = 0;
  if (sendcount < 0 || sendtype.size == 0 ||
      __builtin_mul_overflow(static_cast<std::uint64_t>(sendcount), sendtype.size, &bytes) ||
      bytes > validate::kMaxBytes)
    return false;
  return !algorithms.v_form_uses_tree(Kind::kGatherv, root) &&
         !algorithms.single_copy_for(Kind::kGatherv, bytes) &&
         !GathervOp::may_copy_shared(algorithms, sendbuf, bytes, root);
}

GathervSenderOp::GathervSenderOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                                 Datatype sendtype, int root)
    : AlgorithmOp(algorithms, {Kind::kGatherv, root, 0, sendcount, sendtype}),
      sendbuf_(static_cast<const std::byte*>(sendbuf)) {
  // GathervOp's checks of a sender, with its messages.
  const validate::Context ctx{Kind::kGatherv, team_.rank(), team_.size(), root, team_.slot_bytes()};
  validate::common(ctx, false);
  sig_.bytes = validate::bytes(ctx, "sendcount", sendcount, sendtype);
  validate::buffer(ctx, "sendbuf", sendbuf, sig_.bytes);
  validate::stream_length(ctx, sig_.bytes);
  // Published as GathervOp's senders do: a root that expects a single-copy block from this
  // rank (a size mismatch) finds the same arrival either way.
  expose_buffer(sendbuf, sig_.bytes);
  lend(sendbuf, sig_.bytes);
  data_path_compares_ = false;  // it reads nothing (checked_in_data_path is never true)
}

bool GathervSenderOp::advance_data(sync::WaitTarget& blocked_on) {
  if (!started_) {
    writer_.start(op_, Kind::kGatherv, sig_.root, sig_.bytes, team_.slot_bytes());
    started_ = true;
  }
  if (!pump_buffer(team_, writer_, sendbuf_, sig_.root, blocked_on)) return false;
  // Full checks wait for the root's arrival anyway (the agree stage); its size, read here,
  // spares the wait for its departure. The block goes out first, so that the root need not
  // wait for it meanwhile.
  return root_seen_ || learn_root_size(blocked_on);
}

bool GathervSenderOp::learn_root_size(sync::WaitTarget& blocked_on) {
  if (!published_sizes::learn(*this, team_, sizes_, blocked_on)) return false;
  if (sizes_.uniform >= 0 && static_cast<std::uint64_t>(sizes_.uniform) != sig_.bytes) {
    team_.fail(Status::kInvalidArgument,
               "type signature mismatch in " + where() + " (operation #" + std::to_string(op_) +
                   "): the root expects " + std::to_string(sizes_.uniform) + " bytes from rank " +
                   std::to_string(team_.rank()) + " (its recvcounts[" +
                   std::to_string(team_.rank()) + "] x recvtype), this rank sends " +
                   sig_.describe_bytes(),
               Cause::kSizeMismatch);
  }
  root_seen_ = true;
  return true;
}

std::string GathervSenderOp::expected_bytes_text(int peer) const {
  if (peer == sig_.root) return CollectiveOp::expected_bytes_text(peer);
  return "the root expects " + std::to_string(sizes_.uniform) + " bytes from rank " +
         std::to_string(peer) + " (its recvcounts[" + std::to_string(peer) + "] x recvtype)";
}

}  // namespace shmcoll
