#include "segment/shared_region.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cstring>

#include "shmcoll/error.hpp"

namespace shmcoll::segment {
namespace bip = boost::interprocess;

namespace {

std::string describe(const std::string& name) { return "shared buffer '" + name + "'"; }

}  // namespace

bip::shared_memory_object create_reserved_object(const std::string& name, std::uint64_t bytes,
                                                 const std::string& what, const std::string& advice,
                                                 const std::function<void(int fd)>& before_reserve,
                                                 const std::function<void(int fd)>& on_created) {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0) {  // no /dev/shm to inspect: fallocate decides
    const std::uint64_t avail = std::uint64_t{fs.f_bavail} * fs.f_frsize;
    if (avail < bytes) {
      throw SegmentError(what + " needs " + std::to_string(bytes) +
                         " bytes but /dev/shm has only " + std::to_string(avail) + " bytes free" +
                         advice);
    }
  }
  bip::permissions perm;
  perm.set_permissions(0600);
  bip::shared_memory_object shm;
  try {
    shm = bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, perm);
  } catch (const bip::interprocess_exception& e) {
    throw SegmentError("cannot create " + what + ": " + e.what());
  }
  try {
    // The process umask may have narrowed the mode; it can never have widened it, but make the
    // intent explicit and independent of the umask.
    fchmod(shm.get_mapping_handle().handle, 0600);
    if (on_created) on_created(shm.get_mapping_handle().handle);
    shm.truncate(static_cast<bip::offset_t>(bytes));
    if (before_reserve) before_reserve(shm.get_mapping_handle().handle);
    if (int err = posix_fallocate(shm.get_mapping_handle().handle, 0, static_cast<off_t>(bytes))) {
      throw SegmentError("cannot reserve " + std::to_string(bytes) + " bytes for " + what + ": " +
                         std::strerror(err));
    }
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    throw SegmentError("cannot size " + what + ": " + e.what());
  } catch (...) {
    bip::shared_memory_object::remove(name.c_str());
    throw;
  }
  return shm;
}

SharedRegion SharedRegion::create(const std::string& name, std::uint64_t bytes) {
  bip::shared_memory_object shm =
      create_reserved_object(name, bytes, "allocate_shared: " + describe(name), "");
  try {
    SharedRegion region;
    region.region_ = bip::mapped_region(shm, bip::read_write);
    return region;
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    throw SegmentError("allocate_shared: cannot map " + describe(name) + ": " + e.what());
  }
}

SharedRegion SharedRegion::attach(const std::string& name, std::uint64_t bytes) {
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
    bip::offset_t actual = 0;
    shm.get_size(actual);
    if (static_cast<std::uint64_t>(actual) != bytes) {
      throw SegmentError("allocate_shared: " + describe(name) + " is " + std::to_string(actual) +
                         " bytes, expected " + std::to_string(bytes));
    }
    SharedRegion region;
    region.region_ = bip::mapped_region(shm, bip::read_write);
    return region;
  } catch (const bip::interprocess_exception& e) {
    throw SegmentError("allocate_shared: cannot map " + describe(name) + ": " + e.what());
  }
}

void SharedRegion::remove(const std::string& name) {
  bip::shared_memory_object::remove(name.c_str());
}

}  // namespace shmcoll::segment
