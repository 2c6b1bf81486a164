#include "coll/empty_v_form.hpp"

#include <string>

#include "protocol/validation.hpp"

namespace shmcoll {
namespace {

// An empty block of a type that has a size: what validate::bytes accepts as 0 bytes.
bool empty_block(Count count, Datatype type) { return count == 0 && type.size != 0; }

}  // namespace

bool EmptyVFormOp::fits_empty(TeamAlgorithms& algorithms, Kind kind, Count own, Datatype own_type,
                              std::span<const Count> counts, std::span<const Count> displs,
                              Datatype type, bool in_place, int root) {
  TeamImpl& team = algorithms.team();
  if (team.options().checks != CheckLevel::kDeferred) return false;
  const int n = team.size();
  if (n < 2 || root < 0 || root >= n) return false;
  if (team.rank() != root) {
    if (in_place || !empty_block(own, own_type)) return false;
  } else {
    if (!in_place && !empty_block(own, own_type)) return false;
    const auto blocks = static_cast<std::size_t>(n);
    if (type.size == 0 || counts.size() < blocks || displs.size() < blocks) return false;
    for (std::size_t r = 0; r < blocks; ++r) {
      // Negative displacements wrap past kMaxBytes, as validate::blocks sees them.
      std::uint64_t offset = 0;
      if (counts[r] != 0 ||
          __builtin_mul_overflow(static_cast<std::uint64_t>(displs[r]), type.size, &offset) ||
          offset > validate::kMaxBytes)
        return false;
    }
  }
  return !algorithms.v_form_uses_tree(kind, root);
}

EmptyVFormOp::EmptyVFormOp(TeamAlgorithms& algorithms, const void*, std::span<const Count>,
                           std::span<const Count>, Datatype sendtype, void*, Count recvcount,
                           Datatype recvtype, bool, int root)
    : AlgorithmOp(algorithms, {Kind::kScatterv, root, 0, recvcount, recvtype}) {
  quiet_ = true;
  if (team_.rank() == root) {
    sig_.bytes = root_word::kUniform;  // every receiver's block: 0 bytes
    sig_.type = sendtype;
  }
}

EmptyVFormOp::EmptyVFormOp(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                           Datatype sendtype, void* recvbuf, std::span<const Count>,
                           std::span<const Count>, Datatype recvtype, bool, int root)
    : AlgorithmOp(algorithms, {Kind::kGatherv, root, 0, sendcount, sendtype}) {
  quiet_ = true;
  if (team_.rank() == root) {
    sig_.bytes = root_word::kUniform;  // every sender's block: 0 bytes
    sig_.type = recvtype;
    expose(recvbuf, 0, false);
  } else {
    expose(sendbuf, 0, false);
  }
}

std::string EmptyVFormOp::expected_bytes_text(int peer) const {
  if (team_.rank() != sig_.root) return CollectiveOp::expected_bytes_text(peer);
  const std::string p = std::to_string(peer);
  return sig_.kind == Kind::kGatherv
             ? "the root expects 0 bytes from rank " + p + " (recvcounts[" + p + "] x recvtype)"
             : "the root sends 0 bytes to rank " + p + " (sendcounts[" + p + "] x sendtype)";
}

}  // namespace shmcoll
