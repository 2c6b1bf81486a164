// Team::allocate_shared: a collective allocation of memory every rank maps (shmcoll/
// shared_buffer.hpp). The protocol runs over the team's own collectives, so it is ordered with
// every other call, and each failure ends it the same way on every rank without ending the team:
//   1. every rank's size to every rank (gather + bcast);
//   2. rank 0 creates the object (parts on page boundaries) and broadcasts the outcome;
//   3. the others map it; every rank's mapping address (0 for a failure) to every rank;
//   4. rank 0 removes the name: nothing stays in /dev/shm, whatever happens later.
// Team::adopt_shared registers memory the ranks share already: only step 3, with a check that
// every rank describes the same range.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/hash.hpp"
#include "protocol/shared_buffers.hpp"
#include "protocol/team_impl.hpp"
#include "shmcoll/shared_buffer.hpp"
#include "shmcoll/team.hpp"
#include "team/progress_engine.hpp"

namespace shmcoll {
namespace {

// Rank 0's outcome of step 2, broadcast as bytes.
struct Creation {
  std::uint64_t ok = 0;
  char error[248] = {};
};

// What each rank of adopt_shared says of the memory it passed, exchanged as 64-bit words.
struct AdoptClaim {
  enum : std::uint64_t { kFine, kEmptyRange, kPartCount, kPartOutside };
  std::uint64_t base = 0;    // the range's start in this process
  std::uint64_t bytes = 0;   // its length
  std::uint64_t layout = 0;  // a fingerprint of the parts' offsets and sizes within it
  std::uint64_t error = kFine;
};
constexpr Count kAdoptClaimWords = sizeof(AdoptClaim) / sizeof(std::uint64_t);

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
  mapping->base = mapping->region.base();
  mapping->bytes = mapping->region.size();
  const std::uint64_t base = reinterpret_cast<std::uintptr_t>(mapping->base);
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

SharedBuffer Team::adopt_shared(std::span<std::byte> mapped,
                                std::span<const std::span<std::byte>> parts) {
  const int n = size();
  const auto un = static_cast<std::size_t>(n);
  auto mapping = std::make_shared<detail::SharedMapping>();
  mapping->rank = rank();
  mapping->base = mapped.data();
  mapping->bytes = mapped.size();

  AdoptClaim mine{reinterpret_cast<std::uintptr_t>(mapped.data()), mapped.size(), 0, 0};
  const auto start = reinterpret_cast<std::uintptr_t>(mapped.data());
  if (mapped.empty()) {
    mine.error = AdoptClaim::kEmptyRange;
  } else if (parts.size() != un) {
    mine.error = AdoptClaim::kPartCount;
  } else {
    std::vector<std::uint64_t> words;
    for (const std::span<std::byte> part : parts) {
      const auto at = reinterpret_cast<std::uintptr_t>(part.data());
      // An empty part has no place: it sits at the range's start.
      const std::uint64_t offset = part.empty() ? 0 : at - start;
      if (!part.empty() &&
          (at < start || offset > mapped.size() || part.size() > mapped.size() - offset)) {
        mine.error = AdoptClaim::kPartOutside;
      }
      mapping->part_offset.push_back(offset);
      mapping->part_bytes.push_back(part.size());
      words.push_back(offset);
      words.push_back(part.size());
    }
    mine.layout = fnv1a_words(words);
  }
  std::vector<AdoptClaim> claims(un);
  gather(&mine, kAdoptClaimWords, kInt64, claims.data(), kAdoptClaimWords, kInt64, 0);
  bcast(claims.data(), kAdoptClaimWords * n, kInt64, 0);

  // Every rank judges the same claims, so all throw alike or none does.
  const AdoptClaim& first = claims[0];
  for (int r = 0; r < n; ++r) {
    const AdoptClaim& c = claims[static_cast<std::size_t>(r)];
    const std::string who = "adopt_shared: rank " + std::to_string(r);
    if (c.error == AdoptClaim::kEmptyRange)
      throw InvalidArgument(who + " passed an empty mapped range");
    if (c.error == AdoptClaim::kPartCount)
      throw InvalidArgument(who + " passed parts without one entry per rank");
    if (c.error == AdoptClaim::kPartOutside)
      throw InvalidArgument(who + " passed a part outside its mapped range");
    if (c.bytes != first.bytes) {
      throw InvalidArgument(who + " maps " + std::to_string(c.bytes) + " bytes, rank 0 maps " +
                            std::to_string(first.bytes));
    }
    if (c.layout != first.layout) {
      throw InvalidArgument(who +
                            "'s parts lie elsewhere in its range than rank 0's (not the same "
                            "memory, or not mapped as one range)");
    }
  }
  for (const AdoptClaim& c : claims) mapping->peer_base.push_back(c.base);
  auto guard = engine_->lock();
  mapping->id = impl_->shared_buffers().next_id();  // the same on every rank: calls are ordered
  impl_->shared_buffers().add(mapping);
  return SharedBuffer(std::move(mapping));
}

}  // namespace shmcoll
