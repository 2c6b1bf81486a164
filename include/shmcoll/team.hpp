// A Team is a set of processes on one node that share a segment and run collectives together.
// The calls follow MPI (MPI_Bcast, MPI_Scatter(v), MPI_Gather(v)): every rank calls the same
// collectives in the same order with the same root; arguments marked "root only" are ignored on
// the other ranks; type signatures (count x datatype size) must match pairwise.
//
// Any error inside a collective (bad argument, mismatch between ranks, dead peer, timeout) is
// raised on every rank of the team with the same status and message, and leaves the team
// unusable: destroy it and form a new one (as after MPI_ERRORS_ARE_FATAL, minus the abort).
#pragma once

#include <cstddef>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "shmcoll/bootstrap.hpp"
#include "shmcoll/datatype.hpp"
#include "shmcoll/error.hpp"
#include "shmcoll/export.hpp"
#include "shmcoll/options.hpp"
#include "shmcoll/request.hpp"
#include "shmcoll/shared_buffer.hpp"

namespace shmcoll {

class TeamImpl;
class TeamAlgorithms;
class ProgressEngine;

// What the typed forms take (see there): a contiguous, sized range as a buffer, and a
// contiguous range of integers as counts or displacements.
template <class B>
concept Buffer = std::ranges::contiguous_range<B> && std::ranges::sized_range<B>;
template <class S, class R>
concept SameElements = std::is_same_v<std::ranges::range_value_t<S>, std::ranges::range_value_t<R>>;
template <class C>
concept Counts = std::ranges::contiguous_range<C> && std::ranges::sized_range<C> &&
    std::is_integral_v<std::ranges::range_value_t<C>>;

class SHMCOLL_API Team {
 public:
  // Collective over `bootstrap`: every rank of it must construct the team.
  explicit Team(Bootstrap& bootstrap, const Options& options = Options::from_env());
  ~Team();
  Team(Team&&) noexcept;
  Team& operator=(Team&&) noexcept;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  // Ends this rank's membership: compares how many collectives it ran with the ranks that left
  // before it, and throws InvalidArgument (Cause::kCollectiveMismatch) naming the ranks and
  // their counts where they differ; every pair of ranks is compared by the later of the two to
  // leave. It also raises an error a peer found that this rank has not raised yet (under
  // deferred checks, one found after its last call). No collective may follow. The destructor calls
  // it and prints such an error to stderr instead of throwing; call it to get the error as an
  // exception.
  void leave();

  int rank() const;
  int size() const;
  const Options& options() const;
  // Bytes of shared memory the team's segment occupies.
  std::size_t segment_bytes() const;
  // Where each rank sits (package, NUMA node, L3, core; "?" where unknown), one line per rank,
  // as exchanged at team formation: for benchmark records and diagnostics.
  std::string placement() const;
  // The large-message data path the team uses: "single copy (cross-memory attach) from N
  // bytes per rank", or "slots only: " and why (SHMCOLL_SINGLE_COPY=off, or the probe failed).
  std::string data_paths() const;
  bool single_copy_available() const;

  void barrier();

  // Collective: memory every rank maps, `bytes` of it this rank's part (sizes may differ per
  // rank), as MPI_Win_allocate_shared. Large blocks of collectives whose buffers lie in it move
  // with memcpy between the parts. Throws SegmentError on every rank if any rank cannot map
  // it (or /dev/shm lacks the room); the team stays usable. See shared_buffer.hpp.
  SharedBuffer allocate_shared(std::size_t bytes);
  // Collective: the same for memory every rank already maps, as one range holding the same
  // bytes in each process (an MPI-3 shared window, the caller's own shared mapping): `mapped` is
  // that range here, `parts[r]` rank r's part of it (empty parts may point anywhere). The
  // caller keeps the memory mapped while the SharedBuffer lives, and frees it only when no
  // collective uses it. Throws InvalidArgument on every rank when the ranks' ranges differ in
  // size or layout, or a part lies outside its range; the team stays usable.
  SharedBuffer adopt_shared(std::span<std::byte> mapped,
                            std::span<const std::span<std::byte>> parts);

  // Ends the team for every rank with this error, as if a collective had raised it here: the
  // other ranks' current or next call raises it. For errors the caller found outside shmcoll
  // (an MPI datatype it could not read, say) that would otherwise leave the others waiting.
  // The others' errors carry `cause` too.
  void abort(Status status, const std::string& message, Cause cause = Cause::kUnspecified);

  // ---- raw forms (MPI argument order) ----
  void bcast(void* buffer, Count count, Datatype type, int root);

  void scatter(const void* sendbuf, Count sendcount, Datatype sendtype,  // root only
               void* recvbuf, Count recvcount, Datatype recvtype, int root);
  void scatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root);

  void scatterv(const void* sendbuf, std::span<const Count> sendcounts,  // root only
                std::span<const Count> displs, Datatype sendtype,        // root only
                void* recvbuf, Count recvcount, Datatype recvtype, int root);
  void scatterv(const void* sendbuf, std::span<const Count> sendcounts,
                std::span<const Count> displs, Datatype sendtype, InPlace, int root);

