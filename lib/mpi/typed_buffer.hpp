// User buffers described by MPI datatypes, seen by shmcoll as contiguous elements.
//
// A contiguous datatype (lower bound 0, extent = true extent = size) is passed through as
// elements of `size` bytes. Any other datatype is packed into (or unpacked from) a temporary
// buffer with PMPI_Pack / PMPI_Unpack, whose bytes are the type signature in order; both MPIs
// pack native data without headers, so the byte counts match the other side's whatever type
// map it used. Counts are MPI_Count and displacements any integer type, so that the MPI-4
// large-count calls (MPI_Bcast_c, ...: MPI_Count counts, MPI_Aint displacements) and the others
// share one path.
#pragma once

#include <mpi.h>

#include <atomic>
#include <boost/container/small_vector.hpp>
#include <span>
#include <string>
#include <vector>

#include "shmcoll/datatype.hpp"

namespace shmcoll::mpi {

// What a derived datatype without a name of its own is called in messages.
inline constexpr const char* kUnnamedTypeName = "MPI datatype";

struct TypeInfo {
  int size = 0;
  MPI_Aint extent = 0;
  bool contiguous = false;
  // A predefined type: its handle names the same type for as long as MPI is initialised (a
  // derived type's may be freed and reused for another).
  bool predefined = false;
  const char* name = kUnnamedTypeName;  // a predefined type's static name, or derived_name
  std::string derived_name;
  // Valid only while this TypeInfo lives.
  Datatype element() const {
    return contiguous ? Datatype{static_cast<std::size_t>(size), name} : kByte;
  }
};
// A predefined datatype's facts, read once (typed_buffer.cpp).
struct KnownType {
  MPI_Datatype type;
  int size = 0;
  MPI_Aint extent = 0;
  bool contiguous = false;
  const char* name = "";
};
// The last predefined type looked up: a call usually passes the same type as the previous one,
// and the comparison saves the table's hash and division. Entries never move or change once the
// table is built.
inline std::atomic<const KnownType*> last_known_type{nullptr};
// type_info beyond the last type: the table of predefined types, or MPI's queries.
int look_up_type(MPI_Datatype type, TypeInfo& info);
// Returns an MPI error code (MPI_SUCCESS when `info` is filled). Inline for the common case.
inline int type_info(MPI_Datatype type, TypeInfo& info) {
  // acquire, paired with look_up_type's release: a thread that never went through the table's
  // initialisation still sees the entry it reads through the pointer.
  const KnownType* known = last_known_type.load(std::memory_order_acquire);
  if (known == nullptr || known->type != type) return look_up_type(type, info);
  info.size = known->size;
  info.extent = known->extent;
  info.contiguous = known->contiguous;
  info.predefined = true;
  info.name = known->name;
  return MPI_SUCCESS;
}

// `count` elements at `buf`: as shmcoll sees them (data, count, element).
class SendView {
 public:
  int init(const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm);
  const void* data() const { return data_; }
  Count count() const { return count_; }
  Datatype element() const { return info_.element(); }
  // The view is the user's buffer itself (a contiguous datatype): nothing packed.
  bool passes_through() const { return info_.contiguous; }
  // Passes through, with a predefined datatype: the same arguments give the same view.
  bool repeatable() const { return info_.contiguous && info_.predefined; }
  // Instead of init where the call does not use the view (MPI_IN_PLACE): an empty view that
  // passes through.
  void unused() {
    info_.contiguous = info_.predefined = true;
    data_ = nullptr;
    count_ = 0;
  }

 private:
  TypeInfo info_;
  const void* data_ = nullptr;
  Count count_ = 0;
  std::vector<std::byte> packed_;
};

class RecvView {
 public:
  int init(void* buf, MPI_Count count, MPI_Datatype type);
  void* data() { return data_; }
  Count count() const { return count_; }
  Datatype element() const { return info_.element(); }
  // With a temporary: copies elements [first, first + count) of the user's buffer into it, so
  // that finish() writes them back unchanged (the root's own block under MPI_IN_PLACE).
  int preload(MPI_Count first, MPI_Count count, MPI_Comm comm);
  // Unpacks into the user's buffer when a temporary was used. Call after the collective.
  int finish(MPI_Comm comm);
  // The view is the user's buffer itself (a contiguous datatype): no temporary.
  bool passes_through() const { return info_.contiguous; }
  // As SendView's.
  bool repeatable() const { return info_.contiguous && info_.predefined; }
  void unused() {
    info_.contiguous = info_.predefined = true;
    temp_.clear();
    data_ = nullptr;
    count_ = 0;
  }

 private:
  TypeInfo info_;
  void* user_ = nullptr;
  MPI_Count user_count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  void* data_ = nullptr;
  Count count_ = 0;
  std::vector<std::byte> temp_;
};

// The root's buffer of scatterv or gatherv: counts and displacements in shmcoll elements. The
// user's counts and displacements are int (MPI_Scatterv) or MPI_Count and MPI_Aint (the
// large-count forms); typed_buffer.cpp instantiates both.
class VBlocks {
 public:
  // scatterv: packs each block of a non-contiguous type; gatherv: prepares a temporary.
  template <class C, class D>
  int init_send(const void* buf, const C* counts, const D* displs, MPI_Datatype type, int nranks,
                MPI_Comm comm);
  template <class C, class D>
  int init_recv(void* buf, const C* counts, const D* displs, MPI_Datatype type, int nranks);
  // gatherv with a temporary: copies rank r's block of the user's buffer into it (the root's
  // own block under MPI_IN_PLACE), so that finish_recv() writes it back unchanged.
  int preload(int rank, MPI_Comm comm);
  // gatherv: unpacks every block into the user's buffer when a temporary was used.
  int finish_recv(MPI_Comm comm);
  void* data() { return data_; }
  std::span<const Count> counts() const { return {counts_.data(), counts_.size()}; }
  std::span<const Count> displs() const { return {displs_.data(), displs_.size()}; }
  Datatype element() const { return info_.element(); }
  // The blocks are the user's buffer itself (a contiguous datatype): no temporary.
  bool passes_through() const { return info_.contiguous; }

 private:
  template <class C, class D>
  int plan(const C* counts, const D* displs, MPI_Datatype type, int nranks);
  TypeInfo info_;
  void* data_ = nullptr;
  // Inline for teams of up to 16 ranks: the root of every scatterv and gatherv call fills them,
  // without an allocation.
  boost::container::small_vector<Count, 16> counts_, displs_;
  std::vector<std::byte> temp_;
  void* user_ = nullptr;
  // The user's counts and displacements, for a non-contiguous type (its blocks are packed).
  boost::container::small_vector<Count, 16> user_counts_, user_displs_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace shmcoll::mpi
