#include "segment/stale_segments.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstddef>
#include <ctime>
#include <mutex>

#include "segment/layout.hpp"
#include "segment/segment.hpp"
#include "sync/liveness.hpp"

namespace shmcoll::segment {
namespace {

// Reads the header of `path` (no more) and judges it.
SegmentEntry inspect(const std::string& directory, const std::string& name) {
  SegmentEntry entry;
  entry.name = name;
  const std::string path = directory + "/" + name;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    entry.state = "unreadable";
    return entry;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
    close(fd);
    entry.state = "not this user's";
    return entry;
  }
  entry.bytes = static_cast<std::uint64_t>(st.st_size);
  const bool old = std::time(nullptr) - st.st_mtime > kIncompleteAgeSeconds;
  // The creator stamps its pid and start time into the header before it reserves the pages,
  // and completes the header (magic, ready) after; either way the creator decides.
  bool complete = false;
  std::uint64_t creator_start_ticks = 0;
  if (st.st_size >= static_cast<off_t>(sizeof(SegmentHeader))) {
    void* p = mmap(nullptr, sizeof(SegmentHeader), PROT_READ, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      const auto* h = static_cast<const SegmentHeader*>(p);
      complete = h->magic == kMagic && h->ready.load(std::memory_order_acquire) == 1;
      entry.creator_pid = h->creator_pid;
      // Headers of other layout versions keep the pid where it is, not the start time.
      if (!complete || h->version == kVersion) creator_start_ticks = h->creator_start_ticks;
      munmap(p, sizeof(SegmentHeader));
    }
  }
  close(fd);
  if (entry.creator_pid <= 0) {
    entry.creator_pid = 0;
    entry.stale = old;
    entry.state = old ? "stale: its creator never said who it is" : "being created";
    return entry;
  }
  const unsigned long long started = sync::process_start_ticks(entry.creator_pid);
  const bool creator_runs = entry.creator_pid > 0 && sync::process_alive(entry.creator_pid) &&
                            (creator_start_ticks == 0 || started == creator_start_ticks);
  entry.stale = !creator_runs;
  entry.state =
      creator_runs ? std::string(complete ? "forming" : "being created") + ": its creator (pid " +
                         std::to_string(entry.creator_pid) + ") runs"
                   : "stale: its creator (pid " + std::to_string(entry.creator_pid) + ") has ended";
  return entry;
}

// segment_name()'s form ends in '-' and 16 hex digits; the names of shared buffers' regions
// (segment name + "-b<id>") do not, and hold no header.
bool is_segment_name(const std::string& name) {
  constexpr std::size_t kHex = 16;
  if (name.size() < kHex + 1 || name[name.size() - kHex - 1] != '-') return false;
  for (std::size_t i = name.size() - kHex; i < name.size(); ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

}  // namespace

std::vector<SegmentEntry> list_segments(const std::string& directory) {
  // Every team segment name starts so (segment_name_prefix with an empty job).
  const std::string prefix = "shmcoll-" + std::to_string(getuid()) + "-";
  std::vector<SegmentEntry> out;
  DIR* d = opendir(directory.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0 && is_segment_name(name))
      out.push_back(inspect(directory, name));
  }
  closedir(d);
  return out;
}

int remove_stale_segments(const std::string& directory) {
  int removed = 0;
  for (const SegmentEntry& entry : list_segments(directory)) {
    if (!entry.stale) continue;
    if (directory == "/dev/shm") {
      Segment::remove(entry.name);
    } else {
      unlink((directory + "/" + entry.name).c_str());
    }
    ++removed;
  }
  return removed;
}

void remove_stale_segments_once() {
  static std::once_flag once;
  std::call_once(once, [] { remove_stale_segments(); });
}

}  // namespace shmcoll::segment
