// Team::allocate_shared: a collective allocation of memory every rank maps (shmcoll/
// shared_buffer.hpp). The protocol runs over the team's own collectives, so it is ordered with
// every other call, and each failure ends it the same way on every rank without ending the team:
//   1. every rank's size to every rank (gather + bcast);
//   2. rank 0 creates the object (parts on page boundaries) and broadcasts the outcome;
//   3. the others map it; every rank's mapping address (0 for a failure) to every rank;
//   4. rank 0 removes the name: nothing stays in /dev/shm, whatever happens later.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/progress_engine.hpp"
#include "core/shared_buffers.hpp"
#include "core/team_impl.hpp"
#include "shmcoll/shared_buffer.hpp"
#include "shmcoll/team.hpp"

namespace shmcoll {
namespace {

// Rank 0's outcome of step 2, broadcast as bytes.
struct Creation {
  std::uint64_t ok = 0;
  char error[248] = {};
};

}  // namespace

SharedBuffer Team::allocate_shared(std::size_t bytes) {
  const int n = size();
  const int me = rank();
  const auto un = static_cast<std::size_t>(n);

  std::vector<std::uint64_t> sizes(un);
  const std::uint64_t mine = bytes;
  gather(&mine, 1, kInt64, sizes.data(), 1, kInt64, 0);
  bcast(sizes.data(), n, kInt64, 0);

  auto mapping = std::make_shared<detail::SharedMapping>();
  mapping->rank = me;
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  std::uint64_t total = 0;
  for (std::uint64_t s : sizes) {
    mapping->part_offset.push_back(total);
    mapping->part_bytes.push_back(s);
    total += (s + page - 1) / page * page;
  }
  total = std::max(total, page);
  {
    auto guard = engine_->lock();
    mapping->id = impl_->shared_buffers().next_id();  // the same on every rank: calls are ordered
  }
  const std::string name = impl_->segment_name() + "-b" + std::to_string(mapping->id);

  Creation created;
  if (me == 0) {
    try {
      mapping->region = segment::SharedRegion::create(name, total);
      created.ok = 1;
    } catch (const Error& e) {
      std::snprintf(created.error, sizeof created.error, "%s", e.what());
    }
  }
  bcast(&created, static_cast<Count>(sizeof created), kByte, 0);
  if (created.ok == 0) {
    throw SegmentError(std::string(created.error) + (me == 0 ? "" : " [reported by rank 0]"));
  }

  std::string attach_error;
  if (me != 0) {
    try {
      mapping->region = segment::SharedRegion::attach(name, total);
    } catch (const Error& e) {
      attach_error = e.what();
    }
  }
  const std::uint64_t base = reinterpret_cast<std::uintptr_t>(mapping->region.base());
  mapping->peer_base.resize(un);
  gather(&base, 1, kInt64, mapping->peer_base.data(), 1, kInt64, 0);
  if (me == 0) segment::SharedRegion::remove(name);  // every rank has tried to map it
  bcast(mapping->peer_base.data(), n, kInt64, 0);

  std::string failed;
  for (int r = 0; r < n; ++r) {
    if (mapping->peer_base[static_cast<std::size_t>(r)] == 0)
      failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!failed.empty()) {
    throw SegmentError(attach_error.empty()
                           ? "allocate_shared(" + std::to_string(bytes) + "): rank(s) " + failed +
                                 " could not map the shared buffer '" + name + "'"
                           : attach_error);
  }
  auto guard = engine_->lock();
  impl_->shared_buffers().add(mapping);
  return SharedBuffer(std::move(mapping));
}

}  // namespace shmcoll
