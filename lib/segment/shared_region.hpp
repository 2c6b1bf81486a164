// The shared-memory object behind Team::allocate_shared: created exclusively with mode 0600 and
// its pages reserved up front (a full /dev/shm is an error at allocation, never a SIGBUS later),
// attached by name, and its name removed as soon as every rank has mapped it.
#pragma once

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace shmcoll::segment {

// Creates `name` exclusively with mode 0600, `bytes` long, every page reserved now: tmpfs
// otherwise allocates on first touch, and a full /dev/shm would kill a process with SIGBUS in
// the middle of a collective. Throws SegmentError naming `what` (a room shortfall followed by
// `advice`); the name is removed again on any failure after it was created. `on_created` runs
// on the descriptor right after the object is created, before it is sized; `before_reserve`
// on the sized object's descriptor before its pages are reserved (memory policies).
boost::interprocess::shared_memory_object create_reserved_object(
    const std::string& name, std::uint64_t bytes, const std::string& what,
    const std::string& advice, const std::function<void(int fd)>& before_reserve = {},
    const std::function<void(int fd)>& on_created = {});

class SharedRegion {
 public:
  SharedRegion() = default;
  static SharedRegion create(const std::string& name, std::uint64_t bytes);
  // Fails unless the object is exactly `bytes` long.
  static SharedRegion attach(const std::string& name, std::uint64_t bytes);
  // Removes the name; mappings stay valid. A missing name is not an error.
  static void remove(const std::string& name);

  std::byte* base() const { return static_cast<std::byte*>(region_.get_address()); }
  std::uint64_t size() const { return region_.get_size(); }

 private:
  boost::interprocess::mapped_region region_;
};

}  // namespace shmcoll::segment
