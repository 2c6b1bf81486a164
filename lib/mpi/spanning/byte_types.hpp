// MPI datatypes for what the communicator's levels exchange: bytes of shmcoll's contiguous
// views, in counts that may pass an int (the large-count forms), sent as one element.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <utility>

namespace shmcoll::mpi {

// Raises shmcoll::PeerFailed naming `what` and the MPI's message when `rc` is not MPI_SUCCESS.
void check_mpi(int rc, const char* what);

// A committed datatype, freed with the object.
class OwnedType {
 public:
  OwnedType() = default;
  explicit OwnedType(MPI_Datatype type) : type_(type) {}
  ~OwnedType();
  OwnedType(OwnedType&& other) noexcept : type_(other.type_) { other.type_ = MPI_DATATYPE_NULL; }
  OwnedType& operator=(OwnedType&&) = delete;
  OwnedType(const OwnedType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// `bytes` contiguous bytes as one element.
OwnedType byte_block(std::uint64_t bytes);
// `bytes` contiguous bytes as an MPI call's count and datatype: that many MPI_BYTE where the
// count fits an int, else one byte_block (which no call needs to build otherwise).
struct ByteMessage {
  explicit ByteMessage(std::uint64_t bytes);
  // One element of `type`.
  explicit ByteMessage(OwnedType type) : owned(std::move(type)), count(1), type(owned.get()) {}
  OwnedType owned;  // the byte_block, where there is one
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
};
// Blocks of `lengths` bytes at `offsets` bytes from the buffer's start, as one element of
// bytes: one node's blocks in the root's buffer of a scatter or gather.
OwnedType scattered_blocks(std::span<const std::uint64_t> lengths,
                           std::span<const MPI_Aint> offsets);

}  // namespace shmcoll::mpi
