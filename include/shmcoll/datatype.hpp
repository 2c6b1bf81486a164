// Element types. shmcoll moves contiguous elements, so a datatype is its size in bytes plus a
// name for error messages. Type signatures are compared in bytes (count x size), as MPI allows
// for contiguous types of the same basic type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace shmcoll {

// Counts and displacements are signed so that a negative value is reported, not wrapped.
using Count = std::int64_t;

struct Datatype {
  std::size_t size = 1;
  const char* name = "byte";

  template <class T>
  static constexpr Datatype of();
};

inline constexpr Datatype kByte{1, "byte"};
inline constexpr Datatype kChar{1, "char"};
inline constexpr Datatype kInt16{2, "int16"};
inline constexpr Datatype kInt32{4, "int32"};
inline constexpr Datatype kInt64{8, "int64"};
inline constexpr Datatype kFloat{4, "float"};
inline constexpr Datatype kDouble{8, "double"};

template <class T>
constexpr Datatype Datatype::of() {
  static_assert(std::is_trivially_copyable_v<T>, "collectives copy elements byte-wise");
  if constexpr (std::is_same_v<T, double>)
    return kDouble;
  else if constexpr (std::is_same_v<T, float>)
    return kFloat;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 8)
    return kInt64;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 4)
    return kInt32;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 2)
    return kInt16;
  else if constexpr (sizeof(T) == 1)
    return kByte;
  else
    return Datatype{sizeof(T), "user type"};
}

// The explicit in-place tag (MPI_IN_PLACE): passed at the root as gather's send argument or as
// scatter's receive argument. The root's own block then stays where it is.
struct InPlace {};
inline constexpr InPlace in_place{};

}  // namespace shmcoll
