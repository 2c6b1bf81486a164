#include "mpi/local_checks.hpp"

#include <cstdio>

namespace shmcoll::mpi {

bool Checker::fail(int mpi_class, const std::string& what) {
  error_.emplace(ArgumentError{
      mpi_class, "rank " + std::to_string(rank_) + (is_root() ? " (the root)" : "") + ": " + what});
  return false;
}

bool Checker::root_out_of_range() {
  return fail(MPI_ERR_ROOT, "root = " + std::to_string(root_) +
                                " is outside the communicator's ranks [0, " +
                                std::to_string(size_) + ")");
}

bool Checker::bad_side(const char* buffer_name, const char* count_name, MPI_Count count,
                       const char* type_name, MPI_Datatype type) {
  if (count < 0)
    return fail(MPI_ERR_COUNT,
                std::string(count_name) + " = " + std::to_string(count) + " is negative");
  if (type == MPI_DATATYPE_NULL)
    return fail(MPI_ERR_TYPE, std::string(type_name) + " is MPI_DATATYPE_NULL");
  // A null buffer with elements. MPI_BOTTOM is a null pointer too: with a derived datatype of
  // absolute addresses that is valid, so only predefined datatypes make it an error.
  int integers = 0, addresses = 0, types = 0, combiner = 0, type_size = 0;
  if (PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_NAMED || PMPI_Type_size(type, &type_size) != MPI_SUCCESS ||
      type_size == 0) {
    return true;
  }
  return fail(MPI_ERR_BUFFER, std::string(buffer_name) + " is NULL but " + count_name + " = " +
                                  std::to_string(count) + " elements must go there");
}

bool Checker::bad_counts(const char* counts_name, BadCount bad, const char* type_name) {
  if (bad.rank == -2) return fail(MPI_ERR_COUNT, std::string(counts_name) + " is NULL");
  if (bad.rank >= 0)
    return fail(MPI_ERR_COUNT, std::string(counts_name) + "[" + std::to_string(bad.rank) +
                                   "] = " + std::to_string(bad.value) + " is negative");
  return fail(MPI_ERR_TYPE, std::string(type_name) + " is MPI_DATATYPE_NULL");
}

bool Checker::in_place_off_root(const char* buffer_name) {
  return fail(MPI_ERR_BUFFER, std::string(buffer_name) + " is MPI_IN_PLACE, which only the root (" +
                                  std::to_string(root_) + ") may pass");
}

bool Checker::aliased(const void* buffer, const char* in_place_buffer) {
  char address[32];
  std::snprintf(address, sizeof address, "%p", buffer);
  return fail(MPI_ERR_BUFFER, std::string("sendbuf and recvbuf are the same buffer (") + address +
                                  "); pass MPI_IN_PLACE as " + in_place_buffer +
                                  " to use the root's own block where it lies");
}

}  // namespace shmcoll::mpi
