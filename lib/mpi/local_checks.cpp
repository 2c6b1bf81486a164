#include "mpi/local_checks.hpp"

#include <cstdio>

namespace shmcoll::mpi {
namespace {

// One call's checks; the first problem found is kept, later checks are skipped.
class Checker {
 public:
  Checker(int rank, int size, int root) : rank_(rank), size_(size), root_(root) {}

  bool root() {
    if (root_ >= 0 && root_ < size_) [[likely]]
      return true;
    return fail(MPI_ERR_ROOT, "root = " + std::to_string(root_) +
                                  " is outside the communicator's ranks [0, " +
                                  std::to_string(size_) + ")");
  }
  bool is_root() const { return rank_ == root_; }

  // A buffer of `count` elements of `type` that this rank uses.
  bool side(const char* buffer_name, const void* buffer, const char* count_name, int count,
            const char* type_name, MPI_Datatype type) {
    if (count < 0) [[unlikely]]
      return fail(MPI_ERR_COUNT, std::string(count_name) + " = " + std::to_string(count) +
                                     " is negative");
    if (type == MPI_DATATYPE_NULL) [[unlikely]]
      return fail(MPI_ERR_TYPE, std::string(type_name) + " is MPI_DATATYPE_NULL");
    if (buffer == nullptr && count > 0) [[unlikely]]
      return null_buffer(buffer_name, count_name, count, type);
    return true;
  }
  // The counts of a v-form's root, one per rank.
  bool counts(const char* counts_name, const int counts[], const char* type_name,
              MPI_Datatype type) {
    if (counts == nullptr) [[unlikely]]
      return fail(MPI_ERR_COUNT, std::string(counts_name) + " is NULL");
    for (int r = 0; r < size_; ++r) {
      if (counts[r] < 0) [[unlikely]]
        return fail(MPI_ERR_COUNT, std::string(counts_name) + "[" + std::to_string(r) +
                                       "] = " + std::to_string(counts[r]) + " is negative");
    }
    if (type == MPI_DATATYPE_NULL) [[unlikely]]
      return fail(MPI_ERR_TYPE, std::string(type_name) + " is MPI_DATATYPE_NULL");
    return true;
  }
  // MPI_IN_PLACE passed where MPI allows it only at the root.
  bool not_in_place(const char* buffer_name, const void* buffer) {
    if (buffer != MPI_IN_PLACE) [[likely]]
      return true;
    return fail(MPI_ERR_BUFFER, std::string(buffer_name) + " is MPI_IN_PLACE, which only the root (" +
                                    std::to_string(root_) + ") may pass");
  }
  // The root's two buffers are one (MPI asks for MPI_IN_PLACE instead).
  bool not_aliased(const void* sendbuf, bool sends, const void* recvbuf, bool receives,
                   const char* in_place_buffer) {
    if (sendbuf != recvbuf || sendbuf == nullptr || !sends || !receives) [[likely]]
      return true;
    char address[32];
    std::snprintf(address, sizeof address, "%p", sendbuf);
    return fail(MPI_ERR_BUFFER, std::string("sendbuf and recvbuf are the same buffer (") +
                                    address + "); pass MPI_IN_PLACE as " + in_place_buffer +
                                    " to use the root's own block where it lies");
  }

  LocalCheck result() { return std::move(error_); }

 private:
  bool fail(int mpi_class, const std::string& what) {
    error_ = ArgumentError{mpi_class, "rank " + std::to_string(rank_) +
                                          (is_root() ? " (the root)" : "") + ": " + what};
    return false;
  }
  // MPI_BOTTOM is a null pointer too: with a derived datatype of absolute addresses a null
  // buffer is valid, so only predefined datatypes make it an error.
  bool null_buffer(const char* buffer_name, const char* count_name, int count,
                   MPI_Datatype type) {
    int integers = 0, addresses = 0, types = 0, combiner = 0;
    if (PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED) {
      return true;
    }
    int type_size = 0;
    if (PMPI_Type_size(type, &type_size) != MPI_SUCCESS || type_size == 0) return true;
    return fail(MPI_ERR_BUFFER, std::string(buffer_name) + " is NULL but " + count_name + " = " +
                                    std::to_string(count) + " elements must go there");
  }

  int rank_, size_, root_;
  LocalCheck error_;
};

// scatter (root_sends) and gather: the root's whole buffer and every rank's own block.
LocalCheck check_rooted(bool root_sends, int rank, int size, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root) {
  Checker c(rank, size, root);
  if (!c.root()) return c.result();
  // The rank's own block: received (scatter) or sent (gather); MPI_IN_PLACE only at the root.
  const char* own_buffer = root_sends ? "recvbuf" : "sendbuf";
  const void* own = root_sends ? recvbuf : sendbuf;
  const bool in_place = own == MPI_IN_PLACE;
  if (!c.is_root()) {
    if (!c.not_in_place(own_buffer, own)) return c.result();
  }
  const bool checks_send = root_sends ? c.is_root() : !in_place;
  const bool checks_recv = root_sends ? !in_place : c.is_root();
  if (checks_send && !c.side("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype))
    return c.result();
  if (checks_recv && !c.side("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype))
    return c.result();
  if (c.is_root() && !in_place)
    c.not_aliased(sendbuf, sendcount > 0, recvbuf, recvcount > 0, own_buffer);
  return c.result();
}

}  // namespace

LocalCheck check_bcast(int rank, int size, const void* buffer, int count, MPI_Datatype type,
                       int root) {
  Checker c(rank, size, root);
  if (c.root()) c.side("buffer", buffer, "count", count, "datatype", type);
  return c.result();
}

LocalCheck check_scatter(int rank, int size, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root) {
  return check_rooted(true, rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, root);
}

LocalCheck check_gather(int rank, int size, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root) {
  return check_rooted(false, rank, size, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, root);
}

LocalCheck check_scatterv(int rank, int size, const void* sendbuf, const int sendcounts[],
                          MPI_Datatype sendtype, const void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root) {
  Checker c(rank, size, root);
  if (!c.root()) return c.result();
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (!c.is_root() && !c.not_in_place("recvbuf", recvbuf)) return c.result();
  if (c.is_root() && !c.counts("sendcounts", sendcounts, "sendtype", sendtype)) return c.result();
  if (!in_place && !c.side("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype))
    return c.result();
  if (c.is_root() && !in_place)
    c.not_aliased(sendbuf, sendcounts[rank] > 0, recvbuf, recvcount > 0, "recvbuf");
  return c.result();
}

LocalCheck check_gatherv(int rank, int size, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, const void* recvbuf, const int recvcounts[],
                         MPI_Datatype recvtype, int root) {
  Checker c(rank, size, root);
  if (!c.root()) return c.result();
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!c.is_root() && !c.not_in_place("sendbuf", sendbuf)) return c.result();
  if (!in_place && !c.side("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype))
    return c.result();
  if (c.is_root() && !c.counts("recvcounts", recvcounts, "recvtype", recvtype)) return c.result();
  if (c.is_root() && !in_place)
    c.not_aliased(sendbuf, sendcount > 0, recvbuf, recvcounts[rank] > 0, "sendbuf");
  return c.result();
}

}  // namespace shmcoll::mpi
