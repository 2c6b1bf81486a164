#include "coll/scatterv/scatterv_args.hpp"

#include <string>

namespace shmcoll::scatterv_args {

std::uint64_t check_root(const validate::Context& ctx, const void* sendbuf,
                         std::span<const Count> sendcounts, std::span<const Count> displs,
                         Datatype sendtype, const void* recvbuf, Count recvcount, Datatype recvtype,
                         bool in_place, PlanVector<validate::Block>& blocks) {
  validate::blocks(ctx, "sendcounts", sendcounts, "displs", displs, sendtype, blocks);
  validate::no_overlap(ctx, as_span(blocks), "sendcounts", "displs", "read");
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    validate::buffer(ctx, "sendbuf", sendbuf, blocks[r].bytes);
    if (static_cast<int>(r) != ctx.root) total += blocks[r].bytes;
  }
  validate::stream_length(ctx, total + 64 * blocks.size());
  if (!in_place) {
    const std::uint64_t mine = validate::bytes(ctx, "recvcount", recvcount, recvtype);
    const std::uint64_t expected = blocks[static_cast<std::size_t>(ctx.root)].bytes;
    if (mine != expected) {
      validate::invalid(ctx,
                        "recvcount x recvtype = " + std::to_string(mine) +
                            " bytes but sendcounts[" + std::to_string(ctx.root) +
                            "] x sendtype = " + std::to_string(expected) + " bytes",
                        Cause::kSizeMismatch);
    }
    validate::buffer(ctx, "recvbuf", recvbuf, mine);
  }
  return total;
}

std::string root_sends_text(std::uint64_t bytes, int peer, const char* type_name) {
  return "the root sends " + std::to_string(bytes) + " bytes to rank " + std::to_string(peer) +
         " (sendcounts[" + std::to_string(peer) + "] x " + type_name + ")";
}

}  // namespace shmcoll::scatterv_args
