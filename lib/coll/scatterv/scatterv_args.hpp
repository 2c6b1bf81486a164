// Scatterv's argument checks, shared by its two implementations (ScattervOp and
// InlineScattervOp): each raises InvalidArgument through validate:: with the same message,
// whichever path the call takes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/plan_vector.hpp"
#include "protocol/validation.hpp"

namespace shmcoll::scatterv_args {

// The root: sendcounts and displs (and that no byte is read twice),
// sendbuf for every block, the stream the blocks could need, and recvbuf for its own block
// unless in_place. Fills `blocks` with every rank's block of sendbuf and returns the bytes of
// the other ranks' blocks.
std::uint64_t check_root(const validate::Context& ctx, const void* sendbuf,
                         std::span<const Count> sendcounts, std::span<const Count> displs,
                         Datatype sendtype, const void* recvbuf, Count recvcount, Datatype recvtype,
                         bool in_place, PlanVector<validate::Block>& blocks);

// The root's side of a size mismatch with `peer`, to which it sends `bytes` (sendcounts[peer]
// x a `type_name`): CollectiveOp::expected_bytes_text of both implementations.
std::string root_sends_text(std::uint64_t bytes, int peer, const char* type_name);

// Any other rank: recvcount x recvtype and recvbuf. Returns the bytes it receives.
inline std::uint64_t check_receiver(const validate::Context& ctx, const void* recvbuf,
                                    Count recvcount, Datatype recvtype) {
  const std::uint64_t bytes = validate::bytes(ctx, "recvcount", recvcount, recvtype);
  validate::buffer(ctx, "recvbuf", recvbuf, bytes);
  return bytes;
}

}  // namespace shmcoll::scatterv_args
