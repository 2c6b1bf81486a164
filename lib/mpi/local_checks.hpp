// What one rank can tell wrong in its own arguments, before anything collective happens.
//
// The plugin runs these before it decides a communicator's path (a collective step the MPI
// performs, which shmcoll cannot bound) and before a team moves any data, so a rank whose
// arguments are wrong on their own returns at once, with the MPI error class the MPI itself
// gives for the same mistake: MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_BUFFER.
// Only arguments MPI says the rank uses are looked at (root-only arguments at the root, the
// receive side of the root not under MPI_IN_PLACE).
//
// Every call runs them, so the tests are inline and only the messages are built out of line:
// each check returns true when the arguments pass, and otherwise fills `error`.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

namespace shmcoll::mpi {

struct ArgumentError {
  int mpi_class;        // MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_TYPE or MPI_ERR_BUFFER
  std::string message;  // names the rank, the argument and its value, without the function
};
using LocalError = std::optional<ArgumentError>;

// One call's checks; the first problem found is kept, and the checks after it are skipped.
class Checker {
 public:
  Checker(int rank, int size, int root, LocalError& error)
      : rank_(rank), size_(size), root_(root), error_(error) {}

  bool is_root() const { return rank_ == root_; }
  bool root() {
    if (root_ >= 0 && root_ < size_) [[likely]]
      return true;
    return root_out_of_range();
  }
  // A buffer of `count` elements of `type` that this rank uses.
  bool side(const char* buffer_name, const void* buffer, const char* count_name, MPI_Count count,
            const char* type_name, MPI_Datatype type) {
    if (count >= 0 && type != MPI_DATATYPE_NULL && (buffer != nullptr || count == 0)) [[likely]]
      return true;
    return bad_side(buffer_name, count_name, count, type_name, type);
  }
  // The counts of a v-form's root, one per rank (int, or MPI_Count in the large-count forms).
  template <class C>
  bool counts(const char* counts_name, const C counts[], const char* type_name, MPI_Datatype type) {
    bool ok = counts != nullptr && type != MPI_DATATYPE_NULL;
    for (int r = 0; ok && r < size_; ++r) ok = counts[r] >= 0;
    if (ok) [[likely]]
      return true;
    return bad_counts(counts_name, first_bad(counts), type_name);
  }
  // MPI_IN_PLACE passed where MPI allows it only at the root.
  bool not_in_place(const char* buffer_name, const void* buffer) {
    if (buffer != MPI_IN_PLACE) [[likely]]
      return true;
    return in_place_off_root(buffer_name);
  }
  // The root's two buffers are one (MPI asks for MPI_IN_PLACE instead).
  bool not_aliased(const void* sendbuf, bool sends, const void* recvbuf, bool receives,
                   const char* in_place_buffer) {
    if (sendbuf != recvbuf || sendbuf == nullptr || !sends || !receives) [[likely]]
      return true;
    return aliased(sendbuf, in_place_buffer);
  }

 private:
  // The messages (local_checks.cpp); each fills error_ and returns false, but bad_side, which
  // may find a null buffer valid (MPI_BOTTOM with a derived datatype).
  [[gnu::cold]] bool fail(int mpi_class, const std::string& what);
  [[gnu::cold]] bool root_out_of_range();
  [[gnu::cold]] bool bad_side(const char* buffer_name, const char* count_name, MPI_Count count,
                              const char* type_name, MPI_Datatype type);
  // The first negative count (its rank and value), none (rank -1: the datatype is null), or
  // no array (rank -2).
  struct BadCount {
    int rank;
    MPI_Count value;
  };
  template <class C>
  BadCount first_bad(const C counts[]) const {
    if (counts == nullptr) return {-2, 0};
    for (int r = 0; r < size_; ++r) {
      if (counts[r] < 0) return {r, counts[r]};
    }
    return {-1, 0};
  }
  [[gnu::cold]] bool bad_counts(const char* counts_name, BadCount bad, const char* type_name);
  [[gnu::cold]] bool in_place_off_root(const char* buffer_name);
  [[gnu::cold]] bool aliased(const void* buffer, const char* in_place_buffer);

  int rank_, size_, root_;
  LocalError& error_;
};

inline bool check_bcast(int rank, int size, const void* buffer, MPI_Count count, MPI_Datatype type,
                        int root, LocalError& error) {
  Checker c(rank, size, root, error);
  return c.root() && c.side("buffer", buffer, "count", count, "datatype", type);
}

// scatter (root_sends) and gather: the root's whole buffer and every rank's own block.
inline bool check_rooted(bool root_sends, int rank, int size, const void* sendbuf,
                         MPI_Count sendcount, MPI_Datatype sendtype, const void* recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, int root, LocalError& error) {
  Checker c(rank, size, root, error);
  if (!c.root()) return false;
  // The rank's own block: received (scatter) or sent (gather); MPI_IN_PLACE only at the root.
  const char* own_buffer = root_sends ? "recvbuf" : "sendbuf";
  const void* own = root_sends ? recvbuf : sendbuf;
  const bool in_place = own == MPI_IN_PLACE;
  if (!c.is_root() && !c.not_in_place(own_buffer, own)) return false;
  const bool checks_send = root_sends ? c.is_root() : !in_place;
  const bool checks_recv = root_sends ? !in_place : c.is_root();
  if (checks_send && !c.side("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype))
    return false;
  if (checks_recv && !c.side("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype))
    return false;
  return !c.is_root() || in_place ||
         c.not_aliased(sendbuf, sendcount > 0, recvbuf, recvcount > 0, own_buffer);
}

template <class C>
bool check_scatterv(int rank, int size, const void* sendbuf, const C sendcounts[],
                    MPI_Datatype sendtype, const void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, LocalError& error) {
  Checker c(rank, size, root, error);
  if (!c.root()) return false;
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (!c.is_root()) {
    return c.not_in_place("recvbuf", recvbuf) &&
           c.side("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype);
  }
  if (!c.counts("sendcounts", sendcounts, "sendtype", sendtype)) return false;
  return in_place ||
         (c.side("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype) &&
          c.not_aliased(sendbuf, sendcounts[rank] > 0, recvbuf, recvcount > 0, "recvbuf"));
}

template <class C>
bool check_gatherv(int rank, int size, const void* sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, const void* recvbuf, const C recvcounts[],
                   MPI_Datatype recvtype, int root, LocalError& error) {
  Checker c(rank, size, root, error);
  if (!c.root()) return false;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!c.is_root()) {
    return c.not_in_place("sendbuf", sendbuf) &&
           c.side("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype);
  }
  if (!in_place && !c.side("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype))
    return false;
  if (!c.counts("recvcounts", recvcounts, "recvtype", recvtype)) return false;
  return in_place ||
         c.not_aliased(sendbuf, sendcount > 0, recvbuf, recvcounts[rank] > 0, "sendbuf");
}

}  // namespace shmcoll::mpi
