#include "mpi/spanning/byte_types.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "shmcoll/error.hpp"

namespace shmcoll::mpi {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  PMPI_Error_string(rc, text, &length);
  throw PeerFailed(std::string(what) +
                   " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

OwnedType::~OwnedType() {
  if (type_ != MPI_DATATYPE_NULL) PMPI_Type_free(&type_);
}

namespace {

OwnedType committed(MPI_Datatype type) {
  check_mpi(PMPI_Type_commit(&type), "PMPI_Type_commit");
  return OwnedType(type);
}

}  // namespace

OwnedType byte_block(std::uint64_t bytes) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  constexpr auto kIntMax = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  if (bytes <= kIntMax) {
    check_mpi(PMPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type),
              "PMPI_Type_contiguous");
    return committed(type);
  }
  // Whole GiB, then the rest: counts that each fit an int for any buffer below 2^61 bytes.
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 30;
  MPI_Datatype chunk = MPI_DATATYPE_NULL, chunks = MPI_DATATYPE_NULL;
  check_mpi(PMPI_Type_contiguous(static_cast<int>(kChunk), MPI_BYTE, &chunk),
            "PMPI_Type_contiguous");
  check_mpi(PMPI_Type_contiguous(static_cast<int>(bytes / kChunk), chunk, &chunks),
            "PMPI_Type_contiguous");
  const int lengths[2] = {1, static_cast<int>(bytes % kChunk)};
  const MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>(bytes - bytes % kChunk)};
  MPI_Datatype parts[2] = {chunks, MPI_BYTE};
  check_mpi(PMPI_Type_create_struct(2, lengths, displacements, parts, &type),
            "PMPI_Type_create_struct");
  PMPI_Type_free(&chunks);
  PMPI_Type_free(&chunk);
  return committed(type);
}

ByteMessage::ByteMessage(std::uint64_t bytes)
    : owned(bytes > static_cast<std::uint64_t>(std::numeric_limits<int>::max()) ? byte_block(bytes)
                                                                                : OwnedType()) {
  if (owned.get() != MPI_DATATYPE_NULL) {
    count = 1;
    type = owned.get();
  } else {
    count = static_cast<int>(bytes);
  }
}

OwnedType scattered_blocks(std::span<const std::uint64_t> lengths,
                           std::span<const MPI_Aint> offsets) {
  constexpr auto kIntMax = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  const int n = static_cast<int>(lengths.size());
  MPI_Datatype type = MPI_DATATYPE_NULL;
  if (std::all_of(lengths.begin(), lengths.end(), [](std::uint64_t b) { return b <= kIntMax; })) {
    const std::vector<int> counts(lengths.begin(), lengths.end());
    check_mpi(PMPI_Type_create_hindexed(n, counts.data(), offsets.data(), MPI_BYTE, &type),
              "PMPI_Type_create_hindexed");
    return committed(type);
  }
  // A block past an int: each block one element of its own byte_block.
  std::vector<OwnedType> blocks;
  std::vector<MPI_Datatype> types;
  blocks.reserve(lengths.size());
  for (std::uint64_t bytes : lengths) types.push_back(blocks.emplace_back(byte_block(bytes)).get());
  const std::vector<int> ones(lengths.size(), 1);
  check_mpi(PMPI_Type_create_struct(n, ones.data(), offsets.data(), types.data(), &type),
            "PMPI_Type_create_struct");
  return committed(type);
}

}  // namespace shmcoll::mpi
