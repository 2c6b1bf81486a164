// MPI_Error_string: shmcoll's own message for the codes the plugin returned
// (mpi/error_codes.hpp), the MPI's for every other code.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "mpi/error_codes.hpp"

extern "C" int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  try {
    std::string message;
    if (string != nullptr && resultlen != nullptr && shmcoll::mpi::message_of(errorcode, message)) {
      const std::size_t n = std::min<std::size_t>(message.size(), MPI_MAX_ERROR_STRING - 1);
      std::memcpy(string, message.data(), n);
      string[n] = '\0';
      *resultlen = static_cast<int>(n);
      return MPI_SUCCESS;
    }
  } catch (...) {
  }
  return PMPI_Error_string(errorcode, string, resultlen);
}
