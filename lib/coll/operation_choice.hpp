// Which operation class serves a rank's part of a scatterv or gatherv call: the empty class
// where the rank moves nothing (coll/empty_v_form.hpp), the lean class where that part fits it
// (small blocks inside the receivers' records; a sender's block through its own stream),
// otherwise the general one. Blocking and non-blocking calls ask the same question, so both
// take the same path; inside each class the registry chooses the data path (registry.hpp).
// Each rank chooses alone: what travels through shared memory is the same whichever class a
// peer took.
//
// `serve(std::type_identity<Op>{})` runs or starts the call with operation class Op; its
// result is returned.
#pragma once

#include <span>
#include <type_traits>

#include "coll/empty_v_form.hpp"
#include "coll/gatherv/gatherv.hpp"
#include "coll/gatherv/gatherv_sender.hpp"
#include "coll/scatterv/scatterv.hpp"
#include "coll/scatterv/scatterv_inline.hpp"

namespace shmcoll {

// `recvcount` and `recvtype` as the call passes them; ignored at an in-place root.
template <class Serve>
decltype(auto) choose_scatterv_op(TeamAlgorithms& algorithms, std::span<const Count> sendcounts,
                                  std::span<const Count> displs, Datatype sendtype, Count recvcount,
                                  Datatype recvtype, bool in_place, int root, Serve&& serve) {
  if (EmptyVFormOp::fits(algorithms, Kind::kScatterv, recvcount, recvtype, sendcounts, displs,
                         sendtype, in_place, root))
    return serve(std::type_identity<EmptyVFormOp>{});
  if (InlineScattervOp::fits(algorithms, sendcounts, sendtype, recvcount, recvtype, root))
    return serve(std::type_identity<InlineScattervOp>{});
  return serve(std::type_identity<ScattervOp>{});
}

// `sendbuf`, `sendcount` and `sendtype` as the call passes them; ignored at an in-place root.
template <class Serve>
decltype(auto) choose_gatherv_op(TeamAlgorithms& algorithms, const void* sendbuf, Count sendcount,
                                 Datatype sendtype, std::span<const Count> recvcounts,
                                 std::span<const Count> displs, Datatype recvtype, bool in_place,
                                 int root, Serve&& serve) {
  if (EmptyVFormOp::fits(algorithms, Kind::kGatherv, sendcount, sendtype, recvcounts, displs,
                         recvtype, in_place, root))
    return serve(std::type_identity<EmptyVFormOp>{});
  if (!in_place && GathervSenderOp::fits(algorithms, sendbuf, sendcount, sendtype, root))
    return serve(std::type_identity<GathervSenderOp>{});
  return serve(std::type_identity<GathervOp>{});
}

}  // namespace shmcoll
