#include "mpi/typed_buffer.hpp"

#include <atomic>
#include <climits>
#include <unordered_map>

namespace shmcoll::mpi {

namespace {

struct Facts {
  int size = 0;
  MPI_Aint extent = 0;
  bool contiguous = false;
};

int read_facts(MPI_Datatype type, Facts& facts) {
  if (int rc = PMPI_Type_size(type, &facts.size); rc != MPI_SUCCESS) return rc;
  MPI_Aint lb = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_get_extent(type, &lb, &facts.extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  facts.contiguous = facts.size > 0 && lb == 0 && true_lb == 0 && facts.extent == facts.size &&
                     true_extent == facts.size;
  return MPI_SUCCESS;
}

// The predefined datatypes do not change while MPI is initialised, so their facts are read once
// (at the first collective, after MPI_Init). A call then costs one lookup instead of four MPI
// queries, which at 8 B took a fifth of a scatter's time (docs/tuning.md).
const std::unordered_map<MPI_Datatype, KnownType>& predefined_types() {
  static const auto table = [] {
    std::unordered_map<MPI_Datatype, KnownType> t;
    auto add = [&t](MPI_Datatype type, const char* name) {
      Facts facts;
      if (type != MPI_DATATYPE_NULL && read_facts(type, facts) == MPI_SUCCESS)
        t.emplace(type, KnownType{type, facts.size, facts.extent, facts.contiguous, name});
    };
#define SHMCOLL_PREDEFINED(type) add(type, #type)
    SHMCOLL_PREDEFINED(MPI_CHAR);
    SHMCOLL_PREDEFINED(MPI_SIGNED_CHAR);
    SHMCOLL_PREDEFINED(MPI_UNSIGNED_CHAR);
    SHMCOLL_PREDEFINED(MPI_BYTE);
    SHMCOLL_PREDEFINED(MPI_WCHAR);
    SHMCOLL_PREDEFINED(MPI_SHORT);
    SHMCOLL_PREDEFINED(MPI_UNSIGNED_SHORT);
    SHMCOLL_PREDEFINED(MPI_INT);
    SHMCOLL_PREDEFINED(MPI_UNSIGNED);
    SHMCOLL_PREDEFINED(MPI_LONG);
    SHMCOLL_PREDEFINED(MPI_UNSIGNED_LONG);
    SHMCOLL_PREDEFINED(MPI_LONG_LONG);
    SHMCOLL_PREDEFINED(MPI_UNSIGNED_LONG_LONG);
    SHMCOLL_PREDEFINED(MPI_FLOAT);
    SHMCOLL_PREDEFINED(MPI_DOUBLE);
    SHMCOLL_PREDEFINED(MPI_LONG_DOUBLE);
    SHMCOLL_PREDEFINED(MPI_C_BOOL);
    SHMCOLL_PREDEFINED(MPI_INT8_T);
    SHMCOLL_PREDEFINED(MPI_INT16_T);
    SHMCOLL_PREDEFINED(MPI_INT32_T);
    SHMCOLL_PREDEFINED(MPI_INT64_T);
    SHMCOLL_PREDEFINED(MPI_UINT8_T);
    SHMCOLL_PREDEFINED(MPI_UINT16_T);
    SHMCOLL_PREDEFINED(MPI_UINT32_T);
    SHMCOLL_PREDEFINED(MPI_UINT64_T);
    SHMCOLL_PREDEFINED(MPI_C_FLOAT_COMPLEX);
    SHMCOLL_PREDEFINED(MPI_C_DOUBLE_COMPLEX);
    SHMCOLL_PREDEFINED(MPI_AINT);
    SHMCOLL_PREDEFINED(MPI_OFFSET);
    SHMCOLL_PREDEFINED(MPI_COUNT);
    SHMCOLL_PREDEFINED(MPI_PACKED);
    SHMCOLL_PREDEFINED(MPI_2INT);
    SHMCOLL_PREDEFINED(MPI_FLOAT_INT);
    SHMCOLL_PREDEFINED(MPI_DOUBLE_INT);
    SHMCOLL_PREDEFINED(MPI_LONG_INT);
    SHMCOLL_PREDEFINED(MPI_SHORT_INT);
#undef SHMCOLL_PREDEFINED
    return t;
  }();
  return table;
}

}  // namespace

int look_up_type(MPI_Datatype type, TypeInfo& info) {
  const auto& table = predefined_types();
  if (const auto it = table.find(type); it != table.end()) {
    const KnownType& known = it->second;
    // release: see type_info.
    last_known_type.store(&known, std::memory_order_release);
    info.size = known.size;
    info.extent = known.extent;
    info.contiguous = known.contiguous;
    info.predefined = true;
    info.name = known.name;
    return MPI_SUCCESS;
  }
  Facts facts;
  if (int rc = read_facts(type, facts); rc != MPI_SUCCESS) return rc;
  info.size = facts.size;
  info.extent = facts.extent;
  info.contiguous = facts.contiguous;
  info.predefined = false;
  info.name = kUnnamedTypeName;  // unless it has a name of its own, below
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  PMPI_Type_get_name(type, name, &len);
  if (len > 0) {
    info.derived_name = name;
    info.name = info.derived_name.c_str();
  }
  return MPI_SUCCESS;
}

namespace {
// Bytes of `count` elements for a packing buffer; negative counts are left to shmcoll's checks.
std::size_t packed_bytes(MPI_Count count, const TypeInfo& info) {
  return count > 0 ? static_cast<std::size_t>(count) * static_cast<std::size_t>(info.size) : 0;
}

// PMPI_Pack and PMPI_Unpack with MPI_Count sizes and positions: MPI-4's large-count forms where
// the MPI has them; elsewhere every count fits an int (only the large-count calls pass more).
int pack(const void* in, MPI_Count count, MPI_Datatype type, std::vector<std::byte>& out,
         MPI_Count& position, MPI_Comm comm) {
#if MPI_VERSION >= 4
  return PMPI_Pack_c(in, count, type, out.data(), static_cast<MPI_Count>(out.size()), &position,
                     comm);
#else
  int at = static_cast<int>(position);
  const int rc = PMPI_Pack(in, static_cast<int>(count), type, out.data(),
                           static_cast<int>(out.size()), &at, comm);
  position = at;
  return rc;
#endif
}
int unpack(const std::vector<std::byte>& in, MPI_Count& position, void* out, MPI_Count count,
           MPI_Datatype type, MPI_Comm comm) {
#if MPI_VERSION >= 4
  return PMPI_Unpack_c(in.data(), static_cast<MPI_Count>(in.size()), &position, out, count, type,
                       comm);
#else
  int at = static_cast<int>(position);
  const int rc = PMPI_Unpack(in.data(), static_cast<int>(in.size()), &at, out,
                             static_cast<int>(count), type, comm);
  position = at;
  return rc;
#endif
}
}  // namespace

int SendView::init(const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm) {
  if (int rc = type_info(type, info_); rc != MPI_SUCCESS) return rc;
  // A datatype of size 0 moves no bytes whatever the count: 0 bytes, nothing to pack.
  if (info_.contiguous || count <= 0 || info_.size == 0) {
    data_ = buf;
    count_ = info_.contiguous ? count : (count < 0 ? count : 0);
    return MPI_SUCCESS;
  }
  packed_.resize(packed_bytes(count, info_));
  MPI_Count position = 0;
  if (int rc = pack(buf, count, type, packed_, position, comm); rc != MPI_SUCCESS) return rc;
  data_ = packed_.data();
  count_ = position;
  return MPI_SUCCESS;
}

int RecvView::init(void* buf, MPI_Count count, MPI_Datatype type) {
  if (int rc = type_info(type, info_); rc != MPI_SUCCESS) return rc;
  user_ = buf;
  user_count_ = count;
  type_ = type;
  if (info_.contiguous || count <= 0 || info_.size == 0) {  // as in SendView::init
    temp_.clear();  // no temporary (a view kept for another call may have had one)
    data_ = buf;
    count_ = info_.contiguous ? count : (count < 0 ? count : 0);
    return MPI_SUCCESS;
  }
  temp_.resize(packed_bytes(count, info_));
  data_ = temp_.data();
  count_ = static_cast<Count>(temp_.size());
  return MPI_SUCCESS;
}

int RecvView::preload(MPI_Count first, MPI_Count count, MPI_Comm comm) {
  if (temp_.empty() || count <= 0) return MPI_SUCCESS;
  MPI_Count position = first * info_.size;
  const auto* block =
      static_cast<const std::byte*>(user_) + static_cast<MPI_Aint>(first) * info_.extent;
  return pack(block, count, type_, temp_, position, comm);
}

int RecvView::finish(MPI_Comm comm) {
  if (temp_.empty()) return MPI_SUCCESS;
  MPI_Count position = 0;
  return unpack(temp_, position, user_, user_count_, type_, comm);
}

template <class C, class D>
int VBlocks::plan(const C* counts, const D* displs, MPI_Datatype type, int nranks) {
  if (int rc = type_info(type, info_); rc != MPI_SUCCESS) return rc;
  type_ = type;
  const auto n = static_cast<std::size_t>(nranks > 0 ? nranks : 0);
  if (info_.contiguous) {
    // Widened as they are (the root of every v-form call does this: one pass each).
    counts_.assign(counts, counts + n);
    displs_.assign(displs, displs + n);
    return MPI_SUCCESS;
  }
  user_counts_.assign(counts, counts + n);
  user_displs_.assign(displs, displs + n);
  counts_.resize(n);
  displs_.resize(n);
  Count packed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // Packed blocks sit one after another; shmcoll's checks see the user's sign errors.
    counts_[i] = counts[i] < 0 ? counts[i] : Count{counts[i]} * info_.size;
    displs_[i] = displs[i] < 0 ? displs[i] : packed;
    packed += counts[i] > 0 ? Count{counts[i]} * info_.size : 0;
  }
  temp_.resize(static_cast<std::size_t>(packed));
  return MPI_SUCCESS;
}

template <class C, class D>
int VBlocks::init_send(const void* buf, const C* counts, const D* displs, MPI_Datatype type,
                       int nranks, MPI_Comm comm) {
  if (int rc = plan(counts, displs, type, nranks); rc != MPI_SUCCESS) return rc;
  if (info_.contiguous) {
    data_ = const_cast<void*>(buf);  // shmcoll only reads it
    return MPI_SUCCESS;
  }
  for (int r = 0; r < nranks; ++r) {
    if (counts[r] <= 0 || displs[r] < 0 || info_.size == 0) continue;
    MPI_Count position = displs_[static_cast<std::size_t>(r)];
    const auto* block =
        static_cast<const std::byte*>(buf) + static_cast<MPI_Aint>(displs[r]) * info_.extent;
    if (int rc = pack(block, counts[r], type, temp_, position, comm); rc != MPI_SUCCESS) return rc;
  }
  data_ = temp_.data();
  return MPI_SUCCESS;
}

template <class C, class D>
int VBlocks::init_recv(void* buf, const C* counts, const D* displs, MPI_Datatype type, int nranks) {
  if (int rc = plan(counts, displs, type, nranks); rc != MPI_SUCCESS) return rc;
  user_ = buf;
  data_ = info_.contiguous ? buf : temp_.data();
  return MPI_SUCCESS;
}

int VBlocks::preload(int rank, MPI_Comm comm) {
  const auto r = static_cast<std::size_t>(rank);
  if (info_.contiguous || user_counts_[r] <= 0 || user_displs_[r] < 0 || info_.size == 0)
    return MPI_SUCCESS;
  MPI_Count position = displs_[r];
  const auto* block =
      static_cast<const std::byte*>(user_) + static_cast<MPI_Aint>(user_displs_[r]) * info_.extent;
  return pack(block, user_counts_[r], type_, temp_, position, comm);
}

int VBlocks::finish_recv(MPI_Comm comm) {
  if (info_.contiguous || info_.size == 0) return MPI_SUCCESS;
  for (std::size_t r = 0; r < counts_.size(); ++r) {
    if (user_counts_[r] <= 0 || user_displs_[r] < 0) continue;
    MPI_Count position = displs_[r];
    auto* block =
        static_cast<std::byte*>(user_) + static_cast<MPI_Aint>(user_displs_[r]) * info_.extent;
    if (int rc = unpack(temp_, position, block, user_counts_[r], type_, comm); rc != MPI_SUCCESS)
      return rc;
  }
  return MPI_SUCCESS;
}

template int VBlocks::init_send(const void*, const int*, const int*, MPI_Datatype, int, MPI_Comm);
template int VBlocks::init_recv(void*, const int*, const int*, MPI_Datatype, int);
#if MPI_VERSION >= 4
template int VBlocks::init_send(const void*, const MPI_Count*, const MPI_Aint*, MPI_Datatype, int,
                                MPI_Comm);
template int VBlocks::init_recv(void*, const MPI_Count*, const MPI_Aint*, MPI_Datatype, int);
#endif

}  // namespace shmcoll::mpi
