// Memory that every rank of a team can address, as MPI_Win_allocate_shared gives: each rank
// contributes a part, and every rank maps all parts. Collectives whose buffers lie in such
// memory move large blocks with plain memcpy between the ranks' parts -- no cross-memory-attach
// system call, no page pinning -- wherever the team would otherwise use its single copy
// (see Team::data_paths).
//
//   shmcoll::SharedBuffer buf = team.allocate_shared(n * sizeof(double));  // collective
//   auto x = buf.as<double>();                                             // this rank's part
//   team.bcast(std::span(x), 0);                                           // copies from the
//                                                                          // root's part directly
//
// The memory lives until the last SharedBuffer of this rank for it is destroyed (ranks free
// independently; a part stays readable by others while they hold their SharedBuffer). Nothing
// is left in /dev/shm: its name is removed once every rank has mapped it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "shmcoll/export.hpp"

namespace shmcoll {

namespace detail {
struct SharedMapping;
}

class SHMCOLL_API SharedBuffer {
 public:
  SharedBuffer() = default;  // no memory
  explicit SharedBuffer(std::shared_ptr<detail::SharedMapping> mapping);

  // This rank's part.
  std::span<std::byte> local() const;
  // Rank r's part, as mapped in this process.
  std::span<std::byte> part(int r) const;
  template <class T>
  std::span<T> as() const {
    const std::span<std::byte> b = local();
    return {reinterpret_cast<T*>(b.data()), b.size() / sizeof(T)};
  }

 private:
  std::shared_ptr<detail::SharedMapping> mapping_;
};

}  // namespace shmcoll