  void gather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
              Count recvcount, Datatype recvtype,  // root only
              int root);
  void gather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root);

  void gatherv(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
               std::span<const Count> recvcounts,                 // root only
               std::span<const Count> displs, Datatype recvtype,  // root only
               int root);
  void gatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
               std::span<const Count> displs, Datatype recvtype, int root);

  // ---- non-blocking forms (MPI_Ibcast, ...): the same arguments, rules and errors ----
  // Each starts the operation and returns at once; see request.hpp. Until the request is
  // complete the buffers must not be touched; the counts and displacements arrays may be
  // reused as soon as the call returns (they are copied), the datatype's name must stay valid.
  // Blocking and non-blocking calls mix freely on one team: all run in the order they were
  // called, and a blocking call first completes the outstanding ones.
  Request ibcast(void* buffer, Count count, Datatype type, int root);
  Request iscatter(const void* sendbuf, Count sendcount, Datatype sendtype,  // root only
                   void* recvbuf, Count recvcount, Datatype recvtype, int root);
  Request iscatter(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace, int root);
  Request iscatterv(const void* sendbuf, std::span<const Count> sendcounts,  // root only
                    std::span<const Count> displs, Datatype sendtype,        // root only
                    void* recvbuf, Count recvcount, Datatype recvtype, int root);
  Request iscatterv(const void* sendbuf, std::span<const Count> sendcounts,
                    std::span<const Count> displs, Datatype sendtype, InPlace, int root);
  Request igather(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                  Count recvcount, Datatype recvtype,  // root only
                  int root);
  Request igather(InPlace, void* recvbuf, Count recvcount, Datatype recvtype, int root);
  Request igatherv(const void* sendbuf, Count sendcount, Datatype sendtype, void* recvbuf,
                   std::span<const Count> recvcounts,                 // root only
                   std::span<const Count> displs, Datatype recvtype,  // root only
                   int root);
  Request igatherv(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                   std::span<const Count> displs, Datatype recvtype, int root);

  // ---- persistent forms (MPI_Bcast_init, ...): the same arguments, rules and errors ----
  // Each makes a request that every start runs as the non-blocking call with these arguments
  // would (see PersistentRequest in request.hpp); the buffers must stay valid until it is
  // destroyed, and the team must outlive its starts.
  PersistentRequest bcast_init(void* buffer, Count count, Datatype type, int root);
  PersistentRequest scatter_init(const void* sendbuf, Count sendcount, Datatype sendtype,  // root
                                 void* recvbuf, Count recvcount, Datatype recvtype, int root);
  PersistentRequest scatter_init(const void* sendbuf, Count sendcount, Datatype sendtype, InPlace,
                                 int root);
  PersistentRequest scatterv_init(const void* sendbuf, std::span<const Count> sendcounts,  // root
                                  std::span<const Count> displs, Datatype sendtype,        // root
                                  void* recvbuf, Count recvcount, Datatype recvtype, int root);
  PersistentRequest scatterv_init(const void* sendbuf, std::span<const Count> sendcounts,
                                  std::span<const Count> displs, Datatype sendtype, InPlace,
                                  int root);
  PersistentRequest gather_init(const void* sendbuf, Count sendcount, Datatype sendtype,
                                void* recvbuf, Count recvcount, Datatype recvtype,  // root only
                                int root);
  PersistentRequest gather_init(InPlace, void* recvbuf, Count recvcount, Datatype recvtype,
                                int root);
  PersistentRequest gatherv_init(const void* sendbuf, Count sendcount, Datatype sendtype,
                                 void* recvbuf, std::span<const Count> recvcounts,  // root only
                                 std::span<const Count> displs, Datatype recvtype,  // root only
                                 int root);
  PersistentRequest gatherv_init(InPlace, void* recvbuf, std::span<const Count> recvcounts,
                                 std::span<const Count> displs, Datatype recvtype, int root);

  // ---- typed forms: element type and counts come from the buffers ----
  // A buffer is any contiguous range (std::span of T or const T, std::vector, std::array, a C
  // array); the send side may hold const elements, and both sides must hold the same element
  // type. Counts and displacements are any contiguous ranges of integers (int, as MPI programs
  // keep them, int64_t, size_t), converted and range-checked (InvalidArgument, naming them).
  template <Buffer B>
  void bcast(B&& buffer, int root) {
    bcast(std::ranges::data(buffer), count_of(buffer), datatype_of<B>(), root);
  }
  template <Buffer B>
  Request ibcast(B&& buffer, int root) {
    return ibcast(std::ranges::data(buffer), count_of(buffer), datatype_of<B>(), root);
  }
  // At the root, `send` holds size() blocks of recv's size each.
  template <Buffer S, Buffer R>
  requires SameElements<S, R>
  void scatter(S&& send, R&& recv, int root) {
    scatter(std::ranges::data(send), count_of(recv), datatype_of<S>(), std::ranges::data(recv),
            count_of(recv), datatype_of<R>(), root);
  }
  template <Buffer S, Buffer R>
  requires SameElements<S, R> Request iscatter(S&& send, R&& recv, int root) {
    return iscatter(std::ranges::data(send), count_of(recv), datatype_of<S>(),
                    std::ranges::data(recv), count_of(recv), datatype_of<R>(), root);
  }
  template <Buffer S>
  void scatter(S&& send, InPlace, int root) {
    scatter(std::ranges::data(send), per_rank(send), datatype_of<S>(), in_place, root);
  }
  template <Buffer S, Counts C, Counts D, Buffer R>
  requires SameElements<S, R>
  void scatterv(S&& send, const C& counts, const D& displs, R&& recv, int root) {
    const auto c = counts_of(counts, "sendcounts"), d = counts_of(displs, "displs");
    scatterv(std::ranges::data(send), c, d, datatype_of<S>(), std::ranges::data(recv),
             count_of(recv), datatype_of<R>(), root);
  }
  template <Buffer S, Counts C, Counts D, Buffer R>
  requires SameElements<S, R> Request iscatterv(S&& send, const C& counts, const D& displs,
                                                R&& recv, int root) {
    const auto c = counts_of(counts, "sendcounts"), d = counts_of(displs, "displs");
    return iscatterv(std::ranges::data(send), c, d, datatype_of<S>(), std::ranges::data(recv),
                     count_of(recv), datatype_of<R>(), root);
  }
  template <Buffer S, Counts C, Counts D>
  void scatterv(S&& send, const C& counts, const D& displs, InPlace, int root) {
    const auto c = counts_of(counts, "sendcounts"), d = counts_of(displs, "displs");
    scatterv(std::ranges::data(send), c, d, datatype_of<S>(), in_place, root);
  }
  // At the root, `recv` holds size() blocks of send's size each.
  template <Buffer S, Buffer R>
  requires SameElements<S, R>
  void gather(S&& send, R&& recv, int root) {
    gather(std::ranges::data(send), count_of(send), datatype_of<S>(), std::ranges::data(recv),
           count_of(send), datatype_of<R>(), root);
  }
  template <Buffer S, Buffer R>
  requires SameElements<S, R> Request igather(S&& send, R&& recv, int root) {
    return igather(std::ranges::data(send), count_of(send), datatype_of<S>(),
                   std::ranges::data(recv), count_of(send), datatype_of<R>(), root);
  }
  template <Buffer R>
  void gather(InPlace, R&& recv, int root) {
    gather(in_place, std::ranges::data(recv), per_rank(recv), datatype_of<R>(), root);
  }
  template <Buffer S, Buffer R, Counts C, Counts D>
  requires SameElements<S, R>
  void gatherv(S&& send, R&& recv, const C& counts, const D& displs, int root) {
    const auto c = counts_of(counts, "recvcounts"), d = counts_of(displs, "displs");
    gatherv(std::ranges::data(send), count_of(send), datatype_of<S>(), std::ranges::data(recv), c,
            d, datatype_of<R>(), root);
  }
  template <Buffer S, Buffer R, Counts C, Counts D>
  requires SameElements<S, R> Request igatherv(S&& send, R&& recv, const C& counts, const D& displs,
                                               int root) {
    const auto c = counts_of(counts, "recvcounts"), d = counts_of(displs, "displs");
    return igatherv(std::ranges::data(send), count_of(send), datatype_of<S>(),
                    std::ranges::data(recv), c, d, datatype_of<R>(), root);
  }
  template <Buffer R, Counts C, Counts D>
  void gatherv(InPlace, R&& recv, const C& counts, const D& displs, int root) {
    const auto c = counts_of(counts, "recvcounts"), d = counts_of(displs, "displs");
    gatherv(in_place, std::ranges::data(recv), c, d, datatype_of<R>(), root);
  }

 private:
  template <class B>
  static Datatype datatype_of() {
    return Datatype::of<std::ranges::range_value_t<B>>();
  }
  template <class B>
  static Count count_of(B&& buffer) {
    return static_cast<Count>(std::ranges::size(buffer));
  }
  template <class B>
  Count per_rank(B&& buffer) const {
    return static_cast<Count>(std::ranges::size(buffer)) / size();
  }
  // A range of integers as Counts; a value that does not fit is an InvalidArgument naming
  // `what`.
  template <class C>
  static std::vector<Count> counts_of(const C& values, const char* what) {
    std::vector<Count> out;
    out.reserve(std::ranges::size(values));
    for (const auto v : values) {
      if (!std::in_range<Count>(v)) {
        throw InvalidArgument(std::string(what) + "[" + std::to_string(out.size()) +
                                  "] = " + std::to_string(v) + " does not fit a 64-bit count",
                              Cause::kCount);
      }
      out.push_back(static_cast<Count>(v));
    }
    return out;
  }

  // The protocol's state, the algorithms' state over it, and the engine that drives operations
  // over both: declared in that order, so destroyed in the reverse one (the engine first,
  // draining its queue).
  std::unique_ptr<TeamImpl> impl_;
  std::unique_ptr<TeamAlgorithms> algorithms_;
  std::unique_ptr<ProgressEngine> engine_;
};

}  // namespace shmcoll
